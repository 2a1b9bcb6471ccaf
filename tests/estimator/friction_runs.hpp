// What test_friction.cpp and test_friction_held.cpp share: the left arm's held shoulders and the
// dumbbell curl's data, the estimator run on ticks whose measured torques a perturbation changes
// (its forearm mass error and σ), and each parameter's mean z² against the handed covariance.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "fixtures.hpp"
#include "heft/estimator/inertial_estimator.hpp"
#include "heft/test/alloc_counter.hpp"

namespace heft::estimator::test {

// The left arm's shoulder joints: they hold still while the elbow curls (test::ElbowMotion).
inline constexpr const char* kShoulders[] = {"left_shoulder_pitch", "left_shoulder_roll",
                                             "left_shoulder_yaw"};

struct Outcome {
  double error = 0.0;  // mean |m̂ − m| of the forearm over t > 6 s, kg
  double sigma = 0.0;  // the filter's σ_m at the end, kg
};

// Steps `est` through `ticks`, each tick's measured torques changed by perturb(tick, tau), and
// calls after(tick) once the tick is stepped; no tick after the first may allocate.
template <class Perturb, class After>
inline void StepPerturbed(InertialEstimator& est, const dynamics::Model& model,
                          const std::vector<test::Tick>& ticks, Perturb perturb, After after) {
  const unsigned char valid[2] = {1, 1}, contact[2] = {1, 1};
  Eigen::VectorXd tau(model.nv);
  std::uint64_t allocations = 0;
  for (std::size_t i = 0; i < ticks.size(); ++i) {
    const test::Tick& tk = ticks[i];
    tau = tk.tau;
    perturb(tk, tau);
    const TickInput in{tk.t, tk.q, tk.v, tk.a, tau, tk.wrenches, valid, contact};
    {
      heft::test::AllocationScope scope;
      (void)est.Step(in);
      if (i > 0) allocations += scope.count();
    }
    after(tk);
  }
  EXPECT_EQ(allocations, 0u);
}

// `cfg` on `ticks` (calibration skipped), each tick's measured torques changed by
// perturb(tick, tau); no tick after the first may allocate.
template <class Perturb>
inline Outcome RunPerturbed(const dynamics::Model& model, const EstimatorConfig& cfg,
                            const std::vector<test::Tick>& ticks, Perturb perturb) {
  InertialEstimator est(model, cfg);
  est.SkipCalibration();
  double sum = 0.0;
  int n = 0;
  StepPerturbed(est, model, ticks, perturb, [&](const test::Tick& tk) {
    if (tk.t > 6.0) sum += std::abs(est.estimate()[0] - tk.truth[0]), ++n;
  });
  return {sum / n, test::Sigma(est, 0)};
}

// The dumbbell curl's data (test::ElbowMotion, 5 kg in the hand) and its held shoulders' rows.
inline std::vector<test::Tick> DumbbellCurl() {
  test::DataSpec spec = test::ElbowMotion(8.0);
  spec.payload = test::ForearmPayload(5.0);
  return test::Generate(spec);
}
inline std::vector<int> ShoulderRows(const dynamics::Model& model) {
  std::vector<int> rows;
  for (const char* joint : kShoulders)
    rows.push_back(model.bodies[model.joint_body_index(joint)].v_index);
  return rows;
}

// Each parameter's mean z² over t > 6 s: its handed error squared over its handed variance (the
// hand-off's parameter_covariance), the estimator run on `ticks` with their measured torques
// changed by perturb(tick, tau), after a start-up calibration when `calibrate`; printed as `what`.
template <class Perturb>
inline Eigen::Matrix<double, 10, 1> HandedMeanZ2(const dynamics::Model& model,
                                                 const EstimatorConfig& cfg,
                                                 const std::vector<test::Tick>& ticks,
                                                 bool calibrate, const char* what, Perturb perturb,
                                                 Eigen::Matrix<double, 10, 1>* mean_e2 = nullptr) {
  InertialEstimator est(model, cfg);
  if (calibrate)
    est.StartCalibration();
  else
    est.SkipCalibration();
  Eigen::Matrix<double, 10, 1> z2 = Eigen::Matrix<double, 10, 1>::Zero(), e2 = z2;
  int n = 0;
  StepPerturbed(est, model, ticks, perturb, [&](const test::Tick& tk) {
    if (tk.t <= 6.0) return;
    const Eigen::Matrix<double, 10, 1> e = est.handed().head<10>() - tk.truth.head<10>();
    z2.array() += e.array().square() / est.parameter_covariance().leftCols<10>().diagonal().array();
    e2.array() += e.array().square();
    ++n;
  });
  EXPECT_GT(n, 0);
  if (mean_e2 != nullptr) *mean_e2 = e2 / std::max(n, 1);
  EXPECT_FALSE(est.calibrating());
  z2 /= std::max(n, 1);
  std::printf("[ heft ] %s: mean z² per parameter", what);
  for (int i = 0; i < 10; ++i) std::printf(" %.2f", z2[i]);
  std::printf("\n");
  return z2;
}

}  // namespace heft::estimator::test

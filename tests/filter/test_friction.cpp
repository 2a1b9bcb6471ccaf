// The nominal model's joint friction (review of issue 14, defect 8): heft-identify's friction
// model τ_f = F_c tanh(q̇/0.01) + F_v q̇ enters τ_nom, so friction is not read as a payload.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "fixtures.hpp"
#include "heft/estimator/inertial_estimator.hpp"
#include "heft/test/alloc_counter.hpp"

namespace heft::est {
namespace {

// A left elbow with 3 N·m Coulomb and 2 N·m·s/rad viscous friction (heft-identify's model), the
// forearm without payload. Told the friction, the estimator's mean forearm mass error over the last
// 2 s stays within kSigmas of its own σ_m scaled to the data's torque noise (the filter is told
// 1 N·m, the data carry 0.3: for fixed gains the error is linear in the noise); without it, the
// friction on a row the forearm's parameters drive corrupts the estimate (error several times
// larger). Fails if the friction does not enter τ_nom, enters with the wrong sign or model, or only
// in part (half of it: 1.64 σ), or a 0.3 N·m torque bias is left in the data (0.84 σ).
TEST(Friction, IdentifiedFrictionEntersTheNominalTorque) {
  const test::DataSpec spec = test::ArmMotion(8.0);
  const auto ticks = test::Generate(spec);
  const dyn::Model model = test::ReferenceHumanoid();
  const int elbow = model.bodies[model.body_index("left_forearm")].v_index;
  const JointFriction friction{"left_elbow", 3.0, 2.0};
  double error[2], sigma[2], noise_ratio = 0.0;
  for (const bool told : {false, true}) {
    EstimatorConfig cfg = test::ArmConfig();
    if (told) cfg.friction = {friction};
    noise_ratio = spec.noise.tau_sigma / cfg.joint_torque_sigma;
    InertialEstimator est(model, cfg);
    est.SkipCalibration();
    const unsigned char valid[2] = {1, 1}, contact[2] = {1, 1};
    Eigen::VectorXd tau(model.nv);
    double sum = 0.0;
    int n = 0;
    std::uint64_t allocations = 0;
    for (std::size_t i = 0; i < ticks.size(); ++i) {
      const test::Tick& tk = ticks[i];
      tau = tk.tau;
      tau[elbow] +=
          friction.coulomb * std::tanh(tk.v[elbow] / 0.01) + friction.viscous * tk.v[elbow];
      const TickInput in{tk.t, tk.q, tk.v, tk.a, tau, tk.wrenches, valid, contact};
      heft::test::AllocationScope scope;
      (void)est.Step(in);
      if (i > 0) allocations += scope.count();
      if (tk.t > 6.0) sum += std::abs(est.estimate()[0] - tk.truth[0]), ++n;
    }
    EXPECT_EQ(allocations, 0u);
    error[told] = sum / n;
    sigma[told] = test::Sigma(est, 0);
    std::printf("[ heft ] elbow friction, %s: forearm mass error %.2f %% (%.2f σ)\n",
                told ? "in the nominal model" : "unknown",
                100 * error[told] / ticks.back().truth[0], error[told] / sigma[told]);
  }
  EXPECT_LT(error[1], test::kSigmas * sigma[1] * noise_ratio);
  EXPECT_GT(error[0], 3.0 * error[1]) << "the friction matters for this estimate";
}

TEST(Friction, SetUpRefusesAnUnknownJoint) {
  const dyn::Model model = test::ReferenceHumanoid();
  EstimatorConfig cfg;
  cfg.bodies = {"left_forearm"};
  cfg.friction = {{"left_elbo", 1.0, 1.0}};
  EXPECT_THROW(InertialEstimator(model, cfg), std::invalid_argument);
}

}  // namespace
}  // namespace heft::est

// The null-space measurement with both feet in contact: the
// projection must remove every contact's wrench, not only one foot's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "fixtures.hpp"
#include "heft/estimator/gating.hpp"
#include "heft/estimator/inertial_estimator.hpp"

namespace heft::estimator {
namespace {

EstimatorConfig NullSpaceConfig(double sigma) {
  EstimatorConfig c;
  c.bodies = {"torso"};
  c.contact_frames = {"left_foot_ft", "right_foot_ft"};
  c.measurement = MeasurementChoice::kTorqueNullSpace;
  c.joint_torque_sigma = sigma;
  c.base_force_sigma = sigma;
  c.base_torque_sigma = sigma;
  c.calibration.enabled = false;
  return c;
}

// Q₂ᵀ J_cᵀ = 0 for every contact: a measured force that differs from the nominal model's RNEA by
// J_cᵀλ for ANY wrenches λ on the two feet (no noise) leaves no innovation, so the NIS is zero to
// rounding. Fails when one foot's Jacobian is left out of the factorised J_cᵀ (the NIS is then
// that foot's wrench seen through the whitening: ~10⁶ for a standing robot at σ = 1 N·m).
TEST(NullSpace, ProjectionAnnihilatesEveryContactJacobian) {
  test::DataSpec spec;
  spec.duration = 0.5;
  spec.motion.joints = {"left_hip_pitch", "right_knee", "waist_pitch", "left_elbow"};
  const auto ticks = test::Generate(spec);
  const dynamics::Model model = test::ReferenceHumanoid();
  dynamics::Workspace ws(model);
  const std::vector<int> feet = {model.frame_index("left_foot_ft"),
                                 model.frame_index("right_foot_ft")};
  InertialEstimator est(model, NullSpaceConfig(1.0));
  est.SkipCalibration();
  std::mt19937_64 rng(3);
  std::normal_distribution<double> n(0.0, 200.0);
  const unsigned char invalid[2] = {0, 0};
  Eigen::VectorXd tau(model.nv), contact(model.nv);
  for (const int left : {0, 1}) {
    for (const int right : {0, 1}) {
      const unsigned char in_contact[2] = {static_cast<unsigned char>(left),
                                           static_cast<unsigned char>(right)};
      for (std::size_t i = 0; i < ticks.size(); i += 20) {
        const test::Tick& tk = ticks[i];
        dynamics::Rnea(model, ws, tk.q, tk.v, tk.a, tau);
        std::vector<dynamics::Vector6> lambda(2, dynamics::Vector6::Zero());
        for (int f = 0; f < 2; ++f)
          if (in_contact[f])
            for (int j = 0; j < 6; ++j) lambda[f][j] = n(rng);
        dynamics::ContactTerm(model, ws, feet, lambda, contact);
        tau -= contact;  // τ + J_cᵀλ = RNEA: the wrenches carry what the nominal model needs
        const TickInput in{tk.t, tk.q, tk.v, tk.a, tau, lambda, invalid, in_contact};
        const TickResult r = est.Step(in);
        ASSERT_EQ(r.model, hal::MeasurementModel::kTorqueNullSpace);
        EXPECT_EQ(r.dof, model.nv - 6 * (left + right));
        EXPECT_LT(r.nis, 1e-8) << "contacts " << left << right << " at " << tk.t;
      }
    }
  }
}

// A humanoid without foot cells standing still in double support, torques from heft's own RNEA of
// the true (= nominal) model with the contact wrenches and white noise σ on every row, the filter
// told that σ: the NIS is χ²(nv − 12) — its mean within 4 standard errors (plus the prior's small
// share HPHᵀ, which only lowers it) — and the gate rejects no more than chance allows. Fails when
// a contact's wrench leaks into the projected rows (mean NIS ~10⁴, every tick gated).
TEST(NullSpace, StillDoubleSupportNisIsChiSquare) {
  const auto ticks = test::Generate(test::StandingStill(4.0));
  const dynamics::Model model = test::ReferenceHumanoid();
  const double sigma = 0.3;
  InertialEstimator est(model, NullSpaceConfig(sigma));
  est.SkipCalibration();
  std::mt19937_64 rng(11);
  std::normal_distribution<double> n(0.0, sigma);
  const unsigned char invalid[2] = {0, 0}, in_contact[2] = {1, 1};
  double sum = 0.0;
  int count = 0, gated = 0, dof = 0;
  for (const test::Tick& tk : ticks) {
    Eigen::VectorXd tau = tk.tau;
    for (int i = 0; i < model.nv; ++i) tau[i] += n(rng);
    const TickInput in{tk.t, tk.q, tk.v, tk.a, tau, tk.wrenches, invalid, in_contact};
    const TickResult r = est.Step(in);
    gated += r.status == TickStatus::kGated;
    if (tk.t < 1.0) continue;
    sum += r.nis;
    dof = r.dof;
    ++count;
  }
  const double mean = sum / count;
  std::printf(
      "[ heft ] null space, still double support: mean NIS %.2f (dof %d, %d ticks), gated %d\n",
      mean, dof, count, gated);
  EXPECT_EQ(dof, model.nv - 12);
  EXPECT_LT(std::abs(mean - dof), 4.0 * std::sqrt(2.0 * dof / count) + 0.5);
  // 1 − confidence expected beyond the gate: at most the binomial bound.
  EXPECT_LE(gated, test::GateFalseAlarms(NullSpaceConfig(sigma).gating.confidence,
                                         static_cast<double>(ticks.size())));
}

}  // namespace
}  // namespace heft::estimator

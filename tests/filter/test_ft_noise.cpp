// F/T cells' noise in the full-wrench measurement (review of issue 14, defect 7): with each cell's
// force/moment σ configured, the rows' covariance R = diag(σ²) + Σ J_cᵀ Σ_c J_c makes the NIS χ².
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "fixtures.hpp"
#include "heft/estimator/inertial_estimator.hpp"
#include "heft/test/alloc_counter.hpp"

namespace heft::est {
namespace {

// A humanoid standing still (no acceleration noise), joint torques with σ = 0.3 N·m, the cells'
// force and moment components with σ = 2 N and 0.2 N·m, the base rows exact. The filter is told the
// joint σ, a negligible base σ, and — or not — the cells' noise. With it, the mean NIS is that of
// χ²(nv) within 4 standard errors (+0.5 for the prior's share, which only lowers it) and the gate
// rejects no more than chance (the binomial bound of its confidence); without it, the same data
// give a NIS far above χ² and a gate that rejects most ticks (what the review saw on the humanoid:
// 77 % gated). Fails if the cells' noise does not enter R, or enters it wrongly (e.g. in the
// sensor's axes without the Jacobian).
TEST(FtNoise, FullWrenchNisIsChiSquareWithTheCellsNoise) {
  test::DataSpec spec = test::StandingStill(4.0);
  spec.noise.tau_sigma = 0.3;
  spec.noise.force_sigma = 2.0;
  spec.noise.torque_sigma = 0.2;
  const auto ticks = test::Generate(spec);
  const dyn::Model model = test::ReferenceHumanoid();
  double mean[2], gated_fraction[2];
  int dof = 0, count = 0, gated = 0;
  double confidence = 0.0;
  for (const bool configured : {false, true}) {
    EstimatorConfig cfg;
    cfg.bodies = {"torso"};
    cfg.contact_frames = {"left_foot_ft", "right_foot_ft"};
    cfg.measurement = MeasurementChoice::kFullWrench;
    cfg.joint_torque_sigma = 0.3;
    cfg.base_force_sigma = 1e-3;
    cfg.base_torque_sigma = 1e-3;
    cfg.calibration.enabled = false;
    if (configured) cfg.ft_noise = {{"left_foot_ft", 2.0, 0.2}, {"right_foot_ft", 2.0, 0.2}};
    InertialEstimator est(model, cfg);
    est.SkipCalibration();
    const unsigned char valid[2] = {1, 1}, contact[2] = {1, 1};
    double sum = 0.0;
    count = 0;
    gated = 0;
    confidence = cfg.gating.confidence;
    std::uint64_t allocations = 0;
    for (std::size_t i = 0; i < ticks.size(); ++i) {
      const test::Tick& tk = ticks[i];
      const TickInput in{tk.t, tk.q, tk.v, tk.a, tk.tau, tk.wrenches, valid, contact};
      heft::test::AllocationScope scope;
      const TickResult r = est.Step(in);
      if (i > 0) allocations += scope.count();
      gated += r.status == TickStatus::kGated;
      if (tk.t < 1.0) continue;
      sum += r.nis;
      dof = r.dof;
      ++count;
    }
    EXPECT_EQ(allocations, 0u);
    mean[configured] = sum / count;
    gated_fraction[configured] = static_cast<double>(gated) / static_cast<double>(ticks.size());
    std::printf(
        "[ heft ] full wrench, still, F/T noise %s: mean NIS %.2f (dof %d), gated %.1f %%\n",
        configured ? "configured" : "not configured", mean[configured], dof,
        100 * gated_fraction[configured]);
  }
  EXPECT_EQ(dof, model.nv);
  // The last run is the configured one.
  EXPECT_LT(std::abs(mean[1] - dof), 4.0 * std::sqrt(2.0 * dof / count) + 0.5);
  EXPECT_LE(gated, test::GateFalseAlarms(confidence, static_cast<double>(ticks.size())));
  EXPECT_GT(mean[0], 10.0 * dof) << "the data do carry the cells' noise";
}

}  // namespace
}  // namespace heft::est

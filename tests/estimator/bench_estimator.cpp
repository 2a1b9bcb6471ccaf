// Google Benchmark of one full estimator tick on the reference humanoid: condensed regressor,
// contact term, EKF update (information form), gating, rate limiting — 1 body (10 states) and
// 4 bodies (40 states); the null-space measurement; and the states at each link's CoM
// (estimator.parameter_frame: com) with the rigid shape prior's pull (prior_time_constant 2 s),
// with and without the measurement's 5 Hz low-pass and the torque sensors' scale
// (estimator.measurement_lowpass, noise.joint_torque_scale: the rigid torso's configuration).
#include <benchmark/benchmark.h>

#include "heft/estimator/inertial_estimator.hpp"
#include "trajectory.hpp"

namespace heft::estimator {
namespace {

void BM_Tick(benchmark::State& st) {
  test::DataSpec spec;
  spec.duration = 0.5;
  spec.motion.joints = {"left_elbow", "left_shoulder_pitch"};
  const auto ticks = test::Generate(spec);
  const dynamics::Model model = test::ReferenceHumanoid();
  const std::vector<std::string> all = {"left_forearm", "torso", "right_forearm", "left_hand"};
  EstimatorConfig cfg;
  cfg.bodies = {all.begin(), all.begin() + st.range(0)};
  cfg.contact_frames = {"left_foot_ft", "right_foot_ft"};
  cfg.calibration.enabled = false;
  if (st.range(2) != 0) {
    cfg.parameter_frame = EstimatorConfig::ParameterFrame::kCom;
    cfg.prior_time_constant = 2.0;
  }
  if (st.range(3) != 0) {
    cfg.measurement_lowpass = 5.0;
    cfg.joint_torque_scale = 0.01;
  }
  InertialEstimator est(model, cfg);
  est.SkipCalibration();
  const unsigned char valid[2] = {static_cast<unsigned char>(st.range(1) == 0),
                                  static_cast<unsigned char>(st.range(1) == 0)};
  const unsigned char contact[2] = {1, 1};
  std::size_t i = 0;
  for (auto _ : st) {
    const test::Tick& tk = ticks[i++ % ticks.size()];
    const TickInput in{tk.t, tk.q, tk.v, tk.a, tk.tau, tk.wrenches, valid, contact};
    benchmark::DoNotOptimize(est.Step(in));
  }
}
BENCHMARK(BM_Tick)
    ->ArgNames({"bodies", "null_space", "com_frame", "lowpass"})
    ->Args({1, 0, 0, 0})
    ->Args({4, 0, 0, 0})
    ->Args({1, 1, 0, 0})
    ->Args({4, 1, 0, 0})
    ->Args({1, 0, 1, 0})
    ->Args({4, 0, 1, 0})
    ->Args({1, 0, 1, 1})
    ->Args({4, 0, 1, 1});

}  // namespace
}  // namespace heft::estimator

BENCHMARK_MAIN();

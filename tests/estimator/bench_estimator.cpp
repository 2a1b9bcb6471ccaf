// Google Benchmark of one full estimator tick on the reference humanoid: condensed regressor,
// contact term, EKF update (information form), gating, rate limiting — 1 body (10 states) and
// 4 bodies (40 states); the null-space measurement; and the states at each link's CoM
// (estimator.parameter_frame: com) with the rigid shape prior's pull (prior_time_constant 2 s),
// with and without the measurement's 5 Hz low-pass and the torque sensors' scale
// (estimator.measurement_lowpass, noise.joint_torque_scale: the rigid torso's configuration).
// BM_ShippedTick: the tick exactly as the installed service runs it (config/heft.yaml read by the
// plugin's parser: every noise term it turns on, the acceleration noise through M(q), the
// low-pass, the floating base, the hand-off policy), 1 body and 4, with heft's RNEA on the same
// robot and data timed in the same run (BM_Rnea): the ratio is the tick's cost in RNEAs.
// Its friction:1 variant adds heft-identify's friction on every joint (the service after the
// operator's procedure), whose static friction the consider analysis counts (2 columns a joint).
#include <benchmark/benchmark.h>

#include "heft/config/yaml.hpp"
#include "heft/dynamics/dynamics.hpp"
#include "heft/estimator/inertial_estimator.hpp"
#include "heft/plugin/plugin_config.hpp"
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

const plugin::PluginConfig& Shipped() {
  static const plugin::PluginConfig cfg = plugin::ReadPluginConfig(
      config::Document::Load(std::string(HEFT_CONFIG_DIR) + "/heft.yaml").root());
  return cfg;
}

const std::vector<test::Tick>& BenchTicks() {
  static const std::vector<test::Tick> ticks = [] {
    test::DataSpec spec;
    spec.duration = 0.5;
    spec.motion.joints = {"left_elbow", "left_shoulder_pitch"};
    return test::Generate(spec);
  }();
  return ticks;
}

void BM_ShippedTick(benchmark::State& st) {
  const plugin::PluginConfig& shipped = Shipped();
  const dynamics::Model model = dynamics::LoadModelFromUrdfFile(
      shipped.urdf_path, dynamics::ModelOptions{shipped.floating_base, shipped.repair_inertia});
  EstimatorConfig cfg = shipped.estimator;
  if (st.range(0) > 1) cfg.bodies = {"left_forearm", "torso", "right_forearm", "left_hand"};
  // friction:1, the service after the operator's procedure: heft-identify's friction on every
  // joint (robot.parameters' `friction:`), whose static friction the consider analysis counts.
  if (st.range(1) > 0)
    for (const dynamics::Body& b : model.bodies)
      if (b.joint.type != dynamics::JointType::kFree)
        cfg.friction.push_back({b.joint.name, 0.5, 0.3});
  // schmidt:1, the opt-in Schmidt gain (estimator.consider_gain: docs/handoff.md).
  if (st.range(2) > 0) cfg.consider_gain = true;
  cfg.calibration.enabled = false;
  InertialEstimator est(model, cfg);
  est.SkipCalibration();
  const auto& ticks = BenchTicks();
  const unsigned char valid[2] = {1, 1}, contact[2] = {1, 1};
  std::size_t i = 0;
  for (auto _ : st) {
    const test::Tick& tk = ticks[i++ % ticks.size()];
    const TickInput in{tk.t, tk.q, tk.v, tk.a, tk.tau, tk.wrenches, valid, contact};
    benchmark::DoNotOptimize(est.Step(in));
  }
  // The states and the consider columns the tick carries (docs/performance.md, "The shipped tick's
  // cost").
  st.counters["states"] = est.filter().states();
  st.counters["consider"] = est.filter().consider();
}
BENCHMARK(BM_ShippedTick)
    ->ArgNames({"bodies", "friction", "schmidt"})
    ->Args({1, 0, 0})
    ->Args({4, 0, 0})
    ->Args({1, 1, 0})
    ->Args({4, 1, 0})
    ->Args({1, 0, 1})
    ->Args({4, 0, 1});

void BM_Rnea(benchmark::State& st) {
  const plugin::PluginConfig& shipped = Shipped();
  const dynamics::Model model = dynamics::LoadModelFromUrdfFile(
      shipped.urdf_path, dynamics::ModelOptions{shipped.floating_base, shipped.repair_inertia});
  dynamics::Workspace ws(model);
  Eigen::VectorXd tau(model.nv);
  const auto& ticks = BenchTicks();
  std::size_t i = 0;
  for (auto _ : st) {
    const test::Tick& tk = ticks[i++ % ticks.size()];
    dynamics::Rnea(model, ws, tk.q, tk.v, tk.a, tau);
    benchmark::DoNotOptimize(tau.data());
  }
}
BENCHMARK(BM_Rnea);

}  // namespace
}  // namespace heft::estimator

BENCHMARK_MAIN();

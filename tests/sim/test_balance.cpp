// Floating-base inverse dynamics: standing under the Table I torso load (pelvis-height task),
// stepping in place with hard touchdowns, and the slow walk; the plant's foot sensors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "heft/sim/plant.hpp"
#include "heft/sim/roles.hpp"
#include "heft/sim/scenario.hpp"
#include "heft/test/alloc_counter.hpp"

namespace heft::sim {
namespace {

RunResult RunNamed(std::string_view name, bool adaptation, HandOff hand_off, double scale) {
  ScenarioOptions options;
  options.adaptation = adaptation;
  options.duration_scale = scale;
  Scenario scenario = MakeScenario(name, options);
  RunOptions run;
  run.hand_off = hand_off;
  return RunScenario(scenario, run);
}

TEST(ScenariosPlant, FootSensorsCarryTheRobotsWeightWhenStanding) {
  // Independent of the controller: the robot's mass from MuJoCo's compiled model, and the vertical
  // forces its contacts report, standing still under the standing controller for 1 s.
  Scenario s = MakeScenario("step-in-place", ScenarioOptions{});
  Plant plant(s.urdf_path, s.wrench_links);
  plant.Reset(s.initial_joints, true);
  hal::RobotStateSample state;
  std::vector<double> tau(plant.num_joints());
  for (int k = 0; k < 900; ++k) {
    plant.Sample(state);
    ASSERT_TRUE(s.controller->Compute(plant.time(), state, tau));
    plant.Step(tau);
  }
  plant.Sample(state);
  const double weight = plant.model()->body_subtreemass[0] * 9.81;
  const double fz = state.wrenches[0].wrench[2] + state.wrenches[1].wrench[2];
  std::printf("standing: feet carry %.1f N, robot weight %.1f N, left %.1f right %.1f\n", fz,
              weight, state.wrenches[0].wrench[2], state.wrenches[1].wrench[2]);
  EXPECT_NEAR(fz, weight, 0.01 * weight);
  EXPECT_NEAR(state.wrenches[0].wrench[2], state.wrenches[1].wrench[2], 0.05 * weight);
  EXPECT_NEAR(state.base.position[2], 1.0, 0.005);  // the pelvis-height task
}

// The standing curl (8 s: 3 s still and unloaded, the dumbbell taken, 4.5 s of curling): with the
// true π handed on, the elbow follows its sine while the robot balances; without adaptation the
// unmodelled 5.44 kg drags the forearm down. Fails if the curl task, the dumbbell's attachment at
// 3 s or the balance under an asymmetric arm load breaks.
TEST(ScenariosStandingCurl, TrueParametersTrackTheCurlWhileBalancing) {
  const RunResult truth = RunNamed("standing-curl", true, HandOff::kTruth, 0.1);
  const RunResult baseline = RunNamed("standing-curl", false, HandOff::kTruth, 0.1);
  std::printf(
      "standing-curl (%.1f s): elbow RMSE true parameters %.4f rad, no adaptation %.4f rad\n",
      truth.simulated, truth.scored_rmse, baseline.scored_rmse);
  EXPECT_FALSE(truth.fell);
  EXPECT_FALSE(baseline.fell);
  EXPECT_FALSE(truth.controller_failed);
  EXPECT_LT(truth.scored_rmse, 0.005);
  EXPECT_GT(baseline.scored_rmse, 10 * truth.scored_rmse);
  EXPECT_LT(truth.max_cop_fraction, 0.9);
}

// Shortened torso-load: 5 s = one period of the square wave (35 kg, then 25 kg).
TEST(ScenariosTorsoLoad, TrueParametersHoldThePelvisHeightAndNoAdaptationDoesNot) {
  const RunResult truth = RunNamed("torso-load", true, HandOff::kTruth, 0.25);
  const RunResult baseline = RunNamed("torso-load", false, HandOff::kTruth, 0.25);
  std::printf(
      "torso-load (5 s): pelvis-height RMSE true parameters %.4f m (max %.4f), no "
      "adaptation %.4f m (max %.4f); %.1f s simulated in %.2f s\n",
      truth.scored_rmse, truth.max_abs[0], baseline.scored_rmse, baseline.max_abs[0],
      truth.simulated, truth.wall);
  EXPECT_FALSE(truth.fell);
  EXPECT_FALSE(baseline.fell);
  EXPECT_FALSE(truth.controller_failed);
  EXPECT_LT(truth.scored_rmse, 0.005);
  EXPECT_LT(truth.max_cop_fraction, 0.9);
  EXPECT_LT(baseline.max_cop_fraction, 0.9);
  EXPECT_GT(baseline.scored_rmse, 0.02);
  EXPECT_GT(baseline.scored_rmse, 2.2 * truth.scored_rmse);
}

// Shortened step-in-place: two steps.
TEST(ScenariosStepInPlace, StaysUpAndPutsTouchdownImpulsesIntoTheFootForces) {
  const RunResult r = RunNamed("step-in-place", true, HandOff::kTruth, 0.2);
  std::printf(
      "step-in-place (2 steps, %.1f s): touchdowns %d, pelvis-height max error %.4f m, "
      "peak foot fz %.0f N, peak rise %.0f N/s, base drift %.3f %.3f m, max CoP/sole %.2f; "
      "wall %.2f s\n",
      r.simulated, r.touchdowns, r.max_abs[0], r.peak_foot_force, r.peak_foot_force_rate,
      r.final_base_position[0], r.final_base_position[1], r.max_cop_fraction, r.wall);
  EXPECT_FALSE(r.fell);
  EXPECT_FALSE(r.controller_failed);
  EXPECT_EQ(r.touchdowns, 2);
  EXPECT_LT(r.max_abs[0], 0.01);
  EXPECT_LT(r.max_cop_fraction, 0.9);  // centre of pressure inside the soles
  // A touchdown loads the foot within milliseconds: the rise is far steeper than the weight shift
  // (the whole weight moved over 1.5 s is ~600 N/s).
  EXPECT_GT(r.peak_foot_force_rate, 1e5);
  EXPECT_LT(std::hypot(r.final_base_position[0], r.final_base_position[1]), 0.05);
}

// Shortened walk: two 8 cm steps forward.
TEST(ScenariosWalk, WalksForwardWithoutFalling) {
  const RunResult r = RunNamed("walk", true, HandOff::kTruth, 0.2);
  std::printf(
      "walk (2 steps, %.1f s): touchdowns %d, base moved %.3f m forward, pelvis-height max "
      "error %.4f m\n",
      r.simulated, r.touchdowns, r.final_base_position[0], r.max_abs[0]);
  EXPECT_FALSE(r.fell);
  EXPECT_EQ(r.touchdowns, 2);
  EXPECT_GT(r.final_base_position[0], 0.05);
}

TEST(ScenariosBalanceController, ComputeDoesNotAllocateAfterWarmUp) {
  Scenario s = MakeScenario("torso-load", ScenarioOptions{});
  Plant plant(s.urdf_path, s.wrench_links);
  plant.Reset(s.initial_joints, true);
  hal::RobotStateSample state;
  plant.Sample(state);
  hal::InertialEstimate estimate;
  estimate.status.state = hal::EstimatorState::kEstimating;
  estimate.num_links = 1;
  const std::string name = "torso";
  std::copy(name.begin(), name.end(), estimate.links[0].name.begin());
  const Vector10 pi = s.payloads[0].At(1.0);
  std::copy(pi.data(), pi.data() + 10, estimate.links[0].parameters.begin());
  std::vector<double> tau(plant.num_joints());
  ASSERT_TRUE(s.controller->Compute(0.0, state, tau));
  heft::test::AllocationScope scope;
  for (int k = 1; k < 20; ++k) {
    s.controller->OnInertialEstimate(estimate);
    ASSERT_TRUE(s.controller->Compute(0.001 * k, state, tau));
  }
  EXPECT_EQ(scope.count(), 0u);
}

// Unitree's H1_2 steps with and without its drives' damping (robot.yaml's `drives`, 1 N·m·s/rad:
// Unitree's H1 MJCF), the truth handed on. Without the damping its stance foot rolls about its
// sole's edge in the first single support; a plan without the floor's friction pyramid and the
// drives' effort limits answered with 10³–10⁵ N·m until MuJoCo's acceleration was not finite
// (4.24 s, 1 touchdown). Fails if either run falls, fails, misses a touchdown of the five or lets
// the pelvis height wander by a centimetre (measured: 0.6 and 1.1 mm).
TEST(ScenariosStepping, ThePublishedH12StepsWithAndWithoutItsDrivesDamping) {
  const std::string dir = std::string(HEFT_TEST_ROBOTS_DIR) + "/unitree_h1_2/";
  ScenarioOptions options;
  options.urdf_path = dir + "h1_2_handless.urdf";
  options.roles = LoadRoles(dir + "h1_2_handless_roles.yaml");
  options.duration_scale = 0.5;  // 5 steps
  RunResult with[2];
  for (const double damping : {0.0, 1.0}) {
    options.drive_damping = damping;
    Scenario s = MakeScenario("step-in-place", options);
    RunOptions run;
    run.hand_off = HandOff::kTruth;
    with[damping > 0.0 ? 1 : 0] = RunScenario(s, run);
    const RunResult& r = with[damping > 0.0 ? 1 : 0];
    std::printf(
        "H1_2 step-in-place, drives' damping %.1f N·m·s/rad: %.2f s simulated, touchdowns "
        "%d, fell %s, pelvis-height RMSE %.4f m\n",
        damping, r.simulated, r.touchdowns, r.fell ? "yes" : "no", r.scored_rmse);
  }
  for (const RunResult& r : with) {
    EXPECT_FALSE(r.fell);
    EXPECT_FALSE(r.controller_failed);
    EXPECT_GE(r.touchdowns, 5);
    EXPECT_LT(r.scored_rmse, 0.01);  // 1 cm: the stepping's pelvis height held
  }
}

}  // namespace
}  // namespace heft::sim

// The second humanoid, heft_compact (config/robots/heft_compact*.urdf, scripts/gen_humanoid.py
// --variant compact: 62.3 kg, shorter legs, longer arms, a lighter torso, heavier forearms, a
// smaller sole), a robot the simulator's controllers were not tuned on: the scenarios measure its
// proportions on its URDF, and the controllers keep it standing, stepping and holding its loads.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "heft/sim/plant.hpp"
#include "heft/sim/scenario.hpp"

namespace heft::sim {
namespace {

const std::string kRobots = HEFT_TEST_ROBOTS_DIR;

ScenarioOptions Compact(bool floating, bool adaptation = true, double scale = 1.0) {
  ScenarioOptions options;
  options.urdf_path = kRobots + (floating ? "/heft_compact.urdf" : "/heft_compact_fixed.urdf");
  options.roles = LoadRoles(kRobots + "/heft_compact_roles.yaml");
  options.adaptation = adaptation;
  options.duration_scale = scale;
  return options;
}

RunResult RunCompact(std::string_view name, bool floating, bool adaptation, double scale) {
  Scenario scenario = MakeScenario(name, Compact(floating, adaptation, scale));
  RunOptions run;
  run.hand_off = HandOff::kTruth;
  return RunScenario(scenario, run);
}

const BalanceConfig& Balance(const Scenario& s) {
  return dynamic_cast<const BalanceController&>(*s.controller).config();
}

// Hand-worked from scripts/gen_humanoid.py's COMPACT table: hip pitch 0.07 + 0.07 m below the
// pelvis, thigh and shin 0.34 m, ankle pitch 0.02 m above the foot's origin and the sole 0.065 m
// below it: straight-legged the pelvis is at 0.905 m, standing (0.09 m crouch) at 0.815 m; the sole
// box 0.22 x 0.11 m centred 0.025 m forward; torso and head 16 kg; forearm 2.6 kg with the wrist
// 0.31 m down it. Fails if a scenario ignores the configured URDF (it would find the reference
// robot's 1.0 m, 30 kg, 1.5 kg and 0.25 m, checked below as they were before) or measures it
// wrongly.
TEST(CompactHumanoid, ScenariosTakeTheirProportionsFromItsUrdf) {
  const Scenario torso = MakeScenario("torso-load", Compact(true));
  EXPECT_EQ(torso.urdf_path, kRobots + "/heft_compact.urdf");
  EXPECT_DOUBLE_EQ(Balance(torso).pelvis_height, 0.815);
  EXPECT_DOUBLE_EQ(torso.fall_height, 0.6 * 0.815);
  EXPECT_EQ(Balance(torso).sole_B, Eigen::Vector3d(0.025, 0.0, -0.065));
  EXPECT_EQ(torso.sole.centre, Balance(torso).sole_B);
  EXPECT_DOUBLE_EQ(torso.sole.half_length, 0.11);
  EXPECT_DOUBLE_EQ(torso.sole.half_width, 0.055);
  // Table I's square wave about the torso's own mass: nominal ± 5 kg.
  EXPECT_NEAR(torso.payloads.at(0).nominal[0], 16.0, 1e-12);
  EXPECT_NEAR(torso.payloads[0].At(1.0)[0], 21.0, 1e-9);
  EXPECT_NEAR(torso.payloads[0].At(3.0)[0], 11.0, 1e-9);

  const Scenario forearm = MakeScenario("forearm-load", Compact(false));
  EXPECT_EQ(forearm.urdf_path, kRobots + "/heft_compact_fixed.urdf");
  EXPECT_NEAR(forearm.payloads.at(0).nominal[0], 2.6, 1e-12);
  EXPECT_NEAR(forearm.payloads[0].At(0.25)[0], 2.6 + 6.0, 1e-9);  // the forearm + 3 ± 3 kg
  const Vector10 dumbbell = MakeScenario("dumbbell-curl", Compact(false)).payloads.at(0).attached;
  EXPECT_NEAR(dumbbell[0], 5.44, 1e-12);
  EXPECT_TRUE((dumbbell.segment<3>(1) / dumbbell[0]).isApprox(Eigen::Vector3d(0, 0, -0.31), 1e-12));

  // The reference humanoid (no URDF given) keeps its numbers exactly.
  const Scenario ref = MakeScenario("walk", ScenarioOptions{});
  EXPECT_EQ(Balance(ref).pelvis_height, 1.0);
  EXPECT_EQ(ref.fall_height, 0.6);
  EXPECT_EQ(Balance(ref).sole_B, Eigen::Vector3d(0.03, 0.0, -0.07));
  EXPECT_EQ(ref.sole.half_length, 0.12);
  EXPECT_EQ(ref.sole.half_width, 0.06);
  const Scenario ref_arm = MakeScenario("dumbbell-curl", ScenarioOptions{});
  EXPECT_DOUBLE_EQ(ref_arm.payloads.at(0).attached[3] / ref_arm.payloads[0].attached[0], -0.25);
}

// A fixed-base scenario given the floating URDF (or the reverse) is refused, naming the file. Fails
// if the scenario silently ran another robot than the configured one.
TEST(CompactHumanoid, RefusesAUrdfOfTheWrongBase) {
  ScenarioOptions wrong = Compact(true);
  try {
    (void)MakeScenario("forearm-load", wrong);
    ADD_FAILURE() << "forearm-load accepted a floating-base URDF";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("heft_compact.urdf"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fixed-base"), std::string::npos) << e.what();
  }
  wrong = Compact(false);
  EXPECT_THROW((void)MakeScenario("walk", wrong), std::invalid_argument);
}

// The standing pose puts both soles flat on the floor: after 0.9 s under the standing controller
// the feet carry the robot's weight (MuJoCo's compiled mass), shared evenly, with the pelvis at its
// measured height. Fails if the pose or the sole came from the reference robot's legs (the pelvis
// would start 0.185 m too high, or the contact point sit off the sole).
TEST(CompactHumanoid, StandsOnItsSolesAtTheMeasuredHeight) {
  Scenario s = MakeScenario("step-in-place", Compact(true));
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
  std::printf("compact standing: feet carry %.1f N, weight %.1f N, pelvis at %.4f m\n", fz, weight,
              state.base.position[2]);
  EXPECT_NEAR(weight, 62.3 * 9.81, 1e-6 * weight);
  EXPECT_NEAR(fz, weight, 0.01 * weight);
  EXPECT_NEAR(state.wrenches[0].wrench[2], state.wrenches[1].wrench[2], 0.05 * weight);
  EXPECT_NEAR(state.base.position[2], 0.815, 0.005);
}

// Shortened torso-load (5 s, one period: 21 kg, then 11 kg) with the true π handed on against none,
// as for the reference robot (test_balance.cpp). Fails if the balance controller cannot hold this
// robot's pelvis, or the load has no effect on it.
TEST(CompactHumanoid, TrueParametersHoldThePelvisUnderTheTorsoLoad) {
  const RunResult truth = RunCompact("torso-load", true, true, 0.25);
  const RunResult baseline = RunCompact("torso-load", true, false, 0.25);
  std::printf("compact torso-load (5 s): pelvis-height RMSE true %.4f m, no adaptation %.4f m\n",
              truth.scored_rmse, baseline.scored_rmse);
  EXPECT_FALSE(truth.fell);
  EXPECT_FALSE(baseline.fell);
  EXPECT_FALSE(truth.controller_failed);
  EXPECT_LT(truth.scored_rmse, 0.005);
  EXPECT_LT(truth.max_cop_fraction, 0.9);
  EXPECT_GT(baseline.scored_rmse, 0.02);
  EXPECT_GT(baseline.scored_rmse, 2.2 * truth.scored_rmse);
}

// Two steps in place and two 8 cm steps forward on the smaller sole. Fails if a step never touches
// down, the robot falls, the centre of pressure leaves the sole, or the walk does not advance.
TEST(CompactHumanoid, StepsInPlaceAndWalksForward) {
  const RunResult step = RunCompact("step-in-place", true, true, 0.2);
  const RunResult walk = RunCompact("walk", true, true, 0.2);
  std::printf(
      "compact step-in-place: touchdowns %d, pelvis max error %.4f m, CoP/sole %.2f; walk: "
      "touchdowns %d, moved %.3f m, pelvis max error %.4f m, CoP/sole %.2f\n",
      step.touchdowns, step.max_abs[0], step.max_cop_fraction, walk.touchdowns,
      walk.final_base_position[0], walk.max_abs[0], walk.max_cop_fraction);
  for (const RunResult* r : {&step, &walk}) {
    EXPECT_FALSE(r->fell);
    EXPECT_FALSE(r->controller_failed);
    EXPECT_EQ(r->touchdowns, 2);
    EXPECT_LT(r->max_abs[0], 0.01);
    EXPECT_LT(r->max_cop_fraction, 0.9);
  }
  EXPECT_LT(std::hypot(step.final_base_position[0], step.final_base_position[1]), 0.05);
  EXPECT_GT(walk.final_base_position[0], 0.05);
}

// Shortened forearm-load (4 s) on the heavier, longer forearm. Fails if the arm controller cannot
// hold the elbow with the true π, or the load has no effect without adaptation.
TEST(CompactHumanoid, TrueParametersHoldTheElbowUnderTheForearmLoad) {
  const RunResult truth = RunCompact("forearm-load", false, true, 0.25);
  const RunResult baseline = RunCompact("forearm-load", false, false, 0.25);
  std::printf("compact forearm-load (4 s): elbow RMSE true %.4f rad, no adaptation %.4f rad\n",
              truth.scored_rmse, baseline.scored_rmse);
  EXPECT_FALSE(truth.controller_failed);
  EXPECT_LT(truth.scored_rmse, 0.02);
  EXPECT_GT(baseline.scored_rmse, 0.3);
  EXPECT_GT(baseline.scored_rmse, 7.0 * truth.scored_rmse);
}

}  // namespace
}  // namespace heft::sim

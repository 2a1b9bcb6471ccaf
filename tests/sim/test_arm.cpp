// The elbow joint-space task (fixed base) and the arm scenarios: with the true forearm parameters
// handed on, the controller holds the task; with the load and no adaptation it does not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "heft/sim/plant.hpp"
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

TEST(ScenariosRegistry, RefusesUnknownNamesListingTheKnownOnes) {
  try {
    (void)MakeScenario("forearm-lod", ScenarioOptions{});
    FAIL() << "an unknown name was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    for (const auto& name : ScenarioNames()) EXPECT_NE(what.find(name), std::string::npos) << what;
    EXPECT_NE(what.find("forearm-lod"), std::string::npos);
  }
}

TEST(ScenariosRegistry, EveryNameBuildsAScenarioThatNamesItsEstimatedLinks) {
  for (const auto& name : ScenarioNames()) {
    ScenarioOptions options;
    options.duration_scale = 0.1;
    const Scenario s = MakeScenario(name, options);
    EXPECT_EQ(s.name, name);
    EXPECT_GT(s.duration, 0.0);
    EXPECT_FALSE(s.estimated_links.empty());
    ASSERT_NE(s.controller, nullptr);
    const auto names = s.controller->task_error_names();
    EXPECT_NE(std::find(names.begin(), names.end(), s.scored_error), names.end()) << name;
  }
}

TEST(ScenariosRegistry, SeedMovesTheStartDeterministicallyAndTheTaskStillHolds) {
  ScenarioOptions options;
  const Scenario home = MakeScenario("forearm-load", options);
  options.seed = 7;
  options.duration_scale = 0.125;
  Scenario a = MakeScenario("forearm-load", options);
  const Scenario b = MakeScenario("forearm-load", options);
  options.seed = 8;
  const Scenario c = MakeScenario("forearm-load", options);
  EXPECT_EQ(a.initial_joints, b.initial_joints);
  EXPECT_NE(a.initial_joints, c.initial_joints);
  double largest = 0.0;
  for (std::size_t i = 0; i < home.initial_joints.size(); ++i) {
    largest = std::max(largest, std::abs(a.initial_joints[i] - home.initial_joints[i]));
  }
  EXPECT_GT(largest, 0.01);
  EXPECT_LE(largest, 0.05);
  RunOptions run;
  run.hand_off = HandOff::kTruth;
  const RunResult r = RunScenario(a, run);
  EXPECT_LT(r.scored_rmse, 0.03);  // starts up to 0.05 rad off, then holds
}

TEST(ScenariosMassWaveform, TableOneWaveformsAtHandWorkedTimes) {
  // Torso: square, 30 kg offset, 5 kg amplitude, 0.2 Hz (period 5 s).
  const MassWaveform torso{MassWaveform::Shape::kSquare, 30.0, 5.0, 0.2, 0.0};
  EXPECT_DOUBLE_EQ(torso.Mass(1.0), 35.0);
  EXPECT_DOUBLE_EQ(torso.Mass(3.0), 25.0);
  EXPECT_DOUBLE_EQ(torso.Mass(6.0), 35.0);
  // Forearm: sine then square, 4.5 kg offset, 3 kg amplitude, 1 Hz, switch at 8 s.
  const MassWaveform forearm{MassWaveform::Shape::kSineThenSquare, 4.5, 3.0, 1.0, 8.0};
  EXPECT_NEAR(forearm.Mass(0.25), 7.5, 1e-12);
  EXPECT_NEAR(forearm.Mass(0.75), 1.5, 1e-12);
  EXPECT_NEAR(forearm.Mass(1.125), 4.5 + 3.0 * std::sin(std::numbers::pi / 4), 1e-12);
  EXPECT_DOUBLE_EQ(forearm.Mass(8.1), 7.5);
  EXPECT_DOUBLE_EQ(forearm.Mass(8.6), 1.5);
}

TEST(ScenariosPayload, ScalesTheLinkAndKeepsItsCentreOfMass) {
  ScenarioOptions options;
  const Scenario s = MakeScenario("forearm-load", options);
  const Payload& p = s.payloads.at(0);
  EXPECT_NEAR(p.nominal[0], 1.5, 1e-9);  // the URDF's forearm
  const Vector10 at = p.At(0.25);
  EXPECT_NEAR(at[0], 7.5, 1e-9);
  EXPECT_TRUE((at.segment<3>(1) / at[0]).isApprox(p.nominal.segment<3>(1) / p.nominal[0], 1e-12));
}

TEST(ScenariosPlant, PayloadParametersRoundTripThroughMujoco) {
  const Scenario s = MakeScenario("dumbbell-curl", ScenarioOptions{});
  Plant plant(s.urdf_path, {});
  const int body = plant.body("left_forearm");
  const Vector10 truth = s.payloads[0].At(0.0);
  ASSERT_TRUE(plant.SetLinkParameters(body, truth));
  EXPECT_TRUE(plant.LinkParameters(body).isApprox(truth, 1e-9));
  Vector10 bad = truth;
  bad[4] = -1.0;  // Ixx < 0 about the origin: not a rigid body
  EXPECT_FALSE(plant.SetLinkParameters(body, bad));
  EXPECT_TRUE(plant.LinkParameters(body).isApprox(truth, 1e-9));
}

// The plant saturates each drive at its joint's URDF effort limit, as a real drive does, and counts
// the steps on which a command was beyond it. Fails if a limit is not the URDF's, if a step within
// the limit is counted or one beyond it missed, or if the torque reaching MuJoCo (and reported) is
// not the command within the limit and the limit beyond it, with the command's sign.
TEST(ScenariosPlant, SaturatesAndCountsTorquesBeyondTheUrdfEffortLimit) {
  const Scenario s = MakeScenario("forearm-load", ScenarioOptions{});
  Plant plant(s.urdf_path, {});
  const auto it = std::find(s.joint_names.begin(), s.joint_names.end(), "left_elbow");
  ASSERT_NE(it, s.joint_names.end());
  const auto elbow = static_cast<std::size_t>(it - s.joint_names.begin());
  const double effort = plant.effort_limits()[elbow];
  EXPECT_EQ(effort, 60.0);  // heft_humanoid_fixed.urdf: <limit ... effort="60"/> on left_elbow
  std::vector<double> tau(s.joint_names.size(), 0.0);
  hal::RobotStateSample state;
  for (const double command : {0.5 * effort, effort, 2.0 * effort, -2.0 * effort}) {
    plant.Reset(s.initial_joints, false);
    tau[elbow] = command;
    plant.Step(tau);
    plant.Sample(state);
    const double applied = std::clamp(command, -effort, effort);
    EXPECT_DOUBLE_EQ(state.joints[elbow].torque, applied);
    EXPECT_DOUBLE_EQ(plant.data()->qfrc_applied[elbow], applied);  // fixed base: no free joint
  }
  EXPECT_EQ(plant.steps_beyond_effort(), 2);
  EXPECT_EQ(plant.beyond_effort_steps()[elbow], 2);
}

// Shortened forearm-load (4 s: 2 s of sine, 2 s of square).
TEST(ScenariosForearmLoad, TrueParametersHoldTheElbowAndNoAdaptationDoesNot) {
  const RunResult truth = RunNamed("forearm-load", true, HandOff::kTruth, 0.25);
  const RunResult baseline = RunNamed("forearm-load", false, HandOff::kTruth, 0.25);
  std::printf(
      "forearm-load (4 s): elbow RMSE true parameters %.4f rad (max %.4f), no adaptation "
      "%.4f rad (max %.4f)\n",
      truth.scored_rmse, truth.max_abs[0], baseline.scored_rmse, baseline.max_abs[0]);
  EXPECT_FALSE(truth.controller_failed);
  EXPECT_LT(truth.scored_rmse, 0.02);
  EXPECT_LT(truth.max_abs[0], 0.05);
  EXPECT_GT(baseline.scored_rmse, 0.3);
  EXPECT_GT(baseline.scored_rmse, 7.0 * truth.scored_rmse);
}

// Shortened dumbbell-curl (6 s, two curls).
TEST(ScenariosDumbbellCurl, TrueParametersTrackTheCurlAndNoAdaptationHangsTheArm) {
  const RunResult truth = RunNamed("dumbbell-curl", true, HandOff::kTruth, 0.4);
  const RunResult baseline = RunNamed("dumbbell-curl", true, HandOff::kNone, 0.4);
  std::printf("dumbbell-curl (6 s): elbow RMSE true parameters %.4f rad, nominal %.4f rad\n",
              truth.scored_rmse, baseline.scored_rmse);
  EXPECT_LT(truth.scored_rmse, 0.01);
  EXPECT_GT(baseline.scored_rmse, 0.8);
}

TEST(ScenariosController, IgnoresHandOffsWithoutAdaptationAndRefusesInconsistentOnes) {
  for (const bool adaptation : {false, true}) {
    ScenarioOptions options;
    options.adaptation = adaptation;
    Scenario s = MakeScenario("forearm-load", options);
    Controller& c = *s.controller;
    const Vector10 nominal = c.model_parameters(0);
    hal::InertialEstimate estimate;
    estimate.num_links = 1;
    const std::string name = "left_forearm";
    std::copy(name.begin(), name.end(), estimate.links[0].name.begin());
    const Vector10 loaded = s.payloads[0].At(0.25);
    std::copy(loaded.data(), loaded.data() + 10, estimate.links[0].parameters.begin());
    hal::RobotStateSample state;
    state.num_joints = static_cast<std::uint16_t>(s.joint_names.size());
    std::vector<double> tau(s.joint_names.size());
    // Not estimating yet: never used.
    estimate.status.state = hal::EstimatorState::kCalibratingBias;
    c.OnInertialEstimate(estimate);
    ASSERT_TRUE(c.Compute(0.0, state, tau));
    EXPECT_TRUE(c.model_parameters(0).isApprox(nominal));
    estimate.status.state = hal::EstimatorState::kEstimating;
    c.OnInertialEstimate(estimate);
    ASSERT_TRUE(c.Compute(0.0, state, tau));
    EXPECT_TRUE(c.model_parameters(0).isApprox(adaptation ? loaded : nominal, 1e-9));
    EXPECT_EQ(c.estimates_applied(), adaptation ? 1u : 0u);
    EXPECT_EQ(c.estimates_received(), 2u);
    // A negative mass is refused; the last good value stays.
    estimate.links[0].parameters[0] = -1.0;
    c.OnInertialEstimate(estimate);
    ASSERT_TRUE(c.Compute(0.0, state, tau));
    EXPECT_TRUE(c.model_parameters(0).isApprox(adaptation ? loaded : nominal, 1e-9));
    EXPECT_EQ(c.estimates_rejected(), adaptation ? 1u : 0u);
  }
}

TEST(ScenariosController, GravityCompensationMatchesTheWeightOfTheLoadedForearm) {
  // Hand-worked: arm at home (upper arm down, forearm horizontal forward), at rest. The elbow
  // torque must carry the forearm + wrist + hand about the elbow axis (y): τ = −g Σ m_i x_i
  // with x_i the forward offset of each centre of mass from the elbow.
  ScenarioOptions options;
  Scenario s = MakeScenario("forearm-load", options);
  Plant plant(s.urdf_path, {});
  plant.Reset(s.initial_joints, false);
  hal::RobotStateSample state;
  plant.Sample(state);
  std::vector<double> tau(s.joint_names.size());
  ASSERT_TRUE(s.controller->Compute(0.0, state, tau));
  const mjModel* m = plant.model();
  const mjData* d = plant.data();
  const int elbow_body = plant.body("left_forearm");
  const double x_elbow = d->xpos[3 * elbow_body];
  double moment = 0.0;
  for (int b = elbow_body; b < m->nbody; ++b) {
    // Bodies of the left forearm subtree follow it in MuJoCo's depth-first order.
    int a = b;
    while (a != 0 && a != elbow_body) a = m->body_parentid[a];
    if (a != elbow_body) continue;
    moment += m->body_mass[b] * (d->xipos[3 * b] - x_elbow);
  }
  const auto it = std::find(s.joint_names.begin(), s.joint_names.end(), "left_elbow");
  const double tau_elbow = tau[it - s.joint_names.begin()];
  // Rotation about +y by a positive angle moves a forward point down: gravity's torque about +y
  // is +g·Σ m x, which the motor must cancel.
  EXPECT_NEAR(tau_elbow, -9.81 * moment, 1e-6 + 1e-6 * std::abs(moment));
  EXPECT_GT(std::abs(tau_elbow), 1.0);
}

TEST(ScenariosController, ComputeDoesNotAllocateAfterWarmUp) {
  ScenarioOptions options;
  Scenario s = MakeScenario("dumbbell-curl", options);
  Plant plant(s.urdf_path, {});
  plant.Reset(s.initial_joints, false);
  hal::RobotStateSample state;
  plant.Sample(state);
  hal::InertialEstimate estimate;
  estimate.status.state = hal::EstimatorState::kEstimating;
  estimate.num_links = 1;
  const std::string name = "left_forearm";
  std::copy(name.begin(), name.end(), estimate.links[0].name.begin());
  const Vector10 pi = s.payloads[0].At(0.0);
  std::copy(pi.data(), pi.data() + 10, estimate.links[0].parameters.begin());
  std::vector<double> tau(s.joint_names.size());
  ASSERT_TRUE(s.controller->Compute(0.0, state, tau));
  heft::test::AllocationScope scope;
  for (int k = 1; k < 50; ++k) {
    s.controller->OnInertialEstimate(estimate);
    ASSERT_TRUE(s.controller->Compute(0.001 * k, state, tau));
  }
  EXPECT_EQ(scope.count(), 0u);
}

}  // namespace
}  // namespace heft::sim

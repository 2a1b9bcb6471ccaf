// The operator's procedure on the simulated robot (tools/main-job.sh): the exciting motion recorded
// for identification (scenario excite), the payload's late arrival after the calibration window
// (ScenarioOptions::load_after) and the robot without foot F/T cells.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "heft/sim/excitation.hpp"
#include "heft/sim/plant.hpp"
#include "heft/sim/scenario.hpp"

namespace heft::sim {
namespace {

// The controller feeds the excitation's first two derivatives forward: each must be the central
// difference of the one before, through the fades and the squat blocks' changes of speed. Would
// fail with a wrong product rule or ramp derivative (the pelvis and arms would lag their
// references), or if the squats or the sway did not reach their size or leaked outside their
// window.
TEST(ScenariosExcitation, SignalsAndTheirDerivativesAgreeAndStayInTheirWindows) {
  std::vector<std::string> joints = {"waist_yaw", "left_elbow", "right_shoulder_roll", "left_knee"};
  const Excitation x = TrainingMotion(joints, {"left_elbow", "right_shoulder_roll"}, {"waist_yaw"},
                                      7, 1.0, 20.0, 25.0);
  ASSERT_EQ(x.waves.size(), 3u);  // the knee is a leg joint: no wave
  const double h = 1e-5;
  double worst_d = 0, worst_dd = 0, deepest = 0, widest = 0;
  auto check = [&](const Signal& m, const Signal& c, const Signal& p, double scale) {
    worst_d = std::max(worst_d, std::abs((p.x - m.x) / (2 * h) - c.dx) / scale);
    worst_dd = std::max(worst_dd, std::abs((p.dx - m.dx) / (2 * h) - c.ddx) / scale);
  };
  for (double t = 0.0; t < 26.0; t += 0.0137) {
    check(x.Squat(t - h), x.Squat(t), x.Squat(t + h), 1.0);
    check(x.Sway(t - h), x.Sway(t), x.Sway(t + h), 1.0);
    for (std::size_t i = 0; i < x.waves.size(); ++i)
      check(x.Wave(i, t - h), x.Wave(i, t), x.Wave(i, t + h), 1.0);
    deepest = std::max(deepest, x.Squat(t).x);
    widest = std::max(widest, std::abs(x.Sway(t).x));
    if (t < 1.0 || t > 20.0) {
      EXPECT_EQ(x.Squat(t).x, 0.0) << t;
      EXPECT_EQ(x.Sway(t).x, 0.0) << t;
    }
    if (t < 1.0 || t > 25.0) {
      EXPECT_EQ(x.Wave(0, t).x, 0.0) << t;
    }
  }
  std::printf("excitation: derivative mismatch %.2e, second %.2e; squat %.3f m, sway %.3f m\n",
              worst_d, worst_dd, deepest, widest);
  EXPECT_LT(worst_d, 1e-4);
  EXPECT_LT(worst_dd, 1e-3);
  EXPECT_NEAR(deepest, 0.12, 0.005);
  EXPECT_NEAR(widest, 0.03, 0.003);
}

// 12 s of the identification motion on the plant with the truth handed on: the robot squats,
// sways and steps without falling, its feet inside their soles. Would fail if the excitation did
// not reach the controller (pelvis range and sideways range of the centre of mass too small) or if
// the motion were too violent for the balance controller.
TEST(ScenariosExcite, SquatsSwaysAndStepsWithoutFalling) {
  ScenarioOptions options;
  options.duration_scale = 0.2;  // the shortest form: 12 s, two steps
  Scenario s = MakeScenario("excite", options);
  ASSERT_NEAR(s.duration, 12.0, 1e-9);
  auto* balance = dynamic_cast<BalanceController*>(s.controller.get());
  ASSERT_NE(balance, nullptr);
  Plant plant(s.urdf_path, s.wrench_links);
  plant.Reset(s.initial_joints, true);
  hal::RobotStateSample state;
  std::vector<double> tau(plant.num_joints());
  double z_lo = 10, z_hi = -10, y_lo = 10, y_hi = -10;
  const auto ticks = static_cast<long>(std::lround(s.duration / plant.timestep()));
  for (long k = 0; k < ticks; ++k) {
    plant.Sample(state);
    ASSERT_TRUE(s.controller->Compute(plant.time(), state, tau)) << plant.time();
    plant.Step(tau);
    ASSERT_FALSE(plant.unstable()) << plant.time();
    ASSERT_GT(state.base.position[2], 0.6) << "fell at " << plant.time();
    if (plant.time() > 1.0) {
      z_lo = std::min(z_lo, state.base.position[2]), z_hi = std::max(z_hi, state.base.position[2]);
      const double y = balance->center_of_mass().y();
      y_lo = std::min(y_lo, y), y_hi = std::max(y_hi, y);
    }
  }
  std::printf("excite (%.0f s): pelvis %.3f..%.3f m, CoM y %.3f..%.3f m, %d touchdowns\n",
              s.duration, z_lo, z_hi, y_lo, y_hi, balance->touchdowns());
  EXPECT_GT(z_hi - z_lo, 0.10);  // squats of 0.12 m
  EXPECT_GT(y_hi - y_lo, 0.05);  // ±3 cm sway, then the weight shifts over each foot
  EXPECT_EQ(balance->touchdowns(), 2);
}

// The recording is where heft-identify learns each joint's friction, and a joint its static
// friction holds there teaches nothing (identify.log's held joints). With the deviated robot's
// largest Coulomb friction (1 N·m) on every joint, each wave joint (arms and waist) must slide
// whenever its wave does: held (|q̇| < 0.03 rad/s, heft-identify's reading) on at most a third of
// the ticks more than its reference is that slow. Each reversal sticks until the reference has
// moved F_c / K away (0.025 rad at 40 N·m/rad): 10–22 % more here. Would fail without the
// recording's joint servo (Excitation::servo_stiffness): the acceleration task gives a wrist about
// 0.2 N·m/rad, and the wrists and shoulder yaws were then held on every tick, the elbows on 65–88
// %.
TEST(ScenariosExcite, EveryWaveJointSlidesThroughAStaticFriction) {
  ScenarioOptions options;
  options.duration_scale = 0.2;
  Scenario s = MakeScenario("excite", options);
  const auto* balance = dynamic_cast<const BalanceController*>(s.controller.get());
  ASSERT_NE(balance, nullptr);
  const Excitation& x = balance->config().excitation;
  ASSERT_GT(x.servo_stiffness, 0.0);
  Plant plant(s.urdf_path, s.wrench_links);
  for (int j = 0; j < plant.num_joints(); ++j) plant.SetJointFriction(j, 1.0, 0.0);
  plant.Reset(s.initial_joints, true);
  std::vector<int> wave_joint;
  for (const JointWave& w : x.waves)
    wave_joint.push_back(static_cast<int>(
        std::find(s.joint_names.begin(), s.joint_names.end(), w.joint) - s.joint_names.begin()));
  hal::RobotStateSample state;
  std::vector<double> tau(plant.num_joints());
  std::vector<long> held(wave_joint.size(), 0), slow(wave_joint.size(), 0);
  long counted = 0;
  const double from = x.start + x.fade, to = 8.0;  // the waves at full size, before the steps
  while (plant.time() < to) {
    plant.Sample(state);
    ASSERT_TRUE(s.controller->Compute(plant.time(), state, tau)) << plant.time();
    plant.Step(tau);
    ASSERT_FALSE(plant.unstable()) << plant.time();
    if (plant.time() < from) continue;
    ++counted;
    for (std::size_t i = 0; i < wave_joint.size(); ++i)
      held[i] += std::abs(state.joints[wave_joint[i]].velocity) < 0.03;
    for (std::size_t i = 0; i < wave_joint.size(); ++i)
      slow[i] += std::abs(x.Wave(i, plant.time()).dx) < 0.03;
  }
  ASSERT_GT(counted, 1000);
  double worst = -1.0;
  std::size_t worst_i = 0;
  const auto n = static_cast<double>(counted);
  for (std::size_t i = 0; i < wave_joint.size(); ++i) {
    const double excess = static_cast<double>(held[i] - slow[i]) / n;
    if (excess > worst) worst = excess, worst_i = i;
    EXPECT_LT(excess, 1.0 / 3.0) << x.waves[i].joint << " held "
                                 << static_cast<double>(held[i]) / n;
  }
  std::printf(
      "excite, 1 N·m of Coulomb friction on every joint: of %zu wave joints %s is held the "
      "most beyond its reference's slow ticks, on %.0f %% of %ld ticks against %.0f %%\n",
      wave_joint.size(), x.waves[worst_i].joint.c_str(),
      100.0 * static_cast<double>(held[worst_i]) / n, counted,
      100.0 * static_cast<double>(slow[worst_i]) / n);
}

// load_after: the arm holds its home pose, unloaded, until the load arrives; then the scenario runs
// as it does from t = 0. Would fail if the payload or the curl started at t = 0 (the elbow would
// move and the truth differ from the URDF before the load) or the schedule were not shifted.
TEST(ScenariosLoadAfter, ThePayloadAndTheTaskWaitForTheLoad) {
  ScenarioOptions now, later;
  later.load_after = 2.0;
  const Scenario s0 = MakeScenario("dumbbell-curl", now);
  Scenario s1 = MakeScenario("dumbbell-curl", later);
  EXPECT_NEAR(s1.duration - s0.duration, 2.0, 1e-12);
  const Payload& p0 = s0.payloads[0];
  const Payload& p1 = s1.payloads[0];
  EXPECT_TRUE(p1.At(1.999).isApprox(p1.nominal));
  for (double t : {0.0, 0.4, 3.3}) EXPECT_TRUE(p1.At(2.0 + t).isApprox(p0.At(t))) << t;
  const Scenario torso = MakeScenario("torso-load", later);
  EXPECT_TRUE(torso.payloads[0].At(1.0).isApprox(torso.payloads[0].nominal));
  EXPECT_GT(std::abs(torso.payloads[0].At(2.5)[0] - torso.payloads[0].nominal[0]), 1.0);

  Plant plant(s1.urdf_path, s1.wrench_links);
  plant.Reset(s1.initial_joints, false);
  const int elbow =
      static_cast<int>(std::find(s1.joint_names.begin(), s1.joint_names.end(), "left_elbow") -
                       s1.joint_names.begin());
  hal::RobotStateSample state;
  std::vector<double> tau(plant.num_joints());
  double still = 0, moved = 0;
  for (int k = 0; k < 4500; ++k) {
    const double t = plant.time();
    plant.SetLinkParameters(plant.body("left_forearm"), p1.At(t));
    plant.Sample(state);
    ASSERT_TRUE(s1.controller->Compute(t, state, tau));
    plant.Step(tau);
    const double off = std::abs(state.joints[elbow].position - s1.initial_joints[elbow]);
    if (t < 1.99) still = std::max(still, std::abs(state.joints[elbow].velocity));
    if (t > 3.5) moved = std::max(moved, off);
  }
  std::printf(
      "load_after 2 s: elbow speed before the load at most %.4f rad/s; moved %.2f rad after\n",
      still, moved);
  EXPECT_LT(still, 0.01);  // still: the calibration's max_speed is 0.2-0.3 rad/s
  EXPECT_GT(moved, 0.2);   // the curl runs after the load
}

// The robot without foot F/T cells: no wrench sensors on the plant; the balance controller takes
// contact from the feet's kinematics and keeps the pelvis height under the torso load. Would fail
// if the scenario still asked the plant for foot cells or the controller needed them.
TEST(ScenariosNoFootSensors, TorsoLoadBalancesOnKinematicContact) {
  ScenarioOptions options;
  options.foot_sensors = false;
  options.duration_scale = 0.2;
  Scenario s = MakeScenario("torso-load", options);
  EXPECT_TRUE(s.wrench_links.empty());
  RunOptions run;
  run.hand_off = HandOff::kTruth;
  const RunResult r = RunScenario(s, run);
  std::printf("torso-load without foot cells (%.0f s): pelvis RMSE %.4f m\n", r.simulated,
              r.scored_rmse);
  EXPECT_FALSE(r.fell);
  EXPECT_FALSE(r.controller_failed);
  EXPECT_LT(r.scored_rmse, 0.005);
}

}  // namespace
}  // namespace heft::sim

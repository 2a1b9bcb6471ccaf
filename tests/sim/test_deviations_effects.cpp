// How the simulated robot's deviations (simulation.deviations) show: the sensors' offsets, gains
// and biases in the decoded frames; friction as the configured torque on a moving joint, the
// drives' damping under the deviations' viscous friction; the configuration's errors naming
// file:line; the controllers' model heft's nominal unless the URDF is asked for; the torso load
// following the torso's mass.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "deviation_presets.hpp"
#include "heft/config/yaml.hpp"
#include "heft/dynamics/dynamics.hpp"
#include "heft/sim/deviations.hpp"
#include "heft/sim/scenario.hpp"
#include "heft/sim/sim_backend.hpp"
#include "heft/sim/sim_config.hpp"
#include "sim_rig.hpp"

namespace heft::sim {
namespace {

using test::kConfigDir;
using test::kRoles;
using test::LoadSetup;
using test::Options;
using test::Preset;
using test::SimLoop;
using test::SimRig;

// What `parse` throws as a configuration error, or "no error".
template <class Parse>
std::string ConfigErrorOf(Parse parse) {
  try {
    parse();
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// The sensors' offsets, gains and biases in the decoded frames: without noise, every decoded
// torque is (1 + gain) τ_applied + offset within half an LSB; every F/T component the true wrench
// at the cell plus its offset within ½ Σ|C_ij|; the IMU's gyro and accelerometer the truth plus
// their bias within half an LSB. Fails if a drawn offset, gain or bias is not applied, applied
// twice or to another channel (each is checked to be ≫ its bound).
TEST(Deviations, SensorOffsetsGainsAndBiasesShowInTheDecodedFrames) {
  const std::string scenario = "step-in-place";
  const SimRig s = LoadSetup(scenario);
  SimOptions opt = Options(scenario, false);
  opt.deviations = Preset(false, 1);
  DeviationMagnitudes& mag = opt.deviations.magnitudes;
  mag.torque_offset = 0.5;
  mag.torque_gain = 0.02;
  mag.ft_force_offset = 5.0;
  mag.ft_moment_offset = 0.5;
  mag.gyro_bias = 0.03;  // the default's 0.003 rad/s is only ~3 of the gyro's LSBs
  mag.accelerometer_bias = 0.5;
  SimLoop rig(opt, s);
  const RobotDeviations& dev = rig.sim.deviations();
  const std::size_t nj = s.drivers.joints.size(), nc = s.drivers.ft_cells.size();
  const auto& imu = s.drivers.imu->imu;
  double worst_t = 0, worst_f = 0, worst_i = 0;  // error / bound
  int big_offsets = 0;
  for (int k = 1; k <= 300; ++k) {
    rig.Step(k);
    const hal::RobotStateSample& out = rig.loop.last_sample();
    const hal::RobotStateSample& truth = rig.sim.truth();
    for (std::size_t i = 0; i < nj; ++i) {
      const double lsb = s.drivers.joints[i].torque.nm_per_count;
      const JointDeviation& j = dev.joints[i];
      const double expected = (1.0 + j.torque_gain) * truth.joints[i].torque + j.torque_offset;
      const double e = std::abs(out.joints[i].torque - expected) / (0.5 * lsb);
      ASSERT_LE(e, 1.0 + 1e-6) << s.drivers.joints[i].joint << " at " << k << " ms";
      worst_t = std::max(worst_t, e);
      if (k == 1) big_offsets += std::abs(j.torque_offset) > 100 * lsb;
    }
    for (std::size_t c = 0; c < nc; ++c) {
      const auto& C = s.drivers.ft_cells[c].ft.calibration;
      const auto& w = truth.wrenches[c].wrench;
      const Eigen::Vector3d f(w[0], w[1], w[2]), n(w[3], w[4], w[5]);
      const Eigen::Vector3d n_ft = n - rig.sim.ft_offsets()[c].cross(f);  // at the cell
      for (int i = 0; i < 6; ++i) {
        const double expected = i < 3 ? f[i] + dev.ft_cells[c].force_offset[i]
                                      : n_ft[i - 3] + dev.ft_cells[c].moment_offset[i - 3];
        const double bound = 0.5 * C.row(i).cwiseAbs().sum();
        const double e = std::abs(out.wrenches[c].wrench[i] - expected) / bound;
        ASSERT_LE(e, 1.0 + 1e-6) << "cell " << c << " component " << i << " at " << k << " ms";
        worst_f = std::max(worst_f, e);
      }
    }
    const sim::ImuTruth& it = rig.sim.imu_truth();
    const Eigen::Matrix3d& R_BI = s.drivers.imu->R_BI;
    const Eigen::Vector3d w = R_BI.transpose() * Eigen::Vector3d(out.base.angular_velocity.data());
    const Eigen::Vector3d f = R_BI.transpose() * Eigen::Vector3d(out.base.specific_force.data());
    const double ew = (w - it.w_I - dev.gyro_bias).cwiseAbs().maxCoeff() / (0.5 * imu.gyro_lsb);
    const double ef =
        (f - it.f_I - dev.accelerometer_bias).cwiseAbs().maxCoeff() / (0.5 * imu.accel_lsb);
    ASSERT_LE(std::max(ew, ef), 1.0 + 1e-6) << k << " ms";
    worst_i = std::max({worst_i, ew, ef});
  }
  std::printf(
      "decoded − (sensor model with the drawn errors), worst / its bound: torque %.3f, "
      "F/T %.3f, IMU %.3f\n",
      worst_t, worst_f, worst_i);
  // The errors are far above the bounds, so a missing one would fail.
  EXPECT_GT(big_offsets, static_cast<int>(nj) * 3 / 4);
  for (const FtDeviation& c : dev.ft_cells) EXPECT_GT(c.force_offset.cwiseAbs().maxCoeff(), 1.0);
  EXPECT_GT(dev.gyro_bias.cwiseAbs().maxCoeff(), 5 * imu.gyro_lsb);
  EXPECT_GT(dev.accelerometer_bias.cwiseAbs().maxCoeff(), 5 * imu.accel_lsb);
}

// Friction in the plant, as the torque sensors see it (τ_sensed = τ_rigid-body + τ_friction): the
// decoded torque minus MuJoCo's inverse dynamics at the step's state and acceleration (the
// velocity change over the step) is coulomb·sign(q̇) + viscous·q̇ on the curling elbow (q̇ after
// the step: the damping is integrated implicitly) within half an LSB and the constraint solver's
// tolerance, and never more than the Coulomb friction on a joint that sticks. Fails if friction is
// not in the plant, has another size or sign, or is left out of the sensed torque.
TEST(Deviations, FrictionIsTheConfiguredTorqueOnAMovingJoint) {
  const std::string scenario = "dumbbell-curl";  // the elbow curls 0.7 rad at 0.333 Hz
  const SimRig s = LoadSetup(scenario);
  SimOptions opt = Options(scenario, false);
  opt.deviations = Preset(false, 1);
  // Light friction, that the curl's weak task gains (2 N·m/rad) still drive through: the elbow
  // slides most of the time (its draw for seed 1: 0.173 N·m, 0.174 N·m·s/rad).
  opt.deviations.magnitudes.coulomb = 0.3;
  opt.deviations.magnitudes.viscous = 0.2;
  SimLoop rig(opt, s);
  // The controller is handed the true forearm + dumbbell (as a perfect estimator would): the elbow
  // follows its curl, away from its limits (a limit's constraint force is not friction).
  hal::InertialEstimate estimate;
  estimate.status.state = hal::EstimatorState::kEstimating;
  estimate.num_links = 1;
  const std::string link = rig.sim.scenario().payloads.at(0).link;
  std::copy(link.begin(), link.end(), estimate.links[0].name.begin());
  const mjModel* m = rig.sim.plant().model();
  const std::size_t nj = s.drivers.joints.size();
  std::size_t elbow = nj;
  for (std::size_t i = 0; i < nj; ++i)
    if (s.drivers.joints[i].joint == "left_elbow") elbow = i;
  ASSERT_LT(elbow, nj);
  const JointDeviation& fr = rig.sim.deviations().joints[elbow];
  ASSERT_GT(fr.coulomb, 0.1);  // ≫ the LSB: friction left out would fail
  ASSERT_GT(fr.viscous, 0.1);
  std::vector<int> dof(nj);
  for (std::size_t i = 0; i < nj; ++i)
    dof[i] = m->jnt_dofadr[mj_name2id(m, mjOBJ_JOINT, s.drivers.joints[i].joint.c_str())];
  mjData* before = mj_makeData(m);
  std::vector<mjtNum> rne(m->nv);
  const double h = m->opt.timestep, lsb = s.drivers.joints[elbow].torque.nm_per_count;
  double worst_sliding = 0.0, worst_stuck = 0.0, fastest = 0.0;
  int sliding = 0;
  for (int k = 1; k <= 3000; ++k) {
    mj_copyData(before, m, rig.sim.plant().data());
    const Eigen::VectorXd pi = rig.sim.TruePayload();
    std::copy(pi.data(), pi.data() + 10, estimate.links[0].parameters.begin());
    estimate.sequence += 1;
    rig.sim.Step(k % 3 == 1 ? &estimate : nullptr);
    rig.loop.Tick(k * test::kMs);
    const mjData* after = rig.sim.plant().data();
    // Inverse dynamics at the state the step started from, with the acceleration it applied.
    mj_fwdPosition(m, before);
    mj_fwdVelocity(m, before);
    for (int v = 0; v < m->nv; ++v) before->qacc[v] = (after->qvel[v] - before->qvel[v]) / h;
    mj_rne(m, before, 1, rne.data());
    for (std::size_t i = 0; i < nj; ++i) {
      const double friction = rig.loop.last_sample().joints[i].torque - rne[dof[i]];
      const double qd = after->qvel[dof[i]];
      const JointDeviation& j = rig.sim.deviations().joints[i];
      if (i == elbow && std::abs(qd) > 0.05) {
        const double expected = j.coulomb * (qd > 0 ? 1.0 : -1.0) + j.viscous * qd;
        worst_sliding = std::max(worst_sliding, std::abs(friction - expected));
        fastest = std::max(fastest, std::abs(qd));
        ++sliding;
      } else if (std::abs(qd) < 0.01) {  // sticking (creeping) joints: dry friction ≤ Coulomb
        worst_stuck = std::max(worst_stuck, std::abs(friction - j.viscous * qd) - j.coulomb);
      }
    }
  }
  mj_deleteData(before);
  std::printf(
      "left_elbow friction (Coulomb %.3f N·m, viscous %.3f N·m·s/rad), %d sliding ms up to "
      "%.2f rad/s: worst |sensed − rigid-body − model| %.2e N·m; stuck joints exceed "
      "their Coulomb friction by at most %.2e N·m\n",
      fr.coulomb, fr.viscous, sliding, fastest, worst_sliding, worst_stuck);
  EXPECT_GT(sliding, 2000);
  EXPECT_GT(fastest, 0.5);
  EXPECT_LT(worst_sliding, 0.5 * lsb + 1e-6);
  EXPECT_LT(worst_stuck, 0.5 * lsb + 1e-6);
}

// simulation.deviations in the configuration: absent, the robot is its URDF; a preset with
// overrides on top; an unknown key, an unknown preset or a value out of range is refused with
// file:line:col, the key path and what is allowed. Fails if the key is silently ignored.
TEST(Deviations, ConfigurationErrorsNameFileLineAndTheAllowedKeys) {
  auto parse = [](const std::string& deviations) {
    const std::string text =
        "simulation:\n  scenario: dumbbell-curl\n  seed: 4\n" + deviations + kRoles;
    return ParseSimulation(config::Document::Parse(text, "sim.yaml").root());
  };
  const SimulationConfig none = parse("");
  EXPECT_EQ(none.options.deviations.preset, "ideal");
  EXPECT_FALSE(none.options.deviations.magnitudes.inertial());
  const SimulationConfig d =
      parse("  deviations: {preset: default, seed: 7, mass: 0.05, coulomb: 0}\n");
  EXPECT_EQ(d.options.deviations.seed, 7u);
  EXPECT_EQ(d.options.deviations.magnitudes.mass, 0.05);
  EXPECT_EQ(d.options.deviations.magnitudes.coulomb, 0.0);
  EXPECT_EQ(d.options.deviations.magnitudes.com, DeviationMagnitudes::Default().com);
  const SimulationConfig i = parse("  deviations:\n    preset: ideal\n    torque_gain: 0.01\n");
  EXPECT_EQ(i.options.deviations.magnitudes.torque_gain, 0.01);
  EXPECT_EQ(i.options.deviations.magnitudes.mass, 0.0);
  auto error = [&](const std::string& deviations) {
    return ConfigErrorOf([&] { (void)parse(deviations); });
  };
  using ::testing::HasSubstr;
  const std::string unknown = error("  deviations:\n    preset: default\n    masss: 0.1\n");
  EXPECT_THAT(unknown, HasSubstr("sim.yaml:6:"));
  EXPECT_THAT(unknown, HasSubstr("simulation.deviations.masss"));
  EXPECT_THAT(unknown, HasSubstr("allowed: preset, seed, mass, com, inertia, coulomb, viscous, "
                                 "torque_offset, torque_gain, ft_force_offset, ft_moment_offset, "
                                 "gyro_bias, accelerometer_bias"));
  const std::string preset = error("  deviations: {preset: realistic}\n");
  EXPECT_THAT(preset, HasSubstr("sim.yaml:4:"));
  EXPECT_THAT(preset, HasSubstr("ideal, default"));
  EXPECT_THAT(error("  deviations: {seed: 2}\n"), HasSubstr("preset"));
  EXPECT_THAT(error("  deviations: {preset: default, mass: 0.7}\n"),
              HasSubstr("simulation.deviations.mass"));
}

// simulation.drives: the robot's drives' damping reaches the plant on every joint, and the
// deviations' viscous friction adds to it (MuJoCo's dof_damping = drive + viscous); absent, none.
// An unknown key or a negative value is refused with the key's path. Fails if the damping is
// ignored, replaces the deviations' friction or is replaced by it.
TEST(Deviations, TheDrivesDampingIsOnEveryJointUnderTheDeviationsViscousFriction) {
  auto parse = [](const std::string& drives) {
    const std::string text = "simulation:\n  scenario: dumbbell-curl\n" + drives + kRoles;
    return ParseSimulation(config::Document::Parse(text, "sim.yaml").root());
  };
  EXPECT_EQ(parse("").options.drive_damping, 0.0);
  EXPECT_EQ(parse("  drives: {damping: 1.5}\n").options.drive_damping, 1.5);
  auto error = [&](const std::string& drives) {
    return ConfigErrorOf([&] { (void)parse(drives); });
  };
  using ::testing::HasSubstr;
  EXPECT_THAT(error("  drives: {dampng: 1}\n"), HasSubstr("simulation.drives.dampng"));
  EXPECT_THAT(error("  drives: {dampng: 1}\n"), HasSubstr("allowed: damping"));
  EXPECT_THAT(error("  drives: {damping: -1}\n"), HasSubstr("simulation.drives.damping"));

  const std::string scenario = "dumbbell-curl";
  const SimRig s = LoadSetup(scenario);
  for (const bool deviated : {false, true}) {
    SimOptions opt = Options(scenario, false);
    opt.deviations = Preset(deviated, 3);
    opt.drive_damping = 0.7;
    SimulatedRobot sim(opt, s.drivers, s.model);
    const mjModel* m = sim.plant().model();
    for (std::size_t i = 0; i < s.drivers.joints.size(); ++i) {
      const int dof = m->jnt_dofadr[mj_name2id(m, mjOBJ_JOINT, s.drivers.joints[i].joint.c_str())];
      const double viscous = deviated ? sim.deviations().joints[i].viscous : 0.0;
      EXPECT_DOUBLE_EQ(m->dof_damping[dof], 0.7 + viscous) << s.drivers.joints[i].joint;
    }
  }
}

// simulation.controller_model: heft's nominal model by default (robot.parameters when given, else
// the URDF); `urdf` keeps the URDF; `parameters` only with robot.parameters (the model it names);
// anything else refused with the allowed values. Fails if a value is ignored.
TEST(Deviations, TheControllersModelIsHeftsNominalUnlessTheUrdfIsAskedFor) {
  auto parse = [](const std::string& robot, const std::string& simulation) {
    const std::string text = robot + "simulation:\n  scenario: torso-load\n" + simulation + kRoles;
    return ParseSimulation(config::Document::Parse(text, "sim.yaml").root());
  };
  const std::string with_parameters = "robot:\n  parameters: identified.yaml\n";
  EXPECT_TRUE(parse(with_parameters, "").controller_model_from_parameters);
  EXPECT_FALSE(parse("robot:\n  urdf: x.urdf\n", "").controller_model_from_parameters);
  EXPECT_TRUE(
      parse(with_parameters, "  controller_model: nominal\n").controller_model_from_parameters);
  EXPECT_FALSE(
      parse(with_parameters, "  controller_model: urdf\n").controller_model_from_parameters);
  EXPECT_TRUE(
      parse(with_parameters, "  controller_model: parameters\n").controller_model_from_parameters);
  auto error = [&](const std::string& robot, const std::string& simulation) {
    return ConfigErrorOf([&] { (void)parse(robot, simulation); });
  };
  using ::testing::HasSubstr;
  const std::string missing = error("robot:\n  urdf: x.urdf\n", "  controller_model: parameters\n");
  EXPECT_THAT(missing, HasSubstr("sim.yaml:5:"));
  EXPECT_THAT(missing, HasSubstr("needs robot.parameters"));
  EXPECT_THAT(error(with_parameters, "  controller_model: cad\n"),
              HasSubstr("nominal, urdf, parameters"));
}

// Table I's torso load (± 5 kg on the reference's 30 kg torso) on a robot's own torso: ± 5 kg on a
// torso of at least 15 kg (the reference's waveform unchanged), ± a third of a lighter one (the
// G1's 7.8 kg torso: ± 2.6 kg, its low two thirds of the body). Fails if the load is the absolute
// 5 kg on the G1 (its low, 2.8 kg, was inconsistent with its deviated inertia) or if the
// reference's changed.
TEST(Deviations, TheTorsoLoadFollowsTheTorsosMass) {
  const Scenario reference = MakeScenario("torso-load", ScenarioOptions{});
  ASSERT_EQ(reference.payloads.size(), 1U);
  EXPECT_EQ(reference.payloads[0].mass.amplitude, 5.0);
  EXPECT_NEAR(reference.payloads[0].nominal[0], 30.0, 1e-9);
  const std::string dir = kConfigDir + "/robots/unitree_g1/";
  ScenarioOptions g1;
  g1.urdf_path = dir + "g1_29dof.urdf";
  g1.roles = LoadRoles(dir + "g1_29dof_roles.yaml");
  const Scenario s = MakeScenario("torso-load", g1);
  ASSERT_EQ(s.payloads.size(), 1U);
  const Payload& p = s.payloads[0];
  EXPECT_NEAR(p.nominal[0], 7.817, 1e-6);  // torso_link with the head and frames merged
  EXPECT_DOUBLE_EQ(p.mass.amplitude, p.nominal[0] / 3.0);
  EXPECT_NEAR(p.mass.offset - p.mass.amplitude, 2.0 / 3.0 * p.nominal[0], 1e-9);
}

}  // namespace
}  // namespace heft::sim

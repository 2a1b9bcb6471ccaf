// heft's YAML as the plugin reads it, cross-checked against the URDF: every refusal names the
// file, line and column of the offending entry and its key path (what an operator edits).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "heft/dynamics/model.hpp"
#include "heft/host/configuration.hpp"
#include "heft/plugin/driver_check.hpp"
#include "heft/test/config_builder.hpp"

namespace heft::plugin {
namespace {

using ::testing::HasSubstr;

// The plugin's part of the file as every program reads it (host::LoadConfiguration).
PluginConfig LoadPluginConfig(const std::string& path) {
  return host::LoadConfiguration(path, host::Reader::kTool).plugin;
}

// A configuration of config/sim/ edited through yaml-cpp (heft/test/config_builder.hpp), written
// into a temporary directory (robot.urdf made absolute).
using heft::test::ConfigBuilder;
using heft::test::Where;
using heft::test::WhereKey;

using Edit = std::function<void(ConfigBuilder&)>;
// The edits: a key path set to a value (YAML: a scalar, or a list or map in flow style), or
// removed.
Edit Set(const std::string& key, const std::string& yaml) {
  return [=](ConfigBuilder& c) { c.SetYaml(key, yaml); };
}
Edit Remove(const std::string& key) {
  return [=](ConfigBuilder& c) { c.Remove(key); };
}

struct Case {
  const char* name;
  const char* scenario;  // config/sim/<scenario>.yaml
  Edit edit;
  // Where the message must point in the edited file: the value at this key path, or with `at_key`
  // the key itself (an unknown key).
  std::string at;
  bool at_key;
  std::string message;  // expected after "<file>:<line>:<column>: "
};

// Each case applies its edit, loads the file and expects its message at the line and column of the
// edited entry. Fails if the file is accepted, if the message names another file, line, column or
// key path, or if its wording differs.
void ExpectRefusals(const std::vector<Case>& cases) {
  const std::string dir = std::string(HEFT_CONFIG_DIR) + "/sim";
  for (const Case& c : cases) {
    ConfigBuilder config(dir + "/" + c.scenario + ".yaml");
    c.edit(config);
    const std::string path = config.Write("config.yaml");
    const std::string where = c.at_key ? WhereKey(path, c.at) : Where(path, c.at);
    try {
      (void)LoadPluginConfig(path);
      ADD_FAILURE() << c.name << ": accepted";
    } catch (const config::ConfigError& e) {
      EXPECT_THAT(e.what(), HasSubstr(path + ":" + where + ": " + c.message)) << c.name;
    }
  }
}

// Would fail if a cross-check against the URDF reported only the file (the bare "drivers.joints:
// ..." of before) or the wrong entry.
TEST(PluginConfig, UrdfCrossChecksNameTheLineAndKey) {
  const std::string joint = "drivers.joints[6]";  // left_elbow, node 6 on can0
  ExpectRefusals({
      {"unknown joint", "forearm-load", Set(joint + ".name", "left_elbo"), joint + ".name", false,
       "drivers.joints[6].name: joint 'left_elbo' is not in "},
      {"joint listed twice", "forearm-load", Set(joint + ".name", "left_shoulder_yaw"),
       joint + ".name", false, "drivers.joints[6].name: joint 'left_shoulder_yaw' listed twice"},
      {"fixed joint", "forearm-load", Set(joint + ".name", "left_wrist_mount_joint"),
       joint + ".name", false, "drivers.joints[6].name: joint 'left_wrist_mount_joint' is not in "},
      {"joint without sensors", "forearm-load", Remove(joint), "drivers.joints", false,
       "drivers.joints: joint 'left_elbow' of "},
      {"duplicate CAN node", "forearm-load", Set(joint + ".node", "5"), joint + ".node", false,
       "drivers.joints[6].node: identifier 0x105 on bus 'can0' is used by both the encoder "
       "of 'left_shoulder_yaw' and the encoder of 'left_elbow'"},
      {"unknown F/T frame", "torso-load", Set("drivers.ft_cells[0].frame", "left_foot_tf"),
       "drivers.ft_cells[0].frame", false,
       "drivers.ft_cells[0].frame: frame 'left_foot_tf' is not a link of "},
      {"F/T identifier clash", "torso-load", Set("drivers.ft_cells[0].base_id", "0x104"),
       "drivers.ft_cells[0].base_id", false,
       "drivers.ft_cells[0].base_id: identifier 0x104 on bus 'can0' is used by both the "
       "encoder of"},
      {"unknown estimated link", "forearm-load", Set("estimator.links", "[left_forarm]"),
       "estimator.links[0]", false, "estimator.links[0]: unknown body (moving link) 'left_forarm'"},
      {"link merged by a fixed joint", "forearm-load",
       Set("estimator.links", "[left_forearm, head]"), "estimator.links[1]", false,
       "estimator.links[1]: link 'head' is merged into body 'torso'"},
      {"link listed twice", "forearm-load", Set("estimator.links", "[left_forearm, left_forearm]"),
       "estimator.links[1]", false, "estimator.links[1]: link 'left_forearm' is listed twice"},
      {"link prior of a link not estimated", "torso-load",
       Set("estimator.link_priors", "[{link: left_forearm, prior_time_constant: 1}]"),
       "estimator.link_priors[0].link", false,
       "estimator.link_priors[0].link: 'left_forearm' is not one of estimator.links (torso)"},
      {"link prior given twice", "torso-load",
       Set("estimator.link_priors", "[{link: torso}, {link: torso}]"),
       "estimator.link_priors[1].link", false,
       "estimator.link_priors[1].link: 'torso' given twice"},
      {"link prior with a stray key", "torso-load",
       Set("estimator.link_priors", "[{link: torso, sigma: [1]}]"),
       "estimator.link_priors[0].sigma", true,
       "estimator.link_priors[0].sigma: unknown key 'sigma'; allowed: link, initial_sigma, "
       "process_noise, prior_time_constant, parameter_frame"},
      {"unknown parameter frame", "torso-load", Set("estimator.parameter_frame", "cog"),
       "estimator.parameter_frame", false,
       "estimator.parameter_frame: 'cog' is not allowed; allowed: link, com"},
      {"unknown parameter frame of a link", "torso-load",
       Set("estimator.link_priors", "[{link: torso, parameter_frame: origin}]"),
       "estimator.link_priors[0].parameter_frame", false,
       "estimator.link_priors[0].parameter_frame: 'origin' is not allowed; allowed: link, com"},
      {"acceleration inflation below one", "torso-load",
       Set("estimator.noise.acceleration_inflation", "0.5"),
       "estimator.noise.acceleration_inflation", false,
       "estimator.noise.acceleration_inflation: value 0.5 is out of range; allowed: [1, 100]"},
      {"shape memory beyond a minute", "forearm-load", Set("estimator.shape_memory", "120"),
       "estimator.shape_memory", false,
       "estimator.shape_memory: value 120 is out of range; allowed: [0, 60]"},
      {"a load extent beyond 2 m", "forearm-load", Set("estimator.load_extent", "3"),
       "estimator.load_extent", false,
       "estimator.load_extent: value 3 is out of range; allowed: [0, 2]"},
      {"a principal axes' turn beyond a radian", "forearm-load",
       Set("estimator.nominal_uncertainty", "{turn: 2}"), "estimator.nominal_uncertainty.turn",
       false, "estimator.nominal_uncertainty.turn: value 2 is out of range; allowed: [0, 1]"},
      {"a nominal uncertainty with a stray key", "forearm-load",
       Set("estimator.nominal_uncertainty", "{tilt: 0.1}"), "estimator.nominal_uncertainty.tilt",
       true,
       "estimator.nominal_uncertainty.tilt: unknown key 'tilt'; allowed: mass, com, inertia, "
       "turn"},
      {"a gate hold after a negative time", "forearm-load",
       Set("estimator.gating.hold_after", "-1"), "estimator.gating.hold_after", false,
       "estimator.gating.hold_after: value -1 is out of range; allowed: [0, 600]"},
      {"a consider gain that is not a boolean", "forearm-load",
       Set("estimator.consider_gain", "schmidt"), "estimator.consider_gain", false,
       "estimator.consider_gain: expected true or false, found"},
      {"float for an integer", "forearm-load", Set("estimator.difference_samples", "2.5"),
       "estimator.difference_samples", false,
       "estimator.difference_samples: expected an integer in [1, 31]: '2.5' is not a whole "
       "number"},
      {"low-pass above Nyquist", "forearm-load", Set("estimator.measurement_lowpass", "200"),
       "estimator.measurement_lowpass", false,
       "estimator.measurement_lowpass: a cutoff of 200 Hz is not below the control rate's "
       "Nyquist frequency (166.667 Hz at control_period 0.003 s); 0 turns the low-pass off"},
  });
}

// A key given twice is malformed YAML that yaml-cpp would read silently (keeping one of them), so
// no node edit can make it: the file is written as text, and the message names both lines. Would
// fail if the duplicate were accepted or reported without its position.
TEST(PluginConfig, ADuplicateKeyIsRefusedWithBothLines) {
  const std::string path = heft::test::FreshTempDir("heft-plugin-config") + "/duplicate.yaml";
  std::ofstream(path) << "backend: simulated\n"
                         "estimator:\n"
                         "  filter: ekf\n"
                         "  filter: kf\n";
  try {
    (void)LoadPluginConfig(path);
    ADD_FAILURE() << "accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path + ":4:3: estimator.filter: duplicate key 'filter' "
                                           "(first at line 3:3)"));
  }
}

// The accelerations' noise in R: the sensors' σ through the central difference (√2 σ / 2h ms),
// times estimator.noise.acceleration_inflation (default 5). Would fail if the inflation were not
// applied, applied twice, or defaulted to another value, or if the base's angular rows lost the
// gyro's.
TEST(PluginConfig, TheAccelerationNoiseIsTheSensorsTimesTheInflation) {
  const std::string path = std::string(HEFT_CONFIG_DIR) + "/sim/torso-load.yaml";
  const PluginConfig shipped = LoadPluginConfig(path);
  const double gyro = std::sqrt(2.0) * 0.002 / 0.004, joint = std::sqrt(2.0) * 0.0005 / 0.004;
  EXPECT_EQ(shipped.acceleration_inflation, 1.0);
  ASSERT_EQ(shipped.estimator.acceleration_sigma.size(), 35);
  EXPECT_NEAR(shipped.estimator.acceleration_sigma[3], gyro, 1e-12);
  EXPECT_NEAR(shipped.estimator.acceleration_sigma[34], joint, 1e-12);
  const std::string edited = ConfigBuilder(path)
                                 .Set("estimator.noise.acceleration_inflation", "5")
                                 .Write("inflation.yaml");
  const PluginConfig five = LoadPluginConfig(edited);
  EXPECT_EQ(five.acceleration_inflation, 5.0);
  EXPECT_NEAR(five.estimator.acceleration_sigma[3], 5.0 * gyro, 1e-12);
  EXPECT_NEAR(five.estimator.acceleration_sigma[34], 5.0 * joint, 1e-12);
}

// The base's linear acceleration from the differenced base velocity (estimator.base_acceleration:
// velocity, or auto without drivers.imu): its rows of acceleration_sigma are
// k · √2 σ_v / (2h · 1 ms) (estimator.noise.base_velocity), not the accelerometer's σ, and the
// IMU's path is what it was. Would fail if the velocity path kept the accelerometer's σ (the
// review's case: 0.02 m/s² where the differenced velocity carries 1.77), if h or the inflation
// were left out of it or the base's angular rows changed with it, if the default of an absent
// key moved from PluginConfig::kDefaultBaseVelocitySigma or applied with nothing else modelled,
// if auto without the IMU took the smaller of the two paths, or if the IMU's path (auto with
// drivers.imu) read base_velocity at all.
TEST(PluginConfig, TheVelocityPathsAccelerationNoiseIsTheDifferencedVelocitys) {
  const std::string path = std::string(HEFT_CONFIG_DIR) + "/sim/torso-load.yaml";
  const double r2 = std::sqrt(2.0);
  auto load = [&](const std::vector<Edit>& edits) {
    ConfigBuilder config(path);
    for (const Edit& e : edits) e(config);
    return LoadPluginConfig(config.Write("base-velocity.yaml"));
  };
  auto expect_rows = [](const PluginConfig& c, int from, double sigma, const char* what) {
    ASSERT_EQ(c.estimator.acceleration_sigma.size(), 35) << what;
    for (int i = from; i < from + 3; ++i)
      EXPECT_NEAR(c.estimator.acceleration_sigma[i], sigma, 1e-12 * sigma) << what << ", row " << i;
  };

  // The IMU's path (torso-load as shipped: auto with drivers.imu), with and without the key.
  const PluginConfig shipped = LoadPluginConfig(path);
  ASSERT_TRUE(shipped.drivers.imu.has_value());
  const double gyro4 = r2 * 0.002 / 0.004;  // the differenced gyro, h = 2
  const double imu = std::hypot(0.02, shipped.drivers.imu->p_BI.norm() * gyro4);
  expect_rows(shipped, 0, imu, "imu path");
  EXPECT_FALSE(shipped.base_velocity_sigma.has_value());
  expect_rows(load({Set("estimator.noise.base_velocity", "0.05")}), 0, imu,
              "imu path, base_velocity ignored");
  expect_rows(load({Set("estimator.base_acceleration", "imu"),
                    Set("estimator.noise.base_velocity", "0.05")}),
              0, imu, "base_acceleration: imu");

  // velocity: h = 3 (6 ms) and k = 2, the angular rows the gyro's as before.
  const PluginConfig velocity =
      load({Set("estimator.base_acceleration", "velocity"),
            Set("estimator.noise.base_velocity", "0.005"), Set("estimator.difference_samples", "3"),
            Set("estimator.noise.acceleration_inflation", "2")});
  expect_rows(velocity, 0, 2.0 * r2 * 0.005 / 0.006, "velocity path");
  expect_rows(velocity, 3, 2.0 * r2 * 0.002 / 0.006, "velocity path, angular rows");
  EXPECT_NEAR(velocity.estimator.acceleration_sigma[34], 2.0 * r2 * 0.0005 / 0.006, 1e-12);

  // velocity without the key, the other sensors' noise set: the stated default.
  const PluginConfig defaulted = load({Set("estimator.base_acceleration", "velocity")});
  EXPECT_EQ(defaulted.base_velocity_sigma, PluginConfig::kDefaultBaseVelocitySigma);
  EXPECT_EQ(PluginConfig::kDefaultBaseVelocitySigma, 0.01);
  expect_rows(defaulted, 0, r2 * 0.01 / 0.004, "velocity path, default");
  // ... and with nothing modelled, nothing (the default does not switch the noise model on).
  const PluginConfig none =
      load({Set("estimator.base_acceleration", "velocity"),
            Set("estimator.noise", "{joint_torque: 1.0, base_force: 10.0, base_torque: 5.0}")});
  EXPECT_EQ(none.estimator.acceleration_sigma.size(), 0);
  EXPECT_FALSE(none.base_velocity_sigma.has_value());

  // auto without drivers.imu (the framework's base: either path, sample by sample): the larger.
  const PluginConfig framework =
      load({Remove("drivers.imu"), Set("estimator.noise.base_velocity", "0.005")});
  expect_rows(framework, 0, r2 * 0.005 / 0.004, "auto without the IMU");
  const PluginConfig exact =
      load({Remove("drivers.imu"), Set("estimator.noise.base_velocity", "0")});
  expect_rows(exact, 0, 0.02, "auto without the IMU, an exact velocity: the accelerometer's");
  expect_rows(load({Remove("drivers.imu")}), 0, r2 * 0.01 / 0.004, "auto without the IMU, default");

  ExpectRefusals({
      {"negative base velocity noise", "torso-load", Set("estimator.noise.base_velocity", "-0.005"),
       "estimator.noise.base_velocity", false,
       "estimator.noise.base_velocity: value -0.005 is out of range; allowed: [0, 10]"},
      {"base velocity noise not a number", "torso-load",
       Set("estimator.noise.base_velocity", "fast"), "estimator.noise.base_velocity", false,
       "estimator.noise.base_velocity: expected a number"},
      {"misspelt base velocity noise", "torso-load", Set("estimator.noise.base_velocty", "0.005"),
       "estimator.noise.base_velocty", true,
       "estimator.noise.base_velocty: unknown key 'base_velocty'; allowed: joint_torque, "
       "joint_torque_scale, base_force, base_torque, ft, gyro, accelerometer, joint_velocity, "
       "acceleration_inflation, base_velocity"},
  });
}

// The unedited scenarios load; would fail if a cross-check refused a valid configuration.
// The Schmidt gain is opt-in: off in the shipped configuration, on when asked. Would fail if the
// key were not read or its default changed without the docs' table behind it.
TEST(PluginConfig, TheSchmidtGainIsOptIn) {
  const std::string path = std::string(HEFT_CONFIG_DIR) + "/sim/torso-load.yaml";
  EXPECT_FALSE(LoadPluginConfig(path).estimator.consider_gain);
  const std::string on =
      ConfigBuilder(path).Set("estimator.consider_gain", "true").Write("schmidt.yaml");
  EXPECT_TRUE(LoadPluginConfig(on).estimator.consider_gain);
}

TEST(PluginConfig, EveryShippedScenarioLoads) {
  for (const char* s : {"forearm-load", "dumbbell-curl", "torso-load", "step-in-place", "walk"})
    EXPECT_NO_THROW((void)LoadPluginConfig(std::string(HEFT_CONFIG_DIR) + "/sim/" + s + ".yaml"))
        << s;
}

// The robot without foot F/T cells (config/sim/*-noft.yaml): its feet are the estimator's contacts
// (`estimator.contact_frames`), assumed in contact since no cell says otherwise, so the null-space
// measurement projects their wrenches out. Would fail if a floating robot without cells were left
// with no contacts (the full measurement would then read the feet's reaction as a model error) or
// if the key were accepted beside cells, on a fixed base, with an unknown frame or with
// `measurement: full`.
TEST(PluginConfig, TheRobotWithoutFootCellsNamesItsContacts) {
  const std::string dir = std::string(HEFT_CONFIG_DIR) + "/sim";
  for (const char* s : {"torso-load-noft", "standing-curl-noft", "excite"})
    EXPECT_NO_THROW((void)LoadPluginConfig(dir + "/" + s + ".yaml")) << s;
  const PluginConfig c = LoadPluginConfig(dir + "/torso-load-noft.yaml");
  EXPECT_TRUE(c.drivers.ft_cells.empty());
  EXPECT_EQ(c.estimator.contact_frames, (std::vector<std::string>{"left_foot", "right_foot"}));
  EXPECT_EQ(c.mapping.wrench_frames, c.estimator.contact_frames);
  ExpectRefusals({
      {"contacts beside cells", "torso-load", Set("estimator.contact_frames", "[left_foot]"),
       "estimator.contact_frames", false,
       "estimator.contact_frames: the contacts are the F/T cells' frames"},
      {"contacts on a fixed base", "forearm-load", Set("estimator.contact_frames", "[left_foot]"),
       "estimator.contact_frames", false, "estimator.contact_frames: only a floating base"},
      {"unknown contact frame", "torso-load-noft", Set("estimator.contact_frames[1]", "right_fot"),
       "estimator.contact_frames[1]", false,
       "estimator.contact_frames[1]: unknown frame (link) 'right_fot'"},
      {"full measurement without cells", "torso-load-noft", Set("estimator.measurement", "full"),
       "estimator.measurement", false, "estimator.measurement: full needs the contact wrenches"},
  });
}

}  // namespace
}  // namespace heft::plugin

namespace heft::plugin {
namespace {

// A joint whose torque comes from a motor current carries its conversion's uncertainty into the
// estimator's torque-scale term at its own row (v order, the base's six rows left out); the others
// the common term; no joint with one of its own: empty (the estimator's common term). Fails if the
// value lands on another joint's row or the common term is lost.
TEST(PluginConfig, ACurrentDerivedTorquesUncertaintyIsItsJointsTorqueScale) {
  const dynamics::Model model = dynamics::LoadModelFromUrdfFile(
      std::string(HEFT_CONFIG_DIR) + "/robots/heft_humanoid.urdf", dynamics::ModelOptions{true});
  drivers::DriverConfig cfg = drivers::ReferenceDriverConfig(model.joint_names(), {});
  EXPECT_TRUE(JointTorqueScales(cfg, 0.01, model).empty());
  for (auto& j : cfg.joints)
    if (j.joint == "left_knee") j.torque_scale_uncertainty = 0.07;
  const std::vector<double> scales = JointTorqueScales(cfg, 0.01, model);
  ASSERT_EQ(scales.size(), static_cast<std::size_t>(model.nv - 6));
  const int knee =
      model.bodies[static_cast<std::size_t>(model.joint_body_index("left_knee"))].v_index;
  for (int v = 6; v < model.nv; ++v)
    EXPECT_DOUBLE_EQ(scales[static_cast<std::size_t>(v - 6)], v == knee ? 0.07 : 0.01) << v;
}

}  // namespace
}  // namespace heft::plugin

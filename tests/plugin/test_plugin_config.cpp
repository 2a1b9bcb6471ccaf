// heft's YAML as the plugin reads it, cross-checked against the URDF: every refusal names the
// file, line and column of the offending entry and its key path (what an operator edits).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "heft/config/configuration.hpp"

namespace heft::plugin {
namespace {

using ::testing::HasSubstr;

// The plugin's part of the file as every program reads it (config::LoadConfiguration).
PluginConfig LoadPluginConfig(const std::string& path) {
  return config::LoadConfiguration(path, config::Reader::kTool).plugin;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Case {
  const char* name;
  const char* scenario;  // config/sim/<scenario>.yaml
  std::string from, to;  // the edit
  std::string message;   // expected after "<file>:"
};

// Each case edits one scenario's configuration and expects its message at the edited line. Would
// fail if a cross-check against the URDF reported only the file (the bare "drivers.joints: ..." of
// before) or the wrong entry, or if a duplicate YAML key were silently accepted.
TEST(PluginConfig, UrdfCrossChecksNameTheLineAndKey) {
  const std::vector<Case> cases = {
      {"unknown joint", "forearm-load", "name: left_elbow,", "name: left_elbo,",
       "17:14: drivers.joints[6].name: joint 'left_elbo' is not in "},
      {"joint listed twice", "forearm-load", "name: left_elbow,", "name: left_shoulder_yaw,",
       "17:14: drivers.joints[6].name: joint 'left_shoulder_yaw' listed twice"},
      {"fixed joint", "forearm-load", "name: left_elbow,", "name: left_wrist_mount_joint,",
       "17:14: drivers.joints[6].name: joint 'left_wrist_mount_joint' is not in "},
      {"joint without sensors", "forearm-load", "    - {name: left_elbow, bus: can0, node: 6}\n",
       "", "11:5: drivers.joints: joint 'left_elbow' of "},
      {"duplicate CAN node", "forearm-load", "name: left_elbow, bus: can0, node: 6",
       "name: left_elbow, bus: can0, node: 5",
       "17:43: drivers.joints[6].node: identifier 0x105 on bus 'can0' is used by both the encoder "
       "of 'left_shoulder_yaw' and the encoder of 'left_elbow'"},
      {"unknown F/T frame", "torso-load", "frame: left_foot_ft", "frame: left_foot_tf",
       "41:14: drivers.ft_cells[0].frame: frame 'left_foot_tf' is not a link of "},
      {"F/T identifier clash", "torso-load", "base_id: 0x300", "base_id: 0x104",
       "43:16: drivers.ft_cells[0].base_id: identifier 0x104 on bus 'can0' is used by both the "
       "encoder of"},
      {"unknown estimated link", "forearm-load", "links: [left_forearm]", "links: [left_forarm]",
       "41:11: estimator.links[0]: unknown body (moving link) 'left_forarm'"},
      {"link merged by a fixed joint", "forearm-load", "links: [left_forearm]",
       "links: [left_forearm, head]",
       "41:25: estimator.links[1]: link 'head' is merged into body 'torso'"},
      {"link listed twice", "forearm-load", "links: [left_forearm]",
       "links: [left_forearm, left_forearm]",
       "41:25: estimator.links[1]: link 'left_forearm' is listed twice"},
      {"duplicate key", "forearm-load", "  filter: ekf\n", "  filter: ekf\n  filter: kf\n",
       "43:3: estimator.filter: duplicate key 'filter' (first at line 42:3)"},
      {"link prior of a link not estimated", "torso-load", "  prior_time_constant: 2\n",
       "  prior_time_constant: 2\n  link_priors: [{link: left_forearm, prior_time_constant: 1}]\n",
       "59:24: estimator.link_priors[0].link: 'left_forearm' is not one of estimator.links "
       "(torso)"},
      {"link prior given twice", "torso-load", "  prior_time_constant: 2\n",
       "  prior_time_constant: 2\n  link_priors: [{link: torso}, {link: torso}]\n",
       "59:39: estimator.link_priors[1].link: 'torso' given twice"},
      {"link prior with a stray key", "torso-load", "  prior_time_constant: 2\n",
       "  prior_time_constant: 2\n  link_priors: [{link: torso, sigma: [1]}]\n",
       "59:31: estimator.link_priors[0].sigma: unknown key 'sigma'; allowed: link, initial_sigma, "
       "process_noise, prior_time_constant, parameter_frame"},
      {"unknown parameter frame", "torso-load", "  parameter_frame: com\n",
       "  parameter_frame: cog\n",
       "59:20: estimator.parameter_frame: 'cog' is not allowed; allowed: link, com"},
      {"unknown parameter frame of a link", "torso-load", "  prior_time_constant: 2\n",
       "  prior_time_constant: 2\n  link_priors: [{link: torso, parameter_frame: origin}]\n",
       "59:48: estimator.link_priors[0].parameter_frame: 'origin' is not allowed; allowed: link, "
       "com"},
      {"acceleration inflation below one", "torso-load", "joint_velocity: 0.0005}",
       "joint_velocity: 0.0005, acceleration_inflation: 0.5}",
       "54:174: estimator.noise.acceleration_inflation: value 0.5 is out of range; allowed: [1, "
       "100]"},
      {"float for an integer", "forearm-load", "  filter: ekf\n",
       "  filter: ekf\n  difference_samples: 2.5\n",
       "43:23: estimator.difference_samples: expected an integer in [1, 31]: '2.5' is not a whole "
       "number"},
      {"low-pass above Nyquist", "forearm-load", "  filter: ekf\n",
       "  filter: ekf\n  measurement_lowpass: 200\n",
       "43:24: estimator.measurement_lowpass: a cutoff of 200 Hz is not below the control rate's "
       "Nyquist frequency (166.667 Hz at control_period 0.003 s); 0 turns the low-pass off"},
  };
  const std::string dir = std::string(HEFT_CONFIG_DIR) + "/sim";
  for (const Case& c : cases) {
    std::string text = Slurp(dir + "/" + c.scenario + ".yaml");
    const auto at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.name;
    text.replace(at, c.from.size(), c.to);
    // Beside the original so that the URDF's relative path resolves.
    const std::string path = dir + "/.test_config_" + std::to_string(getpid()) + ".yaml";
    std::ofstream(path) << text;
    try {
      (void)LoadPluginConfig(path);
      ADD_FAILURE() << c.name << ": accepted";
    } catch (const config::ConfigError& e) {
      EXPECT_THAT(e.what(), HasSubstr(path + ":" + c.message)) << c.name;
    }
    std::filesystem::remove(path);
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
  std::string text = Slurp(path);
  const std::string from = "joint_velocity: 0.0005}";
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), "joint_velocity: 0.0005, acceleration_inflation: 5}");
  const std::string edited =
      std::string(HEFT_CONFIG_DIR) + "/sim/.test_inflation_" + std::to_string(getpid()) + ".yaml";
  std::ofstream(edited) << text;
  const PluginConfig five = LoadPluginConfig(edited);
  std::filesystem::remove(edited);
  EXPECT_EQ(five.acceleration_inflation, 5.0);
  EXPECT_NEAR(five.estimator.acceleration_sigma[3], 5.0 * gyro, 1e-12);
  EXPECT_NEAR(five.estimator.acceleration_sigma[34], 5.0 * joint, 1e-12);
}

// The unedited scenarios load; would fail if a cross-check refused a valid configuration.
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
  const std::vector<Case> cases = {
      {"contacts beside cells", "torso-load", "  measurement: auto\n",
       "  measurement: auto\n  contact_frames: [left_foot]\n",
       "54:19: estimator.contact_frames: the contacts are the F/T cells' frames"},
      {"contacts on a fixed base", "forearm-load", "  measurement: auto\n",
       "  measurement: auto\n  contact_frames: [left_foot]\n",
       "44:19: estimator.contact_frames: only a floating base"},
      {"unknown contact frame", "torso-load-noft", "contact_frames: [left_foot, right_foot]",
       "contact_frames: [left_foot, right_fot]",
       "47:31: estimator.contact_frames[1]: unknown frame (link) 'right_fot'"},
      {"full measurement without cells", "torso-load-noft", "measurement: auto",
       "measurement: full", "45:16: estimator.measurement: full needs the contact wrenches"},
  };
  for (const Case& k : cases) {
    std::string text = Slurp(dir + "/" + k.scenario + ".yaml");
    const auto at = text.find(k.from);
    ASSERT_NE(at, std::string::npos) << k.name;
    text.replace(at, k.from.size(), k.to);
    const std::string path = dir + "/.test_contacts_" + std::to_string(getpid()) + ".yaml";
    std::ofstream(path) << text;
    try {
      (void)LoadPluginConfig(path);
      ADD_FAILURE() << k.name << ": accepted";
    } catch (const config::ConfigError& e) {
      EXPECT_THAT(e.what(), HasSubstr(path + ":" + k.message)) << k.name;
    }
    std::filesystem::remove(path);
  }
}

}  // namespace
}  // namespace heft::plugin

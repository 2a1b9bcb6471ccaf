// The robot's role map (sim/include/heft/sim/roles.hpp, simulation.roles): parsed with errors that
// name file, line, key and what is allowed; resolved on the URDF into the legs', arms' and waist's
// chains and the joints' senses, with errors naming the role, the name and what the robot has; and
// the scenarios run any robot from it: the reference humanoid with every link and joint renamed,
// and with its pitch joints turned the other way, runs exactly as the reference does.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <numbers>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "heft/config/yaml.hpp"
#include "heft/sim/roles.hpp"
#include "heft/sim/scenario.hpp"
#include "heft/sim/sim_config.hpp"
#include "heft/test/config_builder.hpp"
#include "heft/test/heftd_run.hpp"
#include "roles_yaml.hpp"

namespace heft::sim {
namespace {

using ::testing::HasSubstr;

const std::string kRobots = HEFT_TEST_ROBOTS_DIR;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The reference humanoid's role-map file with one line's text replaced.
std::string ReferenceRoles(const std::string& from = "", const std::string& to = "") {
  std::string text = Slurp(kRobots + "/heft_humanoid_roles.yaml");
  if (!from.empty()) {
    const auto at = text.find(from);
    if (at == std::string::npos)
      ADD_FAILURE() << "no '" << from << "' in the role map";
    else
      text.replace(at, from.size(), to);
  }
  return text;
}

RoleMap Parse(const std::string& text) {
  return ParseRoles(config::Document::Parse(text, "roles.yaml").root()["roles"]);
}

std::string ParseError(const std::string& text) {
  try {
    (void)Parse(text);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

MjModelPtr Load(const std::string& urdf) {
  return LoadMujocoModel(urdf, MujocoLoadOptions{});
}

std::string ResolveError(const RoleMap& map, const std::string& urdf) {
  try {
    (void)ResolveRoles(map, Load(urdf).get(), urdf);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

// Every key is read into its role; the file's place of each is kept for later errors. Fails if a
// key went to another role or the payload arm were not read.
TEST(Roles, ParsesEveryRole) {
  const RoleMap map = Parse(ReferenceRoles("payload: {arm: left}", "payload: {arm: right}"));
  EXPECT_EQ(map.pelvis, "pelvis");
  EXPECT_EQ(map.torso, "torso");
  EXPECT_EQ(map.legs[0].hip_pitch, "left_hip_pitch");
  EXPECT_EQ(map.legs[1].knee, "right_knee");
  EXPECT_EQ(map.legs[1].ankle_pitch, "right_ankle_pitch");
  EXPECT_EQ(map.legs[0].foot, "left_foot");
  EXPECT_EQ(map.arms[0].shoulder_roll, "left_shoulder_roll");
  EXPECT_EQ(map.arms[1].elbow, "right_elbow");
  EXPECT_EQ(map.arms[1].forearm, "right_forearm");
  EXPECT_EQ(map.arms[0].hand, "left_hand");
  EXPECT_EQ(map.payload_arm, 1);
  EXPECT_THAT(map.where.at("right_leg.knee"), HasSubstr("roles.yaml:7:"));
  EXPECT_THAT(map.where.at("right_leg.knee"), HasSubstr("roles.right_leg.knee"));
}

// An unknown key, a missing one, an unknown arm and an empty name are refused at their file and
// line, with the allowed keys or values. Fails if any is accepted or reported elsewhere.
TEST(Roles, ParseErrorsNameFileLineKeyAndTheAllowedValues) {
  const std::string unknown = ParseError(ReferenceRoles("knee: left_knee", "kne: left_knee"));
  EXPECT_THAT(unknown, HasSubstr("roles.yaml:6:"));
  EXPECT_THAT(unknown, HasSubstr("roles.left_leg.kne"));
  EXPECT_THAT(unknown, HasSubstr("allowed: hip_pitch, knee, ankle_pitch, foot"));
  const std::string top = ParseError(ReferenceRoles("torso: torso", "chest: torso"));
  EXPECT_THAT(top, HasSubstr("allowed: pelvis, torso, left_leg, right_leg, left_arm, right_arm, "
                             "payload"));
  EXPECT_THAT(ParseError(ReferenceRoles(", hand: left_hand", "")),
              HasSubstr("missing required key 'hand'"));
  const std::string arm = ParseError(ReferenceRoles("{arm: left}", "{arm: middle}"));
  EXPECT_THAT(arm, HasSubstr("roles.payload.arm"));
  EXPECT_THAT(arm, HasSubstr("left, right"));
  EXPECT_THAT(ParseError(ReferenceRoles("pelvis: pelvis", "pelvis: ''")),
              HasSubstr("roles.pelvis: expected the name of a link or joint"));
}

// heft-sim's configuration needs the role map: without simulation.roles it is refused naming the
// key. Fails if a configuration without one were taken for the reference humanoid.
TEST(Roles, TheSimulationSectionRequiresTheRoleMap) {
  const std::string text = "simulation:\n  scenario: walk\n";
  try {
    (void)ParseSimulation(config::Document::Parse(text, "sim.yaml").root());
    ADD_FAILURE() << "accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("missing required key 'roles'"));
  }
  const SimulationConfig sim =
      ParseSimulation(config::Document::Parse(
                          text + test::RolesYaml(kRobots + "/heft_humanoid_roles.yaml"), "sim.yaml")
                          .root());
  EXPECT_EQ(sim.options.roles.legs[0].knee, "left_knee");
}

// `heft-sim --check` checks the role map against robot.urdf as a run does: a joint the URDF has not
// is refused with exit 78 (EX_CONFIG) naming the role and the robot's joints; the configuration as
// generated passes. Fails if --check accepted what the run would refuse.
TEST(Roles, HeftSimCheckResolvesTheRoleMapOnTheUrdf) {
  const std::string walk = kRobots + "/../sim/walk.yaml";
  EXPECT_EQ(heft::test::RunHeftSim({"--config", walk, "--check"}).code, 0);
  heft::test::ConfigBuilder config(walk);
  config.SetYaml("simulation.roles.left_leg.knee", "left_knee_jnt");
  const heft::test::HeftdResult r = heft::test::RunHeftSim({"--config", config.Write(), "--check"});
  EXPECT_EQ(r.code, 78) << r.output;
  EXPECT_THAT(r.output, HasSubstr("simulation.roles.left_leg.knee: 'left_knee_jnt' is not a "
                                  "revolute joint"));
}

// On the reference humanoid (tools/gen_humanoid.py): each leg is its six joints from the hip's yaw
// to the ankle's roll, each arm its seven from the shoulder's pitch to the wrist's roll, the waist
// its three; every named joint turns in the + sense; the forearms hang straight down (the home
// pose's 90° forward is an elbow at −π/2); the wrist is 0.25 m down the forearm. The
// fixed-base URDF (the pelvis welded to the world) resolves to the same chains. Fails if a chain
// missed or gained a joint, or a sense or the wrist were wrong.
TEST(Roles, ResolvesTheReferenceHumanoidsChains) {
  const RoleMap map = LoadRoles(kRobots + "/heft_humanoid_roles.yaml");
  for (const char* robot : {"/heft_humanoid.urdf", "/heft_humanoid_fixed.urdf"}) {
    const std::string urdf = kRobots + robot;
    const RobotRoles r = ResolveRoles(map, Load(urdf).get(), urdf);
    EXPECT_EQ(r.leg_joints[0],
              (std::vector<std::string>{"left_hip_yaw", "left_hip_roll", "left_hip_pitch",
                                        "left_knee", "left_ankle_pitch", "left_ankle_roll"}))
        << robot;
    EXPECT_EQ(r.leg_joints[1].size(), 6u);
    EXPECT_EQ(r.arm_joints[1],
              (std::vector<std::string>{"right_shoulder_pitch", "right_shoulder_roll",
                                        "right_shoulder_yaw", "right_elbow", "right_wrist_yaw",
                                        "right_wrist_pitch", "right_wrist_roll"}));
    EXPECT_EQ(r.waist_joints, (std::vector<std::string>{"waist_yaw", "waist_roll", "waist_pitch"}));
    for (int side = 0; side < 2; ++side) {
      EXPECT_EQ(r.leg_sense[side], (std::array<double, 3>{1.0, 1.0, 1.0}));
      EXPECT_EQ(r.elbow_sense[side], 1.0);
      EXPECT_EQ(r.shoulder_roll_sense[side], 1.0);
      EXPECT_EQ(r.forearm_angle[side], 0.0);  // hanging straight down
      EXPECT_EQ(r.ElbowAt(side, std::numbers::pi / 2), -std::numbers::pi / 2);
    }
    EXPECT_TRUE(r.wrist.isApprox(Eigen::Vector3d(0.0, 0.0, -0.25))) << r.wrist.transpose();
  }
}

// Names the robot has not, joints off their chain or out of order, a joint about the wrong axis
// and a forearm off its arm are refused naming the role where it was written, the name and what
// the robot has. Fails if any is accepted (a scenario would then move the wrong joint).
TEST(Roles, ResolveErrorsNameTheRoleAndWhatTheRobotHas) {
  const std::string urdf = kRobots + "/heft_humanoid.urdf";
  auto error = [&](const std::string& from, const std::string& to) {
    return ResolveError(Parse(ReferenceRoles(from, to)), urdf);
  };
  const std::string link = error("foot: left_foot", "foot: left_sole");
  EXPECT_THAT(link, HasSubstr("roles.yaml:6:"));
  EXPECT_THAT(link, HasSubstr("roles.left_leg.foot: 'left_sole' is not a moving link"));
  EXPECT_THAT(link, HasSubstr("moving links: pelvis, waist_yaw_link"));
  EXPECT_THAT(error("knee: left_knee", "knee: right_knee"),
              HasSubstr("'right_knee' is not on the chain from 'pelvis' to 'left_foot'"));
  EXPECT_THAT(error("hip_pitch: left_hip_pitch, knee: left_knee",
                    "hip_pitch: left_knee, knee: left_hip_pitch"),
              HasSubstr("after the joints before it"));
  EXPECT_THAT(error("knee: left_knee", "knee: left_ankle_roll"),
              HasSubstr("must turn about the lateral axis (y)"));
  EXPECT_THAT(error("shoulder_roll: left_shoulder_roll", "shoulder_roll: left_shoulder_pitch"),
              HasSubstr("must turn about the forward axis (x)"));
  const std::string joint = error("elbow: left_elbow", "elbow: left_elbw");
  EXPECT_THAT(joint, HasSubstr("'left_elbw' is not a revolute joint"));
  EXPECT_THAT(joint, HasSubstr("revolute joints: waist_yaw, waist_roll"));  // not floating_base
  EXPECT_THAT(error("forearm: left_forearm", "forearm: left_upper_arm"),
              HasSubstr("'left_upper_arm' is not between 'left_elbow' and 'left_hand'"));
  EXPECT_THAT(error("hand: left_hand", "hand: right_hand"),
              HasSubstr("is not on the chain from 'torso' to 'right_hand'"));
  EXPECT_THAT(error("torso: torso", "torso: left_foot"),
              HasSubstr("'left_hand' is not below 'left_foot'"));
  EXPECT_THAT(ResolveError(RoleMap{}, urdf), HasSubstr("no role map"));
}

// The reference humanoid's URDF with every link and joint renamed and the role map naming them;
// `flip`: the hip-pitch, knee, ankle-pitch and elbow joints also turn about −y (axis and limits
// mirrored). Returns the URDF's path.
std::string RenamedRobot(const std::string& dir, const std::string& urdf, bool flip) {
  std::string text = Slurp(kRobots + "/" + urdf);
  text = std::regex_replace(text, std::regex("\"left_"), "\"port_");
  text = std::regex_replace(text, std::regex("\"right_"), "\"stbd_");
  text = std::regex_replace(text, std::regex("\"pelvis\""), "\"base_link\"");
  text = std::regex_replace(text, std::regex("\"torso\""), "\"chest\"");
  text = std::regex_replace(text, std::regex("_elbow\""), "_elbow_joint\"");
  text = std::regex_replace(text, std::regex("_knee\""), "_knee_joint\"");
  text = std::regex_replace(text, std::regex("_forearm\""), "_lower_arm\"");
  if (flip) {
    // <joint name="…(hip_pitch|knee_joint|ankle_pitch|elbow_joint)" …> … <axis xyz="0 1 0"/>
    // <limit lower="a" upper="b" …>: axis −y, limits −b, −a.
    const std::regex joint(
        "(<joint name=\"[a-z_]*(hip_pitch|knee_joint|ankle_pitch|elbow_joint)\"[\\s\\S]*?)<axis "
        "xyz=\"0 1 0\"/>(\\s*)<limit lower=\"([-0-9.e]+)\" upper=\"([-0-9.e]+)\"");
    std::string out;
    std::smatch m;
    std::string rest = text;
    while (std::regex_search(rest, m, joint)) {
      const double lower = std::stod(m[4]), upper = std::stod(m[5]);
      std::ostringstream limit;
      limit << m[1] << "<axis xyz=\"0 -1 0\"/>" << m[3] << "<limit lower=\"" << -upper
            << "\" upper=\"" << -lower << "\"";
      out += m.prefix().str() + limit.str();
      rest = m.suffix().str();
    }
    text = out + rest;
  }
  const std::string path = dir + "/" + urdf;
  std::ofstream(path) << text;
  return path;
}

RoleMap RenamedRoles() {
  std::string text = ReferenceRoles();
  text = std::regex_replace(text, std::regex(": left_"), ": port_");
  text = std::regex_replace(text, std::regex(": right_"), ": stbd_");
  text = std::regex_replace(text, std::regex("pelvis: pelvis"), "pelvis: base_link");
  text = std::regex_replace(text, std::regex("torso: torso"), "torso: chest");
  text = std::regex_replace(text, std::regex("_elbow,"), "_elbow_joint,");
  text = std::regex_replace(text, std::regex("_knee,"), "_knee_joint,");
  text = std::regex_replace(text, std::regex("_forearm,"), "_lower_arm,");
  return Parse(text);
}

// `seed` 0: from the reference pose; otherwise every joint outside the legs a little away from it.
RunResult RunShort(const std::string& name, ScenarioOptions options, std::uint64_t seed) {
  options.duration_scale = 0.2;
  options.seed = seed;
  Scenario s = MakeScenario(name, options);
  RunOptions run;
  run.hand_off = HandOff::kTruth;
  return RunScenario(s, run);
}

// Every scenario on the renamed robot runs exactly as on the reference, from a seeded start: the
// same task errors, bit for bit. With its pitch joints and elbows turned about −y the robot
// stands, steps and curls as the reference does from the reference pose (the scenarios set each
// joint in its own sense; the same figures to rounding; the excitation's random waves take no
// sense, so excite is compared renamed only). Fails if a scenario, a controller or the excitation
// still took a name or a sense from code: the run would throw, or move other joints, or bend the
// joints the other way.
TEST(Roles, AnyRobotRunsFromItsRoleMap) {
  const std::string dir = heft::test::FreshTempDir("sim-roles");
  for (const bool flip : {false, true}) {
    const std::string sub = dir + (flip ? "/flipped" : "/renamed");
    std::filesystem::create_directories(sub);
    const std::string floating = RenamedRobot(sub, "heft_humanoid.urdf", flip);
    const std::string fixed = RenamedRobot(sub, "heft_humanoid_fixed.urdf", flip);
    for (const std::string name :
         {"forearm-load", "dumbbell-curl", "walk", "torso-load", "standing-curl", "excite"}) {
      if (flip && name == "excite") continue;
      const bool arm = name == "forearm-load" || name == "dumbbell-curl";
      ScenarioOptions renamed;
      renamed.urdf_path = arm ? fixed : floating;
      renamed.roles = RenamedRoles();
      const std::uint64_t seed = flip ? 0 : 3;
      const RunResult a = RunShort(name, ScenarioOptions{}, seed);
      const RunResult b = RunShort(name, renamed, seed);
      ASSERT_EQ(a.rmse.size(), b.rmse.size()) << name;
      EXPECT_FALSE(b.fell) << name;
      EXPECT_EQ(a.touchdowns, b.touchdowns) << name;
      for (std::size_t e = 0; e < a.rmse.size(); ++e) {
        if (flip)
          EXPECT_NEAR(b.rmse[e], a.rmse[e], 1e-6 * (1.0 + a.rmse[e])) << name << " " << e;
        else
          EXPECT_EQ(b.rmse[e], a.rmse[e]) << name << " " << a.error_names[e];
      }
      if (flip) {
        std::printf("flipped %-14s scored RMSE %.9f vs %.9f\n", name.c_str(), b.scored_rmse,
                    a.scored_rmse);
      }
    }
  }
}

// Unitree's G1 (config/robots/unitree_g1: the published URDF, meshes dropped, its contact points a
// sole box) runs every scenario from its proposed role map: with the truth handed on it neither
// falls nor fails, steps, and holds its tasks far better than without it (each scored RMSE under a
// fifth of the run without the hand-off; measured 0.04 % to 0.6 %). Fails if a scenario took a
// joint, link, sense or length of heft's own humanoids (the G1's elbows hold its forearms forward
// at zero, its feet are its ankle-roll links, its joints are named *_joint).
TEST(Roles, APublishedHumanoidRunsEveryScenario) {
  const std::string dir = kRobots + "/unitree_g1/";
  const RoleMap roles = LoadRoles(dir + "g1_29dof_roles.yaml");
  for (const std::string name : {"forearm-load", "dumbbell-curl", "torso-load", "step-in-place",
                                 "walk", "standing-curl", "excite"}) {
    const bool arm = name == "forearm-load" || name == "dumbbell-curl";
    ScenarioOptions options;
    options.urdf_path = dir + (arm ? "g1_29dof_fixed.urdf" : "g1_29dof.urdf");
    options.roles = roles;
    options.duration_scale = 0.3;
    RunResult with[2];
    for (const bool truth : {true, false}) {
      Scenario s = MakeScenario(name, options);
      RunOptions run;
      run.hand_off = truth ? HandOff::kTruth : HandOff::kNone;
      with[truth ? 1 : 0] = RunScenario(s, run);
    }
    const RunResult& r = with[1];
    std::printf("G1 %-14s scored RMSE %.4f (no hand-off %.4f), touchdowns %d, fell %s\n",
                name.c_str(), r.scored_rmse, with[0].scored_rmse, r.touchdowns,
                r.fell ? "yes" : "no");
    EXPECT_FALSE(r.fell) << name;
    EXPECT_FALSE(r.controller_failed) << name;
    if (name == "step-in-place" || name == "walk") {
      EXPECT_GE(r.touchdowns, 2) << name;
    }
    if (name == "forearm-load" || name == "dumbbell-curl" || name == "torso-load") {
      EXPECT_LT(r.scored_rmse, 0.2 * with[0].scored_rmse) << name;
    }
  }
}

}  // namespace
}  // namespace heft::sim

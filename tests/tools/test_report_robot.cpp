// heft-report on a robot whose links and joints heft did not name: each run's estimated link comes
// from its configuration (estimator.links) and its task error from its telemetry's header,
// described by the configuration's role map (tools/report/task.cpp). A synthetic run directory of
// a robot with a forearm `arm_link_4` on the elbow `arm_joint_4` and a torso `chest`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "heft/host/telemetry_table.hpp"
#include "heft/test/heftd_run.hpp"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using heft::test::Slurp;
using Outcome = heft::test::ProgramOutput;

// Runs heft-report with `args`; its exit code, stdout and stderr.
Outcome Report(const std::vector<std::string>& args) {
  return heft::test::RunProgramApart(HEFT_REPORT, args);
}

// The robot's role map as simulation.roles (a run's configuration holds it).
constexpr const char* kRoles =
    "simulation:\n  scenario: x\n  roles:\n    pelvis: base\n    torso: chest\n"
    "    left_arm: {shoulder_roll: arm_joint_2, elbow: arm_joint_4, forearm: arm_link_4, hand: h}\n"
    "    right_arm: {shoulder_roll: r_joint_2, elbow: r_joint_4, forearm: r_link_4, hand: rh}\n";

// One run: RUN.yaml (estimator.links: [link] and the role map) and RUN.csv, the host's telemetry
// layout, with task-error columns `errors` (each alternating ± its value, or its value throughout
// when `steady`) and `link`'s columns (estimate, truth and handed alike: 2 kg).
void WriteRun(const std::string& dir, const std::string& run, const std::string& link,
              const std::vector<std::pair<std::string, double>>& errors, bool steady = false) {
  std::ofstream y(dir + "/" + run + ".yaml");
  y << "robot:\n  floating_base: false\nestimator:\n  links: [" << link << "]\n" << kRoles;
  std::ofstream f(dir + "/" + run + ".csv");
  f << "t_ns,state,tick_status,rate_limited,consistent,compute_us";
  for (const auto& e : errors) f << "," << e.first;
  for (const char* kind : {"_est_", "_true_", "_"})
    for (const char* p : heft::host::kInertialColumns) f << "," << link << kind << p;
  f << "\n";
  for (int i = 0; i < 400; ++i) {
    f << 3'000'000LL * i << ",estimating,updated,0,1,20";
    for (const auto& e : errors) f << "," << e.second * (steady || i % 2 ? 1 : -1);
    for (int k = 0; k < 3; ++k) f << ",2,0.1,0,0,0.1,0,0,0.1,0,0.1";
    f << "\n";
  }
}

// Would fail if heft-report took the estimated link or the task error from names in its code
// (left_forearm, torso, left_elbow_error: this robot has none of them, and the report would hold
// no scenario and exit 3), if it scored a joint other than the role map's elbow of the estimated
// forearm (standing-curl's telemetry lists a wrist's error first, 0.5 rad), or if it did not
// check Table II's reductions on this robot.
TEST(ReportRobot, TakesTheLinksAndTaskErrorsFromTheRuns) {
  const std::string dir = testing::TempDir() + "/report_robot_run";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  WriteRun(dir, "forearm-load-adaptive", "arm_link_4", {{"arm_joint_4_error_rad", 0.01}});
  WriteRun(dir, "forearm-load-nominal", "arm_link_4", {{"arm_joint_4_error_rad", 0.1}});
  const std::vector<std::pair<std::string, double>> balance = {{"pelvis_height_error_m", 0.002},
                                                               {"com_x_error_m", 0.3}};
  WriteRun(dir, "torso-load-adaptive", "chest", balance);
  WriteRun(dir, "torso-load-nominal", "chest",
           {{"pelvis_height_error_m", 0.006}, {"com_x_error_m", 0.3}});
  WriteRun(dir, "standing-curl-adaptive", "arm_link_4",
           {{"pelvis_height_error_m", 0.002},
            {"wrist_joint_error_rad", 0.5},
            {"arm_joint_4_error_rad", 0.02}});
  const Outcome r = Report({dir, "--summary", dir + "/summary.md"});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const std::string md = Slurp(dir + "/report.md");
  EXPECT_THAT(md,
              HasSubstr("| forearm-load (arm_joint_4_error) | 0.1000 rad | 0.0100 rad | 10.0× |"));
  EXPECT_THAT(md, HasSubstr("| torso-load (pelvis_height_error) | 0.0060 m | 0.0020 m | 3.0× |"));
  EXPECT_THAT(
      md, HasSubstr("| elbow RMSE reduced by adaptation (forearm-load) | 10.0× | ≥ 7× | yes |"));
  EXPECT_THAT(md, HasSubstr("| pelvis-height RMSE reduced by adaptation (torso-load) | 3.0× |"));
  EXPECT_THAT(md, HasSubstr("| torso-load: torso centre of mass at steady state | 0.0 mm"));
  const std::string summary = Slurp(dir + "/summary.md");
  EXPECT_THAT(summary, HasSubstr("| forearm-load | elbow angle error | 0.1000 rad | 0.0100 rad |"));
  EXPECT_THAT(summary, HasSubstr("| standing-curl | elbow angle error | — | 0.0200 rad |"));
  EXPECT_THAT(summary, Not(HasSubstr("0.5000 rad")));
  EXPECT_THAT(summary, HasSubstr("| torso-load | pelvis height error | 0.0060 m | 0.0020 m |"));
}

// A missed reduction says what the error with adaptation is made of: a steady offset (its mean at
// least 0.9 of its RMSE) is not the hand-off's lag. Would fail if a missed reduction with a steady
// error did not say so, or if one whose error alternates (the lag's signature) did.
TEST(ReportRobot, AMissedReductionSaysWhetherTheErrorIsASteadyOffset) {
  for (const bool steady : {true, false}) {
    const std::string dir =
        testing::TempDir() + "/report_robot_offset_" + (steady ? "steady" : "alternating");
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    WriteRun(dir, "forearm-load-adaptive", "arm_link_4", {{"arm_joint_4_error_rad", -0.02}},
             steady);
    WriteRun(dir, "forearm-load-nominal", "arm_link_4", {{"arm_joint_4_error_rad", 0.1}});
    const Outcome r = Report({dir});
    ASSERT_EQ(r.code, 0) << r.err << r.out;
    const std::string md = Slurp(dir + "/report.md");
    EXPECT_THAT(md, HasSubstr("| elbow RMSE reduced by adaptation (forearm-load) | 5.0×"));
    if (steady)
      EXPECT_THAT(md, HasSubstr("5.0× (with adaptation a steady offset: mean -0.0200 of 0.0200 "
                                "RMSE, not the hand-off's lag) | ≥ 7× | **no** |"));
    else
      EXPECT_THAT(md, HasSubstr("| 5.0× | ≥ 7× | **no** |"));
  }
}

// A run MuJoCo found unstable (heft-sim's summary: simulation.unstable_at) is void: the job goes
// on, the report names it and why, scores nothing from its telemetry, and --check fails. Would
// fail if a void run's figures reached a table (the URDF run's 0.0500 rad), if a run whose summary
// says it completed (unstable_at -1) were taken as void, or if --check passed with a void run.
TEST(ReportRobot, AVoidRunIsNamedNotScored) {
  const std::string dir = testing::TempDir() + "/report_robot_void";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  WriteRun(dir, "forearm-load-adaptive", "arm_link_4", {{"arm_joint_4_error_rad", 0.01}});
  WriteRun(dir, "forearm-load-nominal", "arm_link_4", {{"arm_joint_4_error_rad", 0.1}});
  WriteRun(dir, "forearm-load-urdf", "arm_link_4", {{"arm_joint_4_error_rad", 0.05}});
  std::ofstream(dir + "/forearm-load-adaptive.summary.json")
      << R"({"simulation":{"unstable_at":-1,"steps_beyond_effort":0}})";
  std::ofstream(dir + "/forearm-load-urdf.summary.json")
      << R"({"drivers":{"published":18000},"simulation":{"unstable_at":3.522,)"
      << R"("steps_beyond_effort":25,"beyond_effort_steps":{"torso_joint":5,)"
      << R"("left_shoulder_pitch_joint":20,"left_elbow_joint":25,"right_elbow_joint":2}}})";
  const Outcome r = Report({"--check", dir});
  EXPECT_EQ(r.code, 1) << r.err << r.out;
  const std::string md = Slurp(dir + "/report.md");
  EXPECT_THAT(md, HasSubstr("| every run completes: MuJoCo never found the simulated robot "
                            "unstable | 2 / 3 (void: forearm-load-urdf, unstable at 3.52 s; "
                            "torques beyond the drives' limits on 25 steps (left_elbow_joint 25, "
                            "left_shoulder_pitch_joint 20, torso_joint 5, …)) | all | **no** |"));
  EXPECT_THAT(md, HasSubstr("| forearm-load-urdf | "));
  EXPECT_THAT(md, HasSubstr("**void**: unstable at 3.52 s"));
  EXPECT_THAT(md, Not(HasSubstr("0.0500 rad")));
  EXPECT_THAT(md, HasSubstr("| elbow RMSE reduced by adaptation (forearm-load) | 10.0× | ≥ 7× | "
                            "yes |"));
}

}  // namespace

// heft's command-line tools as an operator meets them: every tool answers --help (with its exit
// codes) and --version, refuses bad usage with exit code 2, fails with a message and a non-zero
// code when its input is missing or its output cannot be written, and never prints a success line
// on failure. heft-identify's default methods are checked on a recording heft-sim (heftd on the
// simulated robot) just made of the fixed-base robot; heft-report's anomaly comments, its results
// page and the README's summary on synthetic runs. heft-report's checks of the torso runs are in
// test_tools_report_torso.cpp, of the forearm-load runs in test_tools_report_forearm.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "heft/host/telemetry_table.hpp"
#include "heft/test/heftd_run.hpp"
#include "test_tools_support.hpp"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using heft::test::Slurp;
using heft::tools::test::Exec;
using heft::tools::test::Outcome;
using heft::tools::test::WriteTorsoHeader;

// Would fail if a tool took --help as an argument (heft-report took it as its run directory), or
// its help lacked the exit codes, or --version were unknown.
TEST(Tools, EveryToolAnswersHelpAndVersion) {
  for (const char* tool : {HEFT_IDENTIFY, HEFT_REPORT, HEFT_READER}) {
    const Outcome help = Exec(tool, {"--help"});
    EXPECT_EQ(help.code, 0) << tool;
    EXPECT_THAT(help.out, HasSubstr("usage:")) << tool;
    EXPECT_THAT(help.out, HasSubstr("Exit codes:")) << tool;
    EXPECT_THAT(help.out, HasSubstr("  2  usage")) << tool;
    const Outcome version = Exec(tool, {"--version"});
    EXPECT_EQ(version.code, 0) << tool;
    EXPECT_THAT(version.out, HasSubstr(" 0.")) << tool;
    const Outcome bad = Exec(tool, {"--no-such-option"});
    EXPECT_EQ(bad.code, 2) << tool;
    EXPECT_THAT(bad.err, HasSubstr("unknown option --no-such-option")) << tool;
  }
}

// Would fail with the old behaviour: `heft-report /nonexistent --check` exited 0 and an empty run
// directory gave an empty report.
TEST(Tools, ReportFailsWithoutRunData) {
  const Outcome missing = Exec(HEFT_REPORT, {"/nonexistent/run", "--check"});
  EXPECT_EQ(missing.code, 3);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/run: no such run directory"));
  EXPECT_THAT(missing.out, Not(HasSubstr("report:")));
  const std::string empty = testing::TempDir() + "/tools_empty_run";
  std::filesystem::create_directories(empty);
  const Outcome none = Exec(HEFT_REPORT, {empty});
  EXPECT_EQ(none.code, 3);
  EXPECT_THAT(none.err, HasSubstr("holds no adaptive-run telemetry"));
  EXPECT_FALSE(std::filesystem::exists(empty + "/report.md"));
  EXPECT_EQ(Exec(HEFT_REPORT, {}).code, 2);
  EXPECT_EQ(Exec(HEFT_REPORT, {empty, empty}).code, 2);
}

// A synthetic run directory: two scenarios, one where adaptation makes the task worse (nominal
// RMSE 0.006 against adaptive 0.01) and the torso's CoM is off by ~0.3 m while forearm-load's is
// right. Would fail if the report did not name each anomaly in its text or named one where there
// is none.
TEST(Tools, ReportCommentsEveryAnomalyFromTheData) {
  const std::string dir = testing::TempDir() + "/tools_synthetic_run";
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& link, const std::string& error,
                   double error_value, double com_offset) {
    std::ofstream f(dir + "/" + name);
    // The host's telemetry layout (heft/host/telemetry_table.hpp, the schema heft-report reads):
    // names with units, time in integer nanoseconds, enumerations as names.
    f << "t_ns,state,tick_status,rate_limited,consistent,compute_us," << error;
    for (const char* kind : {"_est_", "_true_", "_"})
      for (const char* p : heft::host::kInertialColumns) f << "," << link << kind << p;
    f << "\n";
    for (int i = 0; i < 400; ++i) {
      const double m = 2.0;
      f << 3'000'000LL * i << "," << (i == 0 ? "wait_for_walking" : "estimating")
        << ",updated,0,1,20," << error_value * (i % 2 ? 1 : -1);
      for (int k = 0; k < 3; ++k) {
        const double cx = k == 0 ? com_offset : 0.0;  // the estimate's CoM is off by com_offset
        f << "," << m << "," << m * (0.05 + cx) << ",0,0,0.1,0,0,0.1,0,0.1";
      }
      f << "\n";
    }
  };
  write("forearm-load-adaptive.csv", "left_forearm", "left_elbow_error_rad", 0.01, 0.001);
  write("forearm-load-nominal.csv", "left_forearm", "left_elbow_error_rad", 0.1, 0.001);
  write("dumbbell-curl-adaptive.csv", "left_forearm", "left_elbow_error_rad", 0.01, 0.002);
  write("dumbbell-curl-nominal.csv", "left_forearm", "left_elbow_error_rad", 0.1, 0.002);
  write("walk-adaptive.csv", "torso", "pelvis_height_error_m", 0.01, 0.3);
  write("walk-nominal.csv", "torso", "pelvis_height_error_m", 0.006, 0.3);
  const Outcome r = Exec(HEFT_REPORT, {dir});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string md = Slurp(dir + "/report.md");
  EXPECT_THAT(md, HasSubstr("## What stands out in these tables"));
  EXPECT_THAT(md, HasSubstr("**walk**: adaptation made the pelvis height error worse"));
  EXPECT_THAT(md, HasSubstr("(0.60×, below 1.0×)"));
  EXPECT_THAT(md, HasSubstr("**walk**: torso CoM error 300.0 mm"));
  EXPECT_THAT(md, Not(HasSubstr("**forearm-load**")));
  EXPECT_THAT(md, Not(HasSubstr("**dumbbell-curl**")));
  EXPECT_THAT(md, HasSubstr("Rules (from the data, the same for every scenario)"));
  // The figures' gnuplot scripts: names as written (no enhanced text), the truth last and thick,
  // estimate and handed-on in different colours and dash patterns.
  const std::string gp = Slurp(dir + "/walk-mass.png.gp");
  EXPECT_THAT(gp, HasSubstr("noenhanced"));
  const auto truth = gp.find("title 'truth'"), est = gp.find("title 'raw estimate (EKF)'"),
             handed = gp.find("title 'handed on (rate-limited)'");
  ASSERT_NE(truth, std::string::npos);
  EXPECT_GT(truth, est);
  EXPECT_GT(truth, handed);
  EXPECT_THAT(gp, HasSubstr("lw 3.5"));
  EXPECT_THAT(gp, HasSubstr("dt (8,5)"));
  EXPECT_THAT(gp, HasSubstr("set ylabel 'torso mass m [kg]'"));
  // Time is integer nanoseconds in the telemetry; the figures plot seconds.
  EXPECT_THAT(gp, HasSubstr("using (column('t_ns') * 1e-9):'torso_est_mass_kg'"));
}

// heftd records the fixed-base dumbbell curl; heft-identify with its default methods must
// identify from it (the defaults used to include contact-only, which aborts on a fixed base), say
// which methods it chose, and write the YAML. Then an unwritable output must fail with the path
// and the reason, exit 1, and print no "wrote" line.
TEST(Tools, IdentifyDefaultsWorkOnAFixedBaseRecordingAndWritesAreChecked) {
  const std::string dir = testing::TempDir() + "/tools_identify";
  std::filesystem::create_directories(dir);
  const std::string rec = dir + "/dumbbell.heftrec", cfg = dir + "/dumbbell.yaml";
  std::string text = Slurp(std::string(HEFT_CONFIG_DIR) + "/sim/dumbbell-curl.yaml");
  text.replace(text.find("urdf: ../robots"), 15,
               std::string("urdf: ") + HEFT_CONFIG_DIR + "/robots");
  text.replace(text.find("host:\n"), 6, "host:\n  recording: {path: " + rec + "}\n");
  std::ofstream(cfg) << text;
  const Outcome heftd = Exec(HEFT_HEFT_SIM, {"--config", cfg, "--duration", "3"});
  ASSERT_EQ(heftd.code, 0) << heftd.out << heftd.err;

  const std::string urdf = std::string(HEFT_CONFIG_DIR) + "/robots/heft_humanoid_fixed.urdf";
  const std::string yaml = dir + "/identified.yaml";
  const Outcome ok =
      Exec(HEFT_IDENTIFY, {"--urdf", urdf, "--bodies", "left_forearm", "--out-yaml", yaml, rec});
  EXPECT_EQ(ok.code, 0) << ok.out << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("methods: fixed base: wls, and sdp on its rows"));
  EXPECT_THAT(ok.out, HasSubstr("wrote " + yaml + " (sdp)"));
  EXPECT_THAT(Slurp(yaml), HasSubstr("left_forearm"));

  const Outcome contact = Exec(
      HEFT_IDENTIFY, {"--urdf", urdf, "--bodies", "left_forearm", "--methods", "wls,contact", rec});
  EXPECT_EQ(contact.code, 2);
  EXPECT_THAT(contact.err, HasSubstr("--methods: 'contact' needs a floating base"));

  const std::string bad = "/nonexistent/dir/x.yaml";
  const Outcome unwritable = Exec(HEFT_IDENTIFY, {"--urdf", urdf, "--bodies", "left_forearm",
                                                  "--methods", "wls", "--out-yaml", bad, rec});
  EXPECT_EQ(unwritable.code, 1);
  EXPECT_THAT(unwritable.err, HasSubstr(bad + ": cannot write: No such file or directory"));
  EXPECT_THAT(unwritable.out, Not(HasSubstr("wrote")));
  EXPECT_THAT(unwritable.out, Not(HasSubstr("done")));
}

// The results page's synthetic torso-load run in `dir` (emptied first), adaptive and nominal: the
// true mass steps from 30 to 35 kg at row 600 (1.8 s); the pelvis 5 mm (adaptive) or 20 mm low.
void WriteTorsoLoadRuns(const std::string& dir) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const char* label : {"adaptive", "nominal"}) {
    std::ofstream f(dir + "/torso-load-" + label + ".csv");
    WriteTorsoHeader(f);
    for (int i = 0; i < 1000; ++i) {  // the load at row 600 (1.8 s); 5 mm / 20 mm error
      const bool loaded = i >= 600;
      f << 3'000'000LL * i << ",estimating,updated,0,1,20,"
        << (std::string(label) == "adaptive" ? 0.005 : 0.02);
      for (int k = 0; k < 3; ++k) {
        const double m = (k == 1 && loaded) ? 35.0 : 30.0;
        f << "," << m << "," << m * 0.01 << ",0," << m * 0.3 << ",1,0,0,1,0,1";
      }
      f << "\n";
    }
  }
}

// results.md of the run of WriteTorsoLoadRuns: its provenance, Table II beside the paper's with
// report.md's figures, the targets, and no images.
void ExpectResultsPage(const std::string& results) {
  EXPECT_THAT(results, ::testing::StartsWith("# Results\n"));
  EXPECT_THAT(results, HasSubstr("| commit | `abc1234` |"));
  EXPECT_THAT(results, HasSubstr("| machine | "));
  EXPECT_THAT(results, HasSubstr(", Linux "));  // the CPU, its cores, the kernel
  EXPECT_THAT(results,
              HasSubstr("| command | `bash tools/main-job.sh build/release OUT --publish` |"));
  EXPECT_THAT(results, HasSubstr("## Table II, beside the paper's"));
  EXPECT_THAT(results, HasSubstr("| +0.0200 / +0.0050 m |"));  // the same figures as report.md
  EXPECT_THAT(results, HasSubstr("## Targets"));
  EXPECT_THAT(results, HasSubstr("| pelvis-height RMSE reduced by adaptation (torso-load) | 4.0× "
                                 "| ≥ 2.2× | met |"));
  EXPECT_THAT(results, Not(HasSubstr("![](")));
}

// A README without the two lines (or with them reversed) is refused before the report runs, and
// left as it was (on a copy of the run in `dir`, its report.md removed).
void ExpectReadmesWithoutMarkersRefused(const std::string& dir) {
  const std::string refused = testing::TempDir() + "/tools_results_refused";
  std::filesystem::remove_all(refused);
  std::filesystem::copy(dir, refused);
  std::filesystem::remove(refused + "/report.md");
  for (const std::string& text :
       {std::string("# heft\n\nNo markers here.\n"),
        std::string("<!-- /heft-report:summary -->\n<!-- heft-report:summary -->\n")}) {
    std::ofstream(refused + "/README.md") << text;
    const Outcome bad = Exec(HEFT_REPORT, {refused, "--readme", refused + "/README.md"});
    EXPECT_EQ(bad.code, 3);
    EXPECT_THAT(bad.err, HasSubstr("heft-report: --readme " + refused + "/README.md: "));
    EXPECT_THAT(bad.err, HasSubstr("<!-- heft-report:summary -->"));
    EXPECT_EQ(Slurp(refused + "/README.md"), text);
    EXPECT_FALSE(std::filesystem::exists(refused + "/report.md"));
  }
}

// The figures page and the README's summary (tools/main-job.sh --publish writes docs/results.md
// and README.md's block; the short job never does). A synthetic torso-load run (adaptive and
// nominal) and a README with text around an old block. Would fail if the block were not
// replaced, if a byte outside it changed, if a README without the two lines were written to or
// let the report run, if results.md lacked its provenance, tables or targets or carried images,
// or if the new outputs changed report.md.
TEST(Tools, ReportWritesTheResultsPageAndTheReadmeSummary) {
  const std::string dir = testing::TempDir() + "/tools_results_run";
  WriteTorsoLoadRuns(dir);
  const Outcome plain = Exec(HEFT_REPORT, {dir});
  ASSERT_EQ(plain.code, 0) << plain.err;
  const std::string report = Slurp(dir + "/report.md");

  const std::string before = "# heft\n\nIntro, kept.\n\n<!-- heft-report:summary -->\n";
  const std::string after = "<!-- /heft-report:summary -->\n\nThe rest, kept\nto the last byte.";
  const std::string readme = dir + "/README.md";
  std::ofstream(readme) << before << "| old | figures |\n|---|---|\n" << after;
  const Outcome r =
      Exec(HEFT_REPORT, {dir, "--results", dir + "/results.md", "--summary", dir + "/summary.md",
                         "--readme", readme, "--commit", "abc1234", "--command",
                         "bash tools/main-job.sh build/release OUT --publish"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Slurp(dir + "/report.md"), report);  // the new outputs leave report.md as it was
  const std::string updated = Slurp(readme);
  ASSERT_GE(updated.size(), before.size() + after.size());
  EXPECT_EQ(updated.substr(0, before.size()), before);
  EXPECT_EQ(updated.substr(updated.size() - after.size()), after);
  const std::string block =
      updated.substr(before.size(), updated.size() - before.size() - after.size());
  EXPECT_THAT(block, Not(HasSubstr("old")));
  EXPECT_THAT(block, HasSubstr("commit `abc1234`"));
  EXPECT_THAT(block, HasSubstr("`bash tools/main-job.sh build/release OUT --publish`"));
  EXPECT_THAT(block,
              HasSubstr("| torso-load | pelvis height error | 0.0200 m | 0.0050 m | 4.0× |"));
  EXPECT_EQ(Slurp(dir + "/summary.md"),
            "<!-- heft-report:summary -->\n" + block + "<!-- /heft-report:summary -->\n");
  // Run again: the block is replaced, not added to.
  ASSERT_EQ(Exec(HEFT_REPORT, {dir, "--readme", readme, "--commit", "abc1234", "--command",
                               "bash tools/main-job.sh build/release OUT --publish"})
                .code,
            0);
  EXPECT_EQ(Slurp(readme), updated);

  ExpectResultsPage(Slurp(dir + "/results.md"));
  ExpectReadmesWithoutMarkersRefused(dir);
  EXPECT_EQ(Exec(HEFT_REPORT, {dir, "--readme"}).code, 2);
}

}  // namespace

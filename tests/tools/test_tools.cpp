// heft's command-line tools as an operator meets them: every tool answers --help (with its exit
// codes) and --version, refuses bad usage with exit code 2, fails with a message and a non-zero
// code when its input is missing or its output cannot be written, and never prints a success line
// on failure. heft-identify's default methods are checked on a recording heft-sim (heftd on the
// simulated robot) just made of the fixed-base robot.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
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

// Runs `program` with `args`; stdout and stderr apart.
Outcome Exec(const char* program, const std::vector<std::string>& args) {
  return heft::test::RunProgramApart(program, args);
}

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

// A synthetic torso run's CSV header: heft-sim's telemetry columns the report reads, the pelvis
// height error and the torso's estimated, true and handed π.
void WriteTorsoHeader(std::ofstream& f) {
  f << "t_ns,state,tick_status,rate_limited,consistent,compute_us,pelvis_height_error_m";
  for (const char* kind : {"_est_", "_true_", "_"})
    for (const char* p : heft::host::kInertialColumns) f << ",torso" << kind << p;
  f << "\n";
}

// One synthetic torso-load tick: the task error and the torso's estimated, true and handed mass.
struct TorsoRow {
  double error, est, truth, handed;
  const char* status = "updated";  // the tick's tick_status
};

// A synthetic torso-load run: 1000 ticks 3 ms apart, the load arriving at row 600 (1.8 s); each
// mass written with a CoM of (0.01, 0, 0.3) m and a unit inertia.
void WriteTorsoRun(const std::string& path, const std::function<TorsoRow(int, bool)>& row) {
  std::ofstream f(path);
  WriteTorsoHeader(f);
  for (int i = 0; i < 1000; ++i) {
    const TorsoRow r = row(i, i >= 600);
    f << 3'000'000LL * i << ",estimating," << r.status << ",0,1,20," << r.error;
    for (const double m : {r.est, r.truth, r.handed})
      f << "," << m << "," << m * 0.01 << ",0," << m * 0.3 << ",1,0,0,1,0,1";
    f << "\n";
  }
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

// Table II's last column: the task's mean error in the second before the payload arrives (the
// controller's own offset, unloaded). A synthetic torso-load whose true mass steps at 1.8 s and
// whose pelvis stands 20 mm low before (nominal) or 5 mm low (adaptive). Would fail if the column
// were missing, took samples after the arrival or from before the last second.
TEST(Tools, ReportGivesTheTaskErrorBeforeThePayloadArrives) {
  const std::string dir = testing::TempDir() + "/tools_pre_load_run";
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, double offset) {
    WriteTorsoRun(dir + "/" + name, [&](int i, bool loaded) {
      // Before the last second (t < 0.8 s) a different error, which must not count.
      const double e = loaded ? 0.001 : (i < 267 ? 0.1 : offset);
      return TorsoRow{e, 30.0, loaded ? 35.0 : 30.0, 30.0};
    });
  };
  write("torso-load-adaptive.csv", -0.005);
  write("torso-load-nominal.csv", -0.02);
  const Outcome r = Exec(HEFT_REPORT, {dir});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string md = Slurp(dir + "/report.md");
  EXPECT_THAT(md, HasSubstr("mean error the second before the load: nominal / adaptive"));
  EXPECT_THAT(md, HasSubstr("| -0.0200 / -0.0050 m |"));
}

// The nominal model × calibration tables give each run's handed mass against the truth from the
// load's arrival on, beside the task's RMSE (docs/imperfect-robot.md: a stiction ratchet can
// separate the task errors of runs whose estimates agree), and the combination target names the
// best-scoring run's. Fails if the figure were missing, took the ticks before the load (10 kg off
// there), read the raw estimate instead of the handed one, or named another run's; or if a run
// whose gate refused most of its ticks (80 %) were not marked so beside its reduction.
TEST(Tools, ReportGivesEachCombinationsHandedMassError) {
  const std::string dir = testing::TempDir() + "/tools_handed_mass_run";
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, double handed_error, double task_error) {
    WriteTorsoRun(dir + "/" + name, [&](int, bool loaded) {
      const double truth = loaded ? 35.0 : 30.0;
      return TorsoRow{task_error, truth, truth, loaded ? truth + handed_error : truth + 10.0};
    });
  };
  write("torso-load-nominal.csv", -5.0, 0.01);
  write("torso-load-urdf.csv", 3.0, 0.002);
  write("torso-load-urdf-cal.csv", -1.0, 0.002);
  write("torso-load-ident.csv", -2.0, 0.0005);  // the best score with the worse estimate
  write("torso-load-adaptive.csv", 0.5, 0.001);
  // The URDF's run without calibration: the gate refused 80 % of its ticks. And the best run's
  // 60 %, named in the combination target's figure.
  WriteTorsoRun(dir + "/torso-load-urdf.csv", [&](int i, bool loaded) {
    const double truth = loaded ? 35.0 : 30.0;
    return TorsoRow{0.002, truth, truth, loaded ? truth + 3.0 : truth + 10.0,
                    i % 5 == 0 ? "updated" : "gated"};
  });
  WriteTorsoRun(dir + "/torso-load-ident.csv", [&](int i, bool loaded) {
    const double truth = loaded ? 35.0 : 30.0;
    return TorsoRow{0.0005, truth, truth, loaded ? truth - 2.0 : truth + 10.0,
                    i % 5 < 2 ? "updated" : "gated"};
  });
  const Outcome r = Exec(HEFT_REPORT, {dir});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string md = Slurp(dir + "/report.md");
  EXPECT_THAT(md, HasSubstr("| URDF nominal | 0.0020 m (5.0×, 80 % gated) | 0.0020 m (5.0×) |"));
  EXPECT_THAT(md, HasSubstr("| torso-load: handed mass RMSE | calibration off | calibration on |"));
  EXPECT_THAT(md, HasSubstr("| URDF nominal | 3.000 kg | 1.000 kg |"));
  EXPECT_THAT(md, HasSubstr("| identified nominal | 2.000 kg | 0.500 kg |"));
  EXPECT_THAT(md, HasSubstr("10.0× against the best 20.0× (identified, no calibration, 60 % "
                            "gated; handed mass RMSE 0.500 against 2.000 kg)"));
}

// The torso-CoM check reads the estimate against the truth beyond what the nominal model itself
// gets wrong (docs/imperfect-robot.md, "What no recording fixes"): a nominal torso 20 mm low whose
// estimate holds it and adds the payload meets it; the same estimate drifting 15 mm further misses
// it. Fails if the check ignores the nominal's error (the first run: 17.1 mm against 10) or
// absorbs the drift too (the second).
TEST(Tools, ReportChecksTheTorsoComBeyondTheNominalModelsOwnError) {
  auto run = [](const std::string& name, double drift) {
    const std::string dir = testing::TempDir() + "/tools_com_" + name;
    std::filesystem::create_directories(dir);
    std::ofstream f(dir + "/torso-load-adaptive.csv");
    WriteTorsoHeader(f);
    for (int i = 0; i < 1000; ++i) {  // 3 ms apart: a 5 kg load at the true CoM from row 600
      const bool loaded = i >= 600;
      const double load = loaded ? 5.0 : 0.0, m = 30.0 + load;
      // The truth's CoM at z 0.30 m, the nominal's 20 mm low; the estimate keeps the nominal's
      // and adds the load (then, in the second run, drifts).
      const double hz_true = m * 0.30,
                   hz_est = 30.0 * 0.28 + load * 0.30 - (loaded ? drift * m : 0);
      f << 3'000'000LL * i << ",estimating,updated,0,1,20,0.001";
      for (const double hz : {hz_est, hz_true, hz_est})
        f << "," << m << "," << m * 0.01 << ",0," << hz << ",1,0,0,1,0,1";
      f << "\n";
    }
    f.close();
    const Outcome r = Exec(HEFT_REPORT, {dir});
    EXPECT_EQ(r.code, 0) << r.err;
    return Slurp(dir + "/report.md");
  };
  EXPECT_THAT(run("holds", 0.0),
              HasSubstr("| torso-load: torso centre of mass at steady state | 17.1 mm (the nominal "
                        "model's own: 17.1 mm) | ≤ 10 mm + the nominal's | yes |"));
  EXPECT_THAT(run("drifts", 0.015),
              HasSubstr("| torso-load: torso centre of mass at steady state | 32.1 mm (the nominal "
                        "model's own: 17.1 mm) | ≤ 10 mm + the nominal's | **no** |"));
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

// A synthetic forearm-load run directory (adaptive and nominal runs) whose estimator calibrates
// until `calibrated` s, the true mass leaving its start at 0.6 s, and its configuration beside it;
// the handed π's NEES on every tick, whole and of the mass and first moment (honest by default).
void WriteForearmLoadRuns(const std::string& dir, double calibrated, double nees = 10.0,
                          double mh_nees = 4.0, const std::string& late_hold = "",
                          double sd_mass = -1.0,  // < 0: no σ column
                          const std::string& scenario = "forearm-load") {
  std::filesystem::create_directories(dir);
  for (const char* label : {"adaptive", "nominal"}) {
    std::ofstream f(dir + "/" + scenario + "-" + label + ".csv");
    f << "t,state,hold_reason,tick_status,rate_limited,consistent,compute_us,left_elbow_error";
    for (const char* kind : {"_est_", "_true_", "_"})
      for (const char* q : {"m", "hx", "hy", "hz", "ixx", "ixy", "ixz", "iyy", "iyz", "izz"})
        f << ",left_forearm" << kind << q;
    f << ",left_forearm_nees,left_forearm_mh_nees";
    if (sd_mass >= 0.0) f << ",left_forearm_sd_m";
    f << "\n";
    for (int i = 0; i < 400; ++i) {
      const double t = 0.003 * (i + 1), m = t < 0.6 ? 1.5 : 4.5;
      const bool held = !late_hold.empty() && t >= 0.85;  // the last quarter held, why
      f << t << ","
        << (t < calibrated ? 2
            : held         ? 4
                           : 3)
        << "," << (held ? late_hold : "none") << ",1,0,1,20,"
        << (std::string(label) == "adaptive" ? 0.01 : 0.1);
      for (int k = 0; k < 3; ++k) f << "," << m << "," << m * 0.05 << ",0,0,0.1,0,0,0.1,0,0.1";
      f << "," << nees << "," << mh_nees;
      if (sd_mass >= 0.0) f << "," << sd_mass;
      f << "\n";
    }
    std::ofstream(dir + "/" + scenario + "-" + label + ".yaml")
        << "simulation:\n  scenario: " << scenario
        << "\n  load_after: 0.6\nestimator:\n"
           "  calibration: {enabled: true, window: 0.2}\nrobot:\n  parameters: identified.yaml\n";
  }
}

// The procedure's check that the calibration ends before the payload arrives (a calibration that
// averages the load absorbs it as bias). Would fail if the report missed a late calibration (or
// flagged a timely one), or if the 2×2 table did not find the run by its label.
TEST(Tools, ReportChecksTheCalibrationEndsBeforeThePayload) {
  for (const double calibrated : {0.3, 0.9}) {
    const std::string dir = testing::TempDir() + "/tools_calibration_" +
                            std::to_string(static_cast<int>(10 * calibrated));
    WriteForearmLoadRuns(dir, calibrated);
    const Outcome r = Exec(HEFT_REPORT, {dir, "--check"});
    const std::string md = Slurp(dir + "/report.md");
    const bool late = calibrated > 0.6;
    EXPECT_EQ(r.code, late ? 1 : 0) << r.out << r.err;
    EXPECT_THAT(
        md, HasSubstr(std::string("| every calibration finished before the payload arrived | ") +
                      (late ? "0 / 2" : "2 / 2") + " | all | " + (late ? "**no**" : "yes")))
        << md;
    EXPECT_THAT(md, HasSubstr("| identified nominal | — | 0.0100 rad (10.0×) |")) << md;
  }
}

// forearm-load's handed covariance is a checked target, the whole π and its mass and first
// moment alone, each ≤ 2× honest: NEES 15 and 6 (1.5× each) meet it; 15 and 12 (a mass and first
// moment 3× overconfident) or 40 and 6 (the whole π 4×) miss it and fail --check. Fails if the
// target is only reported, or reads one of the two factors alone.
TEST(Tools, ReportChecksTheForearmsHandedCovariance) {
  struct Case {
    double nees, mh;
    bool met;
  };
  auto g3 = [](double v) {  // the report's %.3g
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", v);
    return std::string(b);
  };
  for (const Case c : {Case{15.0, 6.0, true}, Case{15.0, 12.0, false}, Case{40.0, 6.0, false}}) {
    const std::string dir = testing::TempDir() + "/tools_forearm_nees_" +
                            std::to_string(static_cast<int>(c.nees)) + "_" +
                            std::to_string(static_cast<int>(c.mh));
    WriteForearmLoadRuns(dir, 0.3, c.nees, c.mh);
    const Outcome r = Exec(HEFT_REPORT, {dir, "--check"});
    const std::string md = Slurp(dir + "/report.md");
    EXPECT_EQ(r.code, c.met ? 0 : 1) << r.out << r.err;
    EXPECT_THAT(md,
                HasSubstr("| forearm-load: handed covariance, mean NEES ÷ 10 (1 when honest) | " +
                          g3(c.nees / 10) + "× (mass and first moment alone, ÷ 4: " + g3(c.mh / 4) +
                          "×) | ≤ 2×, and the mass and first moment alone "
                          "too | " +
                          (c.met ? "yes" : "**no**") + " |"))
        << md;
  }
}

// A run whose last quarter the gate held (hold reason "gated") is still scored there: the filter
// judged every tick and refused it, so its estimate is the run's. One a sensor held ("torques") is
// not. Fails if the report drops the gated ticks (no NEES figure at all) or scores the sensor's.
TEST(Tools, ReportScoresTicksTheGateHeldButNotASensorsHold) {
  for (const std::string reason : {"gated", "torques"}) {
    const std::string dir = testing::TempDir() + "/tools_held_" + reason;
    WriteForearmLoadRuns(dir, 0.3, 15.0, 6.0, reason);
    const Outcome r = Exec(HEFT_REPORT, {dir});
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    const std::string md = Slurp(dir + "/report.md");
    const auto line =
        HasSubstr("| forearm-load: handed covariance, mean NEES ÷ 10 (1 when honest) | 1.5×");
    if (reason == "gated")
      EXPECT_THAT(md, line) << md;
    else
      EXPECT_THAT(md, Not(line)) << md;
  }
}

// The forearm-load runs of WriteForearmLoadRuns in TMPDIR/`name` with `identified_yaml` beside
// them, through heft-report --results: its outcome and the results page it wrote.
struct ReportedIdentification {
  Outcome outcome;
  std::string md;
};
ReportedIdentification ReportWithIdentification(const std::string& name,
                                                const std::string& identified_yaml) {
  const std::string dir = testing::TempDir() + "/" + name;
  WriteForearmLoadRuns(dir, 0.3);
  std::ofstream(dir + "/identified.yaml") << identified_yaml;
  Outcome r = Exec(HEFT_REPORT, {dir, "--results", dir + "/results.md"});
  return {std::move(r), Slurp(dir + "/results.md")};
}

// The procedure's identification line names the terms heft-identify fitted, read from what
// identified.yaml holds (not the main job's flags written into the report). Would fail if the
// report named a term the file does not hold (here no F/T cells' offsets) or left one out.
TEST(Tools, ReportNamesTheTermsTheIdentificationFitted) {
  const auto [r, md] = ReportWithIdentification(
      "tools_identified_terms",
      "fit:\n  method: sdp\n  physically_consistent: true\nlinks:\n"
      "friction:  # tau = fc * tanh(v / 0.01) + fv * v\n  left_elbow: {fc: 0.5, fv: 0.4}\n"
      "torque_sensors:  # gains\n  left_elbow: {gain: 0.01, gain_sigma: 0.002}\n"
      "# torque-sensor offsets identified alongside (N·m; nuisance unknowns, not used by "
      "heft):\n"
      "#   left_elbow: 0.1\n");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(
      md, HasSubstr("2. **Identification** (`heft-identify --friction --offsets --gains`, sdp)"));
}

// The identification line gives heft-identify's table and, after it, the written result's fit
// split by the joints' speed, the wall time and the joints held on 90 % of it or more, as
// identified.yaml's `fit:` section says them (read as YAML: the keys in any order, flow or block
// style). Would fail if the split were left out, a method were missed or read from another key, the
// wall time were not given, or a joint held less (the elbow, 72 %) were named.
TEST(Tools, ReportGivesTheFitByTheJointsSpeed) {
  const auto [r, md] = ReportWithIdentification(
      "tools_fit_by_speed",
      "format: heft-parameters/1\nfit:\n  method: sdp\n  samples: 6001\n"
      "  physically_consistent: true\n"
      "  by_speed:\n    held_rows: 86552\n    held_rmse: 0.1988\n    sliding_speed: 0.03\n"
      "    sliding_rmse: 0.1263\n    sliding_rows: 87158\n"
      "  methods:\n    urdf: {fit_rmse: 1.4712, consistent_bodies: 30}\n"
      "    sdp: {consistent_bodies: 30, fit_rmse: 0.16640001}\n"
      "  bodies: 30\n  seconds: 22.912\n"
      "  held_joints:\n    left_wrist_yaw: 1\n    left_elbow: 0.72\n    right_hip_yaw: 0.99\n"
      "links:\n");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(md, HasSubstr("recording: urdf 1.4712 N·m (30/30 consistent), sdp 0.1664 N·m "
                            "(30/30 consistent); by the joints' speed (sdp) sliding 0.1263 N·m "
                            "over 87158 rows, held or creeping 0.1988 N·m over 86552 rows (50 %"))
      << md;
  EXPECT_THAT(md, HasSubstr("6001 samples at 100 Hz")) << md;
  EXPECT_THAT(md, HasSubstr("22.91 s wall")) << md;
  EXPECT_THAT(md, HasSubstr("rest on static friction): left_wrist_yaw, right_hip_yaw.")) << md;
}

// An identified.yaml that is not what heft-identify writes (its `fit:` section without a method)
// is said, with the file and the key, and fails the consistency target; the report is still
// written. Would fail if the report crashed, skipped the identification silently or passed it.
TEST(Tools, ReportSaysAnUnreadableIdentification) {
  const auto [r, md] =
      ReportWithIdentification("tools_fit_unreadable", "fit:\n  samples: 12\nlinks:\n");
  EXPECT_THAT(md, HasSubstr("2. **Identification**: identified.yaml unreadable: ")) << md;
  EXPECT_THAT(md, HasSubstr("identified.yaml:2:3: fit: missing required key 'method'")) << md;
  EXPECT_THAT(md, HasSubstr("| the identified model is physically consistent (heft loads it) | "
                            "unreadable |"))
      << md;
  EXPECT_NE(r.code, 2) << r.out << r.err;
}

// A handed σ of the mass above the handed mass itself over the last quarter is named among what
// stands out, with the Schmidt gain as the remedy; below it, nothing is said. Would fail if the
// rule read another column, another part of the run, or fired on an honest, known mass.
TEST(Tools, ReportSaysWhenTheHandedMassIsUnseen) {
  for (const double sd : {6.0, 2.0}) {  // against the handed 4.5 kg: 1.33× and 0.44×
    const std::string dir = testing::TempDir() + "/tools_unseen_mass_" + std::to_string(sd > 3.0);
    WriteForearmLoadRuns(dir, 0.3, 10.0, 4.0, "", sd);
    const Outcome r = Exec(HEFT_REPORT, {dir});
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    const std::string md = Slurp(dir + "/report.md");
    const auto line = HasSubstr(
        "**forearm-load**: the handed σ of the left_forearm's mass was 1.3× the handed mass");
    if (sd > 3.0)
      EXPECT_THAT(md, line) << md;
    else
      EXPECT_THAT(md, Not(HasSubstr("the handed σ of the left_forearm's mass"))) << md;
  }
}

// The dumbbell's mass figure carries the handed mass's σ as a share of the handed mass (a
// fixed arm's curl can leave the mass to a short lever arm: the σ says so beside the error).
// Fails if the figure drops the σ, invents one for a run without a σ column, or checks a mass
// whose σ says the run left it undetermined.
TEST(Tools, ReportGivesTheDumbbellsMassWithItsHandedSigma) {
  for (const double sd : {0.9, 0.18, -1.0}) {  // of the handed 4.5 kg: 20.0 %, 4.0 %, no σ column
    const std::string dir = testing::TempDir() + "/tools_dumbbell_sd_" + std::to_string(sd);
    WriteForearmLoadRuns(dir, 0.3, 10.0, 4.0, "", sd, "dumbbell-curl");
    const Outcome r = Exec(HEFT_REPORT, {dir});
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    const std::string md = Slurp(dir + "/report.md");
    const auto row = HasSubstr(
        "| dumbbell: forearm + dumbbell mass at steady state | 0.00 % (the "
        "nominal model's own: ");
    EXPECT_THAT(md, row) << md;
    // Checked unless σ says the run leaves the mass undetermined (the report names it then);
    // fails if a 20 % σ is checked or a 4 % one is not.
    if (sd > 0.5) {
      EXPECT_THAT(md, HasSubstr("; handed σ 20.0 %); not checked: the run leaves the mass "
                                "undetermined (σ > 6 %) |"))
          << md;
    } else {
      EXPECT_THAT(md, Not(HasSubstr("not checked: the run leaves the mass"))) << md;
      if (sd > 0.0)
        EXPECT_THAT(md, HasSubstr("; handed σ 4.0 %) |")) << md;
      else
        EXPECT_THAT(md, Not(HasSubstr("; handed σ"))) << md;
    }
  }
}

// The torso-inertia check on synthetic step-in-place runs: a 30 kg torso, its CoM 0.3 m above the
// link origin, its rotational inertia about the CoM diag(1.2, 1.1, 0.5) kg·m²; the prior's is 10 %
// off. Would fail if the check passed an estimate that drifts to 20 %, failed one that settles at
// 5 %, failed one that corrects the prior's CoM (5 mm high) and 2 points of its inertia (about
// the link origin that looks worse: the prior's CoM error had cancelled part of its inertia's),
// or gave no margin to an estimate jittering about the prior's error (1 and 5 points further,
// alternately: 13 ± 2 % against the prior's 10 % + 2 × 2).
TEST(Tools, ReportChecksTheTorsoInertiaAgainstThePrior) {
  struct Link {
    double com_z, scale;  // CoM height [m], rotational inertia as a multiple of the truth's
  };
  struct Case {
    const char* name;
    Link prior, settled, alternate;  // the estimate's odd rows take `alternate`
    bool met;
    const char* figure;
  };
  const Case cases[] = {
      {"settles", {0.3, 1.1}, {0.3, 1.05}, {0.3, 1.05}, true, "5.00 % ± 0.00 (prior 10.00 %"},
      {"drifts", {0.3, 1.1}, {0.3, 1.2}, {0.3, 1.2}, false, "20.00 % ± 0.00 (prior 10.00 %"},
      {"com", {0.305, 0.9}, {0.3, 0.92}, {0.3, 0.92}, true, "8.00 % ± 0.00 (prior 10.00 %"},
      {"jitters", {0.3, 1.1}, {0.3, 1.11}, {0.3, 1.15}, true, "13.00 % ± 2.00 (prior 10.00 %"},
  };
  // π about the link origin: m, m c, I_c + m (|c|² 1 − c cᵀ), c = (0.01, 0, z).
  auto write = [](std::ofstream& f, const Link& l) {
    const double m = 30, c[3] = {0.01, 0.0, l.com_z}, ic[3] = {1.2, 1.1, 0.5};
    const double cc = c[0] * c[0] + c[2] * c[2];
    f << "," << m << "," << m * c[0] << ",0," << m * c[2] << ","
      << l.scale * ic[0] + m * (cc - c[0] * c[0]) << ",0," << -m * c[0] * c[2] << ","
      << l.scale * ic[1] + m * cc << ",0," << l.scale * ic[2] + m * (cc - c[2] * c[2]);
  };
  for (const Case& c : cases) {
    const std::string dir = testing::TempDir() + "/tools_inertia_" + c.name;
    std::filesystem::create_directories(dir);
    for (const char* label : {"adaptive", "nominal"}) {
      std::ofstream f(dir + "/step-in-place-" + label + ".csv");
      f << std::setprecision(12);
      WriteTorsoHeader(f);
      for (int i = 0; i < 400; ++i) {
        f << 3'000'000LL * i << "," << (i == 0 ? "wait_for_walking" : "estimating")
          << ",updated,0,1,20,0.01";
        // est (the prior at row 0), truth, handed (= est).
        const Link& est = i == 0 ? c.prior : i % 2 ? c.alternate : c.settled;
        write(f, est), write(f, {0.3, 1.0}), write(f, est);
        f << "\n";
      }
    }
    const Outcome r = Exec(HEFT_REPORT, {dir, "--check"});
    const std::string md = Slurp(dir + "/report.md");
    EXPECT_EQ(r.code, c.met ? 0 : 1) << c.name << r.out << r.err;
    EXPECT_THAT(md, HasSubstr(std::string("| step-in-place: torso inertia about its CoM at steady "
                                          "state, no further from the truth than the prior | ") +
                              c.figure))
        << c.name << md;
    EXPECT_THAT(
        md, HasSubstr(std::string("| ≤ the prior's + 2 × jitter | ") + (c.met ? "yes" : "**no**")))
        << c.name;
    // The same errors over time, for the plots. Fails when the CSV is not written, its columns
    // move, or its figures stop matching the check's (the last row: odd, the alternate).
    std::istringstream shape(Slurp(dir + "/step-in-place-shape.csv"));
    std::string header, row, last;
    std::getline(shape, header);
    EXPECT_EQ(header,
              "t_s,com_raw_mm,com_handed_mm,com_prior_mm,inertia_raw_pct,inertia_handed_pct,"
              "inertia_prior_pct,inertia_com_raw_pct,inertia_com_handed_pct,inertia_com_prior_pct");
    int rows = 0;
    while (std::getline(shape, row)) last = row, ++rows;
    EXPECT_EQ(rows, 400);
    char tail[64];
    const double e = 100 * std::abs(c.alternate.scale - 1), p = 100 * std::abs(c.prior.scale - 1);
    std::snprintf(tail, sizeof tail, ",%.3f,%.3f,%.3f", e, e, p);
    EXPECT_THAT(last, ::testing::EndsWith(tail)) << c.name;
    EXPECT_THAT(last, ::testing::StartsWith(std::string("1.1970,0.000,0.000,") +
                                            (c.prior.com_z == 0.3 ? "0.000," : "5.000,")))
        << c.name;
    if (std::string(c.name) == "com") {  // about the origin the prior looked better
      std::istringstream cells(last);
      std::vector<double> v;
      for (std::string x; std::getline(cells, x, ',');) v.push_back(std::stod(x));
      EXPECT_GT(v[4], v[6]) << last;
    }
    for (const char* png : {"com-error", "inertia-error", "inertia-com-error"})
      EXPECT_THAT(md, HasSubstr(std::string("![](step-in-place-") + png + ".png)"));
  }
}

// Fig. 8's check: a synthetic pair of stepping runs (the procedure's: step-in-place's adaptive
// run with gating, -nogate without), the torso mass estimate jittering by about ±0.1 kg about a
// settled error, with touchdown spikes of 1.5 kg (about 20 robust spreads) in the run without
// gating and, in the case gating does nothing, in the one with it. Would fail if the check passed
// with the spike kept, or with an estimator that gated every tick (frozen: no spike, nothing
// used), or failed where there is no spike to gate (a steady 1.3 kg offset, which the peak about
// 0, the paper's reading, counts as a spike: reported only).
TEST(Tools, ReportChecksTheSteppingSpikeAgainstTheRunsJitter) {
  struct Case {
    const char* name;
    double spike_nogate, spike_gated, offset;
    const char* gated_status;
    const char* verdict;
  };
  for (const Case& c : {Case{"gated", 1.5, 0.0, 0.0, "updated", "yes"},
                        Case{"kept", 1.5, 1.5, 0.0, "updated", "**no**"},
                        Case{"none", 0.0, 0.0, -1.3, "updated", "yes"},
                        Case{"frozen", 1.5, 0.0, 0.0, "gated", "**no**"}}) {
    const std::string dir = testing::TempDir() + "/tools_stepping_" + c.name;
    std::filesystem::create_directories(dir);
    for (const char* label : {"nogate", "adaptive"}) {
      const bool nogate = std::string(label) == "nogate";
      const double spike = nogate ? c.spike_nogate : c.spike_gated;
      std::ofstream f(dir + "/step-in-place-" + label + ".csv");
      WriteTorsoHeader(f);
      for (int i = 0; i < 1500; ++i) {  // 4.5 s at 3 ms; touchdowns every 0.6 s from 2.4 s
        const double jitter = 0.08 * std::sin(1.7 * i) + 0.04 * std::sin(0.31 * i);
        const bool touchdown = i >= 800 && i % 200 < 5;
        const double m_est = 30.0 + c.offset + jitter + (touchdown ? spike : 0.0);
        f << 3'000'000LL * i << ",estimating," << (nogate ? "updated" : c.gated_status)
          << ",0,1,20,0.01";
        for (const double m : {m_est, 30.0, m_est})
          f << "," << m << "," << m * 0.01 << ",0," << m * 0.3 << ",1,0,0,1,0,1";
        f << "\n";
      }
    }
    Exec(HEFT_REPORT, {dir});
    const std::string md = Slurp(dir + "/report.md");
    EXPECT_THAT(md, HasSubstr("| stepping: with gating no touchdown spike remains"));
    EXPECT_THAT(
        md, HasSubstr(std::string("| ≤ 5 spreads, or ratio ≤ 0.33; ≥ 50 % | ") + c.verdict + " |"))
        << c.name << "\n"
        << md;
  }
}

// No harm where nothing is carried: synthetic walk runs (adaptive and nominal, the torso's
// estimate at the truth) whose pelvis-height error with adaptation is a constant against a
// constant without. Would fail if the check passed adaptation that costs 1.5× on the deviated
// robot's 1.4 mm, failed 0.4 mm more on it (within 0.5 mm), or on the ideal robot's 0.2 mm held
// the ratio alone (0.6 mm is 3× but 0.4 mm above: met; 0.9 mm is 0.7 mm above: missed).
TEST(Tools, ReportChecksNoHarmWhenNothingIsCarried) {
  struct Case {
    const char* name;
    double nominal, adaptive;
    bool met;
  };
  for (const Case& c : {Case{"same", 0.0014, 0.0014, true}, Case{"close", 0.0014, 0.0018, true},
                        Case{"worse", 0.0014, 0.0021, false}, Case{"ideal", 0.0002, 0.0006, true},
                        Case{"ideal_worse", 0.0002, 0.0009, false}}) {
    const std::string dir = testing::TempDir() + "/tools_noharm_" + c.name;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    for (const char* label : {"adaptive", "nominal"}) {
      std::ofstream f(dir + "/walk-" + label + ".csv");
      WriteTorsoHeader(f);
      for (int i = 0; i < 1000; ++i) {
        f << 3'000'000LL * i << ",estimating,updated,0,1,20,"
          << (std::string(label) == "adaptive" ? c.adaptive : c.nominal);
        for (int k = 0; k < 3; ++k) f << ",30,0.3,0,9,3.9,0,-0.09,3.8,0,0.5";
        f << "\n";
      }
    }
    const Outcome r = Exec(HEFT_REPORT, {dir, "--check"});
    const std::string md = Slurp(dir + "/report.md");
    EXPECT_EQ(r.code, c.met ? 0 : 1) << c.name << r.out << r.err;
    char figure[64];
    std::snprintf(figure, sizeof figure, "%.4f m against %.4f m", c.adaptive, c.nominal);
    EXPECT_THAT(md, HasSubstr(std::string("| walk: no harm when nothing is carried, pelvis-height "
                                          "RMSE with adaptation against without | ") +
                              figure + " | ≤ 1.1× without, or ≤ 0.5 mm above it | " +
                              (c.met ? "yes" : "**no**")))
        << c.name << "\n"
        << md;
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

  const std::string results = Slurp(dir + "/results.md");
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

  // A README without the two lines (or with them reversed) is refused before the report runs,
  // and left as it was.
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
  EXPECT_EQ(Exec(HEFT_REPORT, {dir, "--readme"}).code, 2);
}

}  // namespace

// heft-report [--check] RUN_DIR   (--help: usage and exit codes)
//
// RUN_DIR holds, per scenario S, the telemetry S-adaptive.csv and S-nominal.csv and the logs
// S-adaptive.log / S-nominal.log written by heft-sim (tools/main-job.sh makes them, each with the
// configuration it ran, S-label.yaml), plus optional S-kf.csv (the baseline KF), S-urdf.csv,
// S-urdf-cal.csv, S-ident.csv (the other nominal-model / calibration combinations),
// step-in-place-nogate.csv (the procedure's stepping without gating), forearm-load-rl*.csv (the
// hand-off rate limit swept), the robot without foot F/T cells (S-noft-adaptive.csv),
// dumbbell-curl-realtime.log (a real-time run: wake-up jitter), and the identification:
// excite-record.*, identified.yaml, identify.log (procedure.cpp). Writes RUN_DIR/report.md and PNG
// figures (gnuplot), prints the summary, and with --check exits non-zero when a checked target is
// missed. Anomalies in the tables are commented in the text (anomalies.cpp); figures are drawn by
// plot.cpp.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "anomalies.hpp"
#include "plot.hpp"
#include "procedure.hpp"
#include "run_figures.hpp"
#include "tool_args.hpp"

namespace {

using namespace heft::report;  // the tool is the report library's command line

constexpr const char* kUsage = R"(usage: heft-report [--check] RUN_DIR
       heft-report --help | --version

Reads heftd's telemetry of the main job's runs in RUN_DIR (tools/main-job.sh writes them: per
scenario S, S-adaptive.csv and S-nominal.csv, optionally S-kf.csv, S-urdf.csv, S-urdf-cal.csv,
S-ident.csv, S-noft-adaptive.csv, step-in-place-nogate.csv, forearm-load-rl*.csv,
dumbbell-curl-realtime.log, each run's configuration S-label.yaml, and the identification's
excite-record.*, identified.yaml and identify.log), writes RUN_DIR/report.md with PNG figures
(gnuplot) and prints the summary.

  --check      exit 1 when a checked target is missed (what CI runs)
  -h, --help   this text
  --version    heft's version

Exit codes:
  0  report written (with --check: every checked target met)
  1  --check: a checked target was missed (the report is written)
  2  usage error: unknown option, no or more than one RUN_DIR
  3  RUN_DIR does not exist, holds no adaptive-run telemetry, or report.md could not be written
)";

// The scenarios where the torso carries a load or walks, whose shape (CoM, inertia) the data barely
// see: checked against the truth and the prior (issue 14, README "Where the data say nothing").
bool IsTorsoShapeScenario(const std::string& name) {
  return name == "torso-load" || name == "step-in-place" || name == "walk";
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  bool check = false;
  const int exit_code = heft::tools::ParseToolCommandLine(
      argc, argv, {"heft-report", kUsage, std::string("heft-report ") + HEFT_VERSION, "RUN_DIR"},
      dir, [&](const std::string& a, int&) {
        if (a != "--check") return heft::tools::Option::kNotMine;
        check = true;
        return heft::tools::Option::kTaken;
      });
  if (exit_code >= 0) return exit_code;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    std::fprintf(stderr, "heft-report: %s: %s\n", dir.c_str(),
                 std::filesystem::exists(dir, ec) ? "not a directory" : "no such run directory");
    return 3;
  }
  struct Scenario {
    std::string name, paper_off, paper_on;
    bool table2;  // a row of Table II (the others: the robot without foot F/T cells, standing)
  };
  const std::vector<Scenario> scenarios = {
      {"forearm-load", "1.0956", "0.1499", true},
      {"dumbbell-curl", "", "", true},
      {"torso-load", "0.0352", "0.0157", true},
      {"step-in-place", "", "", true},
      {"walk", "", "", true},
      {"torso-load-noft", "", "", false},
      {"standing-curl", "", "", false},
      {"standing-curl-noft", "", "", false},
  };
  std::vector<heft::report::ScenarioFigures> figures;
  std::ostringstream md, table2, per;
  std::vector<Target> targets;
  md << "# heft main job report\n\nEvery figure below is measured against the simulator's truth "
        "(MuJoCo), with the "
        "whole chain in play: MuJoCo → emulated CAN frames → drivers → state buffer → estimator "
        "plugin at 333 Hz → "
        "hand-off → the simulator's whole-body controller. *adaptive*: the controller uses heft's "
        "hand-off; "
        "*nominal*: it ignores it (the paper's \"no adaptation\").\n\n";
  table2 << "| task | RMSE nominal | RMSE adaptive | reduction | paper nominal | paper adaptive "
            "| mean error the second before the load: nominal / adaptive "
            "|\n|---|---|---|---|---|---|---|\n";
  per << "| scenario | mass error | CoM error | inertia error | converge (5 %) | gated / released "
         "| rate-limited | "
         "consistent: handed / raw EKF / raw KF | tick median / 99.9 % / worst | overruns "
         "|\n|---|---|---|---|---|---|---|---|---|---|\n";
  auto signed_or_dash = [](double v) { return std::isnan(v) ? std::string("—") : Fmt("%+.4f", v); };
  for (const Scenario& s : scenarios) {
    const heft::report::ScenarioTask task = heft::report::TaskOf(s.name);
    const std::string f_on = dir + "/" + s.name + "-adaptive.csv",
                      f_off = dir + "/" + s.name + "-nominal.csv";
    const Table on = Read(f_on), off = Read(f_off);
    const Table kf = Read(dir + "/" + s.name + "-kf.csv");
    const RunFigures a = Measure(on, task.link, task.error);
    if (!a.ok) continue;
    const RunFigures o = Measure(off, task.link, task.error);
    const double rms_on = a.rmse, rms_off = o.ok ? o.rmse : NAN;
    const double ratio = rms_off / rms_on;
    if (s.table2)
      table2 << "| " << s.name << " (" << task.error << ") | " << Fmt("%.4f", rms_off) << " "
             << task.unit << " | " << Fmt("%.4f", rms_on) << " " << task.unit << " | "
             << Fmt("%.1f×", ratio) << " | " << s.paper_off << " | " << s.paper_on << " | "
             << (std::isnan(a.pre_load_error)
                     ? std::string("—")
                     : signed_or_dash(o.ok ? o.pre_load_error : NAN) + " / " +
                           signed_or_dash(a.pre_load_error) + " " + task.unit)
             << " |\n";
    const double handed_ok = 1.0 - a.handed_inconsistent / static_cast<double>(a.rows);
    per << "| " << s.name << " | " << Fmt("%.2f %%", 100 * a.mass_error) << " | "
        << Fmt("%.1f mm", 1000 * a.com_error) << " | " << Fmt("%.1f %%", 100 * a.inertia_error)
        << " | " << Fmt("%.3f s", a.converge_s) << " | " << a.gated << " / " << a.released << " | "
        << Fmt("%.1f %%", 100 * a.rate_limited) << " | " << Fmt("%.1f %%", 100.0 * handed_ok)
        << " / " << Fmt("%.1f %%", 100 * a.raw_consistent) << " / "
        << (kf.ok ? Fmt("%.1f %%", 100 * Fraction(kf.column("consistent"), 1.0)) : "—") << " | "
        << Fmt("%.0f", a.tick_p50) << " / " << Fmt("%.0f", a.tick_p999) << " / "
        << Fmt("%.0f µs", a.tick_worst) << " | " << a.overruns << " |\n";
    targets.push_back(
        {s.name + ": every handed parameter set physically consistent",
         std::to_string(a.rows - a.handed_inconsistent) + " / " + std::to_string(a.rows), "all",
         a.handed_inconsistent == 0, true});
    targets.push_back(
        {s.name + ": control tick 99.9th percentile < 10 % of 3 ms, never over the period",
         Fmt("%.0f µs", a.tick_p999) + Fmt(" / worst %.0f µs", a.tick_worst), "< 300 µs, < 3000 µs",
         a.tick_p999 < 300 && a.tick_worst < 3000, false});
    if (s.name == "forearm-load")
      targets.push_back({"elbow RMSE reduced by adaptation (forearm-load)", Fmt("%.1f×", ratio),
                         "≥ 7×", ratio >= 7, true});
    if (s.name == "torso-load")
      targets.push_back({"pelvis-height RMSE reduced by adaptation (torso-load)",
                         Fmt("%.1f×", ratio), "≥ 2.2×", ratio >= 2.2, true});
    // Issue 14: where standing and walking say little (a torso's centre-of-mass height), the
    // estimate holds its prior (README "Where the data say nothing").
    // Against the truth, beyond what the nominal model itself gets wrong there: on the deviated
    // robot the identified torso's CoM is off in directions no recording fixes, and holding that
    // prior is what the estimate should do (docs/imperfect-robot.md, "What no recording fixes").
    // On the ideal robot the nominal's error is about 0 and this is the plain 10 mm.
    if (IsTorsoShapeScenario(s.name))
      targets.push_back({s.name + ": torso centre of mass at steady state",
                         Fmt("%.1f mm", 1000 * a.com_error) +
                             Fmt(" (the nominal model's own: %.1f mm)", 1000 * a.prior_com_error),
                         "≤ 10 mm + the nominal's", a.com_error <= 0.01 + a.prior_com_error, true});
    // Issue 14: and its inertia no further from the truth than the prior's. The rotational inertia
    // about the CoM (the URDF's), since the CoM has its own check: about the link origin the
    // inertia holds m c cᵀ, which moves 0.3 % per mm of the torso's CoM height, so that figure
    // re-checks the CoM 30 times more strictly and rewards a prior whose CoM error happens to
    // cancel its inertia's (README "Where the data say nothing"). "No further" up to twice the
    // estimate's own jitter over the settled part (its noise): a drift beyond it fails.
    if (IsTorsoShapeScenario(s.name))
      targets.push_back(
          {s.name + ": torso inertia about its CoM at steady state, no further from the truth "
                    "than the prior",
           Fmt("%.2f %%", 100 * a.com_inertia_error) + Fmt(" ± %.2f", 100 * a.com_inertia_jitter) +
               Fmt(" (prior %.2f %%; about the origin ", 100 * a.prior_com_inertia_error) +
               Fmt("%.1f %%", 100 * a.inertia_error) +
               Fmt(", prior %.1f %%)", 100 * a.prior_inertia_error),
           "≤ the prior's + 2 × jitter",
           a.com_inertia_error <= a.prior_com_inertia_error + 2 * a.com_inertia_jitter, true});
    // The handed covariance: the mean NEES over the settled part is 10 when it is honest. It is
    // not (README "The handed covariance"): the factor is reported for every run, and on
    // torso-load held to the order of magnitude measured (0.85× on the URDF robot, 19-66× on
    // seeds 1-3: the whole jobs of 2026-11-30), so that a regression to the loose prior's 3000×
    // fails.
    targets.push_back({s.name + ": handed covariance, mean NEES ÷ 10 (1 when honest)",
                       Fmt("%.3g×", a.nees / 10) +
                           (std::isnan(a.mh_nees)
                                ? std::string()
                                : Fmt(" (mass and first moment alone, ÷ 4: %.3g×)", a.mh_nees / 4)),
                       s.name == "torso-load" ? "≤ 100×" : "≤ 2× (χ²(10) 95 %: ≤ 20.5)",
                       s.name == "torso-load" ? a.nees <= 1000 : a.nees <= 20.5,
                       s.name == "torso-load"});
    if (s.name == "dumbbell-curl") {
      // The same reading: the forearm's own mass and CoM are shares of the arm's distal composite
      // that no recording splits, so the nominal model's forearm is off by what identification
      // left there (up to the URDF's deviation), and the estimate converges to it plus the
      // dumbbell.
      targets.push_back({"dumbbell: forearm + dumbbell mass at steady state",
                         Fmt("%.2f %%", 100 * a.mass_error) +
                             Fmt(" (the nominal model's own: %.2f %%)", 100 * a.prior_mass_error),
                         "≤ 2 % + the nominal's", a.mass_error <= 0.02 + a.prior_mass_error, true});
      targets.push_back({"dumbbell: centre of mass at steady state",
                         Fmt("%.1f mm", 1000 * a.com_error) +
                             Fmt(" (the nominal model's own: %.1f mm)", 1000 * a.prior_com_error),
                         "≤ 10 mm + the nominal's", a.com_error <= 0.01 + a.prior_com_error, true});
      targets.push_back({"dumbbell: raw estimate within 5 % after the dumbbell arrives",
                         Fmt("%.3f s", a.converge_s), "< 0.5 s (Baek et al.: ~0.1 s)",
                         a.converge_s < 0.5, true});
    }
    // The figures the anomaly rules read.
    heft::report::ScenarioFigures f;
    f.name = s.name;
    f.link = task.link;
    f.task = task.task;
    f.unit = task.unit;
    f.rmse_nominal = rms_off;
    f.rmse_adaptive = rms_on;
    f.mass_error = a.mass_error;
    f.com_error = a.com_error;
    f.inertia_error = a.inertia_error;
    f.converge_s = a.converge_s;
    f.raw_consistent = a.raw_consistent;
    f.handed_consistent = handed_ok;
    f.tick_p999_us = a.tick_p999;
    f.overruns = a.overruns;
    f.true_mass_span = a.true_mass_span;
    f.nominal_mass_error = a.nominal_mass_error;  // the nominal mass, handed before estimation
    figures.push_back(f);
    // Figures.
    const std::string time = heft::report::Column(on, {"t", "t_ns"});
    heft::report::Plot(
        dir, s.name + "-mass.png", s.name + ": " + task.link + " mass, estimate against truth",
        task.link + " mass m [kg]",
        {{f_on, time, LinkColumn(on, task.link, "est_", 0), "raw estimate (EKF)", Style::kPrimary},
         {f_on, time, LinkColumn(on, task.link, "", 0), "handed on (rate-limited)",
          Style::kSecondary},
         {f_on, time, LinkColumn(on, task.link, "true_", 0), "truth", Style::kTruth}});
    // Issue 14: the torso's CoM and inertia against the truth and the prior, over the run.
    if (IsTorsoShapeScenario(s.name) &&
        heft::report::WriteShapeErrors(on, task.link, dir + "/" + s.name + "-shape.csv"))
      heft::report::PlotShapeErrors(dir, s.name, task.link);
    if (off.ok)
      heft::report::Plot(
          dir, s.name + "-tracking.png", s.name + ": " + task.task + " with and without adaptation",
          task.task + " [" + task.unit + "]",
          {{f_on, time, ErrorColumn(on, task.error), "adaptive (heft's hand-off)", Style::kPrimary},
           {f_off, time, ErrorColumn(off, task.error), "nominal (no adaptation)",
            Style::kSecondary}});
  }
  // Fig. 3: the baseline KF against the EKF on the poorly exciting walk.
  const Table kf = Read(dir + "/walk-kf.csv"), ekf = Read(dir + "/walk-adaptive.csv");
  std::ostringstream extra;
  if (kf.ok && ekf.ok) {
    const auto ck = kf.column("consistent"), ce = ekf.column("consistent");
    const double fk = Fraction(ck, 0.0);
    const double fe = Fraction(ce, 0.0);
    extra
        << "- Poorly exciting walk (Fig. 3): ticks with an inconsistent raw estimate — baseline KF "
        << Fmt("%.1f %%", 100 * fk) << ", log-Cholesky EKF " << Fmt("%.1f %%", 100 * fe) << ".\n";
    targets.push_back({"walk: the EKF's estimate never leaves the consistent set",
                       Fmt("%.1f %%", 100 * fe), "0 %", fe == 0, true});
    const std::string time = heft::report::Column(ekf, {"t", "t_ns"});
    heft::report::Plot(dir, "walk-kf-vs-ekf.png",
                       "walk: torso Ixx estimate, baseline KF vs log-Cholesky EKF",
                       "torso Ixx about the link frame [kg·m²]",
                       {{dir + "/walk-adaptive.csv", time, LinkColumn(ekf, "torso", "est_", 4),
                         "log-Cholesky EKF", Style::kPrimary},
                        {dir + "/walk-kf.csv", time, LinkColumn(kf, "torso", "est_", 4),
                         "baseline KF", Style::kSecondary},
                        {dir + "/walk-adaptive.csv", time, LinkColumn(ekf, "torso", "true_", 4),
                         "truth", Style::kTruth}});
  }
  // Fig. 8: torso mass during stepping with and without gating. The pair steps early (the estimator
  // starting at 0.5 s, no calibration, no wait), as in the paper: the procedure's runs step only
  // after the calibration, when the filter has settled (their pair is reported too, not checked).
  {
    // The torso-mass error after 2 s (the stepping's): its peak about 0 (the paper's reading) and
    // about the run's own settled estimate. On a robot that is not its URDF the torso estimate
    // carries a steady error (the other bodies' model errors, seen through the feet) that gating
    // cannot and should not change, and that a peak about 0 counts as spike; and where the
    // measurement noise is modelled larger a touchdown may raise no spike at all, so that the
    // ratio of two jitters says nothing about gating. The check therefore asks that, with gating,
    // no spike remains (a peak beyond 5 robust spreads of the run's own jitter), or that it is at
    // most ⅓ of the one without, and that the gated run used at least half of its ticks (one
    // that gated everything has frozen) (README, "The stepping spike on the deviated robot").
    // Both runs are the procedure's (identified model, calibrated): the one with gating is
    // step-in-place's adaptive run, the other the same with gating off.
    const Table ng = Read(dir + "/step-in-place-nogate.csv"),
                g = Read(dir + "/step-in-place-adaptive.csv");
    const heft::report::MassSpikes a = heft::report::MeasureMassSpikes(ng, "torso", 2.0),
                                   b = heft::report::MeasureMassSpikes(g, "torso", 2.0);
    if (a.ok && b.ok) {
      extra << "- Stepping in place (Fig. 8; the procedure's runs, with and without gating): peak "
               "torso-mass deviation without gating "
            << Fmt("%.2f kg", a.peak) << ", with gating " << Fmt("%.2f kg", b.peak)
            << "; settled error (median after 2 s) " << Fmt("%+.2f kg", a.settled) << " / "
            << Fmt("%+.2f kg", b.settled) << ", peak about it "
            << Fmt("%.2f kg", a.peak_about_settled) << " / " << Fmt("%.2f kg", b.peak_about_settled)
            << " (" << Fmt("%.1f", a.spreads()) << " / " << Fmt("%.1f", b.spreads())
            << " robust spreads of " << Fmt("%.3f", a.spread) << " / " << Fmt("%.3f kg", b.spread)
            << "); measurements used " << Fmt("%.0f %%", 100.0 * a.used) << " / "
            << Fmt("%.0f %%", 100.0 * b.used) << ".\n";
      targets.push_back(
          {"stepping: torso-mass spike with gating ≤ ⅓ of without (the paper's "
           "reading, about 0)",
           Fmt("%.2f", b.peak / a.peak), "≤ 0.33", b.peak <= a.peak / 3, false});
      const double ratio = b.peak_about_settled / a.peak_about_settled;
      targets.push_back(
          {"stepping: with gating no touchdown spike remains (peak about the settled estimate "
           "> 5 robust spreads), or it is ≤ ⅓ of the one without; the gated run uses ≥ half its "
           "ticks",
           Fmt("with %.1f spreads", b.spreads()) + Fmt(", without %.1f; ratio", a.spreads()) +
               Fmt(" %.2f", ratio) + Fmt("; used %.0f %%", 100.0 * b.used),
           "≤ 5 spreads, or ratio ≤ 0.33; ≥ 50 %",
           (!b.spiked() || ratio <= 1.0 / 3) && b.used >= heft::report::MassSpikes::kMinUsed,
           true});
      heft::report::PlotMassEstimates(
          dir, "step-gating.png", "step-in-place: torso mass estimate with and without gating",
          "torso", {"step-in-place-adaptive.csv", g, "with innovation gating"},
          {"step-in-place-nogate.csv", ng, "without gating"});
    }
  }
  // The hand-off's rate limit swept on forearm-load: what a limit costs a fast-changing load.
  std::ostringstream sweep;
  {
    struct Limit {
      std::string label, mass_rate;
    };
    std::vector<Limit> limits = {{"rl3", ""}, {"rl60", ""}, {"adaptive", ""}};
    std::vector<Series> series;
    std::string time = "t";
    const Style styles[] = {Style::kSecondary, Style::kTertiary, Style::kPrimary};
    for (Limit& l : limits) {
      const std::string f = dir + "/forearm-load-" + l.label + ".csv";
      const Table tb = Read(f);
      if (!tb.ok) continue;
      // The limit the run had: its configuration's `rate_limits: {mass: X, ...}` (main-job.sh
      // writes it beside the telemetry).
      std::ifstream cfg(dir + "/forearm-load-" + l.label + ".yaml");
      for (std::string line; std::getline(cfg, line);) {
        const auto at = line.find("rate_limits: {mass: ");
        if (at == std::string::npos) continue;
        const std::string rest = line.substr(at + 20);
        l.mass_rate = rest.substr(0, rest.find(',')) + " kg/s";
      }
      if (l.mass_rate.empty()) l.mass_rate = "? kg/s";
      const auto hm = tb.column(LinkColumn(tb, "left_forearm", "", 0)),
                 mt = tb.column(LinkColumn(tb, "left_forearm", "true_", 0));
      double e = 0;
      for (std::size_t i = 0; i < hm.size(); ++i) e += std::abs(hm[i] - mt[i]);
      const RunFigures rf = Measure(tb, "left_forearm", "left_elbow_error");
      sweep << "| " << l.mass_rate << " | " << Fmt("%.4f rad", rf.rmse) << " | "
            << Fmt("%.3f kg", e / static_cast<double>(hm.size())) << " | "
            << Fmt("%.1f %%", 100 * rf.rate_limited) << " |\n";
      time = heft::report::Column(tb, {"t", "t_ns"});
      series.push_back({f, time, LinkColumn(tb, "left_forearm", "", 0),
                        "handed on, limit " + l.mass_rate, styles[&l - limits.data()]});
    }
    if (!series.empty()) {
      series.push_back({dir + "/forearm-load-adaptive.csv", time,
                        "left_forearm_" + std::string(time == "t" ? "true_m" : "true_mass_kg"),
                        "truth", Style::kTruth});
      heft::report::Plot(dir, "forearm-rate-limit.png",
                         "forearm-load: handed mass under three rate limits",
                         "left_forearm mass m [kg]", series);
    }
  }
  if (figures.empty()) {
    std::fprintf(stderr,
                 "heft-report: %s holds no adaptive-run telemetry (S-adaptive.csv for S in "
                 "forearm-load, dumbbell-curl, torso-load, step-in-place, walk); "
                 "tools/main-job.sh writes them\n",
                 dir.c_str());
    return 3;
  }
  const heft::report::AnomalyRules rules;
  const std::vector<std::string> anomalies = heft::report::FindAnomalies(figures, rules);
  // Wake-up jitter of the real-time run, from heft-sim's summary lines.
  std::string jitter;
  {
    std::ifstream log(dir + "/dumbbell-curl-realtime.log");
    for (std::string line; std::getline(log, line);) {
      for (const char* key :
           {"control tick compute:", "control wake-up lateness:", "stopped after"}) {
        const auto at = line.find(key);
        if (at != std::string::npos) jitter += "- " + line.substr(at) + "\n";
      }
    }
  }
  md << heft::report::ProcedureSection(dir, targets) << "\n## Table II, beside the paper's\n\n"
     << "The procedure's runs (identified nominal model, calibrated); RMSE from the payload's "
        "arrival on. The last column is the task's mean error in the second before the payload "
        "arrives, unloaded: what the controller's model of the robot leaves whatever heft does "
        "(the reduction counts it in both runs).\n\n"
     << table2.str() << "\n"
     << heft::report::StepsSection(dir) << "\n"
     << heft::report::NoFtSection(dir) << "\n## Per scenario (adaptive runs)\n\n"
     << per.str()
     << "\nMass, CoM and inertia errors: mean over the last quarter of the run while estimating "
        "(raw "
        "estimate against truth; inertia as a relative Frobenius error). Converge: median time for "
        "the raw estimate to "
        "come within 5 % of the true mass after the estimator starts or the true mass jumps. Tick: "
        "compute time of the "
        "333 Hz update in µs.\n\n"
     << extra.str();
  md << "\n## What stands out in these tables\n\n";
  if (anomalies.empty()) md << "Nothing: no figure crosses the rules below.\n";
  for (const std::string& a : anomalies) md << "- " << a << "\n";
  md << "\nRules (from the data, the same for every scenario): "
     << heft::report::DescribeRules(rules) << ".\n";
  if (!sweep.str().empty())
    md << "\n## The hand-off's rate limit on forearm-load\n\nA rate limit protects the controller "
          "from large steps of its model (start-up, glitches) and delays every genuine change "
          "by step / limit (the paper caps the mass rate at 3 kg/s on hardware). Table I's forearm "
          "load "
          "steps 6 kg at once:\n\n| mass rate limit | "
          "elbow RMSE | mean handed-mass error | ticks rate-limited |\n|---|---|---|---|\n"
       << sweep.str() << "\n![](forearm-rate-limit.png)\n";
  if (!jitter.empty())
    md << "\n## Real time (dumbbell-curl, absolute-time sleeps; no real-time kernel here)\n\n"
       << jitter;
  md << "\n## Targets\n\n| target | measured | wanted | met |\n|---|---|---|---|\n";
  int missed_checked = 0;
  for (const Target& tg : targets) {
    md << "| " << tg.what << " | " << tg.figure << " | " << tg.target << " | "
       << (tg.met ? "yes" : "**no**") << " |\n";
    if (tg.checked && !tg.met) ++missed_checked;
  }
  md << "\n## Figures\n\n";
  for (const Scenario& s : scenarios) {
    if (std::filesystem::exists(dir + "/" + s.name + "-mass.png"))
      md << "![](" << s.name << "-mass.png)\n";
    if (std::filesystem::exists(dir + "/" + s.name + "-tracking.png"))
      md << "![](" << s.name << "-tracking.png)\n";
    for (const char* shape : {"-com-error.png", "-inertia-error.png", "-inertia-com-error.png"})
      if (std::filesystem::exists(dir + "/" + s.name + shape))
        md << "![](" << s.name << shape << ")\n";
  }
  for (const char* f : {"walk-kf-vs-ekf.png", "step-gating.png"})
    if (std::filesystem::exists(dir + "/" + f)) md << "![](" << f << ")\n";
  {
    const std::string path = dir + "/report.md";
    std::ofstream out(path);
    out << md.str();
    out.close();
    if (!out) {
      std::fprintf(stderr, "heft-report: %s: cannot write: %s\n", path.c_str(),
                   std::strerror(errno));
      return 3;
    }
  }
  std::printf("%s\n%s\n%s", table2.str().c_str(), per.str().c_str(), extra.str().c_str());
  if (!anomalies.empty()) {
    std::printf("\nWhat stands out:\n");
    for (const std::string& a : anomalies) std::printf("  - %s\n", a.c_str());
  }
  if (!sweep.str().empty())
    std::printf("\nforearm-load, hand-off rate limit swept:\n%s", sweep.str().c_str());
  if (!jitter.empty()) std::printf("\nreal-time run (dumbbell-curl):\n%s", jitter.c_str());
  std::printf("\nTargets:\n");
  for (const Target& tg : targets)
    std::printf("  [%s] %s: %s (wanted %s)%s\n", tg.met ? "met" : "MISSED", tg.what.c_str(),
                tg.figure.c_str(), tg.target.c_str(), tg.checked ? "" : " (reported, not checked)");
  std::printf("\nreport: %s/report.md\n", dir.c_str());
  if (check && missed_checked > 0) {
    std::fprintf(stderr, "heft-report: --check: %d checked target(s) missed\n", missed_checked);
    return 1;
  }
  return 0;
}

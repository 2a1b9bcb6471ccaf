#include "scenarios.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "plot.hpp"
#include "run_figures.hpp"
#include "targets.hpp"
#include "task.hpp"

namespace heft::report {

const std::vector<Scenario>& Scenarios() {
  static const std::vector<Scenario> scenarios = {
      {"forearm-load", "1.0956", "0.1499", true},
      {"dumbbell-curl", "", "", true},
      {"torso-load", "0.0352", "0.0157", true},
      {"step-in-place", "", "", true},
      {"walk", "", "", true},
      {"torso-load-noft", "", "", false},
      {"standing-curl", "", "", false},
      {"standing-curl-noft", "", "", false},
  };
  return scenarios;
}

namespace {

// Its row of Table II.
std::string Table2Row(const Scenario& s, const ScenarioTask& task, const RunFigures& a,
                      const RunFigures& o) {
  auto signed_or_dash = [](double v) { return std::isnan(v) ? std::string("—") : Fmt("%+.4f", v); };
  const double rms_on = a.rmse, rms_off = o.ok ? o.rmse : NAN;
  std::ostringstream row;
  row << "| " << s.name << " (" << task.error << ") | " << Fmt("%.4f", rms_off) << " " << task.unit
      << " | " << Fmt("%.4f", rms_on) << " " << task.unit << " | " << Fmt("%.1f×", rms_off / rms_on)
      << " | " << s.paper_off << " | " << s.paper_on << " | "
      << (std::isnan(a.pre_load_error) ? std::string("—")
                                       : signed_or_dash(o.ok ? o.pre_load_error : NAN) + " / " +
                                             signed_or_dash(a.pre_load_error) + " " + task.unit)
      << " |\n";
  return row.str();
}

// Its row of the per-scenario table (the adaptive run; the KF's consistency beside it).
std::string PerScenarioRow(const std::string& name, const RunFigures& a, const Table& kf) {
  const double handed_ok = 1.0 - a.handed_inconsistent / static_cast<double>(a.rows);
  std::ostringstream row;
  row << "| " << name << " | " << Fmt("%.2f %%", 100 * a.mass_error) << " | "
      << Fmt("%.1f mm", 1000 * a.com_error) << " | " << Fmt("%.1f %%", 100 * a.inertia_error)
      << " | " << Fmt("%.3f s", a.converge_s) << " | " << a.gated << " / " << a.released << " | "
      << Fmt("%.1f %%", 100 * a.rate_limited) << " | " << Fmt("%.1f %%", 100.0 * handed_ok) << " / "
      << Fmt("%.1f %%", 100 * a.raw_consistent) << " / "
      << (kf.ok ? Fmt("%.1f %%", 100 * Fraction(kf.column("consistent"), 1.0)) : "—") << " | "
      << Fmt("%.0f", a.tick_p50) << " / " << Fmt("%.0f", a.tick_p999) << " / "
      << Fmt("%.0f µs", a.tick_worst) << " | " << a.overruns << " |\n";
  return row.str();
}

// The figures the anomaly rules (and the summary) read.
ScenarioFigures FiguresOf(const std::string& name, const ScenarioTask& task, const RunFigures& a,
                          const RunFigures& o) {
  return {.name = name,
          .link = task.link,
          .task = task.task,
          .unit = task.unit,
          .rmse_nominal = o.ok ? o.rmse : NAN,
          .rmse_adaptive = a.rmse,
          .mass_error = a.mass_error,
          .com_error = a.com_error,
          .inertia_error = a.inertia_error,
          .converge_s = a.converge_s,
          .raw_consistent = a.raw_consistent,
          .handed_consistent = 1.0 - a.handed_inconsistent / static_cast<double>(a.rows),
          .tick_p999_us = a.tick_p999,
          .overruns = a.overruns,
          .true_mass_span = a.true_mass_span,
          .nominal_mass_error = a.nominal_mass_error,  // the nominal mass, handed before estimation
          .handed_mass_sd = a.handed_mass_sd};
}

// Its figures: the link's mass against the truth, the torso's shape errors, the task error with
// and without adaptation.
void PlotScenario(const std::string& dir, const std::string& name, const ScenarioTask& task,
                  const Table& on, const Table& off) {
  const std::string f_on = dir + "/" + name + "-adaptive.csv",
                    f_off = dir + "/" + name + "-nominal.csv";
  const std::string time = Column(on, {"t", "t_ns"});
  Plot(dir, name + "-mass.png", name + ": " + task.link + " mass, estimate against truth",
       task.link + " mass m [kg]",
       {{f_on, time, LinkColumn(on, task.link, "est_", 0), "raw estimate (EKF)", Style::kPrimary},
        {f_on, time, LinkColumn(on, task.link, "", 0), "handed on (rate-limited)",
         Style::kSecondary},
        {f_on, time, LinkColumn(on, task.link, "true_", 0), "truth", Style::kTruth}});
  // Issue 14: the torso's CoM and inertia against the truth and the prior, over the run.
  if (IsTorsoShapeScenario(name) &&
      WriteShapeErrors(on, task.link, dir + "/" + name + "-shape.csv"))
    PlotShapeErrors(dir, name, task.link);
  if (off.ok)
    Plot(dir, name + "-tracking.png", name + ": " + task.task + " with and without adaptation",
         task.task + " [" + task.unit + "]",
         {{f_on, time, ErrorColumn(on, task.error), "adaptive (heft's hand-off)", Style::kPrimary},
          {f_off, time, ErrorColumn(off, task.error), "nominal (no adaptation)",
           Style::kSecondary}});
}

}  // namespace

void AddScenario(const std::string& dir, const Scenario& s, Gathered& g) {
  const Table on = Read(dir + "/" + s.name + "-adaptive.csv"),
              off = Read(dir + "/" + s.name + "-nominal.csv");
  const ScenarioTask task = TaskOfRun(on, dir + "/" + s.name + "-adaptive.yaml");
  const Table kf = Read(dir + "/" + s.name + "-kf.csv");
  const RunFigures a = Measure(on, task.link, task.error);
  if (!a.ok) return;
  const RunFigures o = Measure(off, task.link, task.error);
  if (s.table2) g.table2 << Table2Row(s, task, a, o);
  g.per << PerScenarioRow(s.name, a, kf);
  AddRunTargets(s.name, a, g.targets);
  AddReductionTarget(s.name, a, (o.ok ? o.rmse : NAN) / a.rmse, g.targets);
  AddTorsoShapeTargets(s.name, a, g.targets);
  AddNeesTarget(s.name, a, g.targets);
  if (s.name == "dumbbell-curl") AddDumbbellTargets(a, g.targets);
  AddNoHarmTarget(s.name, a, o, g.targets);
  AddNoFtTargets(s.name, a, g.targets);
  g.figures.push_back(FiguresOf(s.name, task, a, o));
  PlotScenario(dir, s.name, task, on, off);
}

}  // namespace heft::report

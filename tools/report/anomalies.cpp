#include "anomalies.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace heft::report {
namespace {

std::string Fmt(const char* f, double a) {
  char b[96];
  std::snprintf(b, sizeof(b), f, a);
  return b;
}

// The median of a figure over every run but `skip` (NaN and infinite values left out).
template <typename Get>
double MedianOfOthers(const std::vector<ScenarioFigures>& runs, std::size_t skip, Get get) {
  std::vector<double> v;
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (i != skip && std::isfinite(get(runs[i]))) v.push_back(get(runs[i]));
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Adaptation made the task worse: the figure, the rule and why (from the truth and the estimate).
void AddReductionAnomaly(const ScenarioFigures& s, const AnomalyRules& r,
                         std::vector<std::string>& out) {
  const double ratio = s.rmse_nominal / s.rmse_adaptive;
  if (!(std::isfinite(ratio) && ratio < r.min_reduction)) return;
  std::string why;
  if (s.true_mass_span < 1e-6 && s.nominal_mass_error < 0.01)
    why = " The true " + s.link + " mass stays at the URDF's value through this run (" +
          Fmt("%.1f %%", 100 * s.nominal_mass_error) +
          " off), so the nominal model is already right and adaptation can only add the "
          "estimate's own error (mass " +
          Fmt("%.1f %%", 100 * s.mass_error) + ", CoM " + Fmt("%.0f mm", 1000 * s.com_error) +
          ") to the controller's model; the task error is small either way (" +
          Fmt("%.4f ", s.rmse_nominal) + s.unit + " → " + Fmt("%.4f ", s.rmse_adaptive) + s.unit +
          ").";
  else if (s.true_mass_span < 1e-6)
    why = " The true " + s.link +
          " mass does not change in this run, yet the estimate "
          "differs from it by " +
          Fmt("%.1f %%", 100 * s.mass_error) + " (CoM " + Fmt("%.0f mm", 1000 * s.com_error) +
          "): the handed-on model is worse than the nominal one.";
  else
    why = " The estimate is off by " + Fmt("%.1f %%", 100 * s.mass_error) + " in mass and " +
          Fmt("%.0f mm", 1000 * s.com_error) + " in CoM over the last quarter.";
  out.push_back("**" + s.name + "**: adaptation made the " + s.task + " worse — RMSE " +
                Fmt("%.4f ", s.rmse_nominal) + s.unit + " without, " +
                Fmt("%.4f ", s.rmse_adaptive) + s.unit + " with (" + Fmt("%.2f×", ratio) +
                ", below " + Fmt("%.1f×", r.min_reduction) + ")." + why);
}

// A mass, CoM or inertia error far above the other scenarios' (run i of `runs`).
void AddOutlierAnomalies(const std::vector<ScenarioFigures>& runs, std::size_t i,
                         const AnomalyRules& r, std::vector<std::string>& out) {
  const ScenarioFigures& s = runs[i];
  struct Figure {
    const char* what;
    double ScenarioFigures::*field;
    double floor;
    const char* unit_fmt;
    double scale;
    const char* hint;
  };
  const Figure figures[] = {
      {"mass error", &ScenarioFigures::mass_error, r.mass_floor, "%.2f %%", 100,
       "The mass is the best-observed parameter: look for a bias in the torque sensing or a "
       "load the estimator does not model"},
      {"CoM error", &ScenarioFigures::com_error, r.com_floor_m, "%.1f mm", 1000,
       "A CoM needs the link to rotate under gravity or accelerate in several directions; a "
       "large link that barely moves keeps its CoM weakly observable (compare its mass error: "
       "a good mass with a poor CoM points to excitation, not to the filter)"},
      {"inertia error", &ScenarioFigures::inertia_error, r.inertia_floor, "%.1f %%", 100,
       "Second moments need angular accelerations of the link; slow or planar motion leaves "
       "them at the prior"},
  };
  for (const Figure& f : figures) {
    const double value = s.*(f.field);
    const double median =
        MedianOfOthers(runs, i, [&](const ScenarioFigures& o) { return o.*(f.field); });
    if (!(std::isfinite(value) && std::isfinite(median) && value > r.outlier_factor * median &&
          value > f.floor))
      continue;
    // A truth that moves during the averaging window: the mean error includes the tracking of
    // every change, not only a settled estimate.
    const std::string hint =
        f.field == &ScenarioFigures::mass_error && s.true_mass_span > 0.05
            ? "The true mass changes during this run (by " + Fmt("%.2f kg", s.true_mass_span) +
                  "), so this mean includes the estimate's lag behind every change (median "
                  "settling " +
                  Fmt("%.3f s", s.converge_s) + "), not only a settled error"
            : std::string(f.hint);
    out.push_back(
        "**" + s.name + "**: " + s.link + " " + f.what + " " + Fmt(f.unit_fmt, f.scale * value) +
        ", " + Fmt("%.0f×", value / std::max(median, 1e-12)) +
        " the median of the other scenarios (" + Fmt(f.unit_fmt, f.scale * median) + "). " + hint +
        (f.field == &ScenarioFigures::mass_error
             ? std::string(".")
             : " (mass error here " + Fmt("%.2f %%", 100 * s.mass_error) + ")."));
  }
}

// No convergence, an inconsistent estimate or handed set, a slow tick.
void AddRunAnomalies(const ScenarioFigures& s, const AnomalyRules& r,
                     std::vector<std::string>& out) {
  if (!std::isfinite(s.converge_s))
    out.push_back("**" + s.name + "**: the raw " + s.link +
                  " mass estimate never came within 5 % of the truth after the estimator "
                  "started (or after a load change).");
  if (s.raw_consistent < 1.0)
    out.push_back("**" + s.name + "**: the EKF's raw estimate was inconsistent on " +
                  Fmt("%.2f %%", 100 * (1 - s.raw_consistent)) +
                  " of ticks; the log-Cholesky parametrisation should make that impossible — a "
                  "defect to investigate.");
  if (s.handed_consistent < 1.0)
    out.push_back("**" + s.name + "**: " + Fmt("%.2f %%", 100 * (1 - s.handed_consistent)) +
                  " of the handed parameter sets were physically inconsistent.");
  if (s.handed_mass_sd > r.mass_sd_ratio)
    out.push_back("**" + s.name + "**: the handed σ of the " + s.link + "'s mass was " +
                  Fmt("%.1f×", s.handed_mass_sd) +
                  " the handed mass over the run's last quarter (median): the motion leaves the "
                  "mass unseen and the estimate follows the nominal model's error along it. The "
                  "Schmidt gain (`estimator.consider_gain: true`) does not learn that error, at "
                  "costs elsewhere that docs/handoff.md and docs/simulator.md state.");
  if (s.tick_p999_us > r.tick_p999_us || s.overruns > 0)
    out.push_back("**" + s.name + "**: control tick 99.9th percentile " +
                  Fmt("%.0f µs", s.tick_p999_us) + ", " + Fmt("%.0f", s.overruns) +
                  " overruns of the 3 ms period (this machine is shared; rerun idle before "
                  "concluding).");
}

}  // namespace

std::string DescribeRules(const AnomalyRules& r) {
  return "a reduction below " + Fmt("%.1f×", r.min_reduction) +
         "; a mass, CoM or inertia error above " + Fmt("%.0f×", r.outlier_factor) +
         " the median of the other scenarios and above " + Fmt("%.0f %%", 100 * r.mass_floor) +
         ", " + Fmt("%.0f mm", 1000 * r.com_floor_m) + " or " +
         Fmt("%.0f %%", 100 * r.inertia_floor) +
         "; a raw EKF estimate or a handed parameter set ever inconsistent; an estimate never "
         "within 5 % of the true mass; a handed σ of the mass above " +
         Fmt("%.0f×", r.mass_sd_ratio) + " the handed mass; a 99.9th-percentile tick above " +
         Fmt("%.0f µs", r.tick_p999_us) + " or any overrun of the 3 ms period";
}

std::vector<std::string> FindAnomalies(const std::vector<ScenarioFigures>& runs,
                                       const AnomalyRules& r) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    AddReductionAnomaly(runs[i], r, out);
    AddOutlierAnomalies(runs, i, r, out);
    AddRunAnomalies(runs[i], r, out);
  }
  return out;
}

}  // namespace heft::report

// heft-report's comments on its own tables: every figure that stands out is named in the text with
// the rule that flagged it, found from the data (no scenario is special-cased by name).
#pragma once

#include <cmath>
#include <string>
#include <vector>

namespace heft::report {

// One adaptive run's figures as the per-scenario table shows them (NaN: not measured).
struct ScenarioFigures {
  std::string name, link, task, unit;
  double rmse_nominal = 0, rmse_adaptive = 0;               // task error, in `unit`
  double mass_error = 0, com_error = 0, inertia_error = 0;  // relative, m, relative
  double converge_s = 0;                                    // NaN: never within 5 %
  double raw_consistent = 1, handed_consistent = 1;         // fractions of ticks
  double tick_p999_us = 0, overruns = 0;
  double true_mass_span = 0;  // kg: max − min of the true mass over the run (0: constant load)
  double nominal_mass_error = 0;  // relative: the URDF's mass against the truth, at the end
  double handed_mass_sd = NAN;    // the handed mass's σ ÷ the handed mass, median, last quarter
};

// The thresholds, stated in the report beside the comments.
struct AnomalyRules {
  double min_reduction = 1.0;   // adaptation should not make the task error worse
  double outlier_factor = 3.0;  // × the median of the other scenarios
  double com_floor_m = 0.010;   // …and above the dumbbell target (1 cm)
  double mass_floor = 0.02;     // …and above 2 %
  double inertia_floor = 0.20;  // …and above 20 %
  double tick_p999_us = 300;    // 10 % of the 3 ms period
  double mass_sd_ratio = 1.0;   // a handed σ of the mass above the mass itself: not seen
};

// Markdown bullet lines, one per anomaly, each with the figure, the rule and what it suggests.
std::vector<std::string> FindAnomalies(const std::vector<ScenarioFigures>& runs,
                                       const AnomalyRules& rules = {});
// The rules as one sentence for the report.
std::string DescribeRules(const AnomalyRules& rules);

}  // namespace heft::report

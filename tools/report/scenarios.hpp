// heft-report's scenarios (Table II's tasks, the robot without foot F/T cells, standing) and what
// each adds to the report from its runs in RUN_DIR: its rows of Table II and of the per-scenario
// table, its targets (targets.hpp), the figures the anomaly rules read, and its plots.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "anomalies.hpp"
#include "procedure.hpp"

namespace heft::report {

// A scenario of the report: its paper figures (Table II) and whether it is a row of Table II.
struct Scenario {
  std::string name, paper_off, paper_on;
  bool table2;  // a row of Table II (the others: the robot without foot F/T cells, standing)
};

// Every scenario of the report, in its tables' order.
const std::vector<Scenario>& Scenarios();

// What the runs give the report's sections, gathered scenario by scenario: the tables start with
// their headers (the printed summary shows them too).
struct Gathered {
  std::vector<ScenarioFigures> figures;
  std::vector<Target> targets;
  std::ostringstream table2, per, extra;
  Gathered() {
    table2 << "| task | RMSE nominal | RMSE adaptive | reduction | paper nominal | paper adaptive "
              "| mean error the second before the load: nominal / adaptive |\n"
              "|---|---|---|---|---|---|---|\n";
    per << "| scenario | mass error | CoM error | inertia error | converge (5 %) | gated / "
           "released | rate-limited | consistent: handed / raw EKF / raw KF | tick median / 99.9 % "
           "/ worst | overruns |\n|---|---|---|---|---|---|---|---|---|---|\n";
  }
};

// One scenario: its rows, targets and figures (nothing when it has no adaptive run).
void AddScenario(const std::string& dir, const Scenario& s, Gathered& g);

}  // namespace heft::report

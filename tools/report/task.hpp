// What one run of the main job estimates and scores, read from the run itself and never from a
// robot's names in code: the estimated link from its configuration (estimator.links, written by
// tools/main-job.sh beside the telemetry as RUN.yaml) or the telemetry's truth columns, the task
// error from the telemetry's header, described by the configuration's role map
// (simulation.roles). Any robot with a role map gets the same report.
#pragma once

#include <string>

#include "run_figures.hpp"

namespace heft::report {

// A run's estimated link and scored task error: `error` a telemetry column's name without its
// unit suffix, `unit` "rad" or "m", `task` its words ("elbow angle error"). Empty fields when the
// run does not say.
struct ScenarioTask {
  std::string link, error, unit, task;
};

// The run whose telemetry is `telemetry` and whose configuration is `yaml_path` ("" or missing:
// the telemetry alone).
//
// The link: the first of the configuration's estimator.links with columns in the telemetry, else
// the telemetry's first link with a truth (`<link>_true_mass_kg`).
//
// The task error: where heft-sim's controller tracks a joint (an arm's scenarios; standing-curl's
// curl) its angle error, `<joint>_error_rad` — the elbow of the role map's arm whose forearm is the
// link when the telemetry has it, else the first joint error; where it tracks none (the balance
// controller), the pelvis height, `pelvis_height_error_m`. A joint the role map names an arm's
// elbow is the "elbow angle error", another the "<joint> angle error".
ScenarioTask TaskOfRun(const Table& telemetry, const std::string& yaml_path);
// The same for the run DIR/RUN (its telemetry RUN.csv, its configuration RUN.yaml).
ScenarioTask TaskOfRun(const std::string& dir, const std::string& run);

}  // namespace heft::report

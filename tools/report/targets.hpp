// heft-report's targets: what a run's figures are checked against, each met or missed, checked (a
// miss fails --check) or reported. Each function appends its targets to `targets`.
#pragma once

#include <string>
#include <vector>

#include "procedure.hpp"
#include "run_figures.hpp"

namespace heft::report {

// The scenarios where the torso carries a load or walks, whose shape (CoM, inertia) the data barely
// see: checked against the truth and the prior (docs/estimator.md, "Where the data say nothing").
bool IsTorsoShapeScenario(const std::string& name);

// Every scenario's first targets: the handed sets consistent, the control tick's time.
void AddRunTargets(const std::string& name, const RunFigures& a, std::vector<Target>& targets);
// Table II's checked reductions (forearm-load, torso-load), `ratio` the task's RMSE without
// adaptation over its RMSE with it.
void AddReductionTarget(const std::string& name, const RunFigures& a, double ratio,
                        std::vector<Target>& targets);
// The torso's CoM and inertia against the truth and the prior (IsTorsoShapeScenario's scenarios).
void AddTorsoShapeTargets(const std::string& name, const RunFigures& a,
                          std::vector<Target>& targets);
// The handed covariance: its mean NEES.
void AddNeesTarget(const std::string& name, const RunFigures& a, std::vector<Target>& targets);
// The dumbbell's mass, CoM and convergence.
void AddDumbbellTargets(const RunFigures& a, std::vector<Target>& targets);
// No harm where nothing is carried (step-in-place, walk): the task's RMSE with adaptation (a)
// against without (o).
void AddNoHarmTarget(const std::string& name, const RunFigures& a, const RunFigures& o,
                     std::vector<Target>& targets);
// The procedure's combination (identified nominal, calibrated: a) against the best of the nominal
// model × calibration 2×2 (`others`: the other three, each named), by their reduction of o's RMSE.
struct NamedRun {
  std::string what;
  RunFigures figures;
};
void AddCombinationTarget(const std::string& name, const RunFigures& a, const RunFigures& o,
                          const std::vector<NamedRun>& others, std::vector<Target>& targets);
// The robot without foot F/T cells: the torso's CoM (torso-load-noft), the dumbbell's mass
// (standing-curl-noft).
void AddNoFtTargets(const std::string& name, const RunFigures& a, std::vector<Target>& targets);
// The MIT path's targets: its run `mit` (figures f, configuration `yaml_path`) beside the CAN
// path's run (c) and the run without adaptation (o).
void AddMitTargets(const std::string& name, const std::string& yaml_path, const Table& mit,
                   const std::string& link, const RunFigures& f, const RunFigures& c,
                   const RunFigures& o, std::vector<Target>& targets);

}  // namespace heft::report

// heft-report's sections on the operator's procedure (tools/main-job.sh): the identification
// recording and heft-identify's result, what every run was (robot, nominal model, calibration,
// the payload's arrival), what each step is worth (URDF / identified nominal × calibration off /
// on, a 2×2 table per figure) and the robot without foot F/T cells.
#pragma once

#include <string>
#include <vector>

namespace heft::report {

struct Target {
  std::string what, figure, target;
  bool met = false;
  bool checked = false;
};

// The recording, the identification and the table of runs; appends the procedure's targets
// (the identified model consistent, every calibration finished before the payload arrived).
std::string ProcedureSection(const std::string& dir, std::vector<Target>& targets);
// The 2×2 tables (nominal model × calibration) of Table II's tasks and the dumbbell's figures;
// appends, per task, the procedure's combination against the best of its 2×2
// (AddCombinationTarget).
std::string StepsSection(const std::string& dir, std::vector<Target>& targets);
// The robot without foot F/T cells beside the one with them (and its figure).
std::string NoFtSection(const std::string& dir);

}  // namespace heft::report

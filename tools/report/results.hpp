// heft-report's published outputs: the project's figures page (docs/results.md with
// `tools/main-job.sh BUILD OUT --publish`, OUT/results.md otherwise) and the summary table the
// README embeds between the lines kSummaryBegin and kSummaryEnd. Both carry where the figures
// were measured (commit, date, machine, command) and the same figures as report.md, nothing
// earlier.
#pragma once

#include <string>
#include <vector>

#include "anomalies.hpp"
#include "procedure.hpp"

namespace heft::report {

inline constexpr const char* kSummaryBegin = "<!-- heft-report:summary -->";
inline constexpr const char* kSummaryEnd = "<!-- /heft-report:summary -->";

// Where and how the figures were measured.
struct Provenance {
  std::string commit;   // the source tree's `git rev-parse --short HEAD` (or as passed)
  std::string date;     // YYYY-MM-DD (UTC): when the newest adaptive run's telemetry was written
  std::string machine;  // CPU model, core count, kernel
  std::string command;  // the command that produced the runs and this report
  std::string robot;    // the simulated robot: its URDF and simulation.deviations
};

// "AMD EPYC 7B13, 2 cores, Linux 6.1.0-18-amd64", from /proc/cpuinfo and uname(2).
std::string MachineDescription();
// `git -C source_dir rev-parse --short HEAD`, with " + uncommitted changes" when tracked files
// differ from it; "unknown" outside a git tree.
std::string SourceCommit(const std::string& source_dir);
// The UTC date the newest of `files` was last written ("unknown" when none exists).
std::string NewestFileDate(const std::vector<std::string>& files);
// The simulated robot of the run configuration `yaml_path`: "heft_humanoid.urdf, deviations
// {preset: default, seed: 1}".
std::string DescribeRobot(const std::string& yaml_path);

// The summary: one row per scenario with an adaptive run (its task's RMSE without and with
// adaptation, the reduction, the estimate's steady-state mass and CoM errors, the time to 5 %),
// under a line saying where it was measured and how many checked targets are met. A scenario
// without its own run without adaptation (the robot without foot F/T cells) takes its base
// scenario's, as report.md's table does.
std::string SummaryBlock(const Provenance& p, const std::vector<ScenarioFigures>& runs,
                         const std::vector<Target>& targets);

// results.md: the provenance, the summary table, report.md's `sections` (each starting with its
// "## " heading; image lines left out: the figures stay beside report.md), the checked targets
// met or missed and the reported ones.
std::string ResultsPage(const Provenance& p, const std::vector<ScenarioFigures>& runs,
                        const std::vector<std::string>& sections,
                        const std::vector<Target>& targets);

// `readme` with the lines strictly between kSummaryBegin and kSummaryEnd replaced by `block`
// (ending in a newline); the text outside them byte for byte as it was. False, with `error`
// saying why, when either line is missing or repeated or they are out of order.
bool ReplaceSummaryBlock(const std::string& readme, const std::string& block, std::string& out,
                         std::string& error);

// Reads PATH whole, at most hal::kMaxTextFileBytes. False, with `error` ("PATH: reason"), when it
// cannot be read or is larger.
bool ReadTextFile(const std::string& path, std::string& text, std::string& error);
// Writes PATH through PATH.tmp renamed over it (a reader never sees half a file). False, with
// `error` ("PATH: cannot write: reason"), when that fails.
bool WriteTextFile(const std::string& path, const std::string& text, std::string& error);

}  // namespace heft::report

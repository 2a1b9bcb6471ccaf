// heft-report [--check] [--results PATH] [--summary PATH] [--readme PATH] RUN_DIR
//   (--help: usage and exit codes)
//
// RUN_DIR holds, per scenario S, the telemetry S-adaptive.csv and S-nominal.csv and the logs
// S-adaptive.log / S-nominal.log written by heft-sim (tools/main-job.sh makes them, each with the
// configuration it ran, S-label.yaml), plus optional S-kf.csv (the baseline KF), S-urdf.csv,
// S-urdf-cal.csv, S-ident.csv (the other nominal-model / calibration combinations),
// step-in-place-nogate.csv (the procedure's stepping without gating), forearm-load-rl*.csv (the
// hand-off rate limit swept), the robot without foot F/T cells (S-noft-adaptive.csv),
// dumbbell-curl-realtime.log (a real-time run: wake-up jitter), and the identification:
// excite-record.*, identified.yaml (procedure.cpp). Writes RUN_DIR/report.md and PNG
// figures (gnuplot), prints the summary, and with --check exits non-zero when a checked target is
// missed. Anomalies in the tables are commented in the text (anomalies.cpp); figures are drawn by
// plot.cpp. On request it also writes the project's figures page and the README's summary block
// (results.cpp).
//
// main's steps: the arguments, each scenario's runs (scenarios.cpp: its rows of the tables, its
// targets from targets.cpp, its figures), the extras (extra_runs.cpp: Fig. 3, Fig. 8, the joints'
// other paths, the rate-limit sweep, the real-time run), the sections (report_markdown.cpp), and
// the outputs (report.md, results.md, the summary, the README's block, the printed summary). This
// file holds the arguments, the outputs and main.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "anomalies.hpp"
#include "extra_runs.hpp"
#include "procedure.hpp"
#include "report_markdown.hpp"
#include "results.hpp"
#include "scenarios.hpp"
#include "tool_args.hpp"

namespace {

using namespace heft::report;  // the tool is the report library's command line

constexpr const char* kUsage =
    R"(usage: heft-report [--check] [--results PATH] [--summary PATH] [--readme PATH]
                   [--commit TEXT] [--command TEXT] RUN_DIR
       heft-report --help | --version

Reads heftd's telemetry of the main job's runs in RUN_DIR (tools/main-job.sh writes them: per
scenario S, S-adaptive.csv and S-nominal.csv, optionally S-kf.csv, S-urdf.csv, S-urdf-cal.csv,
S-ident.csv, S-noft-adaptive.csv, step-in-place-nogate.csv, forearm-load-rl*.csv,
dumbbell-curl-realtime.log, each run's configuration S-label.yaml, and the identification's
excite-record.* and identified.yaml), writes RUN_DIR/report.md with PNG figures
(gnuplot) and prints the summary.

  --check           exit 1 when a checked target is missed (what CI runs)
  --results PATH    also write the figures page (docs/results.md's form): the commit, the date,
                    the machine and the command, then report.md's tables and targets, no images
  --summary PATH    also write the summary table (one row per scenario) between the lines
                    <!-- heft-report:summary --> and <!-- /heft-report:summary -->
  --readme PATH     replace the text between those two lines in PATH (a README) by the summary;
                    PATH must hold each line once, in that order (checked before the report)
  --commit TEXT     the commit the figures are of (default: git rev-parse --short HEAD of the
                    source tree heft-report was built from, "+ uncommitted changes" when dirty)
  --command TEXT    the command that produced the runs (default: this heft-report command)
  -h, --help        this text
  --version         heft's version

Exit codes:
  0  report written (with --check: every checked target met)
  1  --check: a checked target was missed (the report and the other outputs are written)
  2  usage error: unknown option, an option without its value, no or more than one RUN_DIR
  3  RUN_DIR does not exist or holds no adaptive-run telemetry; an output could not be written;
     or the --readme file cannot be read or lacks the summary's two lines
)";

struct Options {
  std::string dir;
  bool check = false;
  std::string results, summary, readme;  // "" when not asked for
  std::string commit, command;           // "" for the defaults
};

// --- The arguments ---

// The arguments as one shell command line (the default --command).
std::string CommandLine(int argc, char** argv) {
  std::string out = "heft-report";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool plain = a.find_first_not_of(
                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                           "0123456789-_./=:+,") == std::string::npos;
    out += " " + (plain && !a.empty() ? a : "'" + a + "'");
  }
  return out;
}

// Parses the command line into `o`. Returns the exit code to leave with, or -1 to go on.
int ParseArguments(int argc, char** argv, Options& o) {
  const std::map<std::string, std::string*> valued = {{"--results", &o.results},
                                                      {"--summary", &o.summary},
                                                      {"--readme", &o.readme},
                                                      {"--commit", &o.commit},
                                                      {"--command", &o.command}};
  const int code = heft::tools::ParseToolCommandLine(
      argc, argv, {"heft-report", kUsage, std::string("heft-report ") + HEFT_VERSION, "RUN_DIR"},
      o.dir, [&](const std::string& a, int& i) {
        if (a == "--check") {
          o.check = true;
          return heft::tools::Option::kTaken;
        }
        const auto it = valued.find(a);
        if (it == valued.end()) return heft::tools::Option::kNotMine;
        if (i + 1 >= argc || argv[i + 1][0] == '\0') {
          std::fprintf(stderr, "heft-report: %s needs a value (heft-report --help)\n", a.c_str());
          return heft::tools::Option::kRefused;
        }
        *it->second = argv[++i];
        return heft::tools::Option::kTaken;
      });
  if (code >= 0) return code;
  if (o.command.empty()) o.command = CommandLine(argc, argv);
  return -1;
}

// Checks RUN_DIR and the --readme file before the report's work. Returns 3 (said on stderr) or
// -1 to go on.
int CheckInputs(const Options& o) {
  std::error_code ec;
  if (!std::filesystem::is_directory(o.dir, ec)) {
    std::fprintf(stderr, "heft-report: %s: %s\n", o.dir.c_str(),
                 std::filesystem::exists(o.dir, ec) ? "not a directory" : "no such run directory");
    return 3;
  }
  if (o.readme.empty()) return -1;
  std::string text, replaced, error;
  if (!ReadTextFile(o.readme, text, error)) {
    std::fprintf(stderr, "heft-report: --readme %s\n", error.c_str());
    return 3;
  }
  if (!ReplaceSummaryBlock(text, "", replaced, error)) {
    std::fprintf(stderr, "heft-report: --readme %s: %s\n", o.readme.c_str(), error.c_str());
    return 3;
  }
  return -1;
}

// --- The outputs ---

int MissedChecked(const std::vector<Target>& targets) {
  int missed = 0;
  for (const Target& tg : targets)
    if (tg.checked && !tg.met) ++missed;
  return missed;
}

// The summary on stdout.
void PrintSummary(const std::string& dir, const Gathered& g,
                  const std::vector<std::string>& anomalies, const std::string& sweep,
                  const std::string& jitter) {
  std::printf("%s\n%s\n%s", g.table2.str().c_str(), g.per.str().c_str(), g.extra.str().c_str());
  if (!anomalies.empty()) {
    std::printf("\nWhat stands out:\n");
    for (const std::string& a : anomalies) std::printf("  - %s\n", a.c_str());
  }
  if (!sweep.empty()) std::printf("\nforearm-load, hand-off rate limit swept:\n%s", sweep.c_str());
  if (!jitter.empty()) std::printf("\nreal-time run (dumbbell-curl):\n%s", jitter.c_str());
  std::printf("\nTargets:\n");
  for (const Target& tg : g.targets)
    std::printf("  [%s] %s: %s (wanted %s)%s\n", tg.met ? "met" : "MISSED", tg.what.c_str(),
                tg.figure.c_str(), tg.target.c_str(), tg.checked ? "" : " (reported, not checked)");
  std::printf("\nreport: %s/report.md\n", dir.c_str());
}

// Where the figures were measured: the command line's, this machine, the runs' date and robot.
Provenance ProvenanceOf(const Options& o) {
  std::vector<std::string> runs;
  for (const Scenario& s : Scenarios()) runs.push_back(o.dir + "/" + s.name + "-adaptive.csv");
  std::string robot = "unknown";
  for (const char* first : {"torso-load", "forearm-load", "walk", "step-in-place"})
    if (std::filesystem::exists(o.dir + "/" + first + "-adaptive.yaml")) {
      robot = DescribeRobot(o.dir + "/" + first + "-adaptive.yaml");
      break;
    }
  return {o.commit.empty() ? SourceCommit(HEFT_SOURCE_DIR) : o.commit, NewestFileDate(runs),
          MachineDescription(), o.command, robot};
}

// results.md, the summary file and the README's block, as asked. False (said on stderr) when one
// could not be written.
bool WritePublished(const Options& o, const Sections& sections, const Gathered& g) {
  if (o.results.empty() && o.summary.empty() && o.readme.empty()) return true;
  const Provenance p = ProvenanceOf(o);
  const std::string block = SummaryBlock(p, g.figures, g.targets);
  bool ok = true;
  // Each output: written and said on stdout, or why not on stderr.
  auto done = [&](bool written, const std::string& what, const std::string& error) {
    if (written) std::printf("%s\n", what.c_str());
    if (!written) std::fprintf(stderr, "heft-report: %s\n", error.c_str());
    ok = ok && written;
  };
  std::string error;
  if (!o.results.empty())
    done(WriteTextFile(o.results, ResultsPage(p, g.figures, sections.InOrder(), g.targets), error),
         "results: " + o.results, error);
  if (!o.summary.empty())
    done(WriteTextFile(o.summary, std::string(kSummaryBegin) + "\n" + block + kSummaryEnd + "\n",
                       error),
         "summary: " + o.summary, error);
  if (!o.readme.empty()) {
    std::string readme, replaced;
    const bool read = ReadTextFile(o.readme, readme, error);
    const bool replace = read && ReplaceSummaryBlock(readme, block, replaced, error);
    if (read && !replace) error = "--readme " + o.readme + ": " + error;
    done(replace && WriteTextFile(o.readme, replaced, error), "summary block in: " + o.readme,
         error);
  }
  return ok;
}

// report.md, then the other outputs and the printed summary. Returns the exit code.
int WriteOutputs(const Options& o, const Sections& sections, const Gathered& g,
                 const std::vector<std::string>& anomalies, const std::string& sweep,
                 const std::string& jitter) {
  const std::string path = o.dir + "/report.md";
  std::ofstream out(path);
  out << ReportMarkdown(o.dir, sections, g.targets);
  out.close();
  if (!out) {
    std::fprintf(stderr, "heft-report: %s: cannot write: %s\n", path.c_str(), std::strerror(errno));
    return 3;
  }
  PrintSummary(o.dir, g, anomalies, sweep, jitter);
  if (!WritePublished(o, sections, g)) return 3;
  const int missed = MissedChecked(g.targets);
  if (o.check && missed > 0) {
    std::fprintf(stderr, "heft-report: --check: %d checked target(s) missed\n", missed);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (const int code = ParseArguments(argc, argv, o); code >= 0) return code;
  if (const int code = CheckInputs(o); code >= 0) return code;
  Gathered g;
  for (const Scenario& s : Scenarios()) AddScenario(o.dir, s, g);
  AddKfAgainstEkf(o.dir, g);
  AddSteppingGating(o.dir, g);
  AddJointPaths(o.dir, g);
  const std::string sweep = RateLimitSweep(o.dir);
  if (g.figures.empty()) {
    std::fprintf(stderr,
                 "heft-report: %s holds no adaptive-run telemetry (S-adaptive.csv for S in "
                 "forearm-load, dumbbell-curl, torso-load, step-in-place, walk); "
                 "tools/main-job.sh writes them\n",
                 o.dir.c_str());
    return 3;
  }
  const AnomalyRules rules;
  const std::vector<std::string> anomalies = FindAnomalies(g.figures, rules);
  const std::string jitter = RealTimeJitter(o.dir);
  Sections sections;
  sections.procedure = ProcedureSection(o.dir, g.targets);  // appends the procedure's targets
  sections.table2 = Table2Section(g.table2.str());
  sections.steps = StepsSection(o.dir, g.targets);  // appends the 2×2's targets
  sections.noft = NoFtSection(o.dir);
  sections.per = PerScenarioSection(g.per.str(), g.extra.str());
  sections.anomalies = AnomaliesSection(anomalies, rules);
  sections.sweep = SweepSection(sweep);
  sections.jitter = JitterSection(jitter);
  return WriteOutputs(o, sections, g, anomalies, sweep, jitter);
}

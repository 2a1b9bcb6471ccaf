#include "results.hpp"

#include <sys/stat.h>
#include <sys/utsname.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "heft/hal/text_file.hpp"
#include "run_figures.hpp"

namespace heft::report {
namespace {

// A shell command's standard output, its trailing newline removed ("" when it failed).
std::string CommandOutput(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return "";
  std::string out;
  char buffer[256];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, p)) > 0;) out.append(buffer, n);
  if (pclose(p) != 0) return "";
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// A single-quoted shell word.
std::string ShellWord(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string Cell(double value, const char* format, double scale) {
  return std::isfinite(value) ? Fmt(format, scale * value) : "—";
}

// The lines of `text` but the images (`![](...)`): results.md carries no figures.
std::string WithoutImages(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("![](", 0) != 0) out += line + "\n";
  return out;
}

// The commit as code, a note after it (" + uncommitted changes") left as text.
std::string CommitText(const std::string& commit) {
  const auto note = commit.find(" + ");
  std::string out = "`";
  out.append(commit, 0, note);
  out += '`';
  if (note != std::string::npos) out.append(commit, note);
  return out;
}

// "38 of the 39 checked targets are met".
std::string CheckedMet(const std::vector<Target>& targets) {
  int checked = 0, met = 0;
  for (const Target& tg : targets)
    if (tg.checked) ++checked, met += tg.met ? 1 : 0;
  return std::to_string(met) + " of the " + std::to_string(checked) + " checked targets are met";
}

// The summary table's rows (one per scenario with an adaptive run).
std::string SummaryTable(const std::vector<ScenarioFigures>& runs, bool& shared_nominal) {
  std::ostringstream t;
  t << "| scenario | task error (RMSE) | without adaptation | with adaptation | reduction | "
       "mass error | CoM error | time to 5 % |\n|---|---|---|---|---|---|---|---|\n";
  shared_nominal = false;
  for (const ScenarioFigures& s : runs) {
    double nominal = s.rmse_nominal;
    const auto noft = s.name.find("-noft");
    if (!std::isfinite(nominal) && noft != std::string::npos) {
      const std::string base = s.name.substr(0, noft);
      for (const ScenarioFigures& b : runs)
        if (b.name == base && std::isfinite(b.rmse_nominal)) {
          nominal = b.rmse_nominal;
          shared_nominal = true;
        }
    }
    const std::string rmse = "%.4f " + s.unit;
    t << "| " << s.name << " | " << s.task << " | " << Cell(nominal, rmse.c_str(), 1) << " | "
      << Cell(s.rmse_adaptive, rmse.c_str(), 1) << " | "
      << Cell(nominal / s.rmse_adaptive, "%.1f×", 1) << " | " << Cell(s.mass_error, "%.2f %%", 100)
      << " | " << Cell(s.com_error, "%.1f mm", 1000) << " | "
      << (std::isfinite(s.converge_s) ? Fmt("%.3f s", s.converge_s) : std::string("never"))
      << " |\n";
  }
  return t.str();
}

// The checked targets, met or missed, then the reported ones.
std::string TargetsTable(const std::vector<Target>& targets) {
  std::ostringstream t;
  t << "## Targets\n\n"
    << CheckedMet(targets)
    << " (the short job, `main-job.sh --short`, which CI runs, fails when one is missed).\n\n"
    << "| checked target | measured | wanted | |\n|---|---|---|---|\n";
  for (const Target& tg : targets)
    if (tg.checked)
      t << "| " << tg.what << " | " << tg.figure << " | " << tg.target << " | "
        << (tg.met ? "met" : "**missed**") << " |\n";
  t << "\nReported, not enforced:\n\n| target | measured | wanted | |\n|---|---|---|---|\n";
  for (const Target& tg : targets)
    if (!tg.checked)
      t << "| " << tg.what << " | " << tg.figure << " | " << tg.target << " | "
        << (tg.met ? "met" : "not met") << " |\n";
  return t.str();
}

}  // namespace

std::string MachineDescription() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string model, line;
  int processors = 0;
  while (std::getline(cpuinfo, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    const auto value_at = line.find_first_not_of(' ', colon + 1);
    const std::string value = value_at == std::string::npos ? "" : line.substr(value_at);
    if (key == "processor") ++processors;
    if (model.empty() && (key == "model name" || key == "Model" || key == "cpu model"))
      model = value;
  }
  utsname u{};
  const std::string kernel =
      uname(&u) == 0 ? std::string(u.sysname) + " " + u.release : std::string("unknown kernel");
  return (model.empty() ? std::string("unknown CPU") : model) + ", " +
         (processors > 0 ? std::to_string(processors) : std::string("?")) +
         (processors == 1 ? " core, " : " cores, ") + kernel;
}

std::string SourceCommit(const std::string& source_dir) {
  const std::string git = "git -C " + ShellWord(source_dir);
  const std::string commit = CommandOutput(git + " rev-parse --short HEAD 2>/dev/null");
  if (commit.empty()) return "unknown";
  // GIT_OPTIONAL_LOCKS=0: a status that leaves the index alone (another process may hold it).
  const std::string changed = CommandOutput("GIT_OPTIONAL_LOCKS=0 " + git +
                                            " status --porcelain --untracked-files=no 2>/dev/null");
  return changed.empty() ? commit : commit + " + uncommitted changes";
}

std::string NewestFileDate(const std::vector<std::string>& files) {
  std::time_t newest = 0;
  for (const std::string& f : files) {
    struct stat st {};
    if (stat(f.c_str(), &st) == 0 && st.st_mtime > newest) newest = st.st_mtime;
  }
  if (newest == 0) return "unknown";
  std::tm tm{};
  gmtime_r(&newest, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%d", &tm);
  return b;
}

std::string DescribeRobot(const std::string& yaml_path) {
  std::ifstream in(yaml_path);
  std::string urdf;
  for (std::string line; std::getline(in, line);) {
    const auto at = line.find("urdf: ");
    if (urdf.empty() && at != std::string::npos && line.find('#') > at)
      urdf = std::filesystem::path(line.substr(at + 6)).filename().string();
  }
  const RunInfo info = DescribeRun(yaml_path);
  if (!info.found) return "unknown";
  return (urdf.empty() ? std::string("its URDF") : urdf) + ", deviations " +
         DescribeDeviations(info);
}

std::string SummaryBlock(const Provenance& p, const std::vector<ScenarioFigures>& runs,
                         const std::vector<Target>& targets) {
  bool shared = false;
  const std::string table = SummaryTable(runs, shared);
  std::ostringstream md;
  md << "The main job at commit " << CommitText(p.commit) << ", " << p.date << " (" << p.machine
     << "): `" << p.command << "`; simulated robot " << p.robot
     << ". Against the simulator's truth: the task error from the payload's arrival on without "
        "and with heft's adaptation, the estimate's mass and CoM errors at steady state (the "
        "run's last quarter) and its time to within 5 % of the true mass. "
     << CheckedMet(targets) << ".\n\n"
     << table;
  if (shared)
    md << "\nThe robot without foot F/T cells (-noft) shares the run without adaptation of the "
          "robot with them.\n";
  return md.str();
}

std::string ResultsPage(const Provenance& p, const std::vector<ScenarioFigures>& runs,
                        const std::vector<std::string>& sections,
                        const std::vector<Target>& targets) {
  bool shared = false;
  std::ostringstream md;
  md << "# Results\n\nheft-report writes this page from one run of the main job "
        "(`tools/main-job.sh`, docs/main-job.md); every figure on it is measured in that "
        "run, against the simulator's truth (MuJoCo), with the whole chain in play: MuJoCo → "
        "emulated CAN frames → drivers → state buffer → estimator plugin at 333 Hz → hand-off → "
        "the simulator's whole-body controller. *adaptive*: the controller uses heft's hand-off; "
        "*nominal*: it ignores it (the paper's \"no adaptation\"). The run's figures (PNG) are "
        "beside its report.md.\n\n"
     << "| | |\n|---|---|\n| commit | " << CommitText(p.commit) << " |\n| measured | " << p.date
     << " |\n| machine | " << p.machine << " |\n| command | `" << p.command
     << "` |\n| simulated robot | " << p.robot << " |\n\n## Summary\n\n"
     << SummaryTable(runs, shared);
  if (shared)
    md << "\nThe robot without foot F/T cells (-noft) shares the run without adaptation of the "
          "robot with them.\n";
  for (const std::string& s : sections)
    if (!s.empty()) md << "\n" << WithoutImages(s);
  md << "\n" << TargetsTable(targets);
  return md.str();
}

bool ReplaceSummaryBlock(const std::string& readme, const std::string& block, std::string& out,
                         std::string& error) {
  // Each marker's line: its offset and the offset after its newline.
  std::vector<std::size_t> begins, ends;
  std::vector<std::size_t> begin_next;
  for (std::size_t at = 0; at < readme.size();) {
    std::size_t eol = readme.find('\n', at);
    const std::size_t next = eol == std::string::npos ? readme.size() : eol + 1;
    if (eol == std::string::npos) eol = readme.size();
    std::string line = readme.substr(at, eol - at);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line == kSummaryBegin) begins.push_back(at), begin_next.push_back(next);
    if (line == kSummaryEnd) ends.push_back(at);
    at = next;
  }
  const std::string both =
      std::string("the summary goes between the lines ") + kSummaryBegin + " and " + kSummaryEnd;
  if (begins.empty() || ends.empty()) {
    error = std::string("no line ") + (begins.empty() ? kSummaryBegin : kSummaryEnd) + " (" + both +
            "; add them where it belongs)";
    return false;
  }
  if (begins.size() > 1 || ends.size() > 1) {
    error = std::string("the line ") + (begins.size() > 1 ? kSummaryBegin : kSummaryEnd) +
            " appears more than once (" + both + ", once)";
    return false;
  }
  if (ends[0] < begins[0]) {
    error = std::string(kSummaryEnd) + " comes before " + kSummaryBegin + " (" + both + ")";
    return false;
  }
  out = readme.substr(0, begin_next[0]) + block;
  if (!block.empty() && block.back() != '\n') out += "\n";
  out += readme.substr(ends[0]);
  return true;
}

bool ReadTextFile(const std::string& path, std::string& text, std::string& error) {
  // hal's bounded reader: a README given as /dev/zero or a FIFO is refused at the limit.
  hal::TextFile file = hal::ReadTextFile(path);
  if (!file.ok()) {
    error = path + ": " + file.reason;
    return false;
  }
  text = std::move(file.text);
  return true;
}

bool WriteTextFile(const std::string& path, const std::string& text, std::string& error) {
  const std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::binary);
  out << text;
  out.close();
  if (!out || std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = path + ": cannot write: " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace heft::report

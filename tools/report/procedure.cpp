#include "procedure.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "heft/config/yaml.hpp"
#include "plot.hpp"
#include "run_figures.hpp"
#include "targets.hpp"
#include "task.hpp"

namespace heft::report {
namespace {

// The runs of the main job in `dir`: base names of the configurations written beside telemetry.
std::vector<std::string> Runs(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::filesystem::path& p = e.path();
    if (p.extension() != ".yaml" || p.stem().string().rfind("identified", 0) == 0) continue;
    if (!std::filesystem::exists(dir + "/" + p.stem().string() + ".csv")) continue;
    out.push_back(p.stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// One run's figures and task (its estimated link and scored error, from the run), read once.
class Cache {
 public:
  explicit Cache(std::string dir) : dir_(std::move(dir)) {}
  const RunFigures& Get(const std::string& run) {
    Load(run);
    return figures_[run];
  }
  const ScenarioTask& Task(const std::string& run) {
    Load(run);
    return tasks_[run];
  }

 private:
  void Load(const std::string& run) {
    if (figures_.count(run) > 0) return;
    const Table table = Read(dir_ + "/" + run + ".csv");
    const ScenarioTask task = TaskOfRun(table, dir_ + "/" + run + ".yaml");
    tasks_[run] = task;
    figures_[run] = Measure(table, task.link, task.error);
  }
  std::string dir_;
  std::map<std::string, RunFigures> figures_;
  std::map<std::string, ScenarioTask> tasks_;
};

std::string Cell(const RunFigures& f, double value, const char* format, double scale) {
  return f.ok && std::isfinite(value) ? Fmt(format, scale * value) : "—";
}

// 1. The recording: its length and the recorder's last line.
std::string RecordingItem(const std::string& dir) {
  std::string records;
  std::ifstream log(dir + "/excite-record.log");
  for (std::string line; std::getline(log, line);)
    if (line.find("recording: ") != std::string::npos)
      records = line.substr(line.find("recording: ") + 11);
  const Table rec = Read(dir + "/excite-record.csv");
  const std::vector<double> t = Seconds(rec);
  std::ostringstream md;
  md << "1. **Recording** (scenario excite: squats at 0.25/0.5/1 Hz with side-to-side sway, "
        "steps in place, waist and arms moving; `host.recording`): "
     << (t.empty() ? std::string("none found") : Fmt("%.0f s", t.back()))
     << (records.empty() ? "" : ", " + records) << ".\n";
  return md.str();
}

// A joint held on this share of the recording or more is named: its friction, offset and gain
// rest on static friction.
constexpr double kStillShare = 0.9;

// identified.yaml's `fit:` section as heft-identify writes it (identification/src/output.cpp),
// read as YAML: the written method and its size, every method's fit on the recording, the written
// result's fit by the joints' speed and the wall time. Absent file: nullopt; a file that is not
// YAML or lacks the section: a ConfigError naming file, line and key.
struct Fit {
  std::string method, samples, rank, unknowns, condition;
  bool consistent = false;
  std::string methods;  // "urdf 1.4712 N·m (30/30 consistent), sdp …" (empty: not written)
  std::string by_speed;  // "(sdp) sliding … N·m over … rows, held or creeping …" (empty: none)
  std::string wall;      // "22.91 s" (empty: not written)
  std::string still;     // the joints held on kStillShare or more, "a, b" (empty: none)
};

std::optional<Fit> ReadFit(const std::string& dir) {
  const std::string path = dir + "/identified.yaml";
  if (!std::filesystem::exists(path)) return std::nullopt;
  const config::Node fit = config::Document::Load(path).root()["fit"];
  Fit f;
  f.method = fit.Get<std::string>("method");
  f.samples = fit.Get<std::string>("samples", "—", {});
  f.rank = fit.Get<std::string>("rank", "—", {});
  f.unknowns = fit.Get<std::string>("unknowns", "—", {});
  f.condition = fit.Get<std::string>("condition", "—", {});
  f.consistent = fit.Get<bool>("physically_consistent");
  if (const std::optional<config::Node> methods = fit.Optional("methods")) {
    const std::string bodies = std::to_string(fit.Get<int>("bodies", {0, 1e6}));
    for (const std::string& name : methods->Keys()) {
      const config::Node m = (*methods)[name];
      f.methods += (f.methods.empty() ? "" : ", ") + name + " " +
                   Fmt("%.4f", m.Get<double>("fit_rmse", {0.0, 1e12})) + " N·m (" +
                   std::to_string(m.Get<int>("consistent_bodies", {0, 1e6})) + "/" + bodies +
                   " consistent)";
    }
  }
  if (const std::optional<config::Node> s = fit.Optional("by_speed")) {
    const double sliding = s->Get<double>("sliding_rows", {0, 1e18});
    const double held = s->Get<double>("held_rows", {0, 1e18});
    f.by_speed = "(" + f.method + ") sliding " + Fmt("%.4f", s->Get<double>("sliding_rmse")) +
                 " N·m over " + Fmt("%.0f", sliding) + " rows, held or creeping " +
                 Fmt("%.4f", s->Get<double>("held_rmse")) + " N·m over " + Fmt("%.0f", held) +
                 " rows (" + Fmt("%.0f %%", 100.0 * held / std::max(1.0, sliding + held)) +
                 "; |v| < " + Fmt("%g rad/s", s->Get<double>("sliding_speed")) + ")";
  }
  if (const std::optional<config::Node> held = fit.Optional("held_joints")) {
    for (const std::string& joint : held->Keys())
      if ((*held)[joint].As<double>({0.0, 1.0}) >= kStillShare)
        f.still += (f.still.empty() ? "" : ", ") + joint;
  }
  if (fit.Has("seconds")) f.wall = Fmt("%.2f s", fit.Get<double>("seconds", {0.0, 1e9}));
  return f;
}

// The terms heft-identify fitted beside the bodies, as its flags, from what identified.yaml holds:
// a friction section, the torque sensors' gains, the sensors' and cells' offsets (comments).
std::string IdentifiedTerms(const std::string& dir) {
  std::ifstream y(dir + "/identified.yaml");
  bool friction = false, gains = false, offsets = false, ft_offsets = false;
  for (std::string line; std::getline(y, line);) {
    friction = friction || line.rfind("friction:", 0) == 0;
    gains = gains || line.rfind("torque_sensors:", 0) == 0;
    offsets = offsets || line.rfind("# torque-sensor offsets identified", 0) == 0;
    ft_offsets = ft_offsets || line.rfind("# F/T cells' offsets identified", 0) == 0;
  }
  std::string flags;
  if (friction) flags += " --friction";
  if (offsets) flags += " --offsets";
  if (gains) flags += " --gains";
  if (ft_offsets) flags += " --ft-offsets";
  return flags;
}

// 2. The identification; appends its target (the identified model consistent).
std::string IdentificationItem(const std::string& dir, std::vector<Target>& targets) {
  std::optional<Fit> fit;
  std::string unreadable;
  try {
    fit = ReadFit(dir);
  } catch (const config::ConfigError& e) {
    unreadable = e.what();
  }
  std::ostringstream md;
  if (!unreadable.empty()) {
    md << "2. **Identification**: identified.yaml unreadable: " << unreadable << ".\n";
    targets.push_back({"the identified model is physically consistent (heft loads it)",
                       "unreadable", "yes", false, true});
    return md.str();
  }
  if (!fit) {
    md << "2. **Identification**: none in this run directory (no identified.yaml).\n";
    return md.str();
  }
  md << "2. **Identification** (`heft-identify" << IdentifiedTerms(dir) << "`, " << fit->method
     << "): " << fit->samples << " samples at 100 Hz, rank " << fit->rank << " of " << fit->unknowns
     << " unknowns, condition " << fit->condition
     << ", physically consistent: " << (fit->consistent ? "yes" : "**no**")
     << (fit->wall.empty() ? "" : ", " + fit->wall + " wall") << ". Joint-torque prediction RMSE "
     << "on the recording: " << (fit->methods.empty() ? "—" : fit->methods)
     << (fit->by_speed.empty() ? "" : "; by the joints' speed " + fit->by_speed) << "."
     << (fit->still.empty() ? ""
                            : " Held on " + Fmt("%.0f %%", 100.0 * kStillShare) +
                                  " of the recording or more (their friction, offsets and gains "
                                  "rest on static friction): " +
                                  fit->still + ".")
     << "\n";
  targets.push_back({"the identified model is physically consistent (heft loads it)",
                     fit->consistent ? "yes" : "no", "yes", fit->consistent, true});
  return md.str();
}

// Every run's set-up; appends the targets that every run completed and that every calibration
// ended before the payload.
std::string RunsTable(const std::string& dir, std::vector<Target>& targets) {
  std::ostringstream md;
  md << "| run | simulated robot (deviations) | nominal model | calibration | payload arrives | "
        "adaptation | filter | foot F/T cells |\n|---|---|---|---|---|---|---|---|\n";
  Cache cache(dir);
  int late = 0, calibrated = 0, runs = 0, void_runs = 0;
  std::string voided;  // the void runs and why
  for (const std::string& run : Runs(dir)) {
    const RunInfo info = DescribeRun(dir + "/" + run + ".yaml");
    ++runs;
    if (const std::optional<VoidRun> v = VoidOf(dir + "/" + run + ".csv")) {
      ++void_runs;
      voided += (voided.empty() ? "" : " · ") + run + ", " + v->Reason();
      md << "| " << run << " | " << DescribeDeviations(info) << " | **void**: " << v->Reason()
         << " | | | | | |\n";
      continue;
    }
    const RunFigures& f = cache.Get(run);
    std::string cal = "off";
    if (info.calibration) {
      ++calibrated;
      cal = std::isfinite(f.calibrated_at) ? Fmt("done at %.2f s", f.calibrated_at)
                                           : std::string("**not finished**");
      if (std::isfinite(f.load_time) &&
          !(std::isfinite(f.calibrated_at) && f.calibrated_at < f.load_time))
        ++late;
    }
    md << "| " << run << " | " << DescribeDeviations(info) << " | "
       << (info.identified ? "identified" : "URDF") << " | " << cal << " | "
       << (std::isfinite(f.load_time) ? Fmt("%.2f s", f.load_time) : std::string("—")) << " | "
       << (info.adaptation ? "on" : "off") << " | " << (info.kf ? "KF" : "EKF")
       << (info.gating ? "" : ", no gating") << " | "
       << (!info.floating  ? "— (fixed base)"
           : info.ft_cells ? "yes"
                           : "**no**")
       << " |\n";
  }
  // A void run's figures are left out of every table (shown as —) and its scenario's targets
  // with them: this target says so, and fails the check.
  if (runs > 0)
    targets.push_back({"every run completes: MuJoCo never found the simulated robot unstable",
                       std::to_string(runs - void_runs) + " / " + std::to_string(runs) +
                           (voided.empty() ? "" : " (void: " + voided + ")"),
                       "all", void_runs == 0, true});
  if (calibrated > 0)
    targets.push_back({"every calibration finished before the payload arrived",
                       std::to_string(calibrated - late) + " / " + std::to_string(calibrated),
                       "all", late == 0, true});
  return md.str();
}

}  // namespace

std::string ProcedureSection(const std::string& dir, std::vector<Target>& targets) {
  std::ostringstream md;
  md << "## The procedure on a new robot\n\n" << RecordingItem(dir);
  md << IdentificationItem(dir, targets);
  md << "3. **The service** starts with `robot.parameters: identified.yaml` and "
        "`estimator.calibration.enabled: true`; the robot stands (the arm holds its pose) still "
        "and unloaded while the estimator calibrates, and the payload arrives after "
        "(`simulation.load_after`).\n4. **The scenarios** run; Table II's RMSE is taken from the "
        "payload's arrival on.\n\n";
  md << RunsTable(dir, targets);
  return md.str();
}

std::string StepsSection(const std::string& dir, std::vector<Target>& targets) {
  Cache cache(dir);
  struct Figure {
    std::string scenario, title;
    double RunFigures::*value;
    const char* format;
    double scale;
    bool reduction;  // show the reduction against no adaptation
  };
  const std::vector<Figure> figures = {
      {"forearm-load", "forearm-load: elbow RMSE", &RunFigures::rmse, "%.4f rad", 1, true},
      {"forearm-load", "forearm-load: handed mass RMSE", &RunFigures::handed_mass_rmse, "%.3f kg",
       1, false},
      {"torso-load", "torso-load: pelvis-height RMSE", &RunFigures::rmse, "%.4f m", 1, true},
      {"torso-load", "torso-load: handed mass RMSE", &RunFigures::handed_mass_rmse, "%.3f kg", 1,
       false},
      {"dumbbell-curl", "dumbbell: elbow RMSE", &RunFigures::rmse, "%.4f rad", 1, true},
      {"dumbbell-curl", "dumbbell: mass error at steady state", &RunFigures::mass_error, "%.2f %%",
       100, false},
      {"dumbbell-curl", "dumbbell: CoM error at steady state", &RunFigures::com_error, "%.1f mm",
       1000, false},
      {"dumbbell-curl", "dumbbell: time to 5 % after the load", &RunFigures::converge_s, "%.3f s",
       1, false},
  };
  std::ostringstream md;
  md << "## What each step is worth: nominal model × calibration\n\nThe same scenario four times "
        "(adaptive), the estimator's nominal model the URDF or heft-identify's, its start-up "
        "calibration off or on; *identified, on* is the procedure. RMSE from the payload's "
        "arrival on, with the run without adaptation (the controller ignores heft) beside it. "
        "The handed mass RMSE is the estimate's own share over the same ticks (what the "
        "controller was given against the truth, its lag included): on the deviated robot a task "
        "error held by the joints' static friction (a stiction ratchet) can differ between runs "
        "whose estimates do not (docs/imperfect-robot.md). A run whose gate refused half its ticks "
        "or more says so beside its reduction (*N % gated*): its estimate was held, where a "
        "residual no estimated link explains (the torque sensors' offsets, uncalibrated) kept "
        "the gate shut; heftd reports such a run `holding`, reason `gated` (config/README.md).\n";
  bool any = false;
  for (const Figure& fig : figures) {
    const RunFigures& nominal = cache.Get(fig.scenario + "-nominal");
    std::ostringstream t;
    t << "\n| " << fig.title;
    if (fig.reduction && nominal.ok)
      t << " (no adaptation: " << Cell(nominal, nominal.*fig.value, fig.format, fig.scale) << ")";
    t << " | calibration off | calibration on |\n|---|---|---|\n";
    int cells = 0;
    std::vector<NamedRun> others;  // the procedure's alternatives, for the target
    const RunFigures* procedure = nullptr;
    for (const auto& [row, off, on] :
         {std::tuple<const char*, const char*, const char*>{"URDF", "urdf", "urdf-cal"},
          {"identified", "ident", "adaptive"}}) {
      t << "| " << row << " nominal";
      for (const char* label : {off, on}) {
        const std::string run = fig.scenario + "-" + label;
        if (!std::filesystem::exists(dir + "/" + run + ".csv")) {
          t << " | —";
          continue;
        }
        const RunFigures& f = cache.Get(run);
        const double v = f.*fig.value;
        t << " | " << Cell(f, v, fig.format, fig.scale);
        if (fig.reduction && nominal.ok && std::isfinite(v) && v > 0)
          t << Fmt(" (%.1f×", nominal.*fig.value / v) << GateHeldNote(f) << ")";
        ++cells;
        if (label == std::string("adaptive"))
          procedure = &f;
        else
          others.push_back(
              {std::string(row) + (label == off ? ", no calibration" : ", calibrated"), f});
      }
      t << " |\n";
    }
    if (cells > 0) md << t.str(), any = true;
    if (fig.value == &RunFigures::rmse && procedure != nullptr)
      AddCombinationTarget(fig.scenario, *procedure, nominal, others, targets);
  }
  return any ? md.str() : std::string();
}

std::string NoFtSection(const std::string& dir) {
  Cache cache(dir);
  struct Row {
    std::string run, nominal, scenario;
  };
  const std::vector<Row> rows = {
      {"torso-load-adaptive", "torso-load-nominal", "torso-load"},
      {"torso-load-noft-adaptive", "torso-load-nominal", "torso-load"},
      {"standing-curl-adaptive", "standing-curl-nominal", "standing-curl"},
      {"standing-curl-noft-adaptive", "standing-curl-nominal", "standing-curl"},
  };
  std::ostringstream md;
  md << "## The robot without foot F/T cells\n\nThe same humanoid configured without "
        "`drivers.ft_cells`: the estimator takes its feet as contacts "
        "(`estimator.contact_frames`) and uses the null-space measurement (joint torques only). "
        "Its start-up calibration averages the residual's part in the contacts' null space (the "
        "part no foot wrench could carry). The runs "
        "without adaptation are shared (the plant and the controller are the same).\n\n"
        "| scenario | foot F/T cells | null-space ticks | calibration | task RMSE: no adaptation "
        "→ adaptive | reduction | mass error | CoM error | time to 5 % |\n"
        "|---|---|---|---|---|---|---|---|---|\n";
  int shown = 0;
  for (const Row& r : rows) {
    if (!std::filesystem::exists(dir + "/" + r.run + ".csv")) continue;
    const RunInfo info = DescribeRun(dir + "/" + r.run + ".yaml");
    const RunFigures& f = cache.Get(r.run);
    const RunFigures& n = cache.Get(r.nominal);
    const std::string unit = " " + cache.Task(r.run).unit;
    md << "| " << r.scenario << " | " << (info.ft_cells ? "yes" : "**no**") << " | "
       << Fmt("%.0f %%", 100 * f.null_space) << " | " << (info.calibration ? "on" : "off") << " | "
       << Cell(n, n.rmse, "%.4f", 1) << " → " << Cell(f, f.rmse, "%.4f", 1) << unit << " | "
       << (n.ok && f.ok ? Fmt("%.1f×", n.rmse / f.rmse) : "—") << " | "
       << Cell(f, f.mass_error, "%.2f %%", 100) << " | " << Cell(f, f.com_error, "%.1f mm", 1000)
       << " | " << Cell(f, f.converge_s, "%.3f s", 1) << " |\n";
    ++shown;
  }
  if (shown == 0) return "";
  const Table ft = Read(dir + "/torso-load-adaptive.csv");
  const Table noft = Read(dir + "/torso-load-noft-adaptive.csv");
  if (ft.ok && noft.ok) {
    const std::string link = cache.Task("torso-load-adaptive").link;
    PlotMassEstimates(
        dir, "noft-torso-mass.png",
        "torso-load: " + link + " mass estimate with and without foot F/T cells", link,
        {"torso-load-adaptive.csv", ft, "F/T cells (full measurement)"},
        {"torso-load-noft-adaptive.csv", noft, "no F/T cells (null-space measurement)"});
    md << "\n![](noft-torso-mass.png)\n";
  }
  return md.str();
}

}  // namespace heft::report

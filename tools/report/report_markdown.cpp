#include "report_markdown.hpp"

#include <filesystem>

#include "scenarios.hpp"

namespace heft::report {
namespace {

constexpr const char* kIntroduction =
    "# heft main job report\n\nEvery figure below is measured against the simulator's truth "
    "(MuJoCo), with the whole chain in play: MuJoCo → emulated CAN frames → drivers → state buffer "
    "→ estimator plugin at 333 Hz → hand-off → the simulator's whole-body controller. *adaptive*: "
    "the controller uses heft's hand-off; *nominal*: it ignores it (the paper's \"no "
    "adaptation\").\n\n";

// report.md's targets, met or not.
std::string TargetsSection(const std::vector<Target>& targets) {
  std::string md = "## Targets\n\n| target | measured | wanted | met |\n|---|---|---|---|\n";
  for (const Target& tg : targets)
    md += "| " + tg.what + " | " + tg.figure + " | " + tg.target + " | " +
          (tg.met ? "yes" : "**no**") + " |\n";
  return md;
}

// report.md's figures: every PNG drawn, by scenario.
std::string FiguresSection(const std::string& dir) {
  std::string md = "## Figures\n\n";
  auto add = [&](const std::string& png) {
    if (std::filesystem::exists(dir + "/" + png)) md += "![](" + png + ")\n";
  };
  for (const Scenario& s : Scenarios()) {
    add(s.name + "-mass.png");
    add(s.name + "-tracking.png");
    for (const char* shape : {"-com-error.png", "-inertia-error.png", "-inertia-com-error.png"})
      add(s.name + shape);
  }
  for (const char* f : {"walk-kf-vs-ekf.png", "step-gating.png"}) add(f);
  return md;
}

}  // namespace

std::string Table2Section(const std::string& table) {
  return "## Table II, beside the paper's\n\nThe procedure's runs (identified nominal model, "
         "calibrated); RMSE from the payload's arrival on. The last column is the task's mean "
         "error in the second before the payload arrives, unloaded: what the controller's model "
         "of the robot leaves whatever heft does (the reduction counts it in both runs).\n\n" +
         table;
}

std::string PerScenarioSection(const std::string& table, const std::string& extra) {
  return "## Per scenario (adaptive runs)\n\n" + table +
         "\nMass, CoM and inertia errors: mean over the last quarter of the run while estimating "
         "(raw estimate against truth; inertia as a relative Frobenius error). Converge: median "
         "time for the raw estimate to come within 5 % of the true mass after the estimator "
         "starts or the true mass jumps. Tick: compute time of the 333 Hz update in µs.\n\n" +
         extra;
}

std::string AnomaliesSection(const std::vector<std::string>& anomalies, const AnomalyRules& rules) {
  std::string md = "## What stands out in these tables\n\n";
  if (anomalies.empty()) md += "Nothing: no figure crosses the rules below.\n";
  for (const std::string& a : anomalies) md += "- " + a + "\n";
  return md + "\nRules (from the data, the same for every scenario): " + DescribeRules(rules) +
         ".\n";
}

std::string SweepSection(const std::string& rows) {
  if (rows.empty()) return "";
  return "## The hand-off's rate limit on forearm-load\n\nA rate limit protects the controller "
         "from large steps of its model (start-up, glitches) and delays every genuine change by "
         "step / limit (the paper caps the mass rate at 3 kg/s on hardware). Table I's forearm "
         "load steps 6 kg at once:\n\n| mass rate limit | elbow RMSE | mean handed-mass error | "
         "ticks rate-limited |\n|---|---|---|---|\n" +
         rows + "\n![](forearm-rate-limit.png)\n";
}

std::string JitterSection(const std::string& lines) {
  if (lines.empty()) return "";
  return "## Real time (dumbbell-curl, absolute-time sleeps; no real-time kernel here)\n\n" + lines;
}

std::string ReportMarkdown(const std::string& dir, const Sections& s,
                           const std::vector<Target>& targets) {
  std::string md = kIntroduction + s.procedure + "\n" + s.table2 + "\n" + s.steps + "\n" + s.noft +
                   "\n" + s.per + "\n" + s.anomalies;
  if (!s.sweep.empty()) md += "\n" + s.sweep;
  if (!s.jitter.empty()) md += "\n" + s.jitter;
  return md + "\n" + TargetsSection(targets) + "\n" + FiguresSection(dir);
}

}  // namespace heft::report

// heft-scenario: runs one named scenario standalone on the scenarios' plant and writes a CSV.
//   heft-scenario NAME [--adaptation on|off] [--hand-off none|truth] [--scale S] [--csv PATH]
//                 [--urdf PATH --roles FILE]   (the robot and its role-map file, `roles:` as in
//                 simulation.roles; default: the reference humanoid) [--drive-damping D]
//                 (the drives' viscous damping, N·m·s/rad: simulation.drives.damping)
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include "heft/sim/scenario.hpp"

namespace {

int Usage() {
  std::fprintf(
      stderr,
      "usage: heft-scenario NAME [--adaptation on|off] [--hand-off none|truth] "
      "[--scale S] [--csv PATH] [--urdf PATH --roles FILE] [--drive-damping D]\nscenarios:");
  for (const auto& name : heft::sim::ScenarioNames()) std::fprintf(stderr, " %s", name.c_str());
  std::fprintf(stderr, "\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace heft::sim;
  if (argc < 2) return Usage();
  ScenarioOptions options;
  RunOptions run;
  run.hand_off = HandOff::kTruth;
  const std::string name = argv[1];
  try {
    for (int i = 2; i < argc; ++i) {
      const std::string_view arg = argv[i];
      if (i + 1 >= argc) return Usage();
      const std::string value = argv[++i];
      if (arg == "--adaptation" && (value == "on" || value == "off")) {
        options.adaptation = value == "on";
      } else if (arg == "--hand-off" && (value == "none" || value == "truth")) {
        run.hand_off = value == "truth" ? HandOff::kTruth : HandOff::kNone;
      } else if (arg == "--scale") {
        options.duration_scale = std::stod(value);
      } else if (arg == "--csv") {
        run.csv_path = value;
      } else if (arg == "--urdf") {
        options.urdf_path = value;
      } else if (arg == "--drive-damping") {
        options.drive_damping = std::stod(value);
      } else if (arg == "--roles") {
        options.roles = LoadRoles(value);
      } else {
        return Usage();
      }
    }
    Scenario scenario = MakeScenario(name, options);
    const RunResult result = RunScenario(scenario, run);
    std::printf("scenario %s (%s)\n  adaptation %s, hand-off %s, %.2f s simulated in %.2f s\n",
                scenario.name.c_str(), scenario.description.c_str(),
                options.adaptation ? "on" : "off",
                run.hand_off == HandOff::kTruth ? "truth" : "none", result.simulated, result.wall);
    for (std::size_t e = 0; e < result.error_names.size(); ++e) {
      std::printf("  %-22s rmse %.4f  max %.4f\n", result.error_names[e].c_str(), result.rmse[e],
                  result.max_abs[e]);
    }
    std::printf(
        "  scored (%s) rmse %.4f; fell %s; touchdowns %d; peak foot fz %.0f N, rate %.0f N/s; "
        "max CoP/sole %.2f%s\n",
        scenario.scored_error.c_str(), result.scored_rmse, result.fell ? "yes" : "no",
        result.touchdowns, result.peak_foot_force, result.peak_foot_force_rate,
        result.max_cop_fraction, result.controller_failed ? "; CONTROLLER FAILED" : "");
    return result.controller_failed ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heft-scenario: %s\n", e.what());
    return 1;
  }
}

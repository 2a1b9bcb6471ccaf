#include "heft/host/command_line.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace heft::host {

double ParseNumberOption(const std::string& option, const std::string& text, double min, double max,
                         const char* expected) {
  const auto refuse = [&] {
    return UsageError(fmt::format("{} expects {}, not '{}' (see --help)", option, expected, text));
  };
  if (text.empty()) throw refuse();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v) || v < min || v > max)
    throw refuse();
  return v;
}

CommandLine ParseCommandLine(int argc, const char* const* argv, bool simulator) {
  CommandLine cli;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(a + " needs a value (see --help)");
      return argv[++i];
    };
    if (a == "--config") {
      cli.config_path = next();
    } else if (a == "--telemetry") {
      cli.telemetry = next();
    } else if (a == "--shm") {
      cli.shm = next();
    } else if (!simulator && a == "--allow-root") {
      cli.allow_root = true;
    } else if (a == "--check") {
      cli.check = true;
    } else if (a == "--help" || a == "-h") {
      cli.help = true;
    } else if (a == "--version") {
      cli.version = true;
    } else if (simulator && a == "--duration") {
      cli.duration = ParseNumberOption(a, next(), 0.0, 1e6,
                                       "a duration in simulated seconds (a number from 0 to 1e6)");
    } else if (simulator && a == "--realtime") {
      cli.lockstep = 0;
    } else if (simulator && a == "--lockstep") {
      cli.lockstep = 1;
    } else {
      throw UsageError("unknown argument '" + a + "' (see --help)");
    }
  }
  if (!cli.help && !cli.version && cli.config_path.empty())
    throw UsageError("--config FILE is required (see --help)");
  return cli;
}

std::string Usage(const std::string& program, bool simulator) {
  static const char* kExit =
      "exit status:\n"
      "   0  stopped cleanly (--check: the configuration is valid)\n"
      "   1  runtime failure: a bus, the shared memory, the command socket or an output file\n"
      "      could not be opened, or failed while running (the log says which)\n"
      "   2  usage: an unknown option or a bad value on the command line\n"
      "  78  configuration refused (EX_CONFIG; the file, line and key are named) or the plugin\n"
      "      cannot be loaded: heftd.service does not restart on it "
      "(RestartPreventExitStatus=78)\n";
  if (simulator)
    return "usage: " + program +
           " --config FILE [--duration S] [--telemetry FILE.csv] [--shm NAME] "
           "[--lockstep|--realtime]\n"
           "  Runs heft's host (drivers, estimator plugin, hand-off) on the simulated robot\n"
           "  (backend: simulated; MuJoCo, CAN frames on in-memory buses).\n"
           "  --duration S   simulated seconds (0: the scenario's)\n"
           "  --telemetry F  one CSV row per control tick (overrides host.telemetry's path)\n"
           "  --shm NAME     hand-off also in /dev/shm/NAME (overrides host.shm)\n"
           "  --lockstep     threads run on simulated time (simulation.lockstep: true)\n"
           "  --realtime     threads run on the clock (simulation.lockstep: false)\n"
           "  --check        validate the configuration (and the URDF, the plugin) and exit\n"
           "  --version      print the version\n" +
           std::string(kExit);
  return "usage: " + program +
         " --config FILE [--telemetry FILE.csv] [--shm NAME] [--allow-root]\n"
         "  Runs heft's host on the robot's SocketCAN buses (backend: socketcan) until SIGTERM.\n"
         "  Configurations with backend: simulated run in heft-sim.\n"
         "  --telemetry F  one CSV row per control tick (overrides host.telemetry's path)\n"
         "  --shm NAME     hand-off also in /dev/shm/NAME (overrides host.shm)\n"
         "  --check        validate the configuration (and the URDF, the plugin) and exit\n"
         "  --allow-root   run as root (uid 0) anyway (host.allow_root: true); otherwise refused\n"
         "  --version      print the version\n"
         "Under systemd ($JOURNAL_STREAM) every log line carries its syslog priority\n"
         "(journalctl -u heftd -p warning); STATUS= shows the estimator's state and masses.\n" +
         std::string(kExit);
}

void ApplyCommandLine(const CommandLine& cli, HostConfig& host) {
  if (cli.duration >= 0) host.duration = cli.duration;
  if (!cli.telemetry.empty()) host.telemetry = cli.telemetry;
  if (!cli.shm.empty()) host.shm = cli.shm;
  if (cli.allow_root) host.allow_root = true;
}

}  // namespace heft::host

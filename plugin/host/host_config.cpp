#include "host_config.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "command_server.hpp"  // kDefaultCommandSocket

namespace heft::host {
namespace {

// host.telemetry / host.candump: a path, or {path, max_bytes, keep, append}.
void ParseRotatingFile(const config::Node& host, const char* key, std::string& path,
                       drivers::RotationPolicy& rotation) {
  const auto n = host.Optional(key);
  if (!n) return;
  if (!n->IsMap()) {
    path = n->As<std::string>();
    return;
  }
  n->AllowOnly({"path", "max_bytes", "keep", "append"});
  path = n->Get<std::string>("path");
  if (path.empty()) (*n)["path"].Fail("a file path is needed (leave the key out for no file)");
  rotation.max_bytes = static_cast<std::uint64_t>(
      n->Get<double>("max_bytes", static_cast<double>(rotation.max_bytes), {0.0, 1e15}));
  if (rotation.max_bytes > 0 && rotation.max_bytes < 1024)
    (*n)["max_bytes"].Fail("at least 1024 bytes per file (0: never rotate)");
  rotation.keep = n->Get<int>("keep", rotation.keep, {0, 1000});
  rotation.append = n->Get<bool>("append", rotation.append, {});
}

// host.realtime.<key>: a list of CPUs this machine has (online or not): an affinity to a CPU
// beyond them is refused at start-up rather than silently ignored by the kernel. Absent: `cpus`
// kept.
void ParseCpus(const config::Node& realtime, const char* key, std::vector<int>& cpus) {
  const auto list = realtime.Optional(key);
  if (!list) return;
  const long configured = sysconf(_SC_NPROCESSORS_CONF);
  const int n_cpus = configured > 0 ? static_cast<int>(std::min(configured, 1024L)) : 1024;
  cpus.clear();
  for (const auto& c : list->Elements()) {
    const int cpu = c.As<int>({0, 1023});
    if (cpu >= n_cpus)
      c.Fail(fmt::format("CPU {} does not exist: this machine has {} CPU(s); allowed: 0 to {}", cpu,
                         n_cpus, n_cpus - 1));
    cpus.push_back(cpu);
  }
}

}  // namespace

HostConfig ParseHostConfig(const config::Node& root, bool simulator) {
  HostConfig h;
  h.input_name = simulator ? fmt::format("heft-sim-{}", getpid()) : kDefaultInputName;
  h.control_socket = simulator ? std::string() : std::string(kDefaultCommandSocket);
  h.telemetry_rotation = {kDefaultMaxBytes, kDefaultKeep, !simulator};
  h.candump_rotation = {kDefaultMaxBytes, kDefaultKeep, !simulator};
  h.persistence.file = simulator ? std::string() : std::string(kDefaultPersistenceFile);
  root.AllowOnly({"robot", "drivers", "estimator", "backend", "host", "simulation"});
  h.backend = root.Enum("backend", {"simulated", "socketcan"}, "simulated") == 0 ? "simulated"
                                                                                 : "socketcan";
  if (auto n = root.Optional("host")) {
    n->AllowOnly({"plugin", "telemetry", "log_file", "shm", "realtime", "recording",
                  "framework_input", "control_socket", "persistence", "candump", "counters_period",
                  "allow_root"});
    if (auto ps = n->Optional("persistence")) {
      ps->AllowOnly({"file", "max_age", "interval", "covariance_inflation"});
      h.persistence.file = ps->Get<std::string>("file", h.persistence.file, {});
      h.persistence.max_age = ps->Get<double>("max_age", 600.0, {0.0, 1e9});
      h.persistence.interval = ps->Get<double>("interval", 5.0, {0.1, 3600.0});
      h.persistence.covariance_inflation =
          ps->Get<double>("covariance_inflation", 10.0, {1.0, 1e6});
    }
    if (auto in = n->Optional("framework_input")) {
      in->AllowOnly({"name", "base", "timeout_ms"});
      h.input_name = in->Get<std::string>("name", h.input_name, {});
      if (h.input_name.find('/') != std::string::npos || h.input_name.size() > 200)
        (*in)["name"].Fail("a shared-memory name has no '/' and at most 200 characters");
      h.input_base = in->Get<bool>("base", false, {});
      h.input_timeout = 1e-3 * in->Get<double>("timeout_ms", 20.0, {1.0, 1000.0});
    }
    if (n->Has("control_socket")) {
      h.control_socket = n->Get<std::string>("control_socket", std::string(), {});
      // sockaddr_un's sun_path holds 107 characters and the terminating NUL.
      if (h.control_socket.size() > 107)
        (*n)["control_socket"].Fail("a socket path has at most 107 characters");
    }
    h.shm = n->Get<std::string>("shm", std::string(), {});
    if (h.shm.find('/') != std::string::npos) (*n)["shm"].Fail("a shared-memory name has no '/'");
    h.plugin = n->Get<std::string>("plugin", std::string(), {});
    ParseRotatingFile(*n, "telemetry", h.telemetry, h.telemetry_rotation);
    ParseRotatingFile(*n, "candump", h.candump, h.candump_rotation);
    h.counters_period = n->Get<double>("counters_period", h.counters_period, {0.0, 86400.0});
    h.log_file = n->Get<std::string>("log_file", std::string(), {});
    h.allow_root = n->Get<bool>("allow_root", false, {});
    if (auto rt = n->Optional("realtime")) {
      rt->AllowOnly(
          {"priority", "cpus", "driver_cpus", "control_cpus", "lock_memory", "cpu_dma_latency_us"});
      h.priority = rt->Get<int>("priority", 80, {1, 99});
      h.lock_memory = rt->Get<bool>("lock_memory", true, {});
      h.cpu_dma_latency_us = rt->Get<int>("cpu_dma_latency_us", 0, {-1, 10'000'000});
      ParseCpus(*rt, "cpus", h.cpus);
      h.driver_cpus = h.cpus;
      h.control_cpus = h.cpus;
      ParseCpus(*rt, "driver_cpus", h.driver_cpus);
      ParseCpus(*rt, "control_cpus", h.control_cpus);
    }
  }
  return h;
}

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

// The host's configuration: the top-level keys it accepts, `backend:`, the `host:` section
// (schema: config/README.md), and the command line of heftd and heft-sim. Set-up only: everything
// here throws (config::ConfigError naming file, line and key; std::invalid_argument for the
// command line).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "heft/config/yaml.hpp"
#include "heft/drivers/rotating_file.hpp"

namespace heft::host {

// host.persistence: the last settled estimate kept across restarts (plugin/host/persistence.hpp).
struct PersistenceConfig {
  std::string file;                    // empty: off (heft-sim's default)
  double max_age = 600.0;              // s: an older file is not used
  double interval = 5.0;               // s: at most one write per interval
  double covariance_inflation = 10.0;  // the persisted covariance × this at start
};
inline constexpr const char* kDefaultPersistenceFile = "/var/lib/heft/estimate.yaml";  // heftd

struct HostConfig {
  std::string backend = "simulated";  // `backend:` simulated | socketcan (who runs it: the program)
  std::string plugin;                 // host.plugin; empty: found next to the executable
  std::string telemetry;              // host.telemetry(.path): CSV path; empty: none
  drivers::RotationPolicy telemetry_rotation;  // host.telemetry: {max_bytes, keep, append}
  std::string candump;                         // host.candump.path: received frames; empty: none
  drivers::RotationPolicy candump_rotation;    // host.candump: {max_bytes, keep, append}
  double counters_period = 60.0;  // host.counters_period: s between counter lines; 0: at exit only
  std::string log_file;           // rotating log; empty: console only
  std::string shm;                // shared-memory hand-off name (/dev/shm/<shm>), empty: none
  double duration = 0.0;          // s (simulated time, heft-sim); 0: the backend's
  int priority = 80;              // SCHED_FIFO priority of the driver and control threads
  std::vector<int> cpus;          // host.realtime.cpus: both threads' CPU affinity; empty: any
  std::vector<int> driver_cpus, control_cpus;  // per thread (default: `cpus`)
  bool lock_memory = true;                     // mlockall, pre-faulted heap and stacks
  int cpu_dma_latency_us = 0;  // /dev/cpu_dma_latency held at this while running; -1: no request
  bool allow_root = false;     // host.allow_root / --allow-root: heftd runs as uid 0 only then
  // host.framework_input: the controller framework's input segment (hal/framework_input.h):
  // its commands always, the floating base's state when `input_base`.
  std::string input_name;   // /dev/shm/<name>; empty: none
  bool input_base = false;  // the base state comes from the framework (robots without drivers.imu)
  double input_timeout = 0.02;  // s: older stamp, or a sequence frozen this long: stale
  std::string control_socket;   // host.control_socket: heftctl's socket; empty: none
  PersistenceConfig persistence;
};

// Program defaults (the one place they are written): heftd reads the framework input segment
// `heft_input` and serves heftctl on /run/heft/heftd.sock; heft-sim's input segment is private to
// the run (`heft-sim-<pid>`, its simulated framework writes it) and it serves no socket unless
// configured. heftd's telemetry and candump files append (a restart continues them); heft-sim's
// runs each start a file of their own (simulated time starts at 0 again), the previous one rotated.
inline constexpr const char* kDefaultInputName = "heft_input";
inline constexpr std::uint64_t kDefaultMaxBytes = 100'000'000;  // per file: 100 MB
inline constexpr int kDefaultKeep = 5;                          // rotated files kept

// The host's exit codes (heftd --help, README "The command-line tools"): the unit's
// RestartPreventExitStatus= names kExitConfig, so systemd does not restart a refused configuration.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;  // a failure while running or opening devices (buses, ...)
inline constexpr int kExitUsage = 2;    // the command line (as every heft tool)
inline constexpr int kExitConfig = 78;  // EX_CONFIG (sysexits.h): the configuration is refused

// A command-line error (exit code kExitUsage).
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The top-level keys (the `simulation:` section is accepted here and read by the simulator), the
// backend and the `host:` section. host.realtime.cpus entries must exist on this machine.
// `simulator`: heft-sim's defaults instead of heftd's.
HostConfig ParseHostConfig(const config::Node& root, bool simulator = false);

// What the command line asks for. The simulator's options (--duration, --lockstep, --realtime)
// exist only where `simulator` is set.
struct CommandLine {
  std::string config_path;
  double duration = -1.0;  // s; negative: the configuration's
  std::string telemetry;   // empty: the configuration's
  std::string shm;         // empty: the configuration's
  int lockstep = -1;       // -1: the configuration's; 0: real time; 1: lockstep
  bool help = false;
  bool version = false;
  bool check = false;       // validate the configuration (plugin init included) and exit
  bool allow_root = false;  // heftd --allow-root
};
CommandLine ParseCommandLine(int argc, const char* const* argv, bool simulator);
std::string Usage(const std::string& program, bool simulator);

// A number given on the command line: the whole text must be one finite number within [min, max];
// otherwise the error (a UsageError) names the option and what it expects.
double ParseNumberOption(const std::string& option, const std::string& text, double min, double max,
                         const char* expected);

// Overrides from the command line (config → host).
void ApplyCommandLine(const CommandLine& cli, HostConfig& host);

}  // namespace heft::host

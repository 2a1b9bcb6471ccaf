// The command line of heftd and heft-sim and the host's exit codes. Set-up only: errors are
// UsageError (std::invalid_argument).
#pragma once

#include <stdexcept>
#include <string>

#include "heft/host/host_config.hpp"

namespace heft::host {

// The host's exit codes (heftd --help; docs/development.md, "The tools' exit codes"): the unit's
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

// The host: what heftd and heft-sim share. Run() reads the configuration and the command line,
// loads the estimator plugin, asks the program's BackendFactory for its backend (the robot's
// SocketCAN buses in heftd, the simulated robot in heft-sim), wires the driver loop, bus
// supervisor, recorder, shared-memory hand-off, telemetry and the thread schedule, talks to
// systemd (Type=notify, watchdog), stops cleanly on SIGTERM/SIGINT and logs a summary.
#pragma once

#include <spdlog/logger.h>

#include <memory>
#include <string>

#include "heft/config/yaml.hpp"
#include "heft/dynamics/model.hpp"
#include "heft/host/backend.hpp"
#include "heft/host/command_line.hpp"
#include "heft/host/configuration.hpp"
#include "heft/plugin/plugin_config.hpp"

namespace heft::host {

// What a program plugs into the host.
class BackendFactory {
 public:
  virtual ~BackendFactory() = default;
  // Reads the backend's part of the configuration right after the host's (throws
  // config::ConfigError); `host` may be adjusted (e.g. the duration).
  virtual void Configure(const config::Node& root, const CommandLine& cli, HostConfig& host) = 0;
  // For the start-up line, before the backend exists.
  virtual bool lockstep() const = 0;
  // The backend, once the plugin is configured (the drivers' configuration validated against the
  // URDF) and the URDF model is loaded.
  virtual std::unique_ptr<Backend> Create(const HostConfig& host,
                                          const plugin::PluginConfig& config,
                                          const dynamics::Model& model, spdlog::logger& log) = 0;
};

struct Program {
  std::string name;  // heftd | heft-sim: usage, logger name, error prefix
  bool simulator = false;
};

// The whole run, logging through `log` (logging.hpp; Run adds host.log_file); 0 on a clean stop.
// Throws on set-up errors: UsageError (the command line), config::ConfigError,
// plugin::PluginError and PluginLoadError (the configuration), anything else (devices, files).
int Run(const Program& program, int argc, const char* const* argv, BackendFactory& factory,
        const std::shared_ptr<spdlog::logger>& log);
// Run() with the program's logger (MakeProgramLogger) and its errors reported (ReportFatal: the
// journal at priority err, or "<program>: <what>" on a terminal) and turned into the exit codes of
// host_config.hpp: kExitUsage 2, kExitConfig 78 (configuration, plugin), kExitRuntime 1.
int Main(const Program& program, int argc, const char* const* argv, BackendFactory& factory);

}  // namespace heft::host

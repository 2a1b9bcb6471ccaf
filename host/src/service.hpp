// Internal to the host's Run() (host.cpp): what the stages of one run share, and the stages, each
// in the file of its part of the run: the set-up (service_setup.cpp), the threads from their start
// to their stop (service_threads.cpp) and the end-of-run log and summary (service_summary.cpp).
#pragma once

#include <spdlog/logger.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "heft/drivers/driver_loop.hpp"
#include "heft/hal/state_buffer.hpp"
#include "heft/host/candump_tap.hpp"
#include "heft/host/command_server.hpp"
#include "heft/host/framework_input.hpp"
#include "heft/host/framework_joints.hpp"
#include "heft/host/host.hpp"
#include "heft/host/periodic.hpp"
#include "heft/host/persistence.hpp"
#include "heft/host/plugin_loader.hpp"
#include "heft/host/realtime.hpp"
#include "heft/host/recorder.hpp"
#include "heft/host/schedule.hpp"
#include "heft/host/shared_memory.hpp"
#include "heft/host/telemetry.hpp"
#include "heft/host/watchdog.hpp"

namespace heft::host {

// What the stages of one run share. The members are declared in the order the stages make them,
// so they are destroyed in reverse, also when a stage throws: the notifier, the persister and the
// reports first, the command server's thread before the server, the schedule's threads (joined)
// before the telemetry, drivers, backend and plugin they use, the plugin before the hand-off and
// state buffer it writes.
struct Service {
  Service(const Program& the_program, const CommandLine& the_cli, const Configuration& file,
          BackendFactory& the_factory, const std::shared_ptr<spdlog::logger>& logger)
      : program(the_program),
        cli(the_cli),
        config(file),
        host(file.host),
        pcfg(file.plugin),
        factory(the_factory),
        log(logger) {}

  const Program& program;
  const CommandLine& cli;
  const Configuration& config;
  HostConfig host;  // the file's, then the command line's and the backend's adjustments
  const plugin::PluginConfig& pcfg;
  BackendFactory& factory;
  const std::shared_ptr<spdlog::logger>& log;
  std::int64_t period_ms = 0;  // the control thread's period
  std::unique_ptr<CpuLatencyRequest> cpu_latency;
  hal::StateBuffer state;
  plugin::HandOffMailbox hand_off;
  std::string plugin_path;
  std::optional<LoadedPlugin> plug;
  std::string model_hash;
  std::unique_ptr<SharedHandOffSegment> shared;
  std::unique_ptr<FrameworkInput> input;
  std::unique_ptr<FrameworkJoints> joints;  // drivers.joints_from / ft_cells_from: framework
  std::optional<dynamics::Model> model;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<CandumpTap> tap;
  std::vector<hal::CanTransport*> buses;
  std::optional<drivers::DriverLoop> loop;
  std::unique_ptr<StateRecorder> recorder;
  std::optional<drivers::BusSupervisor> supervisor;
  std::optional<Telemetry> telemetry;
  std::optional<Schedule> schedule;
  std::unique_ptr<CommandServer> server;
  std::atomic<bool> server_stop{false};
  std::thread server_thread;
  std::optional<PeriodicReports> reports;
  std::unique_ptr<EstimatePersister> persister;
  std::int64_t t0 = 0;
  std::optional<ServiceNotifier> notifier;
};

// The set-up, in Run()'s order (service_setup.cpp).
void Configure(Service& s);
void ReserveRealTime(Service& s);
void LoadPlugin(Service& s);
void OpenSharedMemory(Service& s);
void WireDrivers(Service& s);

// The threads (service_threads.cpp): started, served until the run ends, stopped (returns the
// run's wall-clock seconds).
void StartThreads(Service& s);
void Serve(Service& s);
double Shutdown(Service& s);

// The end of the run in the log and the summary's JSON (service_summary.cpp).
void LogTiming(const Service& s, double wall);
void Summarize(Service& s);

}  // namespace heft::host

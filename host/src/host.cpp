#include "heft/host/host.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "heft/drivers/driver_loop.hpp"
#include "heft/hal/model_identity.hpp"
#include "heft/hal/state_buffer.hpp"
#include "heft/host/candump_tap.hpp"
#include "heft/host/command_server.hpp"
#include "heft/host/framework_input.hpp"
#include "heft/host/logging.hpp"
#include "heft/host/periodic.hpp"
#include "heft/host/persistence.hpp"
#include "heft/host/plugin_loader.hpp"
#include "heft/host/realtime.hpp"
#include "heft/host/recorder.hpp"
#include "heft/host/run_summary.hpp"
#include "heft/host/schedule.hpp"
#include "heft/host/shared_memory.hpp"
#include "heft/host/status.hpp"
#include "heft/host/telemetry.hpp"
#include "heft/host/watchdog.hpp"

#ifndef HEFT_VERSION
#error "HEFT_VERSION (the project's version) must be defined by the build"
#endif

namespace heft::host {
namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) {
  g_stop.store(true);
}

std::string RotationText(const drivers::RotationPolicy& r) {
  return r.max_bytes == 0 ? std::string("never rotated")
                          : fmt::format("rotated at {} bytes, {} kept", r.max_bytes, r.keep);
}

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

// The command line and the backend's section over the host's, the checks that need both, the log
// file and the start-up line.
void Configure(Service& s) {
  const CommandLine& cli = s.cli;
  HostConfig& host = s.host;
  ApplyCommandLine(cli, host);
  s.factory.Configure(s.config.root(), cli, host);
  // The control thread's period: estimator.control_period, a whole number of the drivers' 1 ms
  // samples (the configuration's checks refuse any other for heftd and heft-sim).
  s.period_ms = std::llround(s.pcfg.estimator.control_period * 1e3);
  // heftd is a service with a user of its own (heftd.service: User=heft): as root, a bug in it or
  // in a plugin it loads owns the robot's computer. heft-sim (a developer's tool) and --check
  // (opens nothing) are not refused.
  if (!s.program.simulator && !cli.check && geteuid() == 0 && !host.allow_root)
    throw config::ConfigError(
        cli.config_path +
        ": heftd refuses to run as root (uid 0): run it as its own user (the installed "
        "heftd.service has User=heft), or say so with host.allow_root: true or --allow-root");

  if (!host.log_file.empty() && !cli.check) AddLogFile(*s.log, host.log_file);
  s.log->info("configuration {} ({} backend, {})", cli.config_path, host.backend,
              s.factory.lockstep() ? "lockstep on simulated time" : "real time");
}

// Locked memory and the CPUs' idle exit latency, when asked for and the run is in real time.
void ReserveRealTime(Service& s) {
  const HostConfig& host = s.host;
  spdlog::logger& log = *s.log;
  const bool realtime = !s.cli.check && !s.factory.lockstep();
  if (host.lock_memory && !s.cli.check) {
    if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
      log.warn("mlockall refused ({}): memory may page — give the service LimitMEMLOCK=infinity",
               std::strerror(errno));
    else
      PrefaultHeap(kPrefaultHeapBytes);
  }
  // The CPUs' exit latency from idle states, held for the whole run (real time only): without it
  // a deep C-state delays the control thread's wake-up by milliseconds (docs/service.md, "Real
  // time").
  if (realtime && host.cpu_dma_latency_us >= 0) {
    s.cpu_latency = std::make_unique<CpuLatencyRequest>(host.cpu_dma_latency_us);
    if (s.cpu_latency->ok())
      log.info("CPU latency request: /dev/cpu_dma_latency held at {} µs", host.cpu_dma_latency_us);
    else
      log.warn(
          "CPU latency request refused ({}): wake-ups may be late by the CPUs' idle exit latency "
          "— give heftd's group rw on /dev/cpu_dma_latency (the package's udev rule does)",
          s.cpu_latency->error());
  }
}

// The plugin loaded, given the configuration, started from the persisted estimate when there is
// a usable one, and configured.
void LoadPlugin(Service& s) {
  const plugin::PluginConfig& pcfg = s.pcfg;
  spdlog::logger& log = *s.log;
  s.plugin_path = FindPlugin(s.host.plugin, s.program.name);
  LoadedPlugin& plug = s.plug.emplace(s.plugin_path);
  plug->init(s.cli.config_path, plugin::HardwareInterface{&s.state, &s.hand_off, &pcfg});
  log.info("plugin {} loaded from {}: estimating {} link(s)", plug->name(), s.plugin_path,
           plug->num_links());
  // The hand-off is right together with this model (README, "On your robot").
  // Its identity is in every hand-off (InertialEstimate::nominal_model, hal/model_identity.hpp).
  const std::uint32_t identity = hal::ModelIdentity(pcfg.urdf_path, pcfg.parameters_path);
  if (pcfg.parameters_path.empty())
    log.info("nominal model {:08x}: {} (the URDF's inertial parameters)", identity, pcfg.urdf_path);
  else
    log.info("nominal model {:08x}: {} with the parameters of {} (the hand-off is relative to it)",
             identity, pcfg.urdf_path, pcfg.parameters_path);
  // host.persistence: start from an earlier run's last settled estimate when it is usable.
  if (!s.cli.check && !s.host.persistence.file.empty()) {
    s.model_hash = NominalModelHash(pcfg);
    RestorePersistedEstimate(s.host.persistence, s.model_hash, *plug, log);
  }
  plug->configure();
}

// --check's verdict, once the plugin accepted the configuration.
int ReportCheck(Service& s) {
  const plugin::PluginConfig& pcfg = s.pcfg;
  const drivers::DriverConfig& d = pcfg.drivers;
  std::printf("%s: configuration OK (%zu joints%s, %zu F/T cells%s, %s, %zu estimated link(s))\n",
              s.cli.config_path.c_str(), d.joints.size(),
              d.joints_from_framework ? " from the framework" : "", d.ft_cells.size(),
              d.ft_cells_from_framework && !d.ft_cells.empty() ? " from the framework" : "",
              pcfg.drivers.imu    ? "base IMU on CAN"
              : s.host.input_base ? "base state from the framework"
                                  : "no base source (fixed base)",
              (*s.plug)->num_links());
  return 0;
}

// The shared-memory segments: the hand-off for controllers in other processes, and the framework
// input.
void OpenSharedMemory(Service& s) {
  const HostConfig& host = s.host;
  // The shared-memory hand-off for controllers in other processes.
  if (!host.shm.empty()) {
    s.shared = std::make_unique<SharedHandOffSegment>(host.shm, s.period_ms * 1'000'000);
    s.log->info("hand-off also in shared memory /dev/shm/{} (layout {})", host.shm,
                hal::kSharedHandOffLayout);
  }

  // The framework input segment: the controller framework's commands and, when configured, the
  // base state. heftd creates it; the framework (or the simulator's stand-in) writes it.
  if (!host.input_name.empty()) {
    FrameworkInputLimits limits;
    limits.timeout_ns = static_cast<std::int64_t>(host.input_timeout * 1e9);
    s.input = std::make_unique<FrameworkInput>(host.input_name, limits);
    s.log->info("framework input: /dev/shm/{} (commands{})", host.input_name,
                host.input_base ? ", base state" : "");
  }
}

// heftd's own candump log of every received frame (host.candump): the driver thread only queues
// them. A simulated robot's frames carry simulated time: stamped from the run's start.
void OpenCandumpTap(Service& s) {
  const HostConfig& host = s.host;
  if (!host.candump.empty()) {
    const std::int64_t epoch = s.backend->steps()
                                   ? std::chrono::duration_cast<std::chrono::seconds>(
                                         std::chrono::system_clock::now().time_since_epoch())
                                             .count() *
                                         1'000'000'000
                                   : 0;
    s.tap = std::make_unique<CandumpTap>(s.backend->buses(), s.pcfg.drivers.buses, host.candump,
                                         host.candump_rotation, epoch);
    s.log->info("candump log of the received frames: {} ({}, {})", host.candump,
                host.candump_rotation.append ? "appending" : "a new file",
                RotationText(host.candump_rotation));
  }
}

// The framework's joint-state segment, when joints or wrenches come from the framework: its names
// are the configuration's, its limits the URDF's.
void OpenFrameworkJoints(Service& s, const dynamics::Model& model) {
  const drivers::DriverConfig& d = s.pcfg.drivers;
  if (!d.joints_from_framework && !d.ft_cells_from_framework) return;
  FrameworkJointsLayout layout;
  for (const auto& j : d.joints) layout.joints.push_back(j.joint);
  layout.limits = JointLimitsOf(model, layout.joints);
  if (d.ft_cells_from_framework)
    for (const auto& c : d.ft_cells) layout.wrench_frames.push_back(c.frame);
  FrameworkJointsLimits limits;
  limits.timeout_ns = static_cast<std::int64_t>(s.host.joints_timeout * 1e9);
  s.joints = std::make_unique<FrameworkJoints>(s.host.joints_name, layout, limits);
  s.log->info("framework joint state: /dev/shm/{} ({} joints{}, layout {})", s.host.joints_name,
              layout.joints.size(), d.ft_cells_from_framework ? " and the wrenches" : "",
              HEFT_JOINTS_LAYOUT_VERSION);
  s.backend->AttachFrameworkJoints(s.host.joints_name);
}

// Backend, drivers, recorder, bus supervisor and telemetry.
void WireDrivers(Service& s) {
  const HostConfig& host = s.host;
  const plugin::PluginConfig& pcfg = s.pcfg;
  const dynamics::Model& model = s.model.emplace(dynamics::LoadModelFromUrdfFile(
      pcfg.urdf_path, dynamics::ModelOptions{pcfg.floating_base, pcfg.repair_inertia}));
  s.backend = s.factory.Create(host, pcfg, model, *s.log);
  if (s.input) s.backend->AttachFrameworkInput(host.input_name);
  OpenFrameworkJoints(s, model);
  OpenCandumpTap(s);
  s.buses = s.tap ? s.tap->buses() : s.backend->buses();
  s.loop.emplace(pcfg.drivers, s.buses, s.state);
  s.recorder = MakeRecorder(host.recording, pcfg, model.floating_base, s.log);
  s.supervisor.emplace(*s.loop, s.buses);
  const Telemetry& telemetry =
      s.telemetry.emplace(host.telemetry, host.telemetry_rotation, **s.plug, *s.backend, s.log);
  if (telemetry.writing())
    s.log->info("telemetry: {} ({}, {})", host.telemetry,
                host.telemetry_rotation.append ? "appending" : "a new file",
                RotationText(host.telemetry_rotation));
}

// heftctl's status: the latest hand-off and the drivers' and framework input's counters.
StatusSnapshot CollectStatus(Service& s) {
  StatusSnapshot snap;
  hal::InertialEstimate latest;
  if (s.hand_off.read_latest(latest)) FillFromEstimate(latest, snap);
  drivers::DriverCounters c;
  if (s.schedule->driver_counters(c)) {
    snap.drivers.published = c.published;
    snap.drivers.rejected = c.rejected_total();
    snap.drivers.lost = c.lost_samples;
    snap.drivers.stale = c.stale_events;
  }
  if (s.input) {
    const FrameworkInputCounters ic = s.input->counters();
    snap.input.present = true;
    snap.input.state = s.input->state();
    snap.input.accepted = ic.accepted;
    snap.input.rejected = ic.rejected_total();
    snap.input.commands = ic.commands;
  }
  return snap;
}

// heftctl's socket: commands to the plugin, the status from the latest hand-off and counters.
void OpenCommandServer(Service& s) {
  if (!s.host.control_socket.empty()) {
    s.server = std::make_unique<CommandServer>(
        CommandServerOptions{s.host.control_socket},
        [&s](plugin::Command c) { (*s.plug)->command(c); }, [&s] { return CollectStatus(s); });
    s.log->info("commands and status: {} (heftctl)", s.host.control_socket);
  }
}

// The signal handlers, the plugin activated, the schedule's threads, the command server, the
// periodic reports and the persister.
void StartThreads(Service& s) {
  const HostConfig& host = s.host;
  signal(SIGTERM, OnSignal);
  signal(SIGINT, OnSignal);
  (*s.plug)->activate();

  Schedule& schedule =
      s.schedule.emplace(*s.backend, *s.loop, **s.plug, s.hand_off, s.recorder.get(),
                         s.shared.get(), s.input.get(), host.input_base,
                         ThreadSettings{host.priority, host.driver_cpus, host.control_cpus,
                                        host.lock_memory ? kPrefaultStackBytes : 0, s.period_ms},
                         s.log);
  schedule.SetFrameworkJoints(s.joints.get());

  OpenCommandServer(s);

  s.reports.emplace(s.hand_off, schedule, *s.supervisor, *s.telemetry, s.tap.get(),
                    s.pcfg.drivers.buses, host.counters_period, s.log);
  schedule.Start(g_stop);
  if (!host.persistence.file.empty())
    s.persister =
        std::make_unique<EstimatePersister>(host.persistence, s.model_hash, s.hand_off, s.log);
  s.t0 = schedule.start_ns();
  if (s.server) s.server_thread = std::thread([&s] { s.server->Run(s.server_stop); });
}

// The main thread until the run ends (a signal, or the simulated run's duration): telemetry,
// periodic reports, bus restarts, systemd's watchdog and, simulated, the progress.
void Serve(Service& s) {
  spdlog::logger& log = *s.log;
  const Backend& backend = *s.backend;
  const Schedule& schedule = *s.schedule;
  // READY=1, and WATCHDOG=1 only while the control thread ticks
  ServiceNotifier& notifier = s.notifier.emplace();
  notifier.Ready(Now());
  log.info("running: driver thread 1 kHz, control thread {:.0f} Hz ({} ms){}",
           1e3 / static_cast<double>(s.period_ms), s.period_ms,
           backend.steps() ? ", simulated robot" : "");
  std::int64_t last_progress = 0;
  bool stalled = false;
  while (!schedule.stopping()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    s.telemetry->Drain();
    s.reports->Poll(Now());
    if (const int restarted = s.supervisor->Poll(); restarted > 0)
      log.warn("drivers: restarted {} bus(es) on request (bus-off or interface down){}", restarted,
               backend.steps() ? fmt::format(" at simulated t ≈ {:.3f} s",
                                             1e-3 * static_cast<double>(schedule.ms_stepped()))
                               : "");
    const std::int64_t now = Now();
    notifier.Poll(now, schedule.control_heartbeat_ns());
    if (notifier.stalled() != stalled) {
      stalled = notifier.stalled();
      if (stalled)
        log.error(
            "control thread: no tick for over 100 ms; watchdog keep-alives withheld (systemd "
            "restarts heftd after WatchdogSec)");
      else
        log.warn("control thread ticks again; watchdog keep-alives resumed");
    }
    if (backend.steps() && now - last_progress > 2'000'000'000) {
      log.info("progress: simulated {:.1f} / {:.1f} s ({:.1f}× real time)", backend.time(),
               backend.duration(), backend.time() / (1e-9 * static_cast<double>(now - s.t0)));
      last_progress = now;
    }
  }
}

// Everything stopped, in order: the command server (its thread joined), the schedule's threads,
// the plugin, the persister (its last write), the telemetry drained and the candump log closed.
// Returns the run's wall-clock seconds.
double Shutdown(Service& s) {
  s.notifier->Stopping();
  s.server_stop.store(true, std::memory_order_release);
  if (s.server_thread.joinable()) s.server_thread.join();
  s.server.reset();
  s.schedule->Stop();
  (*s.plug)->deactivate();
  if (s.persister) {
    s.persister->Stop();  // the last settled estimate, once more
    s.log->info("persisted estimate: {} write(s) to {}", s.persister->writes(),
                s.host.persistence.file);
  }
  s.telemetry->Drain();
  if (s.tap) s.tap->Close();
  return 1e-9 * static_cast<double>(Now() - s.t0);
}

// The run's length and the control thread's timing.
void LogTiming(const Service& s, double wall) {
  spdlog::logger& log = *s.log;
  const Backend& backend = *s.backend;
  const Schedule& schedule = *s.schedule;
  const TickStats& stats = schedule.stats();
  log.info("stopped after {:.2f} s wall{}", wall,
           backend.steps() ? fmt::format(", {:.2f} s simulated ({:.1f}× real time)", backend.time(),
                                         backend.time() / wall)
                           : "");
  log.info(
      "control tick compute: median {:.1f} µs, 99.9th percentile {:.1f} µs, worst {:.1f} µs; "
      "overruns {}",
      1e-3 * Percentile(stats.compute_ns, 0.5), 1e-3 * Percentile(stats.compute_ns, 0.999),
      1e-3 * Percentile(stats.compute_ns, 1.0), stats.overruns);
  // The line tools/heft rt-check puts beside cyclictest's (same percentiles, same units).
  if (!schedule.lockstep())
    log.info(
        "control wake-up lateness: median {:.1f} µs, 99th {:.1f} µs, 99.9th {:.1f} µs, worst "
        "{:.1f} "
        "µs over {} ticks; overruns {} (CPU latency request: {})",
        1e-3 * Percentile(stats.lateness_ns, 0.5), 1e-3 * Percentile(stats.lateness_ns, 0.99),
        1e-3 * Percentile(stats.lateness_ns, 0.999), 1e-3 * Percentile(stats.lateness_ns, 1.0),
        stats.lateness_ns.size(), stats.overruns,
        s.cpu_latency && s.cpu_latency->ok() ? fmt::format("{} µs", s.host.cpu_dma_latency_us)
                                             : std::string("none"));
  if (!schedule.lockstep()) {
    const ControlCounters& c = stats.control;
    log.log(c.late > 0 || c.stale > 0 ? spdlog::level::warn : spdlog::level::info,
            "control thread starved: {} late ticks (a {} ms period or more; longest {:.1f} ms), "
            "{} periods skipped, {} ticks without a new driver sample (update() not called)",
            c.late, s.period_ms, 1e-6 * static_cast<double>(c.longest_ns), c.skipped, c.stale);
  }
}

// The last hand-off's estimate per link.
void LogLastHandOff(Service& s) {
  hal::InertialEstimate last;
  if (s.hand_off.read_latest(last)) {
    for (std::size_t k = 0; k < last.num_links; ++k)
      s.log->info(
          "hand-off {}: m = {:.3f} kg, c = ({:.4f}, {:.4f}, {:.4f}) m; updates gated {}, gate "
          "releases {}",
          last.links[k].name.data(), last.links[k].parameters[0],
          last.links[k].parameters[1] / last.links[k].parameters[0],
          last.links[k].parameters[2] / last.links[k].parameters[0],
          last.links[k].parameters[3] / last.links[k].parameters[0], last.status.gated,
          last.status.gate_releases);
  }
}

// The framework joint-state segment's counters in the log (a warning when anything was refused)
// and in the summary's JSON ("framework_joints").
void LogFrameworkJoints(spdlog::logger& log, const FrameworkJointsCounters& c, Json& summary) {
  std::string reasons;
  for (std::size_t i = 1; i < kNumJointsRejects; ++i)
    if (c.rejected[i] > 0)
      reasons +=
          fmt::format(" {} {}", JointsRejectName(static_cast<JointsReject>(i)), c.rejected[i]);
  for (std::size_t i = 0; i < kNumChannelRejects; ++i)
    if (c.channel_rejected[i] > 0)
      reasons += fmt::format(" channel {} {}", ChannelRejectName(static_cast<ChannelReject>(i)),
                             c.channel_rejected[i]);
  log.log(c.rejected_total() + c.channel_rejected_total() > 0 ? spdlog::level::warn
                                                              : spdlog::level::info,
          "framework joint state: {} reads, {} accepted, {} empty, {} refused{}", c.reads,
          c.accepted, c.empty, c.rejected_total(), reasons.empty() ? "" : ":" + reasons);
  Json& j = summary["framework_joints"];
  j["reads"] = Json::Of(static_cast<double>(c.reads));
  j["accepted"] = Json::Of(static_cast<double>(c.accepted));
  j["empty"] = Json::Of(static_cast<double>(c.empty));
  for (std::size_t i = 1; i < kNumJointsRejects; ++i)
    j[JointsRejectName(static_cast<JointsReject>(i))] =
        Json::Of(static_cast<double>(c.rejected[i]));
  for (std::size_t i = 0; i < kNumChannelRejects; ++i)
    j[std::string("channel_") + ChannelRejectName(static_cast<ChannelReject>(i))] =
        Json::Of(static_cast<double>(c.channel_rejected[i]));
}

// The summary: drivers, backend, hand-off, outputs and framework input in the log, and beside the
// telemetry in JSON.
void Summarize(Service& s) {
  spdlog::logger& log = *s.log;
  const Telemetry& telemetry = *s.telemetry;
  const CandumpTap* tap = s.tap.get();
  Json summary = SummarizeDrivers(log, *s.loop, s.pcfg, s.buses);
  s.backend->LogSummary(log, s.pcfg.drivers.buses);
  s.backend->Summarize(summary, s.pcfg.drivers.buses);
  LogLastHandOff(s);
  if (telemetry.writing())
    log.info("telemetry: {} rows in {} ({} rotations)", telemetry.rows(), s.host.telemetry,
             telemetry.rotations());
  if (tap)
    log.log(tap->dropped() > 0 ? spdlog::level::warn : spdlog::level::info,
            "candump log of the received frames: {} frames in {} ({} left out: queue full; {} "
            "rotations)",
            tap->written(), tap->path(), tap->dropped(), tap->rotations());
  if (tap) {
    Json& t = summary["candump_tap"];
    t["path"] = Json::Of(tap->path());
    t["written"] = Json::Of(static_cast<double>(tap->written()));
    t["left_out"] = Json::Of(static_cast<double>(tap->dropped()));
    t["rotations"] = Json::Of(static_cast<double>(tap->rotations()));
  }
  if (telemetry.writing()) {
    summary["telemetry"]["rows"] = Json::Of(static_cast<double>(telemetry.rows()));
    summary["telemetry"]["holds"] = Json::Of(static_cast<double>(telemetry.holds()));
    (void)WriteSummary(log, SummaryPath(s.host.telemetry), summary);
  }
  if (s.input) {
    const FrameworkInputCounters ic = s.input->counters();
    log.info("framework input: {} reads, {} accepted, {} refused, {} commands", ic.reads,
             ic.accepted, ic.rejected_total(), ic.commands);
  }
  if (s.joints) LogFrameworkJoints(log, s.joints->counters(), summary);
}

// The shared-memory segments released (heft-sim's framework input removed) and the log flushed.
void Release(Service& s) {
  s.shared.reset();
  // heft-sim's segment is private to its run; heftd's stays for the robot's framework.
  if (s.program.simulator && s.input) {
    s.input.reset();
    InputMapping::Unlink(s.host.input_name);
  }
  if (s.program.simulator && s.joints) {
    s.joints.reset();
    JointsMapping::Unlink(s.host.joints_name);
  }
  s.log->flush();
}

}  // namespace

int Run(const Program& program, int argc, const char* const* argv, BackendFactory& factory,
        const std::shared_ptr<spdlog::logger>& log) {
  const CommandLine cli = ParseCommandLine(argc, argv, program.simulator);
  if (cli.help) {
    std::fputs(Usage(program.name, program.simulator).c_str(), stdout);
    return 0;
  }
  if (cli.version) {
    std::printf("%s %s\n", program.name.c_str(), HEFT_VERSION);
    return 0;
  }

  // The file, read once: every section validated (against the URDF, and against each other).
  const host::Configuration config = host::LoadConfiguration(
      cli.config_path, program.simulator ? host::Reader::kSimulator : host::Reader::kHeftd);
  Service s(program, cli, config, factory, log);
  Configure(s);
  ReserveRealTime(s);
  LoadPlugin(s);
  if (cli.check) return ReportCheck(s);
  // Everything below opens devices, shared memory and sockets.
  OpenSharedMemory(s);
  WireDrivers(s);
  StartThreads(s);
  Serve(s);
  const double wall = Shutdown(s);
  LogTiming(s, wall);
  Summarize(s);
  Release(s);
  return 0;
}

int Main(const Program& program, int argc, const char* const* argv, BackendFactory& factory) {
  bool journal = false;
  std::shared_ptr<spdlog::logger> log;
  try {
    log = MakeProgramLogger(program.name, &journal);
    return Run(program, argc, argv, factory, log);
  } catch (const UsageError& e) {
    ReportFatal(program.name, log.get(), journal, e.what());
    return kExitUsage;
  } catch (const config::ConfigError& e) {
    ReportFatal(program.name, log.get(), journal, e.what());
    return kExitConfig;
  } catch (const plugin::PluginError& e) {  // the plugin refused its configuration
    ReportFatal(program.name, log.get(), journal, e.what());
    return kExitConfig;
  } catch (const PluginLoadError& e) {
    ReportFatal(program.name, log.get(), journal, e.what());
    return kExitConfig;
  } catch (const std::invalid_argument& e) {  // set-up validation (e.g. the simulated robot's)
    ReportFatal(program.name, log.get(), journal, e.what());
    return kExitConfig;
  } catch (const std::exception& e) {
    ReportFatal(program.name, log.get(), journal, e.what());
    return kExitRuntime;
  }
}

}  // namespace heft::host

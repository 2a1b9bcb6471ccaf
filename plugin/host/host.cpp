#include "host.hpp"

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
#include <thread>
#include <vector>

#include "candump_tap.hpp"
#include "command_server.hpp"
#include "framework_input.hpp"
#include "heft/drivers/driver_loop.hpp"
#include "heft/hal/state_buffer.hpp"
#include "logging.hpp"
#include "periodic.hpp"
#include "persistence.hpp"
#include "plugin_loader.hpp"
#include "realtime.hpp"
#include "recorder.hpp"
#include "run_summary.hpp"
#include "schedule.hpp"
#include "shared_memory.hpp"
#include "status.hpp"
#include "telemetry.hpp"
#include "watchdog.hpp"

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
  const config::Configuration config = config::LoadConfiguration(
      cli.config_path, program.simulator ? config::Reader::kSimulator : config::Reader::kHeftd);
  HostConfig host = config.host;
  ApplyCommandLine(cli, host);
  factory.Configure(config.root(), cli, host);
  const plugin::PluginConfig& pcfg = config.plugin;
  // The control thread's period: estimator.control_period, a whole number of the drivers' 1 ms
  // samples (the configuration's checks refuse any other for heftd and heft-sim).
  const std::int64_t period_ms = std::llround(pcfg.estimator.control_period * 1e3);
  // heftd is a service with a user of its own (heftd.service: User=heft): as root, a bug in it or
  // in a plugin it loads owns the robot's computer. heft-sim (a developer's tool) and --check
  // (opens nothing) are not refused.
  if (!program.simulator && !cli.check && geteuid() == 0 && !host.allow_root)
    throw config::ConfigError(
        cli.config_path +
        ": heftd refuses to run as root (uid 0): run it as its own user (the installed "
        "heftd.service has User=heft), or say so with host.allow_root: true or --allow-root");

  if (!host.log_file.empty() && !cli.check) AddLogFile(*log, host.log_file);
  log->info("configuration {} ({} backend, {})", cli.config_path, host.backend,
            factory.lockstep() ? "lockstep on simulated time" : "real time");

  const bool realtime = !cli.check && !factory.lockstep();
  if (host.lock_memory && !cli.check) {
    if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
      log->warn("mlockall refused ({}): memory may page — give the service LimitMEMLOCK=infinity",
                std::strerror(errno));
    else
      PrefaultHeap(kPrefaultHeapBytes);
  }
  // The CPUs' exit latency from idle states, held for the whole run (real time only): without it
  // a deep C-state delays the control thread's wake-up by milliseconds (README "Real time").
  std::unique_ptr<CpuLatencyRequest> cpu_latency;
  if (realtime && host.cpu_dma_latency_us >= 0) {
    cpu_latency = std::make_unique<CpuLatencyRequest>(host.cpu_dma_latency_us);
    if (cpu_latency->ok())
      log->info("CPU latency request: /dev/cpu_dma_latency held at {} µs", host.cpu_dma_latency_us);
    else
      log->warn(
          "CPU latency request refused ({}): wake-ups may be late by the CPUs' idle exit latency "
          "— give heftd's group rw on /dev/cpu_dma_latency (the package's udev rule does)",
          cpu_latency->error());
  }

  hal::StateBuffer state;
  plugin::HandOffMailbox hand_off;
  const std::string plugin_path = FindPlugin(host.plugin, program.name);
  LoadedPlugin plug(plugin_path);
  plug->init(cli.config_path, plugin::HardwareInterface{&state, &hand_off, &pcfg});
  log->info("plugin {} loaded from {}: estimating {} link(s)", plug->name(), plugin_path,
            plug->num_links());
  // The hand-off is right together with this model (README, "On your robot").
  if (pcfg.parameters_path.empty())
    log->info("nominal model: {} (the URDF's inertial parameters)", pcfg.urdf_path);
  else
    log->info("nominal model: {} with the parameters of {} (the hand-off is relative to it)",
              pcfg.urdf_path, pcfg.parameters_path);
  // host.persistence: start from an earlier run's last settled estimate when it is usable.
  std::string model_hash;
  if (!cli.check && !host.persistence.file.empty()) {
    model_hash = NominalModelHash(pcfg);
    RestorePersistedEstimate(host.persistence, model_hash, *plug, *log);
  }
  plug->configure();
  if (cli.check) {  // everything below opens devices, shared memory and sockets
    std::printf("%s: configuration OK (%zu joints, %zu F/T cells, %s, %zu estimated link(s))\n",
                cli.config_path.c_str(), pcfg.drivers.joints.size(), pcfg.drivers.ft_cells.size(),
                pcfg.drivers.imu  ? "base IMU on CAN"
                : host.input_base ? "base state from the framework"
                                  : "no base source (fixed base)",
                plug->num_links());
    return 0;
  }

  // The shared-memory hand-off for controllers in other processes.
  std::unique_ptr<SharedHandOffSegment> shared;
  if (!host.shm.empty()) {
    shared = std::make_unique<SharedHandOffSegment>(host.shm, period_ms * 1'000'000);
    log->info("hand-off also in shared memory /dev/shm/{} (layout {})", host.shm,
              hal::kSharedHandOffLayout);
  }

  // The framework input segment: the controller framework's commands and, when configured, the
  // base state. heftd creates it; the framework (or the simulator's stand-in) writes it.
  std::unique_ptr<FrameworkInput> input;
  if (!host.input_name.empty()) {
    FrameworkInputLimits limits;
    limits.timeout_ns = static_cast<std::int64_t>(host.input_timeout * 1e9);
    input = std::make_unique<FrameworkInput>(host.input_name, limits);
    log->info("framework input: /dev/shm/{} (commands{})", host.input_name,
              host.input_base ? ", base state" : "");
  }

  // Backend, drivers, recorder.
  const dyn::Model model = dyn::LoadModelFromUrdfFile(
      pcfg.urdf_path, dyn::ModelOptions{pcfg.floating_base, pcfg.repair_inertia});
  const std::unique_ptr<Backend> backend = factory.Create(host, pcfg, model, *log);
  if (input) backend->AttachFrameworkInput(host.input_name);
  // heftd's own candump log of every received frame (host.candump): the driver thread only
  // queues them. A simulated robot's frames carry simulated time: stamped from the run's start.
  std::unique_ptr<CandumpTap> tap;
  if (!host.candump.empty()) {
    const std::int64_t epoch = backend->steps()
                                   ? std::chrono::duration_cast<std::chrono::seconds>(
                                         std::chrono::system_clock::now().time_since_epoch())
                                             .count() *
                                         1'000'000'000
                                   : 0;
    tap = std::make_unique<CandumpTap>(backend->buses(), pcfg.drivers.buses, host.candump,
                                       host.candump_rotation, epoch);
    log->info("candump log of the received frames: {} ({}, {})", host.candump,
              host.candump_rotation.append ? "appending" : "a new file",
              RotationText(host.candump_rotation));
  }
  const std::vector<hal::CanTransport*> buses = tap ? tap->buses() : backend->buses();
  drivers::DriverLoop loop(pcfg.drivers, buses, state);
  std::unique_ptr<StateRecorder> recorder =
      MakeRecorder(host.recording, pcfg, model.floating_base, log);
  drivers::BusSupervisor supervisor(loop, buses);
  Telemetry telemetry(host.telemetry, host.telemetry_rotation, *plug, *backend, log);
  if (telemetry.writing())
    log->info("telemetry: {} ({}, {})", host.telemetry,
              host.telemetry_rotation.append ? "appending" : "a new file",
              RotationText(host.telemetry_rotation));

  signal(SIGTERM, OnSignal);
  signal(SIGINT, OnSignal);
  plug->activate();

  Schedule schedule(*backend, loop, *plug, hand_off, recorder.get(), shared.get(), input.get(),
                    host.input_base,
                    ThreadSettings{host.priority, host.driver_cpus, host.control_cpus,
                                   host.lock_memory ? kPrefaultStackBytes : 0, period_ms},
                    log);

  // heftctl's socket: commands to the plugin, the status from the latest hand-off and counters.
  std::unique_ptr<CommandServer> server;
  std::atomic<bool> server_stop{false};
  std::thread server_thread;
  if (!host.control_socket.empty()) {
    auto status = [&]() {
      StatusSnapshot snap;
      hal::InertialEstimate latest;
      if (hand_off.read_latest(latest)) FillFromEstimate(latest, snap);
      drivers::DriverCounters c;
      if (schedule.driver_counters(c)) {
        snap.drivers.published = c.published;
        snap.drivers.rejected = c.rejected_total();
        snap.drivers.lost = c.lost_samples;
        snap.drivers.stale = c.stale_events;
      }
      if (input) {
        const FrameworkInputCounters ic = input->counters();
        snap.input.present = true;
        snap.input.state = input->state();
        snap.input.accepted = ic.accepted;
        snap.input.rejected = ic.rejected_total();
        snap.input.commands = ic.commands;
      }
      return snap;
    };
    server = std::make_unique<CommandServer>(
        CommandServerOptions{host.control_socket}, [&](plugin::Command c) { plug->command(c); },
        status);
    log->info("commands and status: {} (heftctl)", host.control_socket);
  }

  PeriodicReports reports(hand_off, schedule, supervisor, telemetry, tap.get(), pcfg.drivers.buses,
                          host.counters_period, log);
  schedule.Start(g_stop);
  std::unique_ptr<EstimatePersister> persister;
  if (!host.persistence.file.empty())
    persister = std::make_unique<EstimatePersister>(host.persistence, model_hash, hand_off, log);
  const std::int64_t t0 = schedule.start_ns();
  if (server) server_thread = std::thread([&] { server->Run(server_stop); });

  ServiceNotifier notifier;  // READY=1, and WATCHDOG=1 only while the control thread ticks
  notifier.Ready(Now());
  log->info("running: driver thread 1 kHz, control thread {:.0f} Hz ({} ms){}",
            1e3 / static_cast<double>(period_ms), period_ms,
            backend->steps() ? ", simulated robot" : "");
  std::int64_t last_progress = 0;
  bool stalled = false;
  while (!schedule.stopping()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    telemetry.Drain();
    reports.Poll(Now());
    if (const int restarted = supervisor.Poll(); restarted > 0)
      log->warn("drivers: restarted {} bus(es) on request (bus-off or interface down){}", restarted,
                backend->steps() ? fmt::format(" at simulated t ≈ {:.3f} s",
                                               1e-3 * static_cast<double>(schedule.ms_stepped()))
                                 : "");
    const std::int64_t now = Now();
    notifier.Poll(now, schedule.control_heartbeat_ns());
    if (notifier.stalled() != stalled) {
      stalled = notifier.stalled();
      if (stalled)
        log->error(
            "control thread: no tick for over 100 ms; watchdog keep-alives withheld (systemd "
            "restarts heftd after WatchdogSec)");
      else
        log->warn("control thread ticks again; watchdog keep-alives resumed");
    }
    if (backend->steps() && now - last_progress > 2'000'000'000) {
      log->info("progress: simulated {:.1f} / {:.1f} s ({:.1f}× real time)", backend->time(),
                backend->duration(), backend->time() / (1e-9 * static_cast<double>(now - t0)));
      last_progress = now;
    }
  }
  notifier.Stopping();
  server_stop.store(true, std::memory_order_release);
  if (server_thread.joinable()) server_thread.join();
  server.reset();
  schedule.Stop();
  plug->deactivate();
  if (persister) {
    persister->Stop();  // the last settled estimate, once more
    log->info("persisted estimate: {} write(s) to {}", persister->writes(), host.persistence.file);
  }
  telemetry.Drain();
  if (tap) tap->Close();
  const double wall = 1e-9 * static_cast<double>(Now() - t0);

  // Summary.
  const TickStats& stats = schedule.stats();
  log->info("stopped after {:.2f} s wall{}", wall,
            backend->steps() ? fmt::format(", {:.2f} s simulated ({:.1f}× real time)",
                                           backend->time(), backend->time() / wall)
                             : "");
  log->info(
      "control tick compute: median {:.1f} µs, 99.9th percentile {:.1f} µs, worst {:.1f} µs; "
      "overruns {}",
      1e-3 * Percentile(stats.compute_ns, 0.5), 1e-3 * Percentile(stats.compute_ns, 0.999),
      1e-3 * Percentile(stats.compute_ns, 1.0), stats.overruns);
  // The line tools/heft rt-check puts beside cyclictest's (same percentiles, same units).
  if (!schedule.lockstep())
    log->info(
        "control wake-up lateness: median {:.1f} µs, 99th {:.1f} µs, 99.9th {:.1f} µs, worst "
        "{:.1f} "
        "µs over {} ticks; overruns {} (CPU latency request: {})",
        1e-3 * Percentile(stats.lateness_ns, 0.5), 1e-3 * Percentile(stats.lateness_ns, 0.99),
        1e-3 * Percentile(stats.lateness_ns, 0.999), 1e-3 * Percentile(stats.lateness_ns, 1.0),
        stats.lateness_ns.size(), stats.overruns,
        cpu_latency && cpu_latency->ok() ? fmt::format("{} µs", host.cpu_dma_latency_us)
                                         : std::string("none"));
  if (!schedule.lockstep()) {
    const ControlCounters& c = stats.control;
    log->log(c.late > 0 || c.stale > 0 ? spdlog::level::warn : spdlog::level::info,
             "control thread starved: {} late ticks (a {} ms period or more; longest {:.1f} ms), "
             "{} periods skipped, {} ticks without a new driver sample (update() not called)",
             c.late, period_ms, 1e-6 * static_cast<double>(c.longest_ns), c.skipped, c.stale);
  }
  Json summary = SummarizeDrivers(*log, loop, pcfg, buses);
  backend->LogSummary(*log, pcfg.drivers.buses);
  backend->Summarize(summary, pcfg.drivers.buses);
  hal::InertialEstimate last;
  if (hand_off.read_latest(last)) {
    for (std::size_t k = 0; k < last.num_links; ++k)
      log->info(
          "hand-off {}: m = {:.3f} kg, c = ({:.4f}, {:.4f}, {:.4f}) m; updates gated {}, gate "
          "releases {}",
          last.links[k].name.data(), last.links[k].parameters[0],
          last.links[k].parameters[1] / last.links[k].parameters[0],
          last.links[k].parameters[2] / last.links[k].parameters[0],
          last.links[k].parameters[3] / last.links[k].parameters[0], last.status.gated,
          last.status.gate_releases);
  }
  if (telemetry.writing())
    log->info("telemetry: {} rows in {} ({} rotations)", telemetry.rows(), host.telemetry,
              telemetry.rotations());
  if (tap)
    log->log(tap->dropped() > 0 ? spdlog::level::warn : spdlog::level::info,
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
    (void)WriteSummary(*log, SummaryPath(host.telemetry), summary);
  }
  if (input) {
    const FrameworkInputCounters ic = input->counters();
    log->info("framework input: {} reads, {} accepted, {} refused, {} commands", ic.reads,
              ic.accepted, ic.rejected_total(), ic.commands);
  }
  shared.reset();
  // heft-sim's segment is private to its run; heftd's stays for the robot's framework.
  if (program.simulator && input) {
    input.reset();
    InputMapping::Unlink(host.input_name);
  }
  log->flush();
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

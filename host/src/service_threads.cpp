#include <signal.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "heft/host/status.hpp"
#include "service.hpp"

namespace heft::host {
namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) {
  g_stop.store(true);
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

}  // namespace

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

}  // namespace heft::host

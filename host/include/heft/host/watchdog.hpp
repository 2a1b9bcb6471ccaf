// heftd's notifications to systemd (Type=notify, WatchdogSec= in systemd/heftd.service): READY=1
// once the threads run, STOPPING=1 at the end, and WATCHDOG=1 keep-alives only while the control
// thread ticks — a hung control thread (a plugin stuck in update(), a dead lock) stops them, and
// systemd restarts the service after WatchdogSec. The main thread calls Poll() every loop with the
// control thread's heartbeat (Schedule::control_heartbeat_ns); nothing here runs on a real-time
// thread. Without a watchdog (systemd sets WATCHDOG_USEC for WatchdogSec=) no keep-alive is sent
// and nothing is watched (heft-sim, heftd run by hand); without NOTIFY_SOCKET sd_notify does
// nothing.
#pragma once

#include <cstdint>

namespace heft::host {

class ServiceNotifier {
 public:
  // `stall_ns`: a control thread whose latest tick is older is hung. The keep-alive interval is
  // half of systemd's watchdog timeout (WATCHDOG_USEC).
  explicit ServiceNotifier(std::int64_t stall_ns = 100'000'000);

  // READY=1, the first time only. `now_ns`: CLOCK_MONOTONIC; the control thread's first tick is
  // awaited from then on.
  void Ready(std::int64_t now_ns);
  // Sends WATCHDOG=1 if the interval has passed since the last one and the control thread ticked
  // within stall_ns (`control_heartbeat_ns`: its latest tick, 0 before the first). Returns true if
  // it sent one.
  bool Poll(std::int64_t now_ns, std::int64_t control_heartbeat_ns);
  void Stopping();

  [[nodiscard]] bool enabled() const noexcept { return enabled_; }
  [[nodiscard]] std::int64_t interval_ns() const noexcept { return interval_ns_; }
  [[nodiscard]] std::uint64_t keep_alives() const noexcept { return keep_alives_; }
  // Keep-alives withheld because the control thread was hung.
  [[nodiscard]] std::uint64_t withheld() const noexcept { return withheld_; }
  // True while the control thread is hung (from the last Poll).
  [[nodiscard]] bool stalled() const noexcept { return stalled_; }

 private:
  std::int64_t stall_ns_;
  std::int64_t interval_ns_ = 500'000'000;
  std::int64_t ready_ns_ = 0, last_sent_ns_ = 0;
  bool enabled_ = false, ready_ = false, stalled_ = false;
  std::uint64_t keep_alives_ = 0, withheld_ = 0;
};

}  // namespace heft::host

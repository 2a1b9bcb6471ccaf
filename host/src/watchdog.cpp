#include "heft/host/watchdog.hpp"

#include <systemd/sd-daemon.h>

#include <algorithm>

namespace heft::host {

ServiceNotifier::ServiceNotifier(std::int64_t stall_ns) : stall_ns_(stall_ns) {
  std::uint64_t usec = 0;
  enabled_ = sd_watchdog_enabled(0, &usec) > 0 && usec > 0;
  if (enabled_)
    interval_ns_ = std::max<std::int64_t>(static_cast<std::int64_t>(usec) * 1000 / 2, 1'000'000);
}

void ServiceNotifier::Ready(std::int64_t now_ns) {
  if (ready_) return;
  ready_ = true;
  ready_ns_ = now_ns;
  sd_notify(0, "READY=1");
}

bool ServiceNotifier::Poll(std::int64_t now_ns, std::int64_t control_heartbeat_ns) {
  if (!enabled_ || !ready_ || now_ns - last_sent_ns_ < interval_ns_) return false;
  // Before the control thread's first tick, the time since READY counts as its age.
  const std::int64_t beat = std::max(control_heartbeat_ns, ready_ns_);
  stalled_ = now_ns - beat > stall_ns_;
  if (stalled_) {
    ++withheld_;
    return false;
  }
  sd_notify(0, "WATCHDOG=1");
  last_sent_ns_ = now_ns;
  ++keep_alives_;
  return true;
}

void ServiceNotifier::Stopping() {
  sd_notify(0, "STOPPING=1");
}

}  // namespace heft::host

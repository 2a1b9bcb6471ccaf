#include "heft/host/periodic.hpp"

#include <fmt/format.h>
#include <systemd/sd-daemon.h>

#include <algorithm>

#include "heft/hal/enum_name.hpp"
#include "heft/host/candump_tap.hpp"
#include "heft/host/schedule.hpp"
#include "heft/host/status.hpp"
#include "heft/host/telemetry.hpp"

namespace heft::host {
namespace {

constexpr std::int64_t kStatusPeriodNs = 1'000'000'000;

// In hal::EstimatorState's declaration order; holding adds its reasons.
constexpr std::array<const char*, 5> kStateTexts{"disabled", "waiting for walking", "calibrating",
                                                 "estimating", "holding"};
static_assert(kStateTexts.size() == hal::EnumCount(hal::EstimatorState::kHolding));

std::string StateText(const hal::EstimatorStatus& s) {
  std::string text = hal::EnumName(s.state, kStateTexts, "unknown");
  if (s.state == hal::EstimatorState::kHolding) text += ": " + HoldReasonText(s.hold_reason);
  return text;
}

// "<total>" or "<total> (+<delta>)" when it grew.
std::string Count(std::uint64_t now, std::uint64_t before) {
  return now > before ? fmt::format("{} (+{})", now, now - before) : fmt::format("{}", now);
}

}  // namespace

std::string StatusText(const hal::InertialEstimate& e, bool have, std::uint64_t holds) {
  if (!have) return "starting";
  std::string text = StateText(e.status);
  const std::size_t n = std::min<std::size_t>(e.num_links, hal::kMaxEstimatedLinks);
  for (std::size_t k = 0; k < n; ++k) {
    std::array<char, hal::kLinkNameLength> name = e.links[k].name;
    name.back() = '\0';
    text += fmt::format("; {} {:.2f} kg", name.data(), e.links[k].parameters[0]);
  }
  return text + fmt::format("; holds {}, gated {}", holds, e.status.gated);
}

std::string CountersLine(const CounterSnapshot& now, const CounterSnapshot& before,
                         const std::vector<std::string>& bus_names, double seconds, bool& trouble) {
  const drivers::DriverCounters& d = now.drivers;
  const drivers::DriverCounters& b = before.drivers;
  trouble = d.rejected_total() > b.rejected_total() || d.lost_samples > b.lost_samples ||
            d.stale_events > b.stale_events;
  std::string line = fmt::format(
      "counters (last {:.0f} s): drivers {} samples published, {} frames rejected, {} lost "
      "samples, {} stale events",
      seconds, Count(d.published, b.published), Count(d.rejected_total(), b.rejected_total()),
      Count(d.lost_samples, b.lost_samples), Count(d.stale_events, b.stale_events));
  // Plausibility (drivers/README.md): only once something was detected, so that a clean run's
  // line stays as it was.
  if (d.torque_stuck_events > 0 || d.ft_saturated_samples > 0) {
    trouble = trouble || d.torque_stuck_events > b.torque_stuck_events ||
              d.ft_saturated_samples > b.ft_saturated_samples;
    line += fmt::format(", {} stuck torque sensors, {} saturated F/T samples",
                        Count(d.torque_stuck_events, b.torque_stuck_events),
                        Count(d.ft_saturated_samples, b.ft_saturated_samples));
  }
  for (std::size_t i = 0; i < now.buses.size(); ++i) {
    const drivers::BusCounters& c = now.buses[i];
    const drivers::BusCounters p =
        i < before.buses.size() ? before.buses[i] : drivers::BusCounters{};
    trouble = trouble || c.error_frames > p.error_frames || c.down_ticks > p.down_ticks;
    line += fmt::format(
        "; bus {}: {} frames, {} error frames ({} bus-off), {} ticks down, {} restart requests",
        i < bus_names.size() ? bus_names[i] : std::to_string(i), Count(c.frames, p.frames),
        Count(c.error_frames, p.error_frames), Count(c.bus_off, p.bus_off),
        Count(c.down_ticks, p.down_ticks), Count(c.restart_requests, p.restart_requests));
    if (c.degraded_events > 0)
      line += fmt::format(", degraded {} times by error-frame storms{}",
                          Count(c.degraded_events, p.degraded_events),
                          c.degraded ? " (now degraded)" : "");
  }
  line += fmt::format("; {} bus restarts", Count(now.restarts, before.restarts));
  // The control thread starved (real time): only once it happened, as the plausibility counters.
  const ControlCounters& c = now.control;
  const ControlCounters& p = before.control;
  if (c.late > 0 || c.stale > 0) {
    trouble = trouble || c.late > p.late || c.stale > p.stale;
    line += fmt::format(
        "; control thread {} late ticks (longest {:.1f} ms late), {} periods skipped, {} ticks "
        "without a new driver sample",
        Count(c.late, p.late), 1e-6 * static_cast<double>(c.longest_ns),
        Count(c.skipped, p.skipped), Count(c.stale, p.stale));
  }
  if (now.candump) {
    trouble = trouble || now.candump_dropped > before.candump_dropped;
    line += fmt::format("; candump log {} frames written, {} dropped",
                        Count(now.candump_written, before.candump_written),
                        Count(now.candump_dropped, before.candump_dropped));
  }
  return line;
}

PeriodicReports::PeriodicReports(plugin::HandOffMailbox& hand_off, const Schedule& schedule,
                                 const drivers::BusSupervisor& supervisor,
                                 const Telemetry& telemetry, const CandumpTap* tap,
                                 std::vector<std::string> bus_names, double counters_period,
                                 std::shared_ptr<spdlog::logger> log)
    : hand_off_(hand_off),
      schedule_(schedule),
      supervisor_(supervisor),
      telemetry_(telemetry),
      tap_(tap),
      bus_names_(std::move(bus_names)),
      counters_period_ns_(static_cast<std::int64_t>(counters_period * 1e9)),
      log_(std::move(log)) {
  before_.buses.resize(bus_names_.size());
  before_.candump = tap_ != nullptr;
}

CounterSnapshot PeriodicReports::Snapshot() const {
  CounterSnapshot s;
  s.drivers = before_.drivers;  // unchanged if the driver thread has published nothing yet
  (void)schedule_.driver_counters(s.drivers);
  s.buses = before_.buses;
  for (std::size_t b = 0; b < s.buses.size(); ++b)
    (void)schedule_.bus_counters(static_cast<int>(b), s.buses[b]);
  s.control = before_.control;
  (void)schedule_.control_counters(s.control);
  s.restarts = supervisor_.restarts();
  s.candump = tap_ != nullptr;
  if (tap_) {
    s.candump_written = tap_->written();
    s.candump_dropped = tap_->dropped();
  }
  return s;
}

void PeriodicReports::Poll(std::int64_t now) {
  if (next_status_ == 0) {  // the first call: the run starts
    next_status_ = now;
    last_counters_ = now;
    next_counters_ = now + counters_period_ns_;
  }
  if (now >= next_status_) {
    hal::InertialEstimate latest;
    const bool have = hand_off_.read_latest(latest);
    const std::string status = "STATUS=" + StatusText(latest, have, telemetry_.holds());
    sd_notify(0, status.c_str());
    next_status_ = now + kStatusPeriodNs;
  }
  if (counters_period_ns_ > 0 && now >= next_counters_) {
    const CounterSnapshot snap = Snapshot();
    bool trouble = false;
    const std::string line = CountersLine(
        snap, before_, bus_names_, 1e-9 * static_cast<double>(now - last_counters_), trouble);
    log_->log(trouble ? spdlog::level::warn : spdlog::level::info, "{}", line);
    before_ = snap;
    last_counters_ = now;
    next_counters_ = now + counters_period_ns_;
    ++counter_lines_;
  }
}

}  // namespace heft::host

// What the host reports while it runs, from its main (non-real-time) thread: the estimator's state
// and handed masses to systemd once a second (sd_notify STATUS=, shown by `systemctl status
// heftd`), and the drivers' and buses' counters in the log every host.counters_period seconds
// (at warning priority when a loss or error counter grew since the last line), not only at exit.
//
// The counters come from the driver thread's published snapshots (Schedule::driver_counters,
// Schedule::bus_counters): nothing here touches the real-time threads' own state.
#pragma once

#include <spdlog/logger.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "heft/drivers/driver_loop.hpp"
#include "heft/hal/inertial_estimate.hpp"
#include "heft/host/schedule.hpp"
#include "heft/plugin/controller_interface.hpp"

namespace heft::host {

class Telemetry;
class CandumpTap;

// "estimating; left_forearm 6.94 kg; holds 0, gated 3": the state (starting, disabled, waiting
// for walking, calibrating, estimating, holding: <reasons>), each link's handed mass, the times the
// estimator entered holding (`holds`) and its gated updates. `have`: an estimate was published.
std::string StatusText(const hal::InertialEstimate& estimate, bool have, std::uint64_t holds);

struct CounterSnapshot {
  drivers::DriverCounters drivers;
  std::vector<drivers::BusCounters> buses;  // drivers.buses order
  std::uint64_t restarts = 0;               // bus restarts by the supervisor
  std::uint64_t candump_written = 0, candump_dropped = 0;
  bool candump = false;     // host.candump is on
  ControlCounters control;  // the control thread starved (real time)
};

// One log line: totals and, in parentheses, what grew since `before`. `trouble` is set when frames
// were rejected, samples lost, channels went stale, error frames arrived, a bus was down, the
// candump log dropped frames or the control thread was late in that interval.
std::string CountersLine(const CounterSnapshot& now, const CounterSnapshot& before,
                         const std::vector<std::string>& bus_names, double seconds, bool& trouble);

class PeriodicReports {
 public:
  // `counters_period` s between counter lines (0: none); `tap` may be null.
  PeriodicReports(plugin::HandOffMailbox& hand_off, const Schedule& schedule,
                  const drivers::BusSupervisor& supervisor, const Telemetry& telemetry,
                  const CandumpTap* tap, std::vector<std::string> bus_names, double counters_period,
                  std::shared_ptr<spdlog::logger> log);
  // Called by the host's main loop (every 20 ms); reports what is due at `now_ns`
  // (CLOCK_MONOTONIC).
  void Poll(std::int64_t now_ns);
  // Counter lines logged so far.
  std::uint64_t counter_lines() const { return counter_lines_; }

 private:
  CounterSnapshot Snapshot() const;

  plugin::HandOffMailbox& hand_off_;
  const Schedule& schedule_;
  const drivers::BusSupervisor& supervisor_;
  const Telemetry& telemetry_;
  const CandumpTap* tap_;
  std::vector<std::string> bus_names_;
  std::int64_t counters_period_ns_;
  std::shared_ptr<spdlog::logger> log_;
  std::int64_t next_status_ = 0, next_counters_ = 0, last_counters_ = 0;
  CounterSnapshot before_;
  std::uint64_t counter_lines_ = 0;
};

}  // namespace heft::host

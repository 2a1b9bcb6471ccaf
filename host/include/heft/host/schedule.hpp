// The host's thread schedule: the 1 kHz driver thread (DriverLoop::Tick, the recorder's copy),
// the 333 Hz control thread (the plugin's update(), the shared-memory hand-off) and, for a stepping
// backend, its stepper thread (Backend::Step once per millisecond).
//
// Real time: absolute-time sleeps on CLOCK_MONOTONIC, SCHED_FIFO, a pre-faulted stack and each
// thread's CPU affinity when allowed;
// the stepper puts millisecond k's frames on the buses 0.2 ms before the driver tick of k.
// Lockstep (a stepping backend that asks for it): the "clock" is the simulated millisecond counter;
// the stepper publishes k, the driver thread ticks for it, the control thread runs on every third,
// and the stepper waits for both before k + 1 — same threads, buffer and plugin, deterministic and
// faster than real time.
//
// The driver, control and stepper loops never allocate, lock, throw or log (the statistics are
// reserved up front; a real-time set-up warning is logged before a loop starts).
#pragma once

#include <spdlog/logger.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "heft/drivers/driver_loop.hpp"
#include "heft/hal/seqlock_ring.hpp"
#include "heft/host/backend.hpp"
#include "heft/host/framework_input.hpp"
#include "heft/host/framework_joints.hpp"
#include "heft/host/recorder.hpp"
#include "heft/host/shared_memory.hpp"
#include "heft/plugin/controller_interface.hpp"

namespace heft::host {

// CLOCK_MONOTONIC in ns.
std::int64_t Now() noexcept;

// The control thread's default period (333 Hz), in the driver's 1 ms ticks. The period is the
// configuration's estimator.control_period, a whole number of milliseconds (ThreadSettings).
inline constexpr std::int64_t kControlPeriodMs = 3;

// The control thread starved (real time only; docs/reliability.md, "The control thread starved by
// a CPU hog"): a thread that wakes a period or more late runs one tick on the newest driver samples
// and skips the periods it missed, instead of running them back to back on the same samples (which
// fed one measurement to the filter tens of times); a tick whose driver thread published nothing
// since the previous tick does not call update() (the filter would take the same measurement
// twice).
struct ControlCounters {
  std::uint64_t late = 0;       // ticks that woke or computed later than one control period
  std::uint64_t skipped = 0;    // periods passed over after such a tick
  std::uint64_t stale = 0;      // ticks without a new driver sample: update() not called
  std::int64_t longest_ns = 0;  // the longest wake-up lateness
};

// Control-tick statistics: compute time of update() (+ hand-off publication) and, in real time,
// the wake-up lateness; one entry per tick up to the reserved count.
struct TickStats {
  std::vector<std::int64_t> compute_ns, lateness_ns;
  std::uint64_t overruns = 0;  // ticks that computed or woke up later than one control period
  std::uint64_t ticks = 0;     // control ticks run (the vectors hold the latest of them)
  ControlCounters control;     // overruns == control.late
};

// The control tick (ms since the clock's start, a multiple of the period `period_ms`) after tick
// `k`, the thread being `elapsed_ns` past the clock's start once `k` is done: k + period when it is
// still ahead, else the first multiple of the period ahead (a starved thread resumes on the
// schedule); `skipped` grows by the periods passed over.
std::int64_t NextControlTick(std::int64_t k, std::int64_t elapsed_ns, std::uint64_t& skipped,
                             std::int64_t period_ms = kControlPeriodMs) noexcept;
// The p-quantile (0..1) of `v`; 0 when empty.
double Percentile(std::vector<std::int64_t> v, double p);

struct ThreadSettings {
  int priority = 80;                                  // SCHED_FIFO (real time only)
  std::vector<int> driver_cpus;                       // the driver thread's affinity; empty: any
  std::vector<int> control_cpus;                      // the control thread's affinity; empty: any
  std::size_t prefault_stack_bytes = 0;               // touched on each real-time thread's start
  std::int64_t control_period_ms = kControlPeriodMs;  // estimator.control_period, whole ms
};

class Schedule {
 public:
  // `recorder`, `shared` and `input` may be null. With `input`, the driver thread reads the
  // framework input segment every millisecond: its commands go to the plugin, and its base state
  // to the driver loop when `input_base`. Nothing runs before Start().
  Schedule(Backend& backend, drivers::DriverLoop& loop, plugin::ControllerInterface& plugin,
           plugin::HandOffMailbox& hand_off, StateRecorder* recorder, SharedHandOffSegment* shared,
           FrameworkInput* input, bool input_base, ThreadSettings settings,
           std::shared_ptr<spdlog::logger> log);
  ~Schedule();  // Stop()
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;

  // Before Start(): the driver thread reads the framework's joint-state segment every millisecond
  // and hands its joints and wrenches to the driver loop (drivers.joints_from: framework).
  void SetFrameworkJoints(FrameworkJoints* joints) noexcept { joints_ = joints; }

  // Starts the threads and, once each is set up, the clock (start_ns()); they run until `stop` is
  // set or the stepping backend's duration is over.
  void Start(const std::atomic<bool>& stop);
  // True once stop was requested or the backend's run is over.
  bool stopping() const noexcept;
  // Ends the run and joins the threads (idempotent).
  void Stop();

  bool lockstep() const noexcept { return lockstep_; }
  std::int64_t start_ns() const noexcept { return t0_; }
  // Milliseconds the stepper has published so far (0 without a stepping backend).
  std::int64_t ms_stepped() const noexcept { return ms_ready_.load(std::memory_order_relaxed); }
  // CLOCK_MONOTONIC at the end of the control thread's latest tick (0 before the first): what the
  // systemd watchdog is fed from (any thread).
  std::int64_t control_heartbeat_ns() const noexcept {
    return control_heartbeat_ns_.load(std::memory_order_acquire);
  }
  // After Stop().
  const TickStats& stats() const noexcept { return stats_; }
  // The drivers' counters as the driver thread last published them (any thread).
  bool driver_counters(drivers::DriverCounters& out) const noexcept {
    return driver_counters_.read_latest(out);
  }
  // Bus `b`'s counters as the driver thread last published them (any thread).
  bool bus_counters(int b, drivers::BusCounters& out) const noexcept {
    return b >= 0 && static_cast<std::size_t>(b) < bus_counters_.size() &&
           bus_counters_[static_cast<std::size_t>(b)]->read_latest(out);
  }
  // The control thread's counters as it last published them (any thread).
  bool control_counters(ControlCounters& out) const noexcept {
    return control_counters_.read_latest(out);
  }

 private:
  void DriverThread();
  void ControlThread();
  void StepperThread();
  void RealtimeSetup(const char* thread, const std::vector<int>& cpus);
  // Each thread, once set up: counts itself ready and waits for Start() to start the clock.
  void WaitForStart();

  Backend& backend_;
  drivers::DriverLoop& loop_;
  plugin::ControllerInterface& plugin_;
  plugin::HandOffMailbox& hand_off_;
  StateRecorder* recorder_;
  SharedHandOffSegment* shared_;
  FrameworkInput* input_;
  const bool input_base_;
  hal::BaseSample input_sample_;  // driver thread
  FrameworkJoints* joints_ = nullptr;
  hal::RobotStateSample joints_sample_;  // driver thread: the framework's joints and wrenches
  hal::SeqlockRing<drivers::DriverCounters, 2> driver_counters_;
  std::vector<std::unique_ptr<hal::SeqlockRing<drivers::BusCounters, 2>>> bus_counters_;
  hal::SeqlockRing<ControlCounters, 2> control_counters_;
  ThreadSettings settings_;
  std::shared_ptr<spdlog::logger> log_;
  const bool lockstep_;
  const std::int64_t total_ms_;
  const std::atomic<bool>* stop_ = nullptr;
  std::atomic<std::int64_t> ms_ready_{0}, ms_driven_{0}, ms_controlled_{0};
  std::atomic<bool> done_{false};
  std::atomic<int> threads_ready_{0};
  std::atomic<bool> started_{false};
  std::atomic<std::int64_t> control_heartbeat_ns_{0};
  std::int64_t t0_ = 0;
  TickStats stats_;
  std::thread driver_, control_, stepper_;
};

}  // namespace heft::host

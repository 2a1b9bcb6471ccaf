// What a backend gives the host (host.hpp): the robot's side of heftd and heft-sim.
//
//   - CAN transports, one per drivers.buses entry, which the driver loop reads at 1 kHz and the
//     bus supervisor restarts;
//   - whether it steps: a stepping backend (the simulated robot) has a per-millisecond step hook
//     that the schedule (schedule.hpp) calls from a thread of its own, and it may run the host's
//     threads in lockstep on its simulated time instead of the clock; a non-stepping one (the
//     robot's SocketCAN buses) just delivers frames in real time;
//   - optional extra telemetry columns and values (the simulator's truth) and summary lines.
//
// The floating base's state is not the backend's: the drivers decode it from the base IMU's frames
// on the buses (drivers.imu) — on the simulated robot too, whose IMU sends them.
//
// Lifecycle: constructed at set-up (may allocate, open, throw); buses() and the telemetry column
// names are read before the threads start; Step() runs on the stepper thread, which only a
// simulator has — noexcept, and it should not allocate, lock or log either (it paces the driver
// thread in lockstep); TelemetryValues() runs on the host's non-real-time thread; LogSummary() and
// Summarize() after the threads have stopped.
#pragma once

#include <spdlog/logger.h>

#include <cstdint>
#include <string>
#include <vector>

#include "heft/hal/can.hpp"
#include "heft/hal/robot_state.hpp"
#include "heft/host/json.hpp"
#include "heft/plugin/controller_interface.hpp"

namespace heft::host {

// What a step hook may touch: the plugin's hand-off (the latest estimate, what a whole-body
// controller reads). Commands reach the plugin only the way a robot's framework sends them: through
// the framework input segment (AttachFrameworkInput), never by calling the plugin.
struct StepContext {
  plugin::HandOffMailbox& hand_off;
  std::int64_t control_period_ms;  // the control thread ticks at every multiple of it
};

class Backend {
 public:
  virtual ~Backend() = default;

  // The buses in drivers.buses order; the backend owns them and outlives the driver loop's use.
  virtual std::vector<hal::CanTransport*> buses() = 0;

  // True for a backend with a step hook (Step() once per millisecond, on the schedule's stepper
  // thread, just before the driver tick of that millisecond).
  virtual bool steps() const noexcept { return false; }
  // True when the host's threads wait for Step() instead of the clock (needs steps()).
  virtual bool lockstep() const noexcept { return false; }
  // Seconds a stepping backend runs before the host stops; 0: until SIGTERM.
  virtual double duration() const noexcept { return 0.0; }
  // Millisecond k (1, 2, ...), on the stepper thread.
  virtual void Step(std::int64_t /*k*/, StepContext& /*context*/) noexcept {}
  // Simulated seconds so far (progress and summary lines of a stepping backend).
  virtual double time() const noexcept { return 0.0; }

  // Set-up: the name of the framework input segment heftd created (/dev/shm/<name>), for a backend
  // that plays the robot's controller framework (the simulator: its commands, e.g. "walking").
  virtual void AttachFrameworkInput(const std::string& /*name*/) {}
  // Set-up: the name of the framework joint-state segment heftd created (drivers.joints_from:
  // framework), for a backend that plays the framework owning the joints (the simulator).
  virtual void AttachFrameworkJoints(const std::string& /*name*/) {}

  // Telemetry extras. Per estimated link, after its handed and estimated π: columns
  // "<link>_<suffix>" for each suffix; then, at the end of the row, `ExtraColumns()`.
  virtual std::vector<std::string> LinkColumns() const { return {}; }
  virtual std::vector<std::string> ExtraColumns() const { return {}; }
  // The values for the row of control tick `t_ns`: link_values[LinkColumns().size() * link + i]
  // and extra_values[i], both already sized. Non-real-time thread.
  virtual void TelemetryValues(std::int64_t /*t_ns*/, std::vector<double>& /*link_values*/,
                               std::vector<double>& /*extra_values*/) {}

  // Lines after the host's own summary (names: drivers.buses).
  virtual void LogSummary(spdlog::logger& /*log*/, const std::vector<std::string>& /*bus_names*/) {}
  // The same counters into the run summary's JSON (run_summary.hpp), after LogSummary(): members
  // of summary["buses"]["<bus>"] and groups of its own.
  virtual void Summarize(Json& /*summary*/, const std::vector<std::string>& /*bus_names*/) {}
};

}  // namespace heft::host

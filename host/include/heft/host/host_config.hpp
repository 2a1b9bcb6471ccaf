// The host's part of heft's configuration: `backend:` and the `host:` section (schema:
// config/README.md; keys: schema.hpp). Read by host::LoadConfiguration; heftd's and heft-sim's
// command line (heft/host/command_line.hpp) overrides a few of them. Set-up only: everything
// here throws config::ConfigError naming file, line and key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heft/config/yaml.hpp"
#include "heft/drivers/rotating_file.hpp"
#include "heft/host/host_defaults.hpp"

namespace heft::host {

// host.persistence: the last settled estimate kept across restarts (heft/host/persistence.hpp).
struct PersistenceConfig {
  std::string file;                    // empty: off (heft-sim's default)
  double max_age = 600.0;              // s: an older file is not used
  double interval = 5.0;               // s: at most one write per interval
  double covariance_inflation = 10.0;  // the persisted covariance × this at start
};

// host.recording: {enabled: bool (default true), path: FILE}. Absent: no recording.
struct RecordingConfig {
  bool enabled = false;
  std::string path;
};

struct HostConfig {
  std::string backend = "simulated";  // `backend:` simulated | socketcan (who runs it: the program)
  std::string plugin;                 // host.plugin; empty: found next to the executable
  std::string telemetry;              // host.telemetry(.path): CSV path; empty: none
  drivers::RotationPolicy telemetry_rotation;  // host.telemetry: {max_bytes, keep, append}
  std::string candump;                         // host.candump.path: received frames; empty: none
  drivers::RotationPolicy candump_rotation;    // host.candump: {max_bytes, keep, append}
  double counters_period = 60.0;  // host.counters_period: s between counter lines; 0: at exit only
  std::string log_file;           // rotating log; empty: console only
  std::string shm;                // shared-memory hand-off name (/dev/shm/<shm>), empty: none
  double duration = 0.0;          // s (simulated time, heft-sim); 0: the backend's
  int priority = 80;              // SCHED_FIFO priority of the driver and control threads
  std::vector<int> cpus;          // host.realtime.cpus: both threads' CPU affinity; empty: any
  std::vector<int> driver_cpus, control_cpus;  // per thread (default: `cpus`)
  bool lock_memory = true;                     // mlockall, pre-faulted heap and stacks
  int cpu_dma_latency_us = 0;  // /dev/cpu_dma_latency held at this while running; -1: no request
  bool allow_root = false;     // host.allow_root / --allow-root: heftd runs as uid 0 only then
  // host.framework_input: the controller framework's input segment (hal/framework_input.h):
  // its commands always, the floating base's state when `input_base`.
  std::string input_name;   // /dev/shm/<name>; empty: none
  bool input_base = false;  // the base state comes from the framework (robots without drivers.imu)
  double input_timeout = 0.02;  // s: older stamp, or a sequence frozen this long: stale
  // host.framework_joints: the framework's joint-state segment (hal/framework_joints.h), opened
  // when drivers.joints_from or drivers.ft_cells_from is `framework`.
  std::string joints_name;       // /dev/shm/<name>
  double joints_timeout = 0.02;  // s: older stamp, or a sequence frozen this long: stale
  std::string control_socket;    // host.control_socket: heftctl's socket; empty: none
  PersistenceConfig persistence;
  RecordingConfig recording;  // host.recording: the raw state at 1 kHz (heft/host/recorder.hpp)
};

// Program defaults: host_defaults.hpp.

// The backend and the `host:` section of `root`. host.realtime.cpus entries must exist on this
// machine.
// `simulator`: heft-sim's defaults instead of heftd's.
HostConfig ParseHostConfig(const config::Node& root, bool simulator = false);

}  // namespace heft::host

#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include "heft/hal/model_identity.hpp"
#include "heft/host/logging.hpp"
#include "service.hpp"

namespace heft::host {
namespace {

std::string RotationText(const drivers::RotationPolicy& r) {
  return r.max_bytes == 0 ? std::string("never rotated")
                          : fmt::format("rotated at {} bytes, {} kept", r.max_bytes, r.keep);
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

}  // namespace

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

}  // namespace heft::host

// heftd: the host that runs heft standalone — reads the configuration, loads the estimator plugin
// with dlopen, runs the 1 kHz driver thread and the 333 Hz control thread, serves bus restarts,
// writes telemetry and logs from a non-real-time thread, talks to systemd (Type=notify, watchdog),
// and stops cleanly on SIGTERM/SIGINT.
//
// Backends: `simulated` (the default: a MuJoCo scenario whose sensors arrive as CAN frames on
// in-memory buses) and `socketcan` (the robot's buses). With the simulated backend the threads run
// either in real time (absolute-time sleeps) or in lockstep on simulated time (same threads, same
// buffer, same plugin; each thread waits for its turn instead of the clock — deterministic and
// faster than real time, for CI and the main job).
#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "heft/drivers/driver_loop.hpp"
#include "heft/drivers/socketcan_transport.hpp"
#include "heft/hal/shared_hand_off.hpp"
#include "heft/hal/spsc_queue.hpp"
#include "heft/plugin/controller_interface.hpp"
#include "heft/plugin/plugin_config.hpp"
#include "recorder.hpp"
#include "sim_backend.hpp"

#ifndef HEFT_PLUGIN_INSTALL_PATH  // set by cmake/HeftInstall.cmake
#error "HEFT_PLUGIN_INSTALL_PATH (the installed plugin's absolute path) is not defined"
#endif

namespace heft::host {
namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) {
  g_stop.store(true);
}

std::int64_t Now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Lockstep hand-over between the host's threads: spin briefly, then yield in short sleeps. (Not
// std::atomic::wait: GCC 12's libstdc++ loses wake-ups there under this pattern.)
template <typename Stop>
bool WaitFor(const std::atomic<std::int64_t>& value, std::int64_t target, Stop stop) {
  for (int i = 0; value.load(std::memory_order_acquire) < target; ++i) {
    if (stop()) return false;
    if (i < 64)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  return true;
}

void SleepUntil(std::int64_t t) {
  timespec ts{static_cast<time_t>(t / 1'000'000'000), static_cast<long>(t % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

struct HostConfig {
  std::string backend = "simulated";
  std::string plugin;
  std::string telemetry;
  std::string log_file;
  std::string shm;  // shared-memory hand-off name (/dev/shm/<shm>), empty: none
  bool lockstep = true;
  double duration = 0.0;  // s of simulated time; 0: the scenario's
  int priority = 80;
  std::vector<int> cpus;
  bool lock_memory = true;
  double walking_after = 0.5;
  SimOptions sim;
  std::vector<std::string> fault_names;   // per fault: the joint, F/T frame or bus it hits
  std::vector<config::Node> fault_nodes;  // per fault: where it is written (for errors)
};

// One entry of simulation.faults (schema: config/README.md). Names are resolved later, against
// the drivers' joints, F/T frames and buses.
SimFault ParseFault(const config::Node& f, std::string& name) {
  using K = SimFault::Kind;
  static constexpr K kinds[] = {K::kEncoder, K::kTorque, K::kForceTorque, K::kCrc,
                                K::kLoss,    K::kBurst,  K::kBusOff};
  SimFault fault;
  fault.kind =
      kinds[f.Enum("device", {"encoder", "torque", "ft", "crc", "loss", "burst", "bus_off"})];
  constexpr config::Range kTime{0.0, 1e6};
  switch (fault.kind) {
    case K::kCrc:
      f.AllowOnly({"device", "from", "to"});
      break;
    case K::kLoss:
      f.AllowOnly({"device", "name", "probability", "from", "to"});
      break;
    case K::kBurst:
      f.AllowOnly({"device", "name", "from", "to", "repeat", "period"});
      break;
    default:
      f.AllowOnly({"device", "name", "from", "to"});
  }
  if (fault.kind == K::kLoss) {
    fault.probability = f.Get<double>("probability", {0.0, 1.0});
    fault.from = f.Get<double>("from", 0.0, kTime);
    fault.to = f.Get<double>("to", kTime.max, kTime);
    name = f.Get<std::string>("name", std::string(), {});  // empty: every bus
  } else {
    fault.from = f.Get<double>("from", kTime);
    fault.to = f.Get<double>("to", kTime);
    if (fault.kind != K::kCrc) name = f.Get<std::string>("name");
  }
  if (fault.to <= fault.from) f["to"].Fail(fmt::format("must be after from ({:g} s)", fault.from));
  if (fault.kind == K::kBurst) {
    fault.repeat = f.Get<int>("repeat", 1, {1, 1000000});
    if (fault.repeat > 1) {
      fault.period = f.Get<double>("period", kTime);
      if (fault.period <= fault.to - fault.from)
        f["period"].Fail(fmt::format(
            "back-to-back bursts must start further apart than one burst lasts ({:g} s)",
            fault.to - fault.from));
    } else if (f.Has("period")) {
      f["period"].Fail("only with repeat > 1");
    }
  }
  return fault;
}

HostConfig ParseHost(const config::Node& root) {
  HostConfig h;
  root.AllowOnly({"robot", "drivers", "estimator", "backend", "host", "simulation"});
  h.backend = root.Enum("backend", {"simulated", "socketcan"}, "simulated") == 0 ? "simulated"
                                                                                 : "socketcan";
  if (auto n = root.Optional("host")) {
    n->AllowOnly({"plugin", "telemetry", "log_file", "shm", "realtime", "recording"});
    h.shm = n->Get<std::string>("shm", std::string(), {});
    if (h.shm.find('/') != std::string::npos) (*n)["shm"].Fail("a shared-memory name has no '/'");
    h.plugin = n->Get<std::string>("plugin", std::string(), {});
    h.telemetry = n->Get<std::string>("telemetry", std::string(), {});
    h.log_file = n->Get<std::string>("log_file", std::string(), {});
    if (auto rt = n->Optional("realtime")) {
      rt->AllowOnly({"priority", "cpus", "lock_memory"});
      h.priority = rt->Get<int>("priority", 80, {1, 99});
      h.lock_memory = rt->Get<bool>("lock_memory", true, {});
      if (auto cpus = rt->Optional("cpus"))
        for (const auto& c : cpus->Elements()) h.cpus.push_back(c.As<int>({0, 1023}));
    }
  }
  if (auto s = root.Optional("simulation")) {
    s->AllowOnly({"scenario", "adaptation", "duration_scale", "lockstep", "seed", "walking_after",
                  "noise", "faults", "candump"});
    h.sim.scenario = s->Get<std::string>("scenario");
    const auto names = scenarios::ScenarioNames();
    if (std::find(names.begin(), names.end(), h.sim.scenario) == names.end()) {
      std::string allowed;
      for (const auto& n : names) allowed += (allowed.empty() ? "" : ", ") + n;
      (*s)["scenario"].Fail("unknown scenario '" + h.sim.scenario + "'; allowed: " + allowed);
    }
    h.sim.adaptation = s->Get<bool>("adaptation", true, {});
    h.sim.duration_scale = s->Get<double>("duration_scale", 1.0, {0.001, 100.0});
    h.lockstep = s->Get<bool>("lockstep", true, {});
    h.sim.seed = static_cast<std::uint64_t>(s->Get<int>("seed", 1, {0, 1 << 30}));
    h.walking_after = s->Get<double>("walking_after", 0.5, {0.0, 60.0});
    h.sim.candump = s->Get<std::string>("candump", std::string(), {});
    if (auto faults = s->Optional("faults")) {
      for (const config::Node& f : faults->Elements()) {
        std::string name;
        h.sim.faults.push_back(ParseFault(f, name));
        // Devices and buses by name, resolved against the drivers once they are read.
        h.fault_names.push_back(name);
        h.fault_nodes.push_back(f);
      }
    }
    if (auto n = s->Optional("noise")) {
      n->AllowOnly({"joint_torque", "torque_bias", "velocity", "force", "moment", "force_bias"});
      h.sim.noise.joint_torque =
          n->Get<double>("joint_torque", h.sim.noise.joint_torque, {0.0, 100.0});
      h.sim.noise.torque_bias =
          n->Get<double>("torque_bias", h.sim.noise.torque_bias, {-100.0, 100.0});
      h.sim.noise.velocity = n->Get<double>("velocity", h.sim.noise.velocity, {0.0, 10.0});
      h.sim.noise.force = n->Get<double>("force", h.sim.noise.force, {0.0, 1000.0});
      h.sim.noise.moment = n->Get<double>("moment", h.sim.noise.moment, {0.0, 100.0});
      h.sim.noise.force_bias =
          n->Get<double>("force_bias", h.sim.noise.force_bias, {-1000.0, 1000.0});
    }
  } else if (h.backend == "simulated") {
    root["simulation"];  // throws: missing required key
  }
  return h;
}

// The plugin, loaded with dlopen and checked for its interface version.
class LoadedPlugin {
 public:
  explicit LoadedPlugin(const std::string& path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw std::runtime_error("cannot load the plugin " + path + ": " + dlerror());
    version_ = reinterpret_cast<std::uint32_t (*)()>(dlsym(handle_, "heft_plugin_api_version"));
    create_ = reinterpret_cast<decltype(create_)>(dlsym(handle_, "heft_plugin_create"));
    destroy_ = reinterpret_cast<decltype(destroy_)>(dlsym(handle_, "heft_plugin_destroy"));
    if (!version_ || !create_ || !destroy_)
      throw std::runtime_error(path + " is not a heft plugin (entry points missing)");
    char error[256] = "";
    controller_ = create_(plugin::kApiVersion, error, sizeof(error));
    if (!controller_) throw std::runtime_error(path + ": " + error);
  }
  ~LoadedPlugin() {
    if (controller_) destroy_(controller_);
    if (handle_) dlclose(handle_);
  }
  plugin::ControllerInterface& operator*() { return *controller_; }
  plugin::ControllerInterface* operator->() { return controller_; }

 private:
  void* handle_ = nullptr;
  std::uint32_t (*version_)() = nullptr;
  plugin::ControllerInterface* (*create_)(std::uint32_t, char*, std::size_t) = nullptr;
  void (*destroy_)(plugin::ControllerInterface*) = nullptr;
  plugin::ControllerInterface* controller_ = nullptr;
};

// Real-time set-up: says clearly what it could not get.
void RealtimeSetup(const HostConfig& h, const char* thread, std::shared_ptr<spdlog::logger> log) {
  sched_param sp{};
  sp.sched_priority = h.priority;
  if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0)
    log->warn(
        "{}: SCHED_FIFO priority {} refused ({}); running with normal scheduling — give the "
        "service "
        "CAP_SYS_NICE / LimitRTPRIO for real-time behaviour",
        thread, h.priority, std::strerror(errno));
  if (!h.cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : h.cpus) CPU_SET(c, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
      log->warn("{}: CPU affinity refused ({})", thread, std::strerror(errno));
  }
}

struct TickStats {
  std::vector<std::int64_t> compute_ns, lateness_ns;
  std::uint64_t overruns = 0;
};

double Percentile(std::vector<std::int64_t> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(
      std::min<double>(static_cast<double>(v.size() - 1), p * static_cast<double>(v.size())));
  return static_cast<double>(v[i]);
}

// simulation.faults[i].name → joint, F/T cell or bus index (drivers order).
void ResolveFaultNames(HostConfig& host, const drivers::DriverConfig& d) {
  using K = SimFault::Kind;
  for (std::size_t i = 0; i < host.sim.faults.size(); ++i) {
    SimFault& f = host.sim.faults[i];
    const std::string& name = host.fault_names[i];
    if (f.kind == K::kCrc) continue;
    if (f.kind == K::kLoss && name.empty()) {
      f.device = -1;  // every bus
      continue;
    }
    std::vector<std::string> candidates;
    const char* what = "a joint of drivers.joints";
    if (f.kind == K::kForceTorque) {
      for (const auto& c : d.ft_cells) candidates.push_back(c.frame);
      what = "an F/T frame of drivers.ft_cells";
    } else if (f.kind == K::kLoss || f.kind == K::kBurst || f.kind == K::kBusOff) {
      candidates = d.buses;
      what = "a bus of drivers.buses";
    } else {
      for (const auto& j : d.joints) candidates.push_back(j.joint);
    }
    const auto it = std::find(candidates.begin(), candidates.end(), name);
    if (it == candidates.end()) {
      std::string allowed;
      for (const auto& c : candidates) allowed += (allowed.empty() ? "" : ", ") + c;
      host.fault_nodes[i]["name"].Fail("'" + name + "' is not " + what + "; allowed: " +
                                       (allowed.empty() ? std::string("none") : allowed));
    }
    f.device = static_cast<int>(it - candidates.begin());
  }
}

int Run(int argc, char** argv) {
  std::string config_path;
  double duration_override = -1.0;
  std::string telemetry_override, shm_override;
  int lockstep_override = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--config")
      config_path = next();
    else if (a == "--duration")
      duration_override = std::stod(next());
    else if (a == "--telemetry")
      telemetry_override = next();
    else if (a == "--shm")
      shm_override = next();
    else if (a == "--realtime")
      lockstep_override = 0;
    else if (a == "--lockstep")
      lockstep_override = 1;
    else if (a == "--help" || a == "-h") {
      std::printf(
          "usage: heftd --config FILE [--duration S] [--telemetry FILE.csv] [--shm NAME] "
          "[--lockstep|--realtime]\n");
      return 0;
    } else {
      throw std::invalid_argument("unknown argument '" + a + "' (see --help)");
    }
  }
  if (config_path.empty()) throw std::invalid_argument("--config FILE is required (see --help)");

  const config::Document doc = config::Document::Load(config_path);
  HostConfig host = ParseHost(doc.root());
  if (duration_override >= 0) host.duration = duration_override;
  if (!telemetry_override.empty()) host.telemetry = telemetry_override;
  if (!shm_override.empty()) host.shm = shm_override;
  if (lockstep_override >= 0) host.lockstep = lockstep_override == 1;
  const plugin::PluginConfig pcfg =
      plugin::LoadPluginConfig(config_path);  // validates drivers vs URDF

  std::vector<spdlog::sink_ptr> sinks{std::make_shared<spdlog::sinks::stdout_color_sink_mt>()};
  if (!host.log_file.empty())
    sinks.push_back(
        std::make_shared<spdlog::sinks::rotating_file_sink_mt>(host.log_file, 10 * 1024 * 1024, 5));
  auto log = std::make_shared<spdlog::logger>("heftd", sinks.begin(), sinks.end());
  log->flush_on(spdlog::level::warn);
  log->info("configuration {} ({} backend, {})", config_path, host.backend,
            host.backend == "simulated"
                ? (host.lockstep ? "lockstep on simulated time" : "real time")
                : "real time");

  if (host.lock_memory && mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
    log->warn("mlockall refused ({}): memory may page — give the service LimitMEMLOCK=infinity",
              std::strerror(errno));

  hal::StateBuffer state;
  plugin::HandOffMailbox hand_off;
  std::string plugin_path = host.plugin;
  if (plugin_path.empty()) {
    // A build tree's heftd (bin/heftd) takes the plugin built next to it; an installed one the
    // plugin at its installed path (set at build time from CMAKE_INSTALL_PREFIX).
    const auto self = std::filesystem::read_symlink("/proc/self/exe").parent_path();
    for (const std::filesystem::path& candidate :
         {self / "../heft_estimator_plugin.so", std::filesystem::path(HEFT_PLUGIN_INSTALL_PATH)})
      if (plugin_path.empty() && std::filesystem::exists(candidate))
        plugin_path = std::filesystem::canonical(candidate).string();
    if (plugin_path.empty())
      throw std::runtime_error("heft_estimator_plugin.so is neither next to heftd nor at " +
                               std::string(HEFT_PLUGIN_INSTALL_PATH) + "; set host.plugin");
  }
  LoadedPlugin plug(plugin_path);
  plug->init(config_path, plugin::HardwareInterface{&state, &hand_off});
  plug->configure();
  log->info("plugin {} loaded from {}: estimating {} link(s)", plug->name(), plugin_path,
            plug->num_links());

  // The shared-memory hand-off for controllers in other processes (layout:
  // hal/shared_hand_off.hpp).
  hal::SharedHandOff* shared = nullptr;
  if (!host.shm.empty()) {
    const std::string name = "/" + host.shm;
    const int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0644);
    if (fd < 0 || ftruncate(fd, sizeof(hal::SharedHandOff)) != 0)
      throw std::runtime_error("shared memory " + name + ": " + std::strerror(errno));
    void* p = mmap(nullptr, sizeof(hal::SharedHandOff), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
      throw std::runtime_error("shared memory " + name + ": mmap: " + std::strerror(errno));
    shared = new (p) hal::SharedHandOff();
    shared->header.writer_pid = static_cast<std::uint32_t>(getpid());
    log->info("hand-off also in shared memory /dev/shm/{} (layout {})", host.shm,
              hal::kSharedHandOffLayout);
  }

  // Backend.
  const dyn::Model model = dyn::LoadModelFromUrdfFile(
      pcfg.urdf_path, dyn::ModelOptions{pcfg.floating_base, pcfg.repair_inertia});
  std::unique_ptr<SimulatedRobot> sim;
  std::vector<std::unique_ptr<drivers::SocketCanTransport>> sockets;
  std::vector<hal::CanTransport*> buses;
  if (host.backend == "simulated") {
    ResolveFaultNames(host, pcfg.drivers);
    host.sim.candump_wait = host.lockstep;  // real time: a full log queue drops, never waits
    sim = std::make_unique<SimulatedRobot>(host.sim, pcfg.drivers, model);
    buses = sim->buses();
    if (host.duration <= 0.0) host.duration = sim->duration();
    log->info("simulated robot: scenario {} ({}), adaptation {}, {:.1f} s", host.sim.scenario,
              sim->scenario().description, host.sim.adaptation ? "on" : "off", host.duration);
  } else {
    for (const auto& name : pcfg.drivers.buses) {
      sockets.push_back(std::make_unique<drivers::SocketCanTransport>(name));
      buses.push_back(sockets.back().get());
    }
  }
  drivers::DriverLoop loop(pcfg.drivers, buses, state);
  std::unique_ptr<host::StateRecorder> recorder =
      host::MakeRecorder(doc.root(), pcfg, model.floating_base, log);
  drivers::BusSupervisor supervisor(loop, buses);

  // Telemetry: plugin records (+ truth when simulated), written by this (non-real-time) thread.
  struct Truth {
    std::int64_t t_ns;
    std::array<double, 10 * hal::kMaxEstimatedLinks> pi;
    std::array<double, 4> errors;
  };
  hal::SpscQueue<Truth, 8192> truth_queue;
  std::ofstream csv;
  if (!host.telemetry.empty()) {
    csv.open(host.telemetry);
    if (!csv) throw std::runtime_error("cannot write the telemetry file " + host.telemetry);
    csv << "t,stamp,state,model,tick_status,nis,gamma,consistent,rate_limited,hold_reason,"
           "calibration,compute_us";
    for (std::size_t k = 0; k < plug->num_links(); ++k) {
      const std::string n = plug->link_name(k);
      for (const char* q : {"m", "hx", "hy", "hz", "ixx", "ixy", "ixz", "iyy", "iyz", "izz"})
        csv << ',' << n << "_" << q;
      for (const char* q : {"m", "hx", "hy", "hz", "ixx", "ixy", "ixz", "iyy", "iyz", "izz"})
        csv << ',' << n << "_est_" << q;
      if (sim)
        for (const char* q : {"m", "hx", "hy", "hz", "ixx", "ixy", "ixz", "iyy", "iyz", "izz"})
          csv << ',' << n << "_true_" << q;
    }
    if (sim)
      for (const auto& e : sim->scenario().controller->task_error_names()) csv << ',' << e;
    csv << '\n';
  }

  signal(SIGTERM, OnSignal);
  signal(SIGINT, OnSignal);
  plug->activate();

  // Threads. In lockstep the "clock" is the simulated millisecond counter `ms`: the producer (sim)
  // publishes ms, the driver thread ticks for it, the control thread runs on every third.
  std::atomic<std::int64_t> ms_ready{0}, ms_driven{0}, ms_controlled{0};
  std::atomic<bool> done{false};
  const auto total_ms = static_cast<std::int64_t>(std::llround(host.duration * 1000.0));
  TickStats stats;
  stats.compute_ns.reserve(static_cast<std::size_t>(total_ms / 3 + 16));
  stats.lateness_ns.reserve(static_cast<std::size_t>(total_ms / 3 + 16));
  const std::int64_t t0 = Now();
  const bool lockstep = sim && host.lockstep;
  auto stopping = [&] { return g_stop.load() || done.load(); };

  std::thread driver([&] {
    if (!lockstep) RealtimeSetup(host, "driver thread", log);
    for (std::int64_t k = 1; !stopping(); ++k) {
      if (lockstep) {
        if (!WaitFor(ms_ready, k, stopping)) return;
      } else {
        SleepUntil(t0 + k * 1'000'000);
      }
      const hal::BaseSample* base = sim ? &sim->base() : nullptr;
      loop.Tick(lockstep ? k * 1'000'000 : Now(), base);
      if (recorder) recorder->OnDriverTick(loop.last_sample());
      ms_driven.store(k, std::memory_order_release);
    }
  });
  std::thread control([&] {
    if (!lockstep) RealtimeSetup(host, "control thread", log);
    for (std::int64_t k = 3;; k += 3) {
      std::int64_t wake = 0;
      if (lockstep) {
        if (!WaitFor(ms_driven, k, stopping)) return;
      } else {
        if (stopping()) return;
        SleepUntil(t0 + k * 1'000'000);
        wake = Now() - (t0 + k * 1'000'000);
      }
      const std::int64_t start = Now();
      plug->update(lockstep ? k * 1'000'000 : Now(), 3'000'000);
      if (shared) {
        hal::InertialEstimate latest;
        if (hand_off.read_latest(latest)) shared->ring.publish(latest);
      }
      const std::int64_t spent = Now() - start;
      if (stats.compute_ns.size() < stats.compute_ns.capacity()) {
        stats.compute_ns.push_back(spent);
        stats.lateness_ns.push_back(wake);
      }
      if (spent > 3'000'000 || wake > 3'000'000) ++stats.overruns;
      ms_controlled.store(k, std::memory_order_release);
    }
  });
  std::thread producer;
  if (sim) {
    producer = std::thread([&] {
      hal::InertialEstimate estimate;
      bool walking_sent = false;  // once, at the first millisecond at or past walking_after
      for (std::int64_t k = 1; k <= total_ms && !g_stop.load(); ++k) {
        if (!lockstep)
          SleepUntil(t0 + k * 1'000'000 - 200'000);  // frames land just before the driver tick
        const bool fresh = k % 3 == 1 && hand_off.read_latest(estimate);
        sim->Step(fresh ? &estimate : nullptr);
        if (!walking_sent && static_cast<double>(k) * 1e-3 >= host.walking_after) {
          plug->command(plugin::Command::kRobotWalking);
          walking_sent = true;
        }
        if (k % 3 == 0) {
          Truth tr{};
          tr.t_ns = k * 1'000'000;
          const Eigen::VectorXd pi = sim->TruePayload();
          for (int i = 0;
               i < std::min<int>(static_cast<int>(pi.size()), static_cast<int>(tr.pi.size())); ++i)
            tr.pi[i] = pi[i];
          const auto errors = sim->task_errors();
          for (std::size_t e = 0; e < std::min<std::size_t>(errors.size(), 4); ++e)
            tr.errors[e] = errors[e];
          truth_queue.push(tr);
        }
        ms_ready.store(k, std::memory_order_release);
        if (lockstep) {
          // Wait for the driver (and, every third millisecond, the controller) before the next
          // step.
          const auto interrupted = [&] { return g_stop.load(); };
          if (!WaitFor(ms_driven, k, interrupted)) break;
          if (k % 3 == 0 && !WaitFor(ms_controlled, k, interrupted)) break;
        }
      }
      done.store(true);
    });
  }

  sd_notify(0, "READY=1");
  log->info("running: driver thread 1 kHz, control thread 333 Hz{}",
            sim ? ", simulated robot" : "");
  plugin::TelemetryRecord rec;
  Truth truth{};
  bool have_truth = false;
  std::int64_t last_progress = 0, last_watchdog = 0;
  std::uint64_t rows = 0;
  hal::EstimatorState last_state = hal::EstimatorState::kInactive;
  auto drain = [&] {
    while (plug->pop_telemetry(rec)) {
      if (rec.status.state != last_state) {
        static const char* names[] = {"inactive", "wait-for-walking", "calibrating-bias",
                                      "estimating", "holding"};
        log->info("estimator: {} → {} at t = {:.3f} s{}", names[static_cast<int>(last_state)],
                  names[static_cast<int>(rec.status.state)],
                  1e-9 * static_cast<double>(rec.time_ns),
                  rec.status.state == hal::EstimatorState::kHolding
                      ? fmt::format(" (hold reason 0x{:x})", rec.status.hold_reason)
                      : "");
        last_state = rec.status.state;
      }
      if (!csv.is_open()) continue;
      while (sim && (!have_truth || truth.t_ns < rec.time_ns) && truth_queue.pop(truth))
        have_truth = true;
      csv << 1e-9 * static_cast<double>(rec.time_ns) << ','
          << 1e-9 * static_cast<double>(rec.stamp_ns) << ',' << static_cast<int>(rec.status.state)
          << ',' << static_cast<int>(rec.status.model) << ',' << static_cast<int>(rec.tick_status)
          << ',' << rec.status.last_nis << ',' << rec.gamma << ',' << rec.estimate_consistent << ','
          << rec.rate_limited << ',' << rec.status.hold_reason << ',' << rec.calibration_progress
          << ',' << 1e-3 * static_cast<double>(rec.compute_ns);
      for (std::size_t k = 0; k < rec.num_links; ++k) {
        for (double v : rec.handed[k]) csv << ',' << v;
        for (double v : rec.estimate[k]) csv << ',' << v;
        if (sim)
          for (int i = 0; i < 10; ++i)
            csv << ',' << (k < sim->scenario().payloads.size() ? truth.pi[10 * k + i] : 0.0);
      }
      if (sim)
        for (std::size_t e = 0; e < sim->scenario().controller->task_error_names().size(); ++e)
          csv << ',' << (e < 4 ? truth.errors[e] : 0.0);
      csv << '\n';
      ++rows;
    }
  };
  while (!stopping()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    drain();
    if (const int restarted = supervisor.Poll(); restarted > 0)
      log->warn("drivers: restarted {} bus(es) on request (bus-off or interface down){}", restarted,
                sim ? fmt::format(" at simulated t ≈ {:.3f} s",
                                  1e-3 * static_cast<double>(ms_ready.load()))
                    : "");
    const std::int64_t now = Now();
    if (now - last_watchdog > 500'000'000) {
      sd_notify(0, "WATCHDOG=1");
      last_watchdog = now;
    }
    if (sim && now - last_progress > 2'000'000'000) {
      log->info("progress: simulated {:.1f} / {:.1f} s ({:.1f}× real time)", sim->time(),
                host.duration, sim->time() / (1e-9 * static_cast<double>(now - t0)));
      last_progress = now;
    }
  }
  sd_notify(0, "STOPPING=1");
  done.store(true);
  if (producer.joinable()) producer.join();
  driver.join();
  control.join();
  plug->deactivate();
  drain();
  const double wall = 1e-9 * static_cast<double>(Now() - t0);

  // Summary.
  const auto& c = loop.counters();
  log->info(
      "stopped after {:.2f} s wall{}", wall,
      sim ? fmt::format(", {:.2f} s simulated ({:.1f}× real time)", sim->time(), sim->time() / wall)
          : "");
  log->info(
      "control tick compute: median {:.1f} µs, 99.9th percentile {:.1f} µs, worst {:.1f} µs; "
      "overruns {}",
      1e-3 * Percentile(stats.compute_ns, 0.5), 1e-3 * Percentile(stats.compute_ns, 0.999),
      1e-3 * Percentile(stats.compute_ns, 1.0), stats.overruns);
  if (!lockstep)
    log->info(
        "control wake-up lateness: median {:.1f} µs, 99.9th {:.1f} µs, worst {:.1f} µs (no "
        "real-time kernel here)",
        1e-3 * Percentile(stats.lateness_ns, 0.5), 1e-3 * Percentile(stats.lateness_ns, 0.999),
        1e-3 * Percentile(stats.lateness_ns, 1.0));
  log->info("drivers: {} samples published, {} frames rejected, {} lost samples, {} stale events",
            c.published, c.rejected_total(), c.lost_samples, c.stale_events);
  {  // Per channel: the ones that lost most, and those not ok at the end.
    struct Lost {
      std::uint32_t n;
      std::string channel;
    };
    std::vector<Lost> lost;
    int not_ok = 0;
    const hal::RobotStateSample& last_sample = loop.last_sample();
    auto add = [&](const hal::ChannelHealth& health, const std::string& channel) {
      if (health.lost_samples > 0) lost.push_back({health.lost_samples, channel});
      not_ok += !health.ok();
    };
    for (std::size_t i = 0; i < pcfg.drivers.joints.size(); ++i) {
      add(last_sample.joints[i].encoder, pcfg.drivers.joints[i].joint + " encoder");
      add(last_sample.joints[i].torque_sensor, pcfg.drivers.joints[i].joint + " torque");
    }
    for (std::size_t k = 0; k < pcfg.drivers.ft_cells.size(); ++k)
      add(last_sample.wrenches[k].health, pcfg.drivers.ft_cells[k].frame);
    std::sort(lost.begin(), lost.end(), [](const Lost& a, const Lost& b) { return a.n > b.n; });
    std::string most;
    for (std::size_t i = 0; i < std::min<std::size_t>(lost.size(), 3); ++i)
      most += fmt::format("{}{} {}", i ? ", " : "", lost[i].channel, lost[i].n);
    log->info("channels: {} not ok at the end, {} with lost samples{}", not_ok, lost.size(),
              lost.empty() ? std::string() : "; most: " + most);
  }
  for (int b = 0; b < loop.num_buses(); ++b) {
    const drivers::BusCounters& bc = loop.bus(b);
    log->info(
        "bus {}: {} frames, {} error frames ({} bus-off), {} ticks down, {} restart requests, {} "
        "restarts",
        pcfg.drivers.buses[b], bc.frames, bc.error_frames, bc.bus_off, bc.down_ticks,
        bc.restart_requests, buses[b]->stats().restarts);
  }
  if (sim) {
    for (std::size_t b = 0; b < sim->bus_counters().size(); ++b) {
      const SimBusCounters& sc = sim->bus_counters()[b];
      log->info(
          "simulated bus {}: {} frames put on the bus; lost {} at random, {} in bursts, {} while "
          "off; {} bus-off events",
          pcfg.drivers.buses[b], sc.frames, sc.lost_random, sc.lost_burst, sc.lost_bus_off,
          sc.bus_off);
    }
    if (sim->candump()) {
      sim->CloseCandump();
      log->info("candump log: {} frames in {} ({} left out: queue full)", sim->candump()->written(),
                sim->candump()->path(), sim->candump()->dropped());
    }
  }
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
  if (csv.is_open()) log->info("telemetry: {} rows in {}", rows, host.telemetry);
  if (shared) {
    munmap(shared, sizeof(hal::SharedHandOff));
    shm_unlink(("/" + host.shm).c_str());
  }
  log->flush();
  return 0;
}

}  // namespace
}  // namespace heft::host

int main(int argc, char** argv) {
  try {
    return heft::host::Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heftd: %s\n", e.what());
    return 2;
  }
}

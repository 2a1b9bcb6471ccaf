#include "heft/host/host_config.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "heft/config/schema.hpp"

namespace heft::host {
namespace {

// host.telemetry / host.candump: a path, or {path, max_bytes, keep, append}.
void ParseRotatingFile(const config::Node& host, const char* key, std::string& path,
                       drivers::RotationPolicy& rotation) {
  const auto n = host.Optional(key);
  if (!n) return;
  if (!n->IsMap()) {
    path = n->As<std::string>();
    return;
  }
  n->AllowOnly(config::schema::kHostRotatingFile);
  path = n->Get<std::string>("path");
  if (path.empty()) (*n)["path"].Fail("a file path is needed (leave the key out for no file)");
  rotation.max_bytes = static_cast<std::uint64_t>(
      n->Get<double>("max_bytes", static_cast<double>(rotation.max_bytes), {0.0, 1e15}));
  if (rotation.max_bytes > 0 && rotation.max_bytes < 1024)
    (*n)["max_bytes"].Fail("at least 1024 bytes per file (0: never rotate)");
  rotation.keep = n->Get<int>("keep", rotation.keep, {0, 1000});
  rotation.append = n->Get<bool>("append", rotation.append, {});
}

// host.realtime.<key>: a list of CPUs this machine has (online or not): an affinity to a CPU
// beyond them is refused at start-up rather than silently ignored by the kernel. Absent: `cpus`
// kept.
void ParseCpus(const config::Node& realtime, const char* key, std::vector<int>& cpus) {
  const auto list = realtime.Optional(key);
  if (!list) return;
  const long configured = sysconf(_SC_NPROCESSORS_CONF);
  const int n_cpus = configured > 0 ? static_cast<int>(std::min(configured, 1024L)) : 1024;
  cpus.clear();
  for (const auto& c : list->Elements()) {
    const int cpu = c.As<int>({0, 1023});
    if (cpu >= n_cpus)
      c.Fail(fmt::format("CPU {} does not exist: this machine has {} CPU(s); allowed: 0 to {}", cpu,
                         n_cpus, n_cpus - 1));
    cpus.push_back(cpu);
  }
}

}  // namespace

HostConfig ParseHostConfig(const config::Node& root, bool simulator) {
  HostConfig h;
  h.input_name = simulator ? fmt::format("heft-sim-{}", getpid()) : kDefaultInputName;
  h.joints_name = simulator ? fmt::format("heft-sim-joints-{}", getpid()) : kDefaultJointsName;
  h.control_socket = simulator ? std::string() : std::string(kDefaultCommandSocket);
  h.telemetry_rotation = {kDefaultMaxBytes, kDefaultKeep, !simulator};
  h.candump_rotation = {kDefaultMaxBytes, kDefaultKeep, !simulator};
  h.persistence.file = simulator ? std::string() : std::string(kDefaultPersistenceFile);
  h.backend = root.Enum("backend", {"simulated", "socketcan"}, "simulated") == 0 ? "simulated"
                                                                                 : "socketcan";
  if (auto n = root.Optional("host")) {
    n->AllowOnly(config::schema::kHost);
    if (auto ps = n->Optional("persistence")) {
      PersistenceConfig& p = h.persistence;
      ps->AllowOnly(config::schema::kHostPersistence);
      p.file = ps->Get<std::string>("file", p.file, {});
      p.max_age = ps->Get<double>("max_age", p.max_age, {0.0, 1e9});
      p.interval = ps->Get<double>("interval", p.interval, {0.1, 3600.0});
      p.covariance_inflation =
          ps->Get<double>("covariance_inflation", p.covariance_inflation, {1.0, 1e6});
    }
    if (auto in = n->Optional("framework_input")) {
      in->AllowOnly(config::schema::kHostFrameworkInput);
      h.input_name = in->Get<std::string>("name", h.input_name, {});
      if (h.input_name.find('/') != std::string::npos || h.input_name.size() > 200)
        (*in)["name"].Fail("a shared-memory name has no '/' and at most 200 characters");
      h.input_base = in->Get<bool>("base", h.input_base, {});
      h.input_timeout = 1e-3 * in->Get<double>("timeout_ms", 1e3 * h.input_timeout, {1.0, 1000.0});
    }
    if (auto js = n->Optional("framework_joints")) {
      js->AllowOnly(config::schema::kHostFrameworkJoints);
      h.joints_name = js->Get<std::string>("name", h.joints_name, {});
      if (h.joints_name.empty() || h.joints_name.find('/') != std::string::npos ||
          h.joints_name.size() > 200)
        (*js)["name"].Fail("a shared-memory name has 1 to 200 characters and no '/'");
      h.joints_timeout =
          1e-3 * js->Get<double>("timeout_ms", 1e3 * h.joints_timeout, {1.0, 1000.0});
    }
    if (n->Has("control_socket")) {
      h.control_socket = n->Get<std::string>("control_socket", std::string(), {});
      // sockaddr_un's sun_path holds 107 characters and the terminating NUL.
      if (h.control_socket.size() > 107)
        (*n)["control_socket"].Fail("a socket path has at most 107 characters");
    }
    h.shm = n->Get<std::string>("shm", h.shm, {});
    if (h.shm.find('/') != std::string::npos) (*n)["shm"].Fail("a shared-memory name has no '/'");
    h.plugin = n->Get<std::string>("plugin", h.plugin, {});
    ParseRotatingFile(*n, "telemetry", h.telemetry, h.telemetry_rotation);
    ParseRotatingFile(*n, "candump", h.candump, h.candump_rotation);
    h.counters_period = n->Get<double>("counters_period", h.counters_period, {0.0, 86400.0});
    h.allow_root = n->Get<bool>("allow_root", h.allow_root, {});
    h.log_file = n->Get<std::string>("log_file", h.log_file, {});
    if (auto r = n->Optional("recording")) {
      r->AllowOnly(config::schema::kHostRecording);
      h.recording.enabled = r->Get<bool>("enabled", true, {});  // the section asks for it
      h.recording.path = r->Get<std::string>("path");
      if (h.recording.path.empty()) (*r)["path"].Fail("a file name is required");
    }
    if (auto rt = n->Optional("realtime")) {
      rt->AllowOnly(config::schema::kHostRealtime);
      h.priority = rt->Get<int>("priority", h.priority, {1, 99});
      h.lock_memory = rt->Get<bool>("lock_memory", h.lock_memory, {});
      h.cpu_dma_latency_us =
          rt->Get<int>("cpu_dma_latency_us", h.cpu_dma_latency_us, {-1, 10'000'000});
      ParseCpus(*rt, "cpus", h.cpus);
      h.driver_cpus = h.cpus;
      h.control_cpus = h.cpus;
      ParseCpus(*rt, "driver_cpus", h.driver_cpus);
      ParseCpus(*rt, "control_cpus", h.control_cpus);
    }
  }
  return h;
}

}  // namespace heft::host

// heft's estimator plugin inside a controller framework's own loop (C++20, built against the
// installed heft-dev: tools/examples/CMakeLists.txt). The framework owns the robot, its threads and
// its state; heft is a plugin it loads and ticks, as ros2_control ticks a controller:
//
//   hardware thread (1 kHz)  the framework's own hardware layer fills hal::StateBuffer, one
//                            hal::RobotStateSample per millisecond (here: a simulated robot
//                            standing still, the simplest layer that keeps every channel valid);
//   control thread (333 Hz)  calls the plugin's update() and reads the hand-off right after it,
//                            where a whole-body controller would take the estimated link;
//   main thread              loads the plugin (dlopen + heft_plugin_create with the interface
//                            version it was built against), drives its lifecycle (init, configure,
//                            activate ... deactivate), sends `walking` and checks the result.
//
// No heftd runs: the plugin reads its sections (robot, drivers, estimator) from the configuration
// file itself. The state sample's joints and wrenches are in the file's drivers.joints and
// drivers.ft_cells order.
//
// usage: heft-plugin-host-example [--plugin SO] [--config YAML] [--seconds S] [--joints N]
//                                 [--wrenches N] [--fixed-base] [--foot-force N]
// Exit status 0 when the estimator ran (the hand-off reached `estimating`, was updated at 333 Hz
// and stayed finite), 1 when it did not, 2 for a usage error.
#include <dlfcn.h>
#include <time.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "heft/hal/state_buffer.hpp"
#include "heft/plugin/controller_interface.hpp"

#ifndef HEFT_EXAMPLE_PLUGIN
#define HEFT_EXAMPLE_PLUGIN "heft_estimator_plugin.so"
#endif
#ifndef HEFT_EXAMPLE_CONFIG
#define HEFT_EXAMPLE_CONFIG "/etc/heft/heft.yaml"
#endif

namespace {

using heft::hal::ChannelState;
using heft::plugin::ControllerInterface;

std::int64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void SleepUntil(std::int64_t t_ns) {
  const timespec ts{static_cast<time_t>(t_ns / 1'000'000'000),
                    static_cast<long>(t_ns % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

// The plugin's shared library and the controller it creates (destroyed by the library's own
// heft_plugin_destroy, before the library is closed).
class Plugin {
 public:
  explicit Plugin(const std::string& path) : handle_(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (handle_ == nullptr) throw std::runtime_error(std::string("dlopen: ") + dlerror());
    using Version = std::uint32_t (*)();
    using Create = ControllerInterface* (*)(std::uint32_t, char*, std::size_t);
    auto version = reinterpret_cast<Version>(dlsym(handle_, "heft_plugin_api_version"));
    auto create = reinterpret_cast<Create>(dlsym(handle_, "heft_plugin_create"));
    destroy_ = reinterpret_cast<Destroy>(dlsym(handle_, "heft_plugin_destroy"));
    if (version == nullptr || create == nullptr || destroy_ == nullptr)
      throw std::runtime_error(path + " is not a heft plugin (no heft_plugin_* entry points)");
    char error[256] = {};
    controller_ = create(heft::plugin::kApiVersion, error, sizeof(error));
    if (controller_ == nullptr)
      throw std::runtime_error(path + ": " + error + " (plugin interface " +
                               std::to_string(version()) + ", this framework " +
                               std::to_string(heft::plugin::kApiVersion) + ")");
  }
  ~Plugin() {
    if (controller_ != nullptr) destroy_(controller_);
    if (handle_ != nullptr) dlclose(handle_);
  }
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;
  ControllerInterface& operator*() const { return *controller_; }
  ControllerInterface* operator->() const { return controller_; }

 private:
  using Destroy = void (*)(ControllerInterface*);
  void* handle_;
  Destroy destroy_ = nullptr;
  ControllerInterface* controller_ = nullptr;
};

struct Options {
  std::string plugin = HEFT_EXAMPLE_PLUGIN;
  std::string config = HEFT_EXAMPLE_CONFIG;
  double seconds = 3.0;
  int joints = 29;  // the reference humanoid's drivers.joints
  int wrenches = 2;
  bool floating_base = true;
  double foot_force = 350.0;  // N along each cell's z: half the robot's weight, roughly
};

// The framework's hardware layer, simulated: every joint at rest at zero, each foot cell pressed
// by foot_force along its z, the base level and still (an IMU at rest reads +g up). Every channel
// is fresh and valid; a real layer copies its drivers' readings and their health here.
class StandingRobot {
 public:
  explicit StandingRobot(const Options& o) {
    sample_.num_joints = static_cast<std::uint16_t>(o.joints);
    sample_.num_wrenches = static_cast<std::uint16_t>(o.wrenches);
    sample_.has_base = o.floating_base;
    for (int j = 0; j < o.joints; ++j) {
      sample_.joints[static_cast<std::size_t>(j)].encoder.state = ChannelState::kOk;
      sample_.joints[static_cast<std::size_t>(j)].torque_sensor.state = ChannelState::kOk;
    }
    for (int k = 0; k < o.wrenches; ++k) {
      auto& w = sample_.wrenches[static_cast<std::size_t>(k)];
      w.wrench = {0.0, 0.0, o.foot_force, 0.0, 0.0, 0.0};
      w.health.state = ChannelState::kOk;
    }
    sample_.base.specific_force = {0.0, 0.0, 9.81};
    sample_.base.has_specific_force = true;
    sample_.base.health.state = ChannelState::kOk;
  }
  // One millisecond's sample (the hardware thread: no allocation).
  const heft::hal::RobotStateSample& Read(std::int64_t stamp_ns) noexcept {
    ++sample_.sequence;
    sample_.stamp_ns = stamp_ns;
    return sample_;
  }

 private:
  heft::hal::RobotStateSample sample_;
};

// What the whole-body controller saw of the hand-off (written by the control thread only).
struct ControllerView {
  std::uint64_t ticks = 0, late = 0;
  heft::hal::InertialEstimate last;
  bool finite = true;
};

bool Finite(const heft::hal::InertialEstimate& e) {
  for (std::size_t k = 0; k < e.num_links; ++k)
    for (double x : e.links[k].parameters)
      if (!std::isfinite(x)) return false;
  return true;
}

// Control thread: update() every 3 ms on absolute deadlines, then the hand-off, read directly.
void ControlLoop(ControllerInterface& plugin, const heft::plugin::HandOffMailbox& hand_off,
                 std::int64_t t0, std::int64_t end, ControllerView& view) {
  constexpr std::int64_t kPeriod = 3'000'000;
  for (std::int64_t t = t0 + kPeriod; t < end; t += kPeriod) {
    SleepUntil(t);
    (void)plugin.update(MonotonicNs(), kPeriod);
    if (hand_off.read_latest(view.last)) view.finite = view.finite && Finite(view.last);
    if (MonotonicNs() - t > kPeriod) ++view.late;
    ++view.ticks;
  }
}

// Hardware thread: one sample per millisecond into the state buffer (its only writer).
void HardwareLoop(StandingRobot& robot, heft::hal::StateBuffer& state, std::int64_t t0,
                  std::int64_t end) {
  for (std::int64_t t = t0; t < end; t += 1'000'000) {
    SleepUntil(t);
    state.publish(robot.Read(t));
  }
}

int Usage(const char* why) {
  std::fprintf(stderr,
               "%s\nusage: heft-plugin-host-example [--plugin SO] [--config YAML] [--seconds S] "
               "[--joints N] [--wrenches N] [--fixed-base] [--foot-force N]\n",
               why);
  return 2;
}

bool Parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--fixed-base") {
      o.floating_base = false;
      continue;
    }
    if (i + 1 >= argc) return false;
    const char* v = argv[++i];
    if (a == "--plugin")
      o.plugin = v;
    else if (a == "--config")
      o.config = v;
    else if (a == "--seconds")
      o.seconds = std::atof(v);
    else if (a == "--joints")
      o.joints = std::atoi(v);
    else if (a == "--wrenches")
      o.wrenches = std::atoi(v);
    else if (a == "--foot-force")
      o.foot_force = std::atof(v);
    else
      return false;
  }
  return o.seconds > 0.0 && o.seconds <= 3600.0 && o.joints >= 0 &&
         o.joints <= static_cast<int>(heft::hal::kMaxJoints) && o.wrenches >= 0 &&
         o.wrenches <= static_cast<int>(heft::hal::kMaxWrenchSensors);
}

// The verdict: the estimator ran through its lifecycle and the controller saw it.
int Report(const ControllerView& view, double seconds, const ControllerInterface& plugin) {
  const auto& st = view.last.status;
  const double expected = seconds * 1000.0 / 3.0;
  std::printf(
      "%llu control ticks in %.1f s (%llu late); hand-off: state %u, %llu updates, "
      "%llu gated\n",
      static_cast<unsigned long long>(view.ticks), seconds,
      static_cast<unsigned long long>(view.late), static_cast<unsigned>(st.state),
      static_cast<unsigned long long>(st.updates), static_cast<unsigned long long>(st.gated));
  for (std::size_t k = 0; k < view.last.num_links; ++k)
    std::printf("  %s: mass %.3f kg\n", plugin.link_name(k), view.last.links[k].parameters[0]);
  bool ok = true;
  if (st.state != heft::hal::EstimatorState::kEstimating) {
    std::printf("FAIL: the estimator is not estimating (state %u, hold reason 0x%x)\n",
                static_cast<unsigned>(st.state), st.hold_reason);
    ok = false;
  }
  if (st.updates == 0 || !view.finite || view.last.num_links == 0) {
    std::printf("FAIL: no filter update reached the hand-off, or a non-finite one did\n");
    ok = false;
  }
  if (std::abs(static_cast<double>(view.ticks) - expected) > 0.05 * expected + 2.0) {
    std::printf("FAIL: %llu control ticks, expected %.0f at 333 Hz\n",
                static_cast<unsigned long long>(view.ticks), expected);
    ok = false;
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!Parse(argc, argv, opt)) return Usage("bad arguments");
  // Large (64 samples of 64 joints): off the stack. The framework owns both buffers.
  auto state = std::make_unique<heft::hal::StateBuffer>();
  auto hand_off = std::make_unique<heft::plugin::HandOffMailbox>();
  try {
    Plugin plugin(opt.plugin);
    // Set-up (may allocate and throw): the plugin reads the file, builds its model, checks it.
    plugin->init(opt.config, heft::plugin::HardwareInterface{state.get(), hand_off.get(), nullptr});
    plugin->configure();  // publishes the nominal parameters: the controller has them from now on
    std::printf("plugin %s from %s: %zu estimated link(s)\n", plugin->name(), opt.plugin.c_str(),
                plugin->num_links());
    StandingRobot robot(opt);
    const std::int64_t t0 = MonotonicNs() + 10'000'000;
    const std::int64_t end = t0 + static_cast<std::int64_t>(opt.seconds * 1e9);
    plugin->activate();
    plugin->command(heft::plugin::Command::kRobotWalking);  // the robot stands on its feet
    ControllerView view;
    std::thread hardware([&] { HardwareLoop(robot, *state, t0, end); });
    std::thread control([&] { ControlLoop(*plugin, *hand_off, t0, end, view); });
    hardware.join();
    control.join();
    plugin->deactivate();
    return Report(view, opt.seconds, *plugin);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heft-plugin-host-example: %s\n", e.what());
    return 1;
  }
}

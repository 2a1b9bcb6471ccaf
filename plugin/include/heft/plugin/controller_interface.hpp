// heft's plugin interface, in the manner of ros2_control's controllers: the host (the robot's
// controller framework, or heftd) loads a shared library, checks its interface version through a
// C entry point and drives the returned controller through a lifecycle:
//
//   init(config, hardware)   take the host's validated configuration (hardware.config) or read
//                            the file `config`, build the model, allocate everything; throws
//                            PluginError with a message naming file/key/value
//   start_from(estimate)     optional, before configure(): start from a persisted estimate
//   configure()              set-up that needs the hardware (e.g. wait for the first state sample)
//   activate()               enter the real-time regime
//   update(time, period)     every control period (333 Hz): never allocates, locks, throws or logs
//   deactivate()             leave the real-time regime
//
// command() may be called from any thread (it only sets atomic flags read by update()).
// pop_telemetry() is for one non-real-time consumer thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "heft/hal/inertial_estimate.hpp"
#include "heft/hal/seqlock_ring.hpp"
#include "heft/hal/state_buffer.hpp"

namespace heft::plugin {

// 2: start_from; 3: HardwareInterface::config; 4: the calibration's outcome in TelemetryRecord;
// 5: its timeout and the friction joints it counts of.
inline constexpr std::uint32_t kApiVersion = 5;

// The wait-free hand-off to the whole-body controller (latest estimate; depth for history).
using HandOffMailbox = hal::SeqlockRing<hal::InertialEstimate, 8>;

struct PluginConfig;  // heft/config/plugin_config.hpp

// What the host lends the plugin: the hardware abstraction layer's buffers and, from a host that
// has read the configuration (heftd, heft-sim: host::LoadConfiguration), the plugin's part of
// it. Without it (a framework that only names the file) init() reads the file itself.
struct HardwareInterface {
  const hal::StateBuffer* state = nullptr;  // written by the 1 kHz driver thread
  HandOffMailbox* hand_off = nullptr;       // read by the whole-body controller
  const PluginConfig* config = nullptr;  // robot, drivers, estimator, validated; copied by init()
};

enum class Command : std::uint8_t {
  kRobotWalking,  // the robot is on the ground and walking: estimation may start
  kRobotStopped,  // back to waiting (e.g. hoisted)
  kEnable,
  kDisable,  // hand on nominal parameters, no estimation
  kReset,    // restart from nominal, recalibrate
};

enum class UpdateResult : std::uint8_t { kOk, kError };

// One record per update(), for telemetry (trivially copyable).
struct TelemetryRecord {
  std::int64_t time_ns = 0;   // update time
  std::int64_t stamp_ns = 0;  // time of the state sample the estimate used (after the delay)
  std::uint64_t tick = 0;
  hal::EstimatorStatus status;
  std::uint8_t tick_status = 0;  // estimator::TickStatus
  bool estimate_consistent = true;
  bool rate_limited = false;
  double gamma = 0.0;
  double calibration_progress = 0.0;
  // The last calibration (zeros before one): whether it timed out (no still window within its
  // timeout: the bias of the last finished one, or zero, is kept), the samples it averaged, the
  // friction joints it averaged while they held still (their static friction is in the bias) of
  // the friction joints there are, and per estimated link the mass of the load its residual
  // showed and left to the filter (kg; − for a load gone). A timed-out calibration leaves the held
  // joints and loads of the calibration whose bias is kept.
  bool calibration_timed_out = false;
  std::uint32_t calibration_samples = 0;
  std::uint16_t calibration_held_joints = 0;
  std::uint16_t calibration_friction_joints = 0;
  std::array<double, hal::kMaxEstimatedLinks> calibration_load{};
  std::int64_t compute_ns = 0;  // time spent inside update()
  std::uint16_t num_links = 0;
  std::array<hal::InertialParameters, hal::kMaxEstimatedLinks> handed{};
  std::array<hal::InertialParameters, hal::kMaxEstimatedLinks> estimate{};
  // The standard deviation of each handed parameter: √diag of the handed covariance.
  std::array<hal::InertialParameters, hal::kMaxEstimatedLinks> handed_sd{};
};

class PluginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ControllerInterface {
 public:
  virtual ~ControllerInterface() = default;
  virtual const char* name() const noexcept = 0;
  virtual void init(const std::string& config_path, const HardwareInterface& hardware) = 0;
  // Between init() and activate() (set-up, may allocate): start from an estimate this plugin
  // handed on before (heftd's persisted one, host.persistence) instead of the nominal parameters:
  // its links must be this configuration's, in order; its covariance is multiplied by
  // `covariance_inflation` (>= 1) so that the filter can relearn. The next hand-off carries it.
  // Throws PluginError saying why it is not used (nothing changes then).
  virtual void start_from(const hal::InertialEstimate& estimate, double covariance_inflation) = 0;
  virtual void configure() = 0;
  virtual void activate() = 0;
  virtual UpdateResult update(std::int64_t time_ns, std::int64_t period_ns) noexcept = 0;
  virtual void deactivate() = 0;
  virtual void command(Command command) noexcept = 0;
  virtual bool pop_telemetry(TelemetryRecord& record) noexcept = 0;
  // Names of the estimated links (after init), in hand-off order.
  virtual std::size_t num_links() const noexcept = 0;
  virtual const char* link_name(std::size_t i) const noexcept = 0;
};

}  // namespace heft::plugin

// The C entry points every heft plugin exports.
extern "C" {
// The interface version the plugin was built against.
std::uint32_t heft_plugin_api_version();
// Creates the controller; returns null and writes the reason into `error` if the host's interface
// version is not the plugin's.
heft::plugin::ControllerInterface* heft_plugin_create(std::uint32_t host_api_version, char* error,
                                                      std::size_t error_size);
void heft_plugin_destroy(heft::plugin::ControllerInterface* controller);
}

// The drivers' configuration: buses, one encoder + torque sensor per joint, the F/T cells, the
// optional base IMU. Read from the `drivers:` section of heft's YAML (schema in drivers/README.md)
// and checked against the URDF, which also gives the IMU's pose on the base.
#pragma once

#include <Eigen/Core>
#include <optional>
#include <string>
#include <vector>

#include "heft/config/yaml.hpp"
#include "heft/drivers/canopen_codec.hpp"
#include "heft/drivers/codecs.hpp"
#include "heft/drivers/mit_codec.hpp"

namespace heft::drivers {

// How a joint's position, velocity and torque reach the bus (drivers.joints[].device).
enum class JointProtocol : std::uint8_t {
  kHeft,    // heft's encoder and torque sensor (docs/can-devices.md): `encoder`, `torque`
  kMit,     // an MIT-mode actuator's replies (mit_codec.hpp): `mit`
  kCia402,  // a CiA 402 drive's TPDOs, heartbeat and EMCY (canopen_codec.hpp): `cia402`
};

struct JointDevice {
  std::string joint;  // URDF joint name
  int bus = 0;        // index into DriverConfig::buses
  JointProtocol protocol = JointProtocol::kHeft;
  EncoderConfig encoder;
  TorqueConfig torque;
  MitConfig mit;
  Cia402Config cia402;
  double timeout = 0.003;  // s
  // The relative standard uncertainty of this joint's torque scale (a torque from a motor current:
  // the torque constant's and the gear's), for the estimator's torque-scale noise; < 0: the
  // estimator's own `noise.joint_torque_scale`.
  double torque_scale_uncertainty = -1.0;
};

struct FtDevice {
  std::string frame;  // URDF link (frame) name of the sensor frame
  int bus = 0;
  FtConfig ft;
  double timeout = 0.003;  // s
};

// The base IMU. Its axes and origin are those of a URDF frame `frame` rigidly attached (fixed
// joints only) to the floating base's link B; CheckDriverConfig resolves that frame into R_BI and
// p_BI (the IMU frame I's orientation and origin in B).
struct ImuDevice {
  std::string frame = "imu";  // URDF link
  int bus = 0;
  ImuConfig imu;
  double timeout = 0.003;  // s
  Eigen::Matrix3d R_BI = Eigen::Matrix3d::Identity();
  Eigen::Vector3d p_BI = Eigen::Vector3d::Zero();  // [m]
  std::string where;  // "file:line:col: drivers.imu.frame" of the entry, for URDF errors
};

// Linux's interface names are at most IFNAMSIZ − 1 = 15 characters.
inline constexpr std::size_t kMaxBusNameLength = 15;

// Faults a device does not flag itself, detected by the loop (drivers/README.md "Plausibility").
struct PlausibilityConfig {
  // A torque channel whose raw value has not changed by one LSB for `torque_stuck_time` of its
  // joint moving faster than `torque_stuck_velocity` is stuck (in fault) until the value changes.
  double torque_stuck_time = 0.05;      // s
  double torque_stuck_velocity = 0.02;  // rad/s: 40 encoder velocity LSB
  // A bus with more than `error_frame_limit` error frames within `error_frame_window` is degraded.
  double error_frame_window = 0.1;  // s
  int error_frame_limit = 100;
};

struct DriverConfig {
  std::vector<std::string> buses;  // interface names (can0, ...); empty when nothing is on CAN
  // Where the joints and the F/T cells' wrenches come from (drivers.joints_from, ft_cells_from):
  // heft's CAN devices, or the controller framework's joint-state segment
  // (hal/framework_joints.h), read by the host and handed to DriverLoop::Tick. A device that comes
  // from the framework has only its name (bus -1, no identifiers).
  bool joints_from_framework = false;
  bool ft_cells_from_framework = false;
  PlausibilityConfig plausibility;
  std::vector<JointDevice> joints;
  std::vector<FtDevice> ft_cells;
  std::optional<ImuDevice> imu;  // none: the base state comes from elsewhere (or a fixed base)
};

// The 11-bit identifiers a joint's device sends on its bus, each with what it is ("the encoder of
// 'knee'"). An MIT actuator's reply identifier is shared by the actuators of one controller: its
// entry says so (`shared`), and the motor id tells them apart.
struct IdClaim {
  std::uint32_t id = 0;
  std::string what;
  bool shared = false;
};
std::vector<IdClaim> JointIdentifiers(const JointDevice& joint);

// Reads the `drivers:` section; throws config::ConfigError naming file, key and allowed values.
DriverConfig ParseDriverConfig(const config::Node& drivers);

// The checks against the URDF (names, identifier clashes, the IMU's pose): CheckDriverConfig in
// heft/config/driver_check.hpp, on the model loader's dynamics::Model.

// The reference robot's defaults for a list of joints and two foot cells (tests, simulator).
DriverConfig ReferenceDriverConfig(const std::vector<std::string>& joints,
                                   const std::vector<std::string>& ft_frames);

}  // namespace heft::drivers

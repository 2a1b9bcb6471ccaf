// The inverse of the driver loop: one millisecond of a robot's sensor values → the frames its
// devices would send (rolling counters, status bits, CRCs, the F/T cells' two frames, the IMU's
// three), written to the buses. Used by the simulated robot (which adds noise, bias and faults
// before encoding) and by the tests. Set-up allocates; Emit() and EmitImu() do not.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <span>
#include <vector>

#include "heft/drivers/driver_config.hpp"
#include "heft/hal/can.hpp"
#include "heft/hal/robot_state.hpp"

namespace heft::drivers {

struct EmitOptions {
  // Per device, in config order: false = the device stays silent this millisecond.
  std::span<const unsigned char> encoder_enabled{}, torque_enabled{}, ft_enabled{};
  std::uint8_t encoder_status = 0x01;  // VALID
  std::uint8_t torque_status = 0x01;   // VALID
  std::uint8_t ft_status = 0;          // OK
  std::int8_t temperature = 35;
  bool corrupt_crc = false;  // torque frames with a wrong CRC
};

// What the base IMU measures, in its own frame I (see ImuDevice).
struct ImuValues {
  Eigen::Vector3d w_I = Eigen::Vector3d::Zero();  // angular velocity of I, in I [rad/s]
  Eigen::Vector3d f_I = Eigen::Vector3d::Zero();  // specific force at I's origin, in I [m/s²]
  Eigen::Quaterniond q_WI = Eigen::Quaterniond::Identity();  // attitude I → world
};
// The IMU values of a base sample whose specific force is measured at the IMU's origin
// (base.specific_force_point = p_BI; the caller transports it there otherwise): the exact inverse
// of what the driver loop makes of the IMU's frames.
ImuValues ImuValuesFromBase(const ImuDevice& imu, const hal::BaseSample& base) noexcept;

class SampleEncoder {
 public:
  explicit SampleEncoder(const DriverConfig& config);
  // Writes the frames of every device for the joint values (sample order = config order) and
  // wrenches of `truth`, stamped `now_ns`, to buses[bus index]: heft's encoder and torque frames,
  // an MIT actuator's reply, a CiA 402 drive's TPDOs (operation enabled) as each joint's device
  // is. Returns the number of frames sent.
  int Emit(const hal::RobotStateSample& truth, std::int64_t now_ns,
           std::span<hal::CanTransport* const> buses, const EmitOptions& options = {}) noexcept;
  // Writes the IMU's three frames (A, B, C) for one sample, with `status` (saturation bits are
  // added when a value is beyond int16) and the IMU's own rolling counter. Returns the number of
  // frames sent; 0 when no IMU is configured.
  int EmitImu(const ImuValues& values, std::int64_t now_ns,
              std::span<hal::CanTransport* const> buses,
              std::uint8_t status = ImuStatus::kValid) noexcept;
  // The IMU's sample of this millisecond is lost on the way: its counter advances, nothing is
  // sent (as Emit's disabled devices).
  void SkipImu() noexcept { ++imu_counter_; }
  // Raw encodings of one device for the simulator's own fault shaping.
  const DriverConfig& config() const { return config_; }

 private:
  DriverConfig config_;
  std::vector<Matrix6> inverse_calibration_;
  std::uint8_t counter_ = 0;
  std::uint8_t imu_counter_ = 0;
};

}  // namespace heft::drivers

// The inverse of the driver loop: one millisecond of a robot's sensor values → the frames its
// devices would send (rolling counters, status bits, CRCs, the F/T cells' two frames), written to
// the buses. Used by the simulated robot (which adds noise, bias and faults before encoding) and by
// the tests. Set-up allocates; Emit() does not.
#pragma once

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

class SampleEncoder {
 public:
  explicit SampleEncoder(const DriverConfig& config);
  // Writes the frames of every device for the joint values (sample order = config order) and
  // wrenches of `truth`, stamped `now_ns`, to buses[bus index]. Returns the number of frames sent.
  int Emit(const hal::RobotStateSample& truth, std::int64_t now_ns,
           std::span<hal::CanTransport* const> buses, const EmitOptions& options = {}) noexcept;
  // Raw encodings of one device for the simulator's own fault shaping.
  const DriverConfig& config() const { return config_; }

 private:
  DriverConfig config_;
  std::vector<Matrix6> inverse_calibration_;
  std::uint8_t counter_ = 0;
};

}  // namespace heft::drivers

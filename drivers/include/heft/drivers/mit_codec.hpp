// MIT-mode actuator replies (the "mini cheetah" protocol of Ben Katz's motor controller firmware,
// spoken by many quasi-direct-drive actuators, e.g. CubeMars AK series in MIT mode), read
// passively: heft decodes the replies the controller framework's commands provoke and sends
// nothing. One reply frame per actuator and command, on the master's identifier:
//
//   byte 0      motor id (the actuator's own CAN id)
//   bytes 1-2   position p, 16 bits, big-endian                       [−P_MAX, P_MAX] rad
//   byte 3      velocity v, bits 11..4                                [−V_MAX, V_MAX] rad/s
//   byte 4      v bits 3..0 (high nibble) | torque t bits 11..8 (low)  [−T_MAX, T_MAX]
//   byte 5      t bits 7..0
//   bytes 6-7   optional (some firmwares: temperature, error code): ignored
//
// x = x_int · 2·X_MAX / (2^bits − 1) − X_MAX (the firmware's uint_to_float with X_MIN = −X_MAX).
// The ranges are the actuator model's (its firmware's P_MAX, V_MAX, T_MAX) and come from the
// configuration. t is a torque in N·m, or on firmwares that report the phase current a current in
// A: the joint's torque is then t · torque_constant · gear_ratio (the conversion's relative
// uncertainty enters the estimator's torque-scale noise, docs/standard-actuators.md).
//
// Pure, noexcept functions; the encoder (the simulated robot, tests) packs as the firmware's
// pack_reply does (float_to_uint truncates toward the lower code).
#pragma once

#include <cstdint>

#include "heft/drivers/codecs.hpp"
#include "heft/hal/can.hpp"

namespace heft::drivers {

// Torque from a motor current: τ_joint = i · torque_constant · gear_ratio, with the relative
// standard uncertainty of that product (Kt's spread, the gearbox's efficiency) for the estimator.
struct CurrentToTorque {
  bool enabled = false;          // false: the device reports a torque
  double torque_constant = 0.0;  // N·m/A at the motor
  double gear_ratio = 1.0;       // motor turns per joint turn
  double uncertainty = 0.1;      // relative σ of torque_constant · gear_ratio
  double Torque(double current) const noexcept { return current * torque_constant * gear_ratio; }
};

struct MitConfig {
  std::uint32_t reply_id = 0;  // the replies' CAN identifier (the controller's master id)
  std::uint8_t motor_id = 1;   // byte 0 of this actuator's replies
  double p_max = 12.5;         // rad
  double v_max = 65.0;         // rad/s
  double t_max = 18.0;         // N·m, or A with current.enabled
  double zero_offset = 0.0;    // rad, subtracted from p
  int direction = 1;           // 1 or −1: the joint's sense against the actuator's
  CurrentToTorque current;
};

struct MitReading {
  std::uint8_t motor_id = 0;
  std::uint16_t p_int = 0, v_int = 0, t_int = 0;
  double position = 0.0;  // rad, joint
  double velocity = 0.0;  // rad/s, joint
  double torque = 0.0;    // N·m, joint (from the current when configured)
};

// A frame's motor id (byte 0) when it can be a reply at all (data frame, 1+ bytes), else −1.
int MitMotorId(const hal::CanFrame& frame) noexcept;
// Standard identifier, data frame, 6 to 8 bytes, motor id = cfg.motor_id; else a Reject reason.
Reject DecodeMitReply(const hal::CanFrame& frame, const MitConfig& cfg, MitReading& out) noexcept;
// The reply the actuator sends for joint values (position, velocity, torque or current as
// configured; the inverse of the decoding's direction, offset and conversion), 6 bytes, saturating.
hal::CanFrame EncodeMitReply(const MitConfig& cfg, double position, double velocity,
                             double torque) noexcept;
// The firmware's conversions, exposed for the golden tests.
double MitUintToFloat(std::uint32_t x, double max, int bits) noexcept;
std::uint32_t MitFloatToUint(double x, double max, int bits) noexcept;

}  // namespace heft::drivers

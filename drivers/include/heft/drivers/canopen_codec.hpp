// CiA 402 drives over CANopen (CiA 301 communication, CiA 402 device profile), read passively:
// heft listens to what the drive sends on its own (TPDOs, heartbeat, EMCY) and sends nothing, no
// SDO, no NMT. The drive's TPDO mapping is configured on the drive (by its tool or the framework's
// start-up); heft's configuration repeats it, per TPDO its COB-ID and the mapped objects in order.
//
//   TPDO n     COB-ID as configured (defaults 0x180/0x280/0x380/0x480 + node), the mapped
//              objects packed little-endian, back to back, nothing else
//   heartbeat  0x700 + node, 1 byte: NMT state (0x00 boot-up, 0x04 stopped, 0x05 operational,
//              0x7F pre-operational; bit 7 is node guarding's toggle bit, 0 in a heartbeat)
//   EMCY       0x080 + node, 8 bytes: error code (u16 LE; 0x0000: error reset / no error), error
//              register (0x1001, u8), 5 manufacturer-specific bytes
//
// Objects heft reads (CiA 402):
//   0x6041 statusword          u16   bit 3 fault, bit 7 warning, bit 2 operation enabled
//   0x6064 position actual     i32   position units (increments): counts_per_rev per motor turn
//   0x606C velocity actual     i32   velocity units: velocity_lsb rad/s of the motor per unit
//   0x6077 torque actual       i16   per mille of the motor's rated torque (0x6076)
//   0x6078 current actual      i16   per mille of the motor's rated current (0x6075): a torque
//                                    through the torque constant and the gear ratio
// and placeholders for other mapped objects of 8, 16 or 32 bits (ignored).
//
// Pure, noexcept functions; the encoders serve the tests and the simulated robot.
#pragma once

#include <array>
#include <cstdint>

#include "heft/drivers/codecs.hpp"
#include "heft/drivers/mit_codec.hpp"
#include "heft/hal/can.hpp"

namespace heft::drivers {

enum class Cia402Object : std::uint8_t {
  kStatusword,  // 0x6041
  kPosition,    // 0x6064
  kVelocity,    // 0x606C
  kTorque,      // 0x6077
  kCurrent,     // 0x6078
  kUnused8,
  kUnused16,
  kUnused32,
};
int Cia402ObjectBytes(Cia402Object o) noexcept;

struct Cia402Tpdo {
  std::uint32_t cob_id = 0;
  std::array<Cia402Object, 8> map{};
  int count = 0;  // mapped objects
  int Bytes() const noexcept;
};

struct CiaStatusword {
  static constexpr std::uint16_t kReadyToSwitchOn = 1u << 0, kSwitchedOn = 1u << 1,
                                 kOperationEnabled = 1u << 2, kFault = 1u << 3, kWarning = 1u << 7;
};

enum class NmtState : std::uint8_t {
  kBootUp = 0x00,
  kStopped = 0x04,
  kOperational = 0x05,
  kPreOperational = 0x7F,
};

struct Cia402Config {
  std::uint8_t node = 1;  // CANopen node id, 1..127
  std::array<Cia402Tpdo, 4> tpdos{};
  int num_tpdos = 0;
  double counts_per_rev = 524288.0;  // position units per motor turn
  double velocity_lsb = 0.0;         // rad/s of the motor per velocity unit; 0: 2π/counts_per_rev
  double gear_ratio = 1.0;           // motor turns per joint turn
  double rated_torque = 1.0;         // N·m at the motor (0x6076)
  double rated_current = 1.0;        // A (0x6075), for kCurrent
  std::int64_t zero_offset = 0;      // position units
  int direction = 1;
  CurrentToTorque current;  // enabled: the torque comes from 0x6078
  // The consumer heartbeat time (CiA 301 object 0x1016 on heft's side): once a heartbeat has
  // arrived, none for longer than this is a fault of the drive (0: not monitored).
  std::int64_t heartbeat_timeout_ns = 1'500'000'000;
  std::uint32_t heartbeat_id() const { return 0x700u + node; }
  std::uint32_t emcy_id() const { return 0x080u + node; }
};

// What one TPDO carried (has_* says which).
struct Cia402Reading {
  bool has_statusword = false, has_position = false, has_velocity = false, has_torque = false;
  std::uint16_t statusword = 0;
  std::int32_t position_raw = 0, velocity_raw = 0;
  std::int16_t torque_raw = 0;  // 0x6077 or 0x6078, per mille
  double position = 0.0;        // rad, joint
  double velocity = 0.0;        // rad/s, joint
  double torque = 0.0;          // N·m, joint
};

// A TPDO: standard data frame of exactly the mapping's length.
Reject DecodeCia402Tpdo(const hal::CanFrame& frame, const Cia402Tpdo& tpdo, const Cia402Config& cfg,
                        Cia402Reading& out) noexcept;
// Heartbeat: 1 byte, a CiA 301 NMT state (kBadNmtState otherwise).
Reject DecodeHeartbeat(const hal::CanFrame& frame, NmtState& state) noexcept;
// EMCY: 8 bytes; the error code and the error register.
Reject DecodeEmcy(const hal::CanFrame& frame, std::uint16_t& code,
                  std::uint8_t& error_register) noexcept;

// Encoders (tests, the simulated robot): joint values into one TPDO of `cfg` (saturating).
hal::CanFrame EncodeCia402Tpdo(const Cia402Tpdo& tpdo, const Cia402Config& cfg,
                               std::uint16_t statusword, double position, double velocity,
                               double torque) noexcept;
hal::CanFrame EncodeHeartbeat(const Cia402Config& cfg, NmtState state) noexcept;
hal::CanFrame EncodeEmcy(const Cia402Config& cfg, std::uint16_t code,
                         std::uint8_t error_register) noexcept;

}  // namespace heft::drivers

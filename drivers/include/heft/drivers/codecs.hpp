// Codecs of the reference robot's three CAN device kinds (shared/spec/can-devices.md), apart from
// any transport: pure, noexcept functions from a frame to a reading or a named reason for
// rejection, and their exact inverses (used by the simulated robot and the tests).
//
//   joint encoder        0x100 + node, little-endian: int32 counts, int16 velocity, status, counter
//   joint torque sensor  0x200 + node, little-endian: int32 raw (24-bit, sign-extended), int8 °C,
//                        status, counter, CRC-8/SAE-J1850 over bytes 0..6
//   six-axis F/T cell    base and base + 1, big-endian: status, counter, gauges 0 2 4 | gauges 1 3
//   5,
//                        counter, reserved; wrench = C (g − g_tare)
//
// A frame is used only if it matches its layout exactly: classic or FD data frame, standard
// identifier, 8 bytes, reserved bits clear, CRC right. Anything else is a Reject reason.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <span>

#include "heft/hal/can.hpp"

namespace heft::drivers {

enum class Reject : std::uint8_t {
  kNone = 0,
  kUnknownId,      // identifier not configured on this bus
  kRemote,         // remote transmission request
  kExtended,       // 29-bit identifier
  kWrongLength,    // not 8 data bytes
  kReservedBits,   // reserved status bits or bytes set
  kBadCrc,         // torque sensor CRC mismatch
  kRawOutOfRange,  // torque raw value outside ±2^23
  kUnpaired,       // F/T frame B without a frame A of the same counter
  kCount,
};
const char* ToString(Reject reason) noexcept;

// CRC-8/SAE-J1850: polynomial 0x1D, init 0xFF, final xor 0xFF, no reflection.
std::uint8_t Crc8SaeJ1850(std::span<const std::uint8_t> bytes) noexcept;

// ---- joint encoder ---------------------------------------------------------------------------
struct EncoderConfig {
  std::uint32_t node = 0;  // identifier 0x100 + node
  double counts_per_rev = 1048576.0;
  std::int64_t zero_offset = 0;
  int direction = 1;
  double velocity_lsb = 0.0005;  // rad/s per unit
  std::uint32_t id() const { return 0x100u + node; }
};
struct EncoderStatus {
  static constexpr std::uint8_t kValid = 1u << 0, kMagnetWarning = 1u << 1, kOverspeed = 1u << 2,
                                kMultiturnLost = 1u << 3, kReservedMask = 0xF0;
};
struct EncoderReading {
  std::int32_t counts = 0;
  std::int16_t velocity_raw = 0;
  std::uint8_t status = 0;
  std::uint8_t counter = 0;
  double position = 0.0;  // rad
  double velocity = 0.0;  // rad/s
  bool usable = false;    // VALID set and MULTITURN_LOST clear
};
Reject DecodeEncoder(const hal::CanFrame& frame, const EncoderConfig& cfg,
                     EncoderReading& out) noexcept;
hal::CanFrame EncodeEncoder(const EncoderConfig& cfg, std::int32_t counts,
                            std::int16_t velocity_raw, std::uint8_t status,
                            std::uint8_t counter) noexcept;
// Nearest raw values for a physical angle / rate (saturating).
std::int32_t EncoderCounts(const EncoderConfig& cfg, double angle) noexcept;
std::int16_t EncoderVelocityRaw(const EncoderConfig& cfg, double rate) noexcept;

// ---- joint torque sensor ---------------------------------------------------------------------
struct TorqueConfig {
  std::uint32_t node = 0;  // identifier 0x200 + node
  std::int32_t offset = 0;
  double nm_per_count = 0.0001;
  int direction = 1;
  std::uint32_t id() const { return 0x200u + node; }
};
struct TorqueStatus {
  static constexpr std::uint8_t kValid = 1u << 0, kOverload = 1u << 1, kAdcFault = 1u << 2,
                                kReservedMask = 0xF8;
};
inline constexpr std::int32_t kTorqueRawLimit = 1 << 23;  // |raw| < 2^23 (24 significant bits)
struct TorqueReading {
  std::int32_t raw = 0;
  std::int8_t temperature = 0;
  std::uint8_t status = 0;
  std::uint8_t counter = 0;
  double torque = 0.0;  // N·m
  bool usable = false;  // VALID set, OVERLOAD and ADC_FAULT clear
};
Reject DecodeTorque(const hal::CanFrame& frame, const TorqueConfig& cfg,
                    TorqueReading& out) noexcept;
hal::CanFrame EncodeTorque(const TorqueConfig& cfg, std::int32_t raw, std::int8_t temperature,
                           std::uint8_t status, std::uint8_t counter) noexcept;
std::int32_t TorqueRaw(const TorqueConfig& cfg,
                       double torque) noexcept;  // nearest, saturating at ±(2^23 − 1)

// ---- six-axis force/torque cell --------------------------------------------------------------
using Matrix6 = Eigen::Matrix<double, 6, 6>;
using Vector6 = Eigen::Matrix<double, 6, 1>;
using Gauges = std::array<std::int16_t, 6>;
struct FtConfig {
  std::uint32_t base_id = 0x300;                     // frame A; frame B is base_id + 1
  Matrix6 calibration = Matrix6::Identity() * 0.01;  // N (rows 0-2) and N·m (rows 3-5) per count
  Vector6 tare = Vector6::Zero();                    // counts
};
struct FtReading {
  std::uint8_t status = 0;  // 0 = OK, else a fault code
  std::uint8_t counter = 0;
  Gauges gauges{};
  Vector6 wrench = Vector6::Zero();  // [f; n] in the sensor frame
  bool usable = false;
};
// Pairs frame A and frame B of one sample by their counter. A new frame A while one is pending
// means the pending sample was dropped (counted by the caller from the return value).
class FtAssembler {
 public:
  enum class Result : std::uint8_t { kPending, kComplete, kRejected };
  // `dropped` is set when a pending frame A was abandoned.
  Result Feed(const hal::CanFrame& frame, const FtConfig& cfg, FtReading& out, Reject& reason,
              bool& dropped) noexcept;
  void Reset() noexcept { pending_ = false; }

 private:
  bool pending_ = false;
  std::uint8_t status_ = 0, counter_ = 0;
  std::int16_t g0_ = 0, g2_ = 0, g4_ = 0;
};
std::array<hal::CanFrame, 2> EncodeFt(const FtConfig& cfg, const Gauges& gauges,
                                      std::uint8_t status, std::uint8_t counter) noexcept;
Vector6 FtWrench(const FtConfig& cfg, const Gauges& gauges) noexcept;
// Nearest gauge counts giving `wrench` (inverse calibration), saturating at int16.
Gauges FtGauges(const FtConfig& cfg, const Eigen::Matrix<double, 6, 6>& inverse_calibration,
                const Vector6& wrench) noexcept;

}  // namespace heft::drivers

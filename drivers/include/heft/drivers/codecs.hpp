// Codecs of the reference robot's four CAN device kinds (docs/can-devices.md), apart from any
// transport: pure, noexcept functions from a frame to a reading or a named reason for rejection,
// and their exact inverses (used by the simulated robot and the tests).
//
//   joint encoder        0x100 + node, little-endian: int32 counts, int16 velocity, status, counter
//   joint torque sensor  0x200 + node, little-endian: int32 raw (24-bit, sign-extended), int8 °C,
//                        status, counter, CRC-8/SAE-J1850 over bytes 0..6
//   six-axis F/T cell    base and base + 1, big-endian: status, counter, gauges 0 2 4 | gauges
//                        1 3 5, counter, reserved; wrench = C (g − g_tare)
//   base IMU             base, base + 1, base + 2, little-endian: int16 ×3 (gyro | specific force
//                        | attitude qx qy qz), status, counter
//
// A frame is used only if it matches its layout exactly: classic or FD data frame, standard
// identifier, 8 bytes, reserved bits clear, CRC right. Anything else is a Reject reason.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
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
  kUnpaired,       // F/T or IMU frame without a pending frame A of the same counter
  kBadAttitude,  // IMU attitude: 1 − qx² − qy² − qz² < −1/32767 (not a unit quaternion)
  kBadNmtState,  // CANopen heartbeat: not an NMT state (canopen_codec.hpp)
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
// A gauge at either int16 limit is at its ADC's rail: the load is beyond the cell's range and the
// reading is clipped (some cells do not flag it in their status).
constexpr bool GaugeAtRail(std::int16_t g) noexcept {
  return g == INT16_MIN || g == INT16_MAX;
}
struct FtReading {
  std::uint8_t status = 0;  // 0 = OK, else a fault code
  std::uint8_t counter = 0;
  Gauges gauges{};
  Vector6 wrench = Vector6::Zero();  // [f; n] in the sensor frame
  bool saturated = false;            // a gauge at its rail (GaugeAtRail)
  bool usable = false;               // status 0 and not saturated
};
// Pairs frame A and frame B of one sample by their counter. A new frame A while one is pending
// means the pending sample was dropped: `dropped` is set on that call and dropped_counter() is
// the abandoned sample's counter, so the caller counts the loss when it happens.
class FtAssembler {
 public:
  enum class Result : std::uint8_t { kPending, kComplete, kRejected };
  // `dropped` is set when a pending frame A was abandoned.
  Result Feed(const hal::CanFrame& frame, const FtConfig& cfg, FtReading& out, Reject& reason,
              bool& dropped) noexcept;
  void Reset() noexcept { pending_ = false; }
  std::uint8_t dropped_counter() const noexcept { return dropped_counter_; }

 private:
  bool pending_ = false;
  std::uint8_t status_ = 0, counter_ = 0, dropped_counter_ = 0;
  std::int16_t g0_ = 0, g2_ = 0, g4_ = 0;
};
std::array<hal::CanFrame, 2> EncodeFt(const FtConfig& cfg, const Gauges& gauges,
                                      std::uint8_t status, std::uint8_t counter) noexcept;
Vector6 FtWrench(const FtConfig& cfg, const Gauges& gauges) noexcept;
// Nearest gauge counts giving `wrench` (inverse calibration), saturating at int16.
Gauges FtGauges(const FtConfig& cfg, const Eigen::Matrix<double, 6, 6>& inverse_calibration,
                const Vector6& wrench) noexcept;

// ---- base IMU --------------------------------------------------------------------------------
// Frame A (base_id): angular velocity of the IMU frame I in I, gyro_lsb per unit. Frame B
// (base_id + 1): specific force (acceleration minus gravity) at I's origin in I, accel_lsb per
// unit. Frame C (base_id + 2): attitude q_WI (I → gravity-aligned world, z up, yaw arbitrary),
// qx qy qz in units of 1/32767, qw = +sqrt(1 − |q_xyz|²). Bytes 6, 7: status, sample counter.
struct ImuConfig {
  std::uint32_t base_id = 0x400;  // frame A; B is base_id + 1, C is base_id + 2
  double gyro_lsb = 0.001;        // rad/s per unit
  double accel_lsb = 0.002;       // m/s² per unit
};
struct ImuStatus {
  static constexpr std::uint8_t kValid = 1u << 0, kGyroSaturated = 1u << 1,
                                kAccelSaturated = 1u << 2, kAttitudeNotConverged = 1u << 3,
                                kFaultMask = 0x0E, kReservedMask = 0xF0;
};
inline constexpr double kImuQuaternionScale = 32767.0;  // attitude units per 1
using Int16x3 = std::array<std::int16_t, 3>;
struct ImuFrameReading {
  Int16x3 raw{};
  std::uint8_t status = 0;
  std::uint8_t counter = 0;
  Eigen::Vector3d value = Eigen::Vector3d::Zero();  // rad/s (A), m/s² (B), qx qy qz (C)
  double qw = 1.0;                                  // frame C only
};
// One frame each; the frame's identifier is not checked (the caller routes by identifier).
Reject DecodeImuGyro(const hal::CanFrame& frame, const ImuConfig& cfg,
                     ImuFrameReading& out) noexcept;
Reject DecodeImuAccel(const hal::CanFrame& frame, const ImuConfig& cfg,
                      ImuFrameReading& out) noexcept;
Reject DecodeImuAttitude(const hal::CanFrame& frame, ImuFrameReading& out) noexcept;

struct ImuReading {
  std::uint8_t counter = 0;
  // VALID when all three frames had it; each fault bit when any frame had it.
  std::uint8_t status = 0;
  std::array<std::uint8_t, 3> frame_status{};                    // A, B, C
  Eigen::Vector3d angular_velocity = Eigen::Vector3d::Zero();    // w_WI_I [rad/s]
  Eigen::Vector3d specific_force = Eigen::Vector3d::Zero();      // f_I [m/s²]
  Eigen::Quaterniond attitude = Eigen::Quaterniond::Identity();  // q_WI
  bool usable = false;  // VALID and no fault bit on all three frames
};
// Assembles frames A, B, C of one sample by their counter (the device sends them in that order).
// A new frame A before the pending sample completed drops it: `dropped` is set on that call and
// dropped_counter() is the abandoned sample's counter. A frame B or C with nothing pending, of
// another counter than the pending A's, or repeated, is rejected as kUnpaired and drops nothing:
// the pending sample stays pending and completes if its own B and C still arrive.
class ImuAssembler {
 public:
  enum class Result : std::uint8_t { kPending, kComplete, kRejected };
  Result Feed(const hal::CanFrame& frame, const ImuConfig& cfg, ImuReading& out, Reject& reason,
              bool& dropped) noexcept;
  void Reset() noexcept { pending_ = have_b_ = have_c_ = false; }
  std::uint8_t dropped_counter() const noexcept { return dropped_counter_; }

 private:
  bool pending_ = false, have_b_ = false, have_c_ = false;
  std::uint8_t dropped_counter_ = 0;
  ImuFrameReading a_, b_, c_;
};
// Frames with given raw values (exact inverse of the decoders).
hal::CanFrame EncodeImuGyro(const ImuConfig& cfg, const Int16x3& raw, std::uint8_t status,
                            std::uint8_t counter) noexcept;
hal::CanFrame EncodeImuAccel(const ImuConfig& cfg, const Int16x3& raw, std::uint8_t status,
                             std::uint8_t counter) noexcept;
hal::CanFrame EncodeImuAttitude(const ImuConfig& cfg, const Int16x3& raw, std::uint8_t status,
                                std::uint8_t counter) noexcept;
// Nearest raw values; a component beyond int16 clamps and sets `saturated` (GYRO_SATURATED or
// ACCEL_SATURATED for the caller's status).
Int16x3 ImuGyroRaw(const ImuConfig& cfg, const Eigen::Vector3d& w_I, bool& saturated) noexcept;
Int16x3 ImuAccelRaw(const ImuConfig& cfg, const Eigen::Vector3d& f_I, bool& saturated) noexcept;
// q normalised, its sign chosen so that qw ≥ 0, then x y z rounded to the nearest 1/32767; near
// 180° where that would make |q_xyz| > 1 beyond the decoder's limit, rounded towards zero.
Int16x3 ImuAttitudeRaw(const Eigen::Quaterniond& q_WI) noexcept;
// One sample's three frames (A, B, C) from physical values; saturation bits are OR'ed into
// `status` of all three frames.
std::array<hal::CanFrame, 3> EncodeImu(const ImuConfig& cfg, const Eigen::Vector3d& w_I,
                                       const Eigen::Vector3d& f_I, const Eigen::Quaterniond& q_WI,
                                       std::uint8_t status, std::uint8_t counter) noexcept;

}  // namespace heft::drivers

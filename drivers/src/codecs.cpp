#include "heft/drivers/codecs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "heft/hal/enum_name.hpp"

namespace heft::drivers {
namespace {

Reject CheckShape(const hal::CanFrame& f) noexcept {
  if (f.is_remote()) return Reject::kRemote;
  if (f.is_extended()) return Reject::kExtended;
  if (f.len != 8) return Reject::kWrongLength;
  return Reject::kNone;
}

std::uint32_t Le32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}
void PutLe32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
std::int16_t Be16(const std::uint8_t* p) {
  return static_cast<std::int16_t>(static_cast<std::uint16_t>(p[0] << 8 | p[1]));
}
std::int16_t Le16(const std::uint8_t* p) {
  return static_cast<std::int16_t>(static_cast<std::uint16_t>(p[0] | p[1] << 8));
}
void PutLe16(std::uint8_t* p, std::int16_t v) {
  const auto u = static_cast<std::uint16_t>(v);
  p[0] = static_cast<std::uint8_t>(u);
  p[1] = static_cast<std::uint8_t>(u >> 8);
}
void PutBe16(std::uint8_t* p, std::int16_t v) {
  const auto u = static_cast<std::uint16_t>(v);
  p[0] = static_cast<std::uint8_t>(u >> 8);
  p[1] = static_cast<std::uint8_t>(u);
}

hal::CanFrame Frame(std::uint32_t id) {
  hal::CanFrame f;
  f.id = id;
  f.len = 8;
  return f;
}

template <typename T>
T Saturate(double x) {
  const double lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  if (!(x >= lo)) return std::numeric_limits<T>::min();  // NaN saturates low
  if (x > hi) return std::numeric_limits<T>::max();
  return static_cast<T>(std::llround(x));
}

// In Reject's declaration order.
constexpr std::array<const char*, 11> kRejectNames{"none",
                                                   "unknown identifier",
                                                   "remote frame",
                                                   "extended identifier",
                                                   "wrong length",
                                                   "reserved bits set",
                                                   "bad CRC",
                                                   "raw value out of range",
                                                   "unpaired frame",
                                                   "attitude not a unit quaternion",
                                                   "not an NMT state"};
static_assert(kRejectNames.size() == static_cast<std::size_t>(Reject::kCount));

}  // namespace

const char* ToString(Reject reason) noexcept {
  return hal::EnumName(reason, kRejectNames, "?");
}

std::uint8_t Crc8SaeJ1850(std::span<const std::uint8_t> bytes) noexcept {
  std::uint8_t crc = 0xFF;
  for (std::uint8_t b : bytes) {
    crc ^= b;
    for (int i = 0; i < 8; ++i)
      crc = static_cast<std::uint8_t>(crc & 0x80 ? (crc << 1) ^ 0x1D : crc << 1);
  }
  return static_cast<std::uint8_t>(crc ^ 0xFF);
}

// ---- encoder ----
Reject DecodeEncoder(const hal::CanFrame& f, const EncoderConfig& cfg,
                     EncoderReading& out) noexcept {
  if (const Reject r = CheckShape(f); r != Reject::kNone) return r;
  const std::uint8_t* d = f.data.data();
  if (d[6] & EncoderStatus::kReservedMask) return Reject::kReservedBits;
  out.counts = static_cast<std::int32_t>(Le32(d));
  out.velocity_raw = static_cast<std::int16_t>(static_cast<std::uint16_t>(d[4] | d[5] << 8));
  out.status = d[6];
  out.counter = d[7];
  out.position = cfg.direction * static_cast<double>(out.counts - cfg.zero_offset) * 2.0 *
                 std::numbers::pi / cfg.counts_per_rev;
  out.velocity = cfg.direction * out.velocity_raw * cfg.velocity_lsb;
  out.usable =
      (out.status & EncoderStatus::kValid) && !(out.status & EncoderStatus::kMultiturnLost);
  return Reject::kNone;
}

hal::CanFrame EncodeEncoder(const EncoderConfig& cfg, std::int32_t counts,
                            std::int16_t velocity_raw, std::uint8_t status,
                            std::uint8_t counter) noexcept {
  hal::CanFrame f = Frame(cfg.id());
  PutLe32(f.data.data(), static_cast<std::uint32_t>(counts));
  const auto v = static_cast<std::uint16_t>(velocity_raw);
  f.data[4] = static_cast<std::uint8_t>(v);
  f.data[5] = static_cast<std::uint8_t>(v >> 8);
  f.data[6] = status;
  f.data[7] = counter;
  return f;
}

std::int32_t EncoderCounts(const EncoderConfig& cfg, double angle) noexcept {
  return Saturate<std::int32_t>(cfg.direction * angle * cfg.counts_per_rev /
                                    (2.0 * std::numbers::pi) +
                                static_cast<double>(cfg.zero_offset));
}

std::int16_t EncoderVelocityRaw(const EncoderConfig& cfg, double rate) noexcept {
  return Saturate<std::int16_t>(cfg.direction * rate / cfg.velocity_lsb);
}

// ---- torque ----
Reject DecodeTorque(const hal::CanFrame& f, const TorqueConfig& cfg, TorqueReading& out) noexcept {
  if (const Reject r = CheckShape(f); r != Reject::kNone) return r;
  const std::uint8_t* d = f.data.data();
  if (Crc8SaeJ1850({d, 7}) != d[7]) return Reject::kBadCrc;
  if (d[5] & TorqueStatus::kReservedMask) return Reject::kReservedBits;
  const auto raw = static_cast<std::int32_t>(Le32(d));
  if (raw >= kTorqueRawLimit || raw < -kTorqueRawLimit) return Reject::kRawOutOfRange;
  out.raw = raw;
  out.temperature = static_cast<std::int8_t>(d[4]);
  out.status = d[5];
  out.counter = d[6];
  out.torque = cfg.direction * static_cast<double>(static_cast<std::int64_t>(raw) - cfg.offset) *
               cfg.nm_per_count;
  out.usable = (out.status & TorqueStatus::kValid) &&
               !(out.status & (TorqueStatus::kOverload | TorqueStatus::kAdcFault));
  return Reject::kNone;
}

hal::CanFrame EncodeTorque(const TorqueConfig& cfg, std::int32_t raw, std::int8_t temperature,
                           std::uint8_t status, std::uint8_t counter) noexcept {
  hal::CanFrame f = Frame(cfg.id());
  PutLe32(f.data.data(), static_cast<std::uint32_t>(raw));
  f.data[4] = static_cast<std::uint8_t>(temperature);
  f.data[5] = status;
  f.data[6] = counter;
  f.data[7] = Crc8SaeJ1850({f.data.data(), 7});
  return f;
}

std::int32_t TorqueRaw(const TorqueConfig& cfg, double torque) noexcept {
  const double raw = cfg.direction * torque / cfg.nm_per_count + cfg.offset;
  return std::clamp(Saturate<std::int32_t>(raw), -kTorqueRawLimit + 1, kTorqueRawLimit - 1);
}

// ---- F/T cell ----
Vector6 FtWrench(const FtConfig& cfg, const Gauges& g) noexcept {
  Vector6 counts;
  for (int i = 0; i < 6; ++i) counts[i] = g[i];
  return cfg.calibration * (counts - cfg.tare);
}

Gauges FtGauges(const FtConfig& cfg, const Matrix6& inverse_calibration,
                const Vector6& wrench) noexcept {
  const Vector6 counts = inverse_calibration * wrench + cfg.tare;
  Gauges g{};
  for (int i = 0; i < 6; ++i) g[i] = Saturate<std::int16_t>(counts[i]);
  return g;
}

FtAssembler::Result FtAssembler::Feed(const hal::CanFrame& f, const FtConfig& cfg, FtReading& out,
                                      Reject& reason, bool& dropped) noexcept {
  dropped = false;
  reason = CheckShape(f);
  if (reason != Reject::kNone) return Result::kRejected;
  const std::uint8_t* d = f.data.data();
  if (f.id == cfg.base_id) {  // frame A
    dropped = pending_;
    if (pending_) dropped_counter_ = counter_;
    pending_ = true;
    status_ = d[0];
    counter_ = d[1];
    g0_ = Be16(d + 2);
    g2_ = Be16(d + 4);
    g4_ = Be16(d + 6);
    return Result::kPending;
  }
  // frame B
  if (d[7] != 0) {
    reason = Reject::kReservedBits;
    return Result::kRejected;
  }
  if (!pending_ || d[6] != counter_) {
    reason = Reject::kUnpaired;
    return Result::kRejected;
  }
  pending_ = false;
  out.status = status_;
  out.counter = counter_;
  out.gauges = {g0_, Be16(d), g2_, Be16(d + 2), g4_, Be16(d + 4)};
  out.wrench = FtWrench(cfg, out.gauges);
  out.saturated = false;
  for (const std::int16_t g : out.gauges) out.saturated = out.saturated || GaugeAtRail(g);
  out.usable = status_ == 0 && !out.saturated;
  return Result::kComplete;
}

std::array<hal::CanFrame, 2> EncodeFt(const FtConfig& cfg, const Gauges& g, std::uint8_t status,
                                      std::uint8_t counter) noexcept {
  hal::CanFrame a = Frame(cfg.base_id), b = Frame(cfg.base_id + 1);
  a.data[0] = status;
  a.data[1] = counter;
  PutBe16(&a.data[2], g[0]);
  PutBe16(&a.data[4], g[2]);
  PutBe16(&a.data[6], g[4]);
  PutBe16(&b.data[0], g[1]);
  PutBe16(&b.data[2], g[3]);
  PutBe16(&b.data[4], g[5]);
  b.data[6] = counter;
  b.data[7] = 0;
  return {a, b};
}

// ---- IMU ----
namespace {

// The three IMU frames share their shape: int16 ×3 little-endian, status, counter.
Reject DecodeImuFrame(const hal::CanFrame& f, double lsb, ImuFrameReading& out) noexcept {
  if (const Reject r = CheckShape(f); r != Reject::kNone) return r;
  const std::uint8_t* d = f.data.data();
  if (d[6] & ImuStatus::kReservedMask) return Reject::kReservedBits;
  for (int i = 0; i < 3; ++i) {
    out.raw[i] = Le16(d + 2 * i);
    out.value[i] = out.raw[i] * lsb;
  }
  out.status = d[6];
  out.counter = d[7];
  return Reject::kNone;
}

hal::CanFrame EncodeImuFrame(std::uint32_t id, const Int16x3& raw, std::uint8_t status,
                             std::uint8_t counter) {
  hal::CanFrame f = Frame(id);
  for (int i = 0; i < 3; ++i) PutLe16(&f.data[2 * i], raw[i]);
  f.data[6] = status;
  f.data[7] = counter;
  return f;
}

Int16x3 Quantise(const Eigen::Vector3d& v, double lsb, bool& saturated) {
  Int16x3 raw{};
  saturated = false;
  for (int i = 0; i < 3; ++i) {
    const double x = v[i] / lsb;
    // Beyond int16 after rounding half away from zero (or NaN).
    if (!(x < 32767.5 && x > -32768.5)) saturated = true;
    raw[i] = Saturate<std::int16_t>(x);
  }
  return raw;
}

bool Usable(std::uint8_t status) {
  return (status & ImuStatus::kValid) && !(status & ImuStatus::kFaultMask);
}

}  // namespace

Reject DecodeImuGyro(const hal::CanFrame& f, const ImuConfig& cfg, ImuFrameReading& out) noexcept {
  return DecodeImuFrame(f, cfg.gyro_lsb, out);
}

Reject DecodeImuAccel(const hal::CanFrame& f, const ImuConfig& cfg, ImuFrameReading& out) noexcept {
  return DecodeImuFrame(f, cfg.accel_lsb, out);
}

Reject DecodeImuAttitude(const hal::CanFrame& f, ImuFrameReading& out) noexcept {
  ImuFrameReading r;
  if (const Reject why = DecodeImuFrame(f, 1.0 / kImuQuaternionScale, r); why != Reject::kNone)
    return why;
  // In integer units: 1 − |q|² < −1/32767  ⇔  32767² − Σraw² < −32767. Exact, no rounding.
  const std::int64_t s = std::int64_t{32767} * 32767;
  std::int64_t sum = 0;
  for (std::int16_t x : r.raw) sum += std::int64_t{x} * x;
  if (s - sum < -32767) return Reject::kBadAttitude;
  const double w2 = 1.0 - r.value.squaredNorm();
  r.qw = w2 > 0.0 ? std::sqrt(w2) : 0.0;  // slightly negative is rounding
  out = r;
  return Reject::kNone;
}

ImuAssembler::Result ImuAssembler::Feed(const hal::CanFrame& f, const ImuConfig& cfg,
                                        ImuReading& out, Reject& reason, bool& dropped) noexcept {
  dropped = false;
  ImuFrameReading r;
  const std::uint32_t which = f.id - cfg.base_id;  // 0 A, 1 B, 2 C
  reason = which == 0   ? DecodeImuGyro(f, cfg, r)
           : which == 1 ? DecodeImuAccel(f, cfg, r)
           : which == 2 ? DecodeImuAttitude(f, r)
                        : Reject::kUnknownId;
  if (reason != Reject::kNone) return Result::kRejected;
  if (which == 0) {
    if (pending_) {
      dropped = true;
      dropped_counter_ = a_.counter;
    }
    pending_ = true;
    have_b_ = have_c_ = false;
    a_ = r;
    return Result::kPending;
  }
  bool& have = which == 1 ? have_b_ : have_c_;
  if (!pending_ || r.counter != a_.counter || have) {
    // Not a frame the pending sample still waits for: refused, and the pending sample (if any)
    // stays pending. Only the next frame A drops it (docs/can-devices.md, section 4).
    reason = Reject::kUnpaired;
    return Result::kRejected;
  }
  have = true;
  (which == 1 ? b_ : c_) = r;
  if (!(have_b_ && have_c_)) return Result::kPending;
  pending_ = false;
  out.counter = a_.counter;
  out.frame_status = {a_.status, b_.status, c_.status};
  const std::uint8_t all = a_.status & b_.status & c_.status;
  const std::uint8_t any = a_.status | b_.status | c_.status;
  out.status = static_cast<std::uint8_t>((all & ImuStatus::kValid) | (any & ImuStatus::kFaultMask));
  out.angular_velocity = a_.value;
  out.specific_force = b_.value;
  out.attitude = Eigen::Quaterniond(c_.qw, c_.value.x(), c_.value.y(), c_.value.z());
  out.usable = Usable(a_.status) && Usable(b_.status) && Usable(c_.status);
  return Result::kComplete;
}

hal::CanFrame EncodeImuGyro(const ImuConfig& cfg, const Int16x3& raw, std::uint8_t status,
                            std::uint8_t counter) noexcept {
  return EncodeImuFrame(cfg.base_id, raw, status, counter);
}

hal::CanFrame EncodeImuAccel(const ImuConfig& cfg, const Int16x3& raw, std::uint8_t status,
                             std::uint8_t counter) noexcept {
  return EncodeImuFrame(cfg.base_id + 1, raw, status, counter);
}

hal::CanFrame EncodeImuAttitude(const ImuConfig& cfg, const Int16x3& raw, std::uint8_t status,
                                std::uint8_t counter) noexcept {
  return EncodeImuFrame(cfg.base_id + 2, raw, status, counter);
}

Int16x3 ImuGyroRaw(const ImuConfig& cfg, const Eigen::Vector3d& w_I, bool& saturated) noexcept {
  return Quantise(w_I, cfg.gyro_lsb, saturated);
}

Int16x3 ImuAccelRaw(const ImuConfig& cfg, const Eigen::Vector3d& f_I, bool& saturated) noexcept {
  return Quantise(f_I, cfg.accel_lsb, saturated);
}

Int16x3 ImuAttitudeRaw(const Eigen::Quaterniond& q_WI) noexcept {
  Eigen::Quaterniond q = q_WI.normalized();
  if (q.w() < 0.0) q.coeffs() = -q.coeffs();
  bool saturated = false;  // |x|, |y|, |z| ≤ 1 after normalisation: cannot saturate
  Int16x3 raw = Quantise(q.vec(), 1.0 / kImuQuaternionScale, saturated);
  // Near 180° (qw ≈ 0) rounding x, y, z up can push |q_xyz|² past the decoder's limit of
  // 1 + 1/32767: then round towards zero instead (at most one unit off, never malformed).
  std::int64_t sum = 0;
  for (std::int16_t x : raw) sum += std::int64_t{x} * x;
  if (std::int64_t{32767} * 32767 - sum < -32767)
    for (int i = 0; i < 3; ++i)
      raw[i] = static_cast<std::int16_t>(std::trunc(q.vec()[i] * kImuQuaternionScale));
  return raw;
}

std::array<hal::CanFrame, 3> EncodeImu(const ImuConfig& cfg, const Eigen::Vector3d& w_I,
                                       const Eigen::Vector3d& f_I, const Eigen::Quaterniond& q_WI,
                                       std::uint8_t status, std::uint8_t counter) noexcept {
  bool gyro_saturated = false, accel_saturated = false;
  const Int16x3 w = ImuGyroRaw(cfg, w_I, gyro_saturated);
  const Int16x3 a = ImuAccelRaw(cfg, f_I, accel_saturated);
  if (gyro_saturated) status |= ImuStatus::kGyroSaturated;
  if (accel_saturated) status |= ImuStatus::kAccelSaturated;
  return {EncodeImuGyro(cfg, w, status, counter), EncodeImuAccel(cfg, a, status, counter),
          EncodeImuAttitude(cfg, ImuAttitudeRaw(q_WI), status, counter)};
}

}  // namespace heft::drivers

// The base IMU's codec and its three-frame assembler (drivers/src/codecs.cpp, docs/can-devices.md
// section 4) on fuzzed frames, with a fuzzed configuration inside the ranges the configuration
// parser allows (drivers/src/driver_config.cpp: base_id 0..0x7FD, gyro_lsb 1e-9..1 rad/s,
// accel_lsb 1e-9..10 m/s²). Checks beyond "no crash, no UB":
//   - a frame a decoder accepts re-encodes to the same bytes, its values are finite, and the
//     attitude is a unit quaternion to the wire's rounding (qw >= 0);
//   - the assembler follows a model of the pairing rule exactly: it rejects a malformed frame
//     for the decoder's reason and a B or C that is not awaited (nothing pending, another counter
//     than the pending A's, a repeat) as unpaired, and neither drops anything; a frame A drops
//     the pending sample (with its counter) and only a frame A does; it completes a sample only
//     from the A, B and C frames of one counter it was fed since that A (re-encoded from the
//     reading: the same bytes), says "rejected" exactly when it gives a reason, and calls a
//     sample usable only when all three frames were VALID without a fault bit.
//
// Input: 6 bytes of configuration (base identifier u16, gyro and accelerometer LSB u16 each; zero
// keeps the reference default), then frames of 13 bytes: which identifier (mod 4: A, B, C, or
// the identifier below as it is), identifier u16, flags, length, 8 data bytes.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "fuzz_bytes.hpp"
#include "heft/drivers/codecs.hpp"

namespace {

using heft::drivers::ImuAssembler;
using heft::drivers::ImuConfig;
using heft::drivers::ImuFrameReading;
using heft::drivers::ImuReading;
using heft::drivers::ImuStatus;
using heft::drivers::Int16x3;
using heft::drivers::Reject;
using heft::fuzz::Bytes;
using heft::hal::CanFrame;

bool SameBytes(const CanFrame& a, const CanFrame& b) {
  return a.len == b.len && std::memcmp(a.data.data(), b.data.data(), a.len) == 0;
}

// The raw units back from a decoded value (value = raw · lsb exactly as the decoder computed it).
Int16x3 Raw(const Eigen::Vector3d& value, double lsb) {
  Int16x3 raw{};
  for (int i = 0; i < 3; ++i) raw[i] = static_cast<std::int16_t>(std::lround(value[i] / lsb));
  return raw;
}

// |q|² of a decoded attitude: 1 within the wire's rounding (qw² = 1 − |v|² or 0 when that is in
// [−1/32767, 0)).
bool UnitAttitude(double qw, const Eigen::Vector3d& v) {
  const double n2 = qw * qw + v.squaredNorm();
  return qw >= 0.0 && std::isfinite(n2) && n2 >= 1.0 - 1e-12 &&
         n2 <= 1.0 + 1.0 / heft::drivers::kImuQuaternionScale + 1e-12;
}

// The configuration: base identifier, gyro and accelerometer LSB (zero keeps the default).
ImuConfig ReadConfig(Bytes& in) {
  ImuConfig cfg;
  if (const auto v = in.Take(2)) cfg.base_id = static_cast<std::uint32_t>(v % 0x7FE);
  if (const auto v = in.Take(2)) cfg.gyro_lsb = static_cast<double>(v) * 1.5e-5;   // ≤ 0.98
  if (const auto v = in.Take(2)) cfg.accel_lsb = static_cast<double>(v) * 1.5e-4;  // ≤ 9.8
  return cfg;
}

// One frame: which identifier (A, B, C, or the one read as it is), flags, length, 8 data bytes.
CanFrame ReadFrame(Bytes& in, const ImuConfig& cfg) {
  const auto which = in.Take(1) % 4;
  CanFrame f;
  const auto id = static_cast<std::uint32_t>(in.Take(2));
  f.id = which < 3 ? cfg.base_id + static_cast<std::uint32_t>(which) : id;
  f.flags = static_cast<std::uint8_t>(in.Take(1) & 0x3F);
  f.len = static_cast<std::uint8_t>(in.Take(1) % (CanFrame::kMaxData + 1));
  for (std::size_t i = 0; i < 8; ++i) f.data[i] = static_cast<std::uint8_t>(in.Take(1));
  return f;
}

// The single-frame decoders (the frame's identifier is the caller's business): what one accepts
// re-encodes to the same bytes, finite, the attitude a unit quaternion.
void CheckDecoders(const CanFrame& f, const ImuConfig& cfg) {
  using namespace heft::drivers;
  ImuFrameReading r;
  if (DecodeImuGyro(f, cfg, r) == Reject::kNone) {
    if (!SameBytes(EncodeImuGyro(cfg, r.raw, r.status, r.counter), f)) std::abort();
    if (!r.value.allFinite()) std::abort();
  }
  if (DecodeImuAccel(f, cfg, r) == Reject::kNone) {
    if (!SameBytes(EncodeImuAccel(cfg, r.raw, r.status, r.counter), f)) std::abort();
    if (!r.value.allFinite()) std::abort();
  }
  if (DecodeImuAttitude(f, r) == Reject::kNone) {
    if (!SameBytes(EncodeImuAttitude(cfg, r.raw, r.status, r.counter), f)) std::abort();
    if (!UnitAttitude(r.qw, r.value)) std::abort();
  }
}

// A completed sample: the three frames are exactly what the device would send for this reading,
// its values finite, and usable only when all three frames were VALID without a fault bit.
void CheckComplete(const ImuReading& out, const ImuConfig& cfg, const CanFrame& frame_a,
                   const CanFrame& frame_b, const CanFrame& frame_c) {
  using namespace heft::drivers;
  if (out.counter != frame_a.data[7] || out.counter != frame_b.data[7] ||
      out.counter != frame_c.data[7])
    std::abort();
  const auto& st = out.frame_status;
  if (!SameBytes(EncodeImuGyro(cfg, Raw(out.angular_velocity, cfg.gyro_lsb), st[0], out.counter),
                 frame_a) ||
      !SameBytes(EncodeImuAccel(cfg, Raw(out.specific_force, cfg.accel_lsb), st[1], out.counter),
                 frame_b) ||
      !SameBytes(EncodeImuAttitude(cfg, Raw(out.attitude.vec(), 1.0 / kImuQuaternionScale), st[2],
                                   out.counter),
                 frame_c))
    std::abort();
  if (!out.angular_velocity.allFinite() || !out.specific_force.allFinite() ||
      !UnitAttitude(out.attitude.w(), out.attitude.vec()))
    std::abort();
  const bool usable_each = [&] {
    for (const std::uint8_t s : st)
      if (!(s & ImuStatus::kValid) || (s & ImuStatus::kFaultMask)) return false;
    return true;
  }();
  if (out.usable != usable_each) std::abort();
}

// The assembler against the pairing rule (docs/can-devices.md section 4), modelled here: the
// frame's own decoder decides whether it is well-formed (a malformed frame or another identifier
// changes nothing); a frame A starts a sample and drops the pending one; a B or C is used only
// while the A of its counter is pending and it has not come yet, otherwise it is rejected as
// unpaired and drops nothing (the pending sample stays pending).
class PairingModel {
 public:
  void Feed(const CanFrame& f, const ImuConfig& cfg) {
    using namespace heft::drivers;
    ImuFrameReading r;
    ImuReading out;
    Reject why = Reject::kNone;
    bool dropped = false;
    const std::uint32_t kind = f.id - cfg.base_id;
    const Reject refused = kind == 0   ? DecodeImuGyro(f, cfg, r)
                           : kind == 1 ? DecodeImuAccel(f, cfg, r)
                           : kind == 2 ? DecodeImuAttitude(f, r)
                                       : Reject::kUnknownId;
    const bool was_pending = pending_;
    const auto result = assembler_.Feed(f, cfg, out, why, dropped);
    if ((result == ImuAssembler::Result::kRejected) != (why != Reject::kNone)) std::abort();
    (void)ToString(why);
    if (refused != Reject::kNone) {
      if (why != refused || dropped) std::abort();
      return;
    }
    if (kind == 0) {
      if (result != ImuAssembler::Result::kPending || dropped != was_pending) std::abort();
      if (dropped && assembler_.dropped_counter() != frame_a_.data[7]) std::abort();
      pending_ = true;
      have_b_ = have_c_ = false;
      frame_a_ = f;
      return;
    }
    bool& have = kind == 1 ? have_b_ : have_c_;
    if (dropped) std::abort();  // only a frame A drops a sample
    if (!pending_ || f.data[7] != frame_a_.data[7] || have) {
      if (why != Reject::kUnpaired) std::abort();
      return;
    }
    have = true;
    (kind == 1 ? frame_b_ : frame_c_) = f;
    if (!(have_b_ && have_c_)) {
      if (result != ImuAssembler::Result::kPending) std::abort();
      return;
    }
    if (result != ImuAssembler::Result::kComplete) std::abort();
    pending_ = false;
    CheckComplete(out, cfg, frame_a_, frame_b_, frame_c_);
  }

 private:
  ImuAssembler assembler_;
  bool pending_ = false;  // the harness's own model: a frame A was accepted and not yet used up
  CanFrame frame_a_, frame_b_, frame_c_;
  bool have_b_ = false, have_c_ = false;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes in(data, size);
  const ImuConfig cfg = ReadConfig(in);
  PairingModel model;
  while (in.left() > 0) {
    const CanFrame f = ReadFrame(in, cfg);
    CheckDecoders(f, cfg);
    model.Feed(f, cfg);
  }
  return 0;
}

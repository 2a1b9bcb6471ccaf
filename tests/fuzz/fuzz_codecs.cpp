// The CAN codecs of every device kind on fuzzed frames, with a fuzzed configuration inside the
// ranges the configuration parser allows (drivers/src/driver_config.cpp). Checks beyond "no crash,
// no UB": a frame a decoder accepts re-encodes to the same bytes, and the F/T assembler fed a
// sequence of frames completes only pairs that EncodeFt would have sent.
//
// Input: a 24-byte configuration, then frames of 13 bytes: kind (encoder, torque or F/T, mod 3),
// identifier (u16 little-endian), flags, length, 8 data bytes. Configuration fields that are all
// zero keep the reference robot's default (so seeds made of real frames decode); others map into
// the parser's ranges: encoder node, counts per revolution, zero offset, direction, velocity LSB,
// torque node, offset, N·m per count, direction, F/T base identifier and tare.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "fuzz_bytes.hpp"
#include "heft/drivers/codecs.hpp"

namespace {

using heft::drivers::Reject;
using heft::fuzz::Bytes;
using heft::hal::CanFrame;

bool SameBytes(const CanFrame& a, const CanFrame& b) {
  return a.len == b.len && std::memcmp(a.data.data(), b.data.data(), a.len) == 0;
}

int Direction(std::uint64_t v, int fallback) {
  return v == 0 ? fallback : static_cast<int>(v % 3) - 1;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace heft::drivers;
  Bytes in(data, size);
  EncoderConfig enc;
  TorqueConfig tq;
  FtConfig ft;
  if (const auto v = in.Take(1)) enc.node = static_cast<std::uint32_t>(v % 128);
  if (const auto v = in.Take(4)) enc.counts_per_rev = static_cast<double>(v) * 232.8;  // ≤ 1e12
  if (const auto v = in.Take(4)) enc.zero_offset = static_cast<std::int32_t>(v);
  enc.direction = Direction(in.Take(1), 1);
  if (const auto v = in.Take(2)) enc.velocity_lsb = static_cast<double>(v) * 1.5e-5;  // ≤ 1
  if (const auto v = in.Take(1)) tq.node = static_cast<std::uint32_t>(v % 128);
  if (const auto v = in.Take(3)) tq.offset = static_cast<std::int32_t>(v % 16777215) - 8388607;
  if (const auto v = in.Take(2)) tq.nm_per_count = static_cast<double>(v) * 1.5e-5;
  tq.direction = Direction(in.Take(1), 1);
  if (const auto v = in.Take(2)) ft.base_id = static_cast<std::uint32_t>(v % 0x7FF);
  const auto tare = in.Take(3);
  for (int k = 0; k < 6; ++k) ft.tare[k] = static_cast<double>((tare >> (4 * k)) & 0xF) * 1000.0;

  FtAssembler assembler;
  CanFrame last_a;
  while (in.left() > 0) {
    const auto kind = in.Take(1) % 3;
    CanFrame f;
    f.id = static_cast<std::uint32_t>(in.Take(2));
    f.flags = static_cast<std::uint8_t>(in.Take(1) & 0x3F);
    f.len = static_cast<std::uint8_t>(in.Take(1) % (CanFrame::kMaxData + 1));
    for (std::size_t i = 0; i < 8; ++i) f.data[i] = static_cast<std::uint8_t>(in.Take(1));
    if (kind == 0) {
      EncoderReading r;
      if (DecodeEncoder(f, enc, r) == Reject::kNone) {
        if (!SameBytes(EncodeEncoder(enc, r.counts, r.velocity_raw, r.status, r.counter), f))
          std::abort();  // accepted but not what the encoder would have sent
        if (!std::isfinite(r.position) || !std::isfinite(r.velocity)) std::abort();
        // The inverses the simulator uses saturate instead of overflowing.
        (void)EncoderCounts(enc, r.position);
        (void)EncoderVelocityRaw(enc, r.velocity);
      }
    } else if (kind == 1) {
      TorqueReading r;
      if (DecodeTorque(f, tq, r) == Reject::kNone) {
        if (!SameBytes(EncodeTorque(tq, r.raw, r.temperature, r.status, r.counter), f))
          std::abort();
        if (!std::isfinite(r.torque)) std::abort();
        (void)TorqueRaw(tq, r.torque);
      }
    } else {
      FtReading r;
      Reject why = Reject::kNone;
      bool dropped = false;
      const auto result = assembler.Feed(f, ft, r, why, dropped);
      if (result == FtAssembler::Result::kPending) last_a = f;
      if (result == FtAssembler::Result::kComplete) {
        const auto pair = EncodeFt(ft, r.gauges, r.status, r.counter);
        if (!SameBytes(pair[0], last_a) || !SameBytes(pair[1], f)) std::abort();
        if (!r.wrench.allFinite()) std::abort();
      }
      if ((result == FtAssembler::Result::kRejected) != (why != Reject::kNone)) std::abort();
      (void)ToString(why);
    }
  }
  return 0;
}

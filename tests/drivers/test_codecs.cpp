// Golden bytes for each codec (the spec's layouts), the CRC check value, sign extension at ±2^23,
// every status bit and malformed case, and encode→decode round trips over random values.
#include <gtest/gtest.h>

#include <random>

#include "heft/drivers/codecs.hpp"

namespace heft::drivers {
namespace {

hal::CanFrame Bytes(std::uint32_t id, std::initializer_list<std::uint8_t> data) {
  hal::CanFrame f;
  f.id = id;
  f.len = static_cast<std::uint8_t>(data.size());
  std::copy(data.begin(), data.end(), f.data.begin());
  return f;
}

TEST(Crc, SaeJ1850CheckValue) {
  const std::uint8_t text[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  EXPECT_EQ(Crc8SaeJ1850(text), 0x4B);
}

TEST(Encoder, GoldenBytes) {
  EncoderConfig cfg;
  cfg.node = 5;
  // counts 262144 (a quarter turn), velocity −2000 × 0.0005 = −1 rad/s, VALID, counter 7.
  const hal::CanFrame f = Bytes(0x105, {0x00, 0x00, 0x04, 0x00, 0x30, 0xF8, 0x01, 0x07});
  EncoderReading r;
  ASSERT_EQ(DecodeEncoder(f, cfg, r), Reject::kNone);
  EXPECT_EQ(r.counts, 262144);
  EXPECT_NEAR(r.position, M_PI / 2, 1e-15);
  EXPECT_EQ(r.velocity_raw, -2000);
  EXPECT_NEAR(r.velocity, -1.0, 1e-15);
  EXPECT_TRUE(r.usable);
  EXPECT_EQ(r.counter, 7);
  const hal::CanFrame g = EncodeEncoder(cfg, 262144, -2000, 0x01, 7);
  EXPECT_EQ(g.id, 0x105u);
  EXPECT_EQ(g.data, f.data);
  // Direction and zero offset.
  cfg.direction = -1;
  cfg.zero_offset = 262144;
  ASSERT_EQ(DecodeEncoder(f, cfg, r), Reject::kNone);
  EXPECT_EQ(r.position, 0.0);
  EXPECT_NEAR(r.velocity, 1.0, 1e-15);
}

TEST(Encoder, StatusBitsAndMalformedFrames) {
  EncoderConfig cfg;
  EncoderReading r;
  auto with_status = [](std::uint8_t s) { return Bytes(0x100, {1, 0, 0, 0, 0, 0, s, 0}); };
  const std::pair<std::uint8_t, bool> cases[] = {
      {0x01, true}, {0x00, false}, {0x03, true}, {0x05, true}, {0x09, false}};
  for (auto [status, usable] : cases) {
    ASSERT_EQ(DecodeEncoder(with_status(status), cfg, r), Reject::kNone);
    EXPECT_EQ(r.usable, usable) << int(status);
  }
  for (int reserved : {0x10, 0x20, 0x40, 0x80})
    EXPECT_EQ(DecodeEncoder(with_status(static_cast<std::uint8_t>(0x01 | reserved)), cfg, r),
              Reject::kReservedBits);
  hal::CanFrame f = with_status(1);
  f.len = 7;
  EXPECT_EQ(DecodeEncoder(f, cfg, r), Reject::kWrongLength);
  f = with_status(1);
  f.flags = hal::CanFrame::kRemote;
  EXPECT_EQ(DecodeEncoder(f, cfg, r), Reject::kRemote);
  f.flags = hal::CanFrame::kExtended;
  EXPECT_EQ(DecodeEncoder(f, cfg, r), Reject::kExtended);
  f.flags = hal::CanFrame::kFd;  // the same payload in an FD frame is fine
  EXPECT_EQ(DecodeEncoder(f, cfg, r), Reject::kNone);
}

TEST(Torque, GoldenBytesCrcAndSignExtension) {
  TorqueConfig cfg;
  cfg.node = 3;
  // raw −123456 (0xFFFE1DC0), 25 °C, VALID, counter 9, CRC over bytes 0..6.
  hal::CanFrame f = Bytes(0x203, {0xC0, 0x1D, 0xFE, 0xFF, 25, 0x01, 9, 0x00});
  f.data[7] = Crc8SaeJ1850({f.data.data(), 7});
  TorqueReading r;
  ASSERT_EQ(DecodeTorque(f, cfg, r), Reject::kNone);
  EXPECT_EQ(r.raw, -123456);
  EXPECT_NEAR(r.torque, -12.3456, 1e-12);
  EXPECT_EQ(r.temperature, 25);
  EXPECT_TRUE(r.usable);
  EXPECT_EQ(EncodeTorque(cfg, -123456, 25, 0x01, 9).data, f.data);
  // ±2^23: −2^23 is the most negative 24-bit value; +2^23 does not fit.
  auto raw_frame = [&](std::int32_t raw) { return EncodeTorque(cfg, raw, 0, 0x01, 0); };
  ASSERT_EQ(DecodeTorque(raw_frame(-(1 << 23)), cfg, r), Reject::kNone);
  EXPECT_EQ(r.raw, -(1 << 23));
  ASSERT_EQ(DecodeTorque(raw_frame((1 << 23) - 1), cfg, r), Reject::kNone);
  EXPECT_EQ(r.raw, (1 << 23) - 1);
  EXPECT_EQ(DecodeTorque(raw_frame(1 << 23), cfg, r), Reject::kRawOutOfRange);
  EXPECT_EQ(DecodeTorque(raw_frame(-(1 << 23) - 1), cfg, r), Reject::kRawOutOfRange);
  // Bad CRC, status bits, reserved bits.
  f.data[7] ^= 1;
  EXPECT_EQ(DecodeTorque(f, cfg, r), Reject::kBadCrc);
  for (auto [status, usable] :
       {std::pair<std::uint8_t, bool>{0x01, true}, {0x00, false}, {0x03, false}, {0x05, false}}) {
    ASSERT_EQ(DecodeTorque(EncodeTorque(cfg, 100, 0, status, 0), cfg, r), Reject::kNone);
    EXPECT_EQ(r.usable, usable) << int(status);
  }
  for (int reserved : {0x08, 0x10, 0x80})
    EXPECT_EQ(
        DecodeTorque(EncodeTorque(cfg, 100, 0, static_cast<std::uint8_t>(1 | reserved), 0), cfg, r),
        Reject::kReservedBits);
}

TEST(ForceTorque, GoldenBytesPairingAndDrops) {
  FtConfig cfg;
  cfg.base_id = 0x300;
  cfg.calibration = Matrix6::Identity();
  cfg.calibration(0, 1) = 0.5;
  cfg.tare << 1, 0, 0, 0, 0, 0;
  const hal::CanFrame a =
      Bytes(0x300, {0x00, 0x2A, 0x00, 0x0B, 0xFF, 0xFE, 0x01, 0x00});  // g0 11, g2 −2, g4 256
  const hal::CanFrame b =
      Bytes(0x301, {0x00, 0x04, 0x80, 0x00, 0x7F, 0xFF, 0x2A, 0x00});  // g1 4, g3 −32768, g5 32767
  FtAssembler asm_;
  FtReading r;
  Reject why;
  bool dropped;
  EXPECT_EQ(asm_.Feed(a, cfg, r, why, dropped), FtAssembler::Result::kPending);
  ASSERT_EQ(asm_.Feed(b, cfg, r, why, dropped), FtAssembler::Result::kComplete);
  EXPECT_EQ(r.gauges, (Gauges{11, 4, -2, -32768, 256, 32767}));
  EXPECT_EQ(r.counter, 0x2A);
  EXPECT_NEAR(r.wrench[0], (11 - 1) + 0.5 * 4, 1e-12);
  EXPECT_EQ(r.wrench[3], -32768);
  // g3 and g5 sit at the int16 rails: decoded as they are, but the sample is saturated, so not
  // usable (the drivers' plausibility check, drivers/README.md).
  EXPECT_TRUE(r.saturated);
  EXPECT_FALSE(r.usable);
  const auto enc = EncodeFt(cfg, r.gauges, 0, 0x2A);
  EXPECT_EQ(enc[0].data, a.data);
  EXPECT_EQ(enc[1].data, b.data);
  // Frame B without A, counter mismatch, reserved byte, a dropped sample (A, A), a fault code.
  EXPECT_EQ(asm_.Feed(b, cfg, r, why, dropped), FtAssembler::Result::kRejected);
  EXPECT_EQ(why, Reject::kUnpaired);
  asm_.Feed(a, cfg, r, why, dropped);
  hal::CanFrame b2 = b;
  b2.data[6] = 0x2B;
  EXPECT_EQ(asm_.Feed(b2, cfg, r, why, dropped), FtAssembler::Result::kRejected);
  EXPECT_EQ(why, Reject::kUnpaired);
  asm_.Feed(a, cfg, r, why, dropped);
  EXPECT_TRUE(dropped);  // the pending A was abandoned
  b2 = b;
  b2.data[7] = 1;
  EXPECT_EQ(asm_.Feed(b2, cfg, r, why, dropped), FtAssembler::Result::kRejected);
  EXPECT_EQ(why, Reject::kReservedBits);
  hal::CanFrame a_fault = a;
  a_fault.data[0] = 0x13;
  asm_.Reset();
  asm_.Feed(a_fault, cfg, r, why, dropped);
  ASSERT_EQ(asm_.Feed(b, cfg, r, why, dropped), FtAssembler::Result::kComplete);
  EXPECT_FALSE(r.usable);
  EXPECT_EQ(r.status, 0x13);
}

TEST(Codecs, RandomRoundTrips) {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<std::int32_t> i32(INT32_MIN, INT32_MAX),
      raw24(-(1 << 23), (1 << 23) - 1);
  std::uniform_int_distribution<int> i16(INT16_MIN, INT16_MAX), u8(0, 255);
  EncoderConfig ec;
  TorqueConfig tc;
  FtConfig fc;
  for (int k = 0; k < 10000; ++k) {
    const std::int32_t counts = i32(rng);
    const auto vel = static_cast<std::int16_t>(i16(rng));
    const auto cnt = static_cast<std::uint8_t>(u8(rng));
    const auto st = static_cast<std::uint8_t>(u8(rng) & 0x0F);
    EncoderReading e;
    ASSERT_EQ(DecodeEncoder(EncodeEncoder(ec, counts, vel, st, cnt), ec, e), Reject::kNone);
    ASSERT_EQ(e.counts, counts);
    ASSERT_EQ(e.velocity_raw, vel);
    ASSERT_EQ(e.status, st);
    ASSERT_EQ(e.counter, cnt);
    TorqueReading t;
    const std::int32_t raw = raw24(rng);
    const auto temp = static_cast<std::int8_t>(u8(rng) - 128);
    ASSERT_EQ(
        DecodeTorque(EncodeTorque(tc, raw, temp, static_cast<std::uint8_t>(st & 0x07), cnt), tc, t),
        Reject::kNone);
    ASSERT_EQ(t.raw, raw);
    ASSERT_EQ(t.temperature, temp);
    Gauges g;
    for (auto& x : g) x = static_cast<std::int16_t>(i16(rng));
    const auto frames = EncodeFt(fc, g, 0, cnt);
    FtAssembler a;
    FtReading r;
    Reject why;
    bool dropped;
    a.Feed(frames[0], fc, r, why, dropped);
    ASSERT_EQ(a.Feed(frames[1], fc, r, why, dropped), FtAssembler::Result::kComplete);
    ASSERT_EQ(r.gauges, g);
  }
  // Physical values through the nearest raw value.
  EncoderReading e;
  DecodeEncoder(EncodeEncoder(ec, EncoderCounts(ec, 1.234), EncoderVelocityRaw(ec, -0.321), 1, 0),
                ec, e);
  EXPECT_NEAR(e.position, 1.234, M_PI / ec.counts_per_rev);
  EXPECT_NEAR(e.velocity, -0.321, ec.velocity_lsb / 2);
}

}  // namespace
}  // namespace heft::drivers

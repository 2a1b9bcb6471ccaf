// Golden bytes of the standard actuators' codecs, written from the public definitions, not from
// heft's encoders: the MIT-mode reply as the mini-cheetah motor controller firmware packs it
// (pack_reply: byte 0 the motor id, 16-bit position big-endian, 12-bit velocity, 12-bit torque or
// current; uint_to_float x·(max − min)/(2^bits − 1) + min with min = −max), and CiA 402 over
// CANopen (CiA 301: little-endian PDO payloads, heartbeat 0x700 + node with the NMT state, EMCY
// 0x080 + node with the error code and register; CiA 402: statusword 0x6041, position 0x6064,
// velocity 0x606C, torque 0x6077 in per mille of the rated torque, current 0x6078 likewise).
#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <numbers>

#include "heft/drivers/canopen_codec.hpp"
#include "heft/drivers/mit_codec.hpp"

namespace heft::drivers {
namespace {

hal::CanFrame Bytes(std::uint32_t id, std::initializer_list<std::uint8_t> bytes) {
  hal::CanFrame f;
  f.id = id;
  for (std::uint8_t b : bytes) f.data[f.len++] = b;
  return f;
}

MitConfig Mit() {  // the mini cheetah actuator's firmware ranges
  MitConfig c;
  c.motor_id = 1;
  c.p_max = 12.5;
  c.v_max = 65.0;
  c.t_max = 18.0;
  return c;
}

// Fails if a field is taken from the wrong bits or bytes, the scaling is not the firmware's, or the
// range's ends are not its codes 0 and 2^bits − 1.
TEST(MitReply, GoldenBytesDecodeAsTheFirmwareDefinesThem) {
  struct Golden {
    std::initializer_list<std::uint8_t> bytes;
    std::uint16_t p_int, v_int, t_int;
    double p, v, t;
  };
  const Golden golden[] = {
      {{0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, 0xFFFF, 0xFFF, 0xFFF, 12.5, 65.0, 18.0},
      {{0x01, 0x00, 0x00, 0x00, 0x00, 0x00}, 0, 0, 0, -12.5, -65.0, -18.0},
      {{0x01, 0x80, 0x00, 0x80, 0x08, 0x00},
       0x8000,
       0x800,
       0x800,
       0.0001907377737087046,
       0.015873015873012264,
       0.00439560439560438},
      {{0x01, 0x12, 0x34, 0x56, 0x78, 0x9A},
       0x1234,
       0x567,
       0x89A,
       -10.722323949034866,
       -21.095238095238095,
       1.358241758241757},
      // 8 bytes (firmwares that append temperature and an error code): the extra bytes ignored.
      {{0x01, 0x12, 0x34, 0x56, 0x78, 0x9A, 0x28, 0x00},
       0x1234,
       0x567,
       0x89A,
       -10.722323949034866,
       -21.095238095238095,
       1.358241758241757},
  };
  for (const Golden& g : golden) {
    MitReading r;
    ASSERT_EQ(DecodeMitReply(Bytes(0x000, g.bytes), Mit(), r), Reject::kNone);
    EXPECT_EQ(r.motor_id, 1);
    EXPECT_EQ(r.p_int, g.p_int);
    EXPECT_EQ(r.v_int, g.v_int);
    EXPECT_EQ(r.t_int, g.t_int);
    EXPECT_NEAR(r.position, g.p, 1e-12);
    EXPECT_NEAR(r.velocity, g.v, 1e-12);
    EXPECT_NEAR(r.torque, g.t, 1e-12);
  }
}

// The firmware's pack_reply of (0, 0, 0): float_to_uint truncates (x − min)·(2^bits − 1)/span, so
// 0 is code 32767 (16 bits) and 2047 (12 bits). Fails if heft's encoder rounds or packs otherwise.
TEST(MitReply, EncoderPacksAsTheFirmware) {
  const hal::CanFrame f = EncodeMitReply(Mit(), 0.0, 0.0, 0.0);
  const std::uint8_t expected[] = {0x01, 0x7F, 0xFF, 0x7F, 0xF7, 0xFF};
  ASSERT_EQ(f.len, 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(f.data[i], expected[i]) << "byte " << i;
  EXPECT_EQ(EncodeMitReply(Mit(), 99.0, -99.0, 99.0).data[1], 0xFF);  // saturates
  EXPECT_EQ(EncodeMitReply(Mit(), 99.0, -99.0, 99.0).data[3], 0x00);
}

// A current (A) through the torque constant and the gear ratio, and a reversed joint. Fails if the
// conversion or the direction is not applied, or applied to position and velocity twice.
TEST(MitReply, CurrentBecomesATorqueThroughKtAndTheGear) {
  MitConfig c = Mit();
  c.t_max = 40.0;  // A
  c.current = {true, 0.1, 6.0, 0.1};
  c.direction = -1;
  c.zero_offset = 0.5;
  MitReading r;
  ASSERT_EQ(DecodeMitReply(Bytes(0, {0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}), c, r), Reject::kNone);
  EXPECT_NEAR(r.torque, -40.0 * 0.1 * 6.0, 1e-12);
  EXPECT_NEAR(r.position, -(12.5 - 0.5), 1e-12);
  EXPECT_NEAR(r.velocity, -65.0, 1e-12);
}

// Fails if a frame that is not a reply of this actuator is decoded.
TEST(MitReply, MalformedRepliesAreRejectedByReason) {
  MitReading r;
  EXPECT_EQ(DecodeMitReply(Bytes(0, {1, 2, 3, 4, 5}), Mit(), r), Reject::kWrongLength);
  hal::CanFrame fd = Bytes(0, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  fd.flags = hal::CanFrame::kFd;
  EXPECT_EQ(DecodeMitReply(fd, Mit(), r), Reject::kWrongLength);
  hal::CanFrame remote = Bytes(0, {1, 2, 3, 4, 5, 6});
  remote.flags = hal::CanFrame::kRemote;
  EXPECT_EQ(DecodeMitReply(remote, Mit(), r), Reject::kRemote);
  hal::CanFrame ext = Bytes(0, {1, 2, 3, 4, 5, 6});
  ext.flags = hal::CanFrame::kExtended;
  EXPECT_EQ(DecodeMitReply(ext, Mit(), r), Reject::kExtended);
  EXPECT_EQ(DecodeMitReply(Bytes(0, {2, 0, 0, 0, 0, 0}), Mit(), r), Reject::kUnknownId);
  EXPECT_EQ(MitMotorId(Bytes(0, {})), -1);
}

Cia402Config Drive() {
  Cia402Config c;
  c.node = 5;
  c.tpdos[0] = {0x185, {Cia402Object::kStatusword, Cia402Object::kPosition}, 2};
  c.tpdos[1] = {0x285, {Cia402Object::kVelocity, Cia402Object::kTorque}, 2};
  c.num_tpdos = 2;
  c.counts_per_rev = 524288.0;
  c.gear_ratio = 100.0;
  c.rated_torque = 0.32;
  return c;
}

// Fails if the PDO payload is not read little-endian and back to back in the mapping's order, or
// if a value is not scaled by the definition (position units per turn, per mille of the rated
// torque) and the gear.
TEST(Cia402, GoldenTpdosDecodeAsCiA301AndCiA402DefineThem) {
  const Cia402Config c = Drive();
  Cia402Reading r;
  // statusword 0x0237 (ready, switched on, operation enabled, voltage, quick stop off, remote),
  // position 0x00010000 = 65536 units = 1/8 motor turn.
  ASSERT_EQ(DecodeCia402Tpdo(Bytes(0x185, {0x37, 0x02, 0x00, 0x00, 0x01, 0x00}), c.tpdos[0], c, r),
            Reject::kNone);
  EXPECT_TRUE(r.has_statusword && r.has_position && !r.has_velocity && !r.has_torque);
  EXPECT_EQ(r.statusword, 0x0237);
  EXPECT_EQ(r.position_raw, 65536);
  EXPECT_NEAR(r.position, 0.007853981633974483, 1e-15);
  ASSERT_EQ(DecodeCia402Tpdo(Bytes(0x185, {0x08, 0x00, 0xFF, 0xFF, 0xFF, 0xFF}), c.tpdos[0], c, r),
            Reject::kNone);
  EXPECT_EQ(r.statusword & CiaStatusword::kFault, CiaStatusword::kFault);
  EXPECT_EQ(r.position_raw, -1);
  // velocity −4096 units/s (0xFFFFF000), torque 500 ‰ (0x01F4) of 0.32 N·m at the motor.
  ASSERT_EQ(DecodeCia402Tpdo(Bytes(0x285, {0x00, 0xF0, 0xFF, 0xFF, 0xF4, 0x01}), c.tpdos[1], c, r),
            Reject::kNone);
  EXPECT_EQ(r.velocity_raw, -4096);
  EXPECT_NEAR(r.velocity, -0.0004908738521234052, 1e-15);
  EXPECT_EQ(r.torque_raw, 500);
  EXPECT_NEAR(r.torque, 0.5 * 0.32 * 100.0, 1e-12);
  // −500 ‰ (0xFE0C).
  ASSERT_EQ(DecodeCia402Tpdo(Bytes(0x285, {0, 0, 0, 0, 0x0C, 0xFE}), c.tpdos[1], c, r),
            Reject::kNone);
  EXPECT_NEAR(r.torque, -16.0, 1e-12);
}

// 0x6078 (per mille of the rated current) through Kt and the gear; placeholders skip their bytes.
// Fails if the current is read as a torque or the unused object's bytes are not skipped.
TEST(Cia402, CurrentActualBecomesATorqueAndUnusedObjectsAreSkipped) {
  Cia402Config c = Drive();
  c.rated_current = 4.0;
  c.current = {true, 0.05, 100.0, 0.1};
  const Cia402Tpdo tpdo{0x385, {Cia402Object::kUnused8, Cia402Object::kCurrent}, 2};
  Cia402Reading r;
  ASSERT_EQ(DecodeCia402Tpdo(Bytes(0x385, {0x08, 0xFA, 0x00}), tpdo, c, r), Reject::kNone);
  EXPECT_TRUE(r.has_torque);
  EXPECT_EQ(r.torque_raw, 250);
  EXPECT_NEAR(r.torque, 0.25 * 4.0 * 0.05 * 100.0, 1e-12);
}

// Fails if a heartbeat or EMCY is misread, or a malformed one is accepted.
TEST(Cia402, HeartbeatAndEmcyGoldenBytes) {
  NmtState s = NmtState::kBootUp;
  EXPECT_EQ(DecodeHeartbeat(Bytes(0x705, {0x05}), s), Reject::kNone);
  EXPECT_EQ(s, NmtState::kOperational);
  EXPECT_EQ(DecodeHeartbeat(Bytes(0x705, {0x7F}), s), Reject::kNone);
  EXPECT_EQ(s, NmtState::kPreOperational);
  EXPECT_EQ(DecodeHeartbeat(Bytes(0x705, {0x04}), s), Reject::kNone);
  EXPECT_EQ(s, NmtState::kStopped);
  EXPECT_EQ(DecodeHeartbeat(Bytes(0x705, {0x00}), s), Reject::kNone);
  EXPECT_EQ(s, NmtState::kBootUp);
  EXPECT_EQ(DecodeHeartbeat(Bytes(0x705, {0x85}), s), Reject::kBadNmtState);
  EXPECT_EQ(DecodeHeartbeat(Bytes(0x705, {0x05, 0x00}), s), Reject::kWrongLength);
  std::uint16_t code = 0;
  std::uint8_t reg = 0;
  // 0x2310 (continuous over-current), error register 0x03 (generic, current).
  EXPECT_EQ(DecodeEmcy(Bytes(0x085, {0x10, 0x23, 0x03, 0, 0, 0, 0, 0}), code, reg), Reject::kNone);
  EXPECT_EQ(code, 0x2310);
  EXPECT_EQ(reg, 0x03);
  EXPECT_EQ(DecodeEmcy(Bytes(0x085, {0x10, 0x23, 0x03}), code, reg), Reject::kWrongLength);
}

// Fails if a TPDO of another length than its mapping's, or a remote one, is decoded.
TEST(Cia402, MalformedTpdosAreRejectedByReason) {
  const Cia402Config c = Drive();
  Cia402Reading r;
  EXPECT_EQ(DecodeCia402Tpdo(Bytes(0x185, {0x37, 0x02, 0, 0, 1}), c.tpdos[0], c, r),
            Reject::kWrongLength);
  EXPECT_EQ(DecodeCia402Tpdo(Bytes(0x185, {0x37, 0x02, 0, 0, 1, 0, 0}), c.tpdos[0], c, r),
            Reject::kWrongLength);
  hal::CanFrame remote = Bytes(0x185, {});
  remote.flags = hal::CanFrame::kRemote;
  EXPECT_EQ(DecodeCia402Tpdo(remote, c.tpdos[0], c, r), Reject::kRemote);
}

// The extreme raw values on a reversed joint (fuzz_canopen_codec's first find: −1 · INT32_MIN
// overflowed an int before the scaling). Fails if a value is not finite or not its exact scaling.
TEST(Cia402, ExtremeRawValuesOnAReversedJointAreFinite) {
  Cia402Config c = Drive();
  c.direction = -1;
  Cia402Reading r;
  ASSERT_EQ(DecodeCia402Tpdo(Bytes(0x285, {0x00, 0x00, 0x00, 0x80, 0x00, 0x80}), c.tpdos[1], c, r),
            Reject::kNone);
  EXPECT_DOUBLE_EQ(r.velocity, 2147483648.0 * 2.0 * std::numbers::pi / c.counts_per_rev / 100.0);
  EXPECT_DOUBLE_EQ(r.torque, 32768.0 * 1e-3 * c.rated_torque * 100.0);
}

// heft's encoders invert the decoders within one unit of the wire's resolution. Fails if either
// side's scaling, direction or offset disagrees with the other.
TEST(StandardCodecs, EncodersRoundTripWithinOneCode) {
  MitConfig m = Mit();
  m.direction = -1;
  m.zero_offset = 0.3;
  m.current = {true, 0.091, 9.0, 0.1};
  m.t_max = 40.0;
  MitReading mr;
  ASSERT_EQ(DecodeMitReply(EncodeMitReply(m, 1.234, -5.6, 7.8), m, mr), Reject::kNone);
  EXPECT_NEAR(mr.position, 1.234, 25.0 / 65535.0);
  EXPECT_NEAR(mr.velocity, -5.6, 130.0 / 4095.0);
  EXPECT_NEAR(mr.torque, 7.8, 80.0 / 4095.0 * 0.091 * 9.0);
  Cia402Config c = Drive();
  c.direction = -1;
  c.zero_offset = 1000;
  Cia402Reading r0, r1;
  ASSERT_EQ(DecodeCia402Tpdo(EncodeCia402Tpdo(c.tpdos[0], c, 0x0237, 0.4, 0, 0), c.tpdos[0], c, r0),
            Reject::kNone);
  ASSERT_EQ(DecodeCia402Tpdo(EncodeCia402Tpdo(c.tpdos[1], c, 0, 0, 1.5, -12.0), c.tpdos[1], c, r1),
            Reject::kNone);
  EXPECT_EQ(r0.statusword, 0x0237);
  EXPECT_NEAR(r0.position, 0.4, 2.0 * std::numbers::pi / c.counts_per_rev / c.gear_ratio);
  EXPECT_NEAR(r1.velocity, 1.5, 2.0 * std::numbers::pi / c.counts_per_rev / c.gear_ratio);
  EXPECT_NEAR(r1.torque, -12.0, 1e-3 * c.rated_torque * c.gear_ratio);
  NmtState s = NmtState::kBootUp;
  ASSERT_EQ(DecodeHeartbeat(EncodeHeartbeat(c, NmtState::kStopped), s), Reject::kNone);
  EXPECT_EQ(s, NmtState::kStopped);
  EXPECT_EQ(EncodeHeartbeat(c, NmtState::kStopped).id, 0x705u);
  EXPECT_EQ(EncodeEmcy(c, 0x2310, 3).id, 0x085u);
}

}  // namespace
}  // namespace heft::drivers

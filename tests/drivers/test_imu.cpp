// The base IMU's codec and assembler (docs/can-devices.md, section 4): golden bytes written by hand
// from the layout, every malformed case, the assembler's pairing and drops, the encoder's
// saturation, and random round trips within half an LSB. The driver loop's base sample from the
// IMU's frames is in test_imu_loop.cpp.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <random>

#include "heft/drivers/codecs.hpp"
#include "heft/drivers/driver_loop.hpp"
#include "imu_frames.hpp"
#include "imu_rig.hpp"

namespace heft::drivers {
namespace {

using test::Bytes;
using test::kAccel;
using test::kAttitude;
using test::kGyro;

TEST(ImuCodec, GoldenBytes) {
  // Fails if a field's position, byte order, sign or scale departs from the layout.
  const ImuConfig cfg;
  ImuFrameReading r;
  ASSERT_EQ(DecodeImuGyro(kGyro, cfg, r), Reject::kNone);
  EXPECT_EQ(r.raw, (Int16x3{1000, -500, 2}));
  EXPECT_NEAR(r.value.x(), 1.0, 1e-15);
  EXPECT_NEAR(r.value.y(), -0.5, 1e-15);
  EXPECT_NEAR(r.value.z(), 0.002, 1e-15);
  EXPECT_EQ(r.status, 0x01);
  EXPECT_EQ(r.counter, 0x2A);
  ASSERT_EQ(DecodeImuAccel(kAccel, cfg, r), Reject::kNone);
  EXPECT_EQ(r.raw, (Int16x3{50, -4905, 0}));
  EXPECT_NEAR(r.value.y(), -9.81, 1e-12);
  ASSERT_EQ(DecodeImuAttitude(kAttitude, r), Reject::kNone);
  EXPECT_EQ(r.raw, (Int16x3{0, 0, 23170}));
  EXPECT_NEAR(r.value.z(), std::sqrt(0.5), 0.5 / 32767);
  EXPECT_NEAR(r.qw, std::sqrt(0.5), 1e-4);  // qw from the unit norm
  // The encoders write the same bytes.
  EXPECT_EQ(EncodeImuGyro(cfg, {1000, -500, 2}, 0x01, 0x2A).data, kGyro.data);
  EXPECT_EQ(EncodeImuAccel(cfg, {50, -4905, 0}, 0x01, 0x2A).data, kAccel.data);
  const hal::CanFrame c = EncodeImuAttitude(cfg, {0, 0, 23170}, 0x01, 0x2A);
  EXPECT_EQ(c.id, 0x402u);
  EXPECT_EQ(c.data, kAttitude.data);
  // Physical values → the same raw values (a negative qw is sent as −q).
  bool saturated = true;
  EXPECT_EQ(ImuGyroRaw(cfg, {1.0, -0.5, 0.002}, saturated), (Int16x3{1000, -500, 2}));
  EXPECT_FALSE(saturated);
  const Eigen::Quaterniond z90(Eigen::AngleAxisd(M_PI / 2, Eigen::Vector3d::UnitZ()));
  EXPECT_EQ(ImuAttitudeRaw(z90), (Int16x3{0, 0, 23170}));
  EXPECT_EQ(ImuAttitudeRaw(Eigen::Quaterniond(-z90.coeffs())), (Int16x3{0, 0, 23170}));
  // qx = −0.5 → −16383.5 → −16384 = 0xC000 (nearest, half away from zero).
  const Eigen::Quaterniond qx(std::sqrt(0.75), -0.5, 0.0, 0.0);
  EXPECT_EQ(EncodeImuAttitude(cfg, ImuAttitudeRaw(qx), 1, 0).data,
            (Bytes(0x402, {0x00, 0xC0, 0, 0, 0, 0, 1, 0}).data));
}

TEST(ImuCodec, AttitudeNormBoundary) {
  // 1 − |q|² < −1/32767 is malformed, down to the last unit; slightly negative gives qw = 0.
  // Fails if the test is done in floating point with a different threshold, or qw goes NaN.
  auto frame = [](std::int16_t x, std::int16_t y, std::int16_t z) {
    return EncodeImuAttitude({}, {x, y, z}, 1, 0);
  };
  ImuFrameReading r;
  ASSERT_EQ(DecodeImuAttitude(frame(32640, 640, 2816), r), Reject::kNone);  // exactly −1/32767
  EXPECT_EQ(r.qw, 0.0);
  EXPECT_EQ(DecodeImuAttitude(frame(32767, 128, 128), r), Reject::kBadAttitude);  // −32768/32767²
  EXPECT_EQ(DecodeImuAttitude(frame(32767, 32767, 0), r), Reject::kBadAttitude);
  EXPECT_EQ(DecodeImuAttitude(frame(-32768, 0, 0), r), Reject::kBadAttitude);
  ASSERT_EQ(DecodeImuAttitude(frame(32767, 1, 0), r), Reject::kNone);
  EXPECT_EQ(r.qw, 0.0);
  ASSERT_EQ(DecodeImuAttitude(frame(0, 0, 0), r), Reject::kNone);
  EXPECT_EQ(r.qw, 1.0);
  // The encoder never sends a malformed attitude: rotations by ~180° (qw ≈ 0), where rounding
  // x, y, z to the nearest unit can push |q_xyz|² past the limit. Fails without the encoder's
  // fallback to rounding towards zero (about 700 of these 20000 would be refused).
  std::mt19937_64 rng(11);
  std::normal_distribution<double> n;
  for (int k = 0; k < 20000; ++k) {
    const Eigen::Vector3d v = Eigen::Vector3d(n(rng), n(rng), n(rng)).normalized();
    const Eigen::Quaterniond q(k % 2 ? 0.0 : 1e-6, v.x(), v.y(), v.z());
    const Int16x3 raw = ImuAttitudeRaw(q);
    ASSERT_EQ(DecodeImuAttitude(frame(raw[0], raw[1], raw[2]), r), Reject::kNone) << k;
    const Eigen::Quaterniond back(r.qw, r.value.x(), r.value.y(), r.value.z());
    ASSERT_LT(back.angularDistance(q.normalized()), 0.02) << k;  // qw ill-conditioned here
  }
}

TEST(ImuCodec, MalformedFramesAreRejectedByReason) {
  // Fails if any shape or reserved-bit violation is let through, on any of the three frames.
  const ImuConfig cfg;
  ImuFrameReading r;
  for (const hal::CanFrame& good : {kGyro, kAccel, kAttitude}) {
    auto decode = [&](const hal::CanFrame& f) {
      return good.id == 0x400   ? DecodeImuGyro(f, cfg, r)
             : good.id == 0x401 ? DecodeImuAccel(f, cfg, r)
                                : DecodeImuAttitude(f, r);
    };
    ASSERT_EQ(decode(good), Reject::kNone);
    for (int reserved : {0x10, 0x20, 0x40, 0x80}) {
      hal::CanFrame f = good;
      f.data[6] = static_cast<std::uint8_t>(0x01 | reserved);
      EXPECT_EQ(decode(f), Reject::kReservedBits) << std::hex << good.id << " " << reserved;
    }
    hal::CanFrame f = good;
    f.len = 7;
    EXPECT_EQ(decode(f), Reject::kWrongLength);
    f.len = 0;
    EXPECT_EQ(decode(f), Reject::kWrongLength);
    f = good;
    f.flags = hal::CanFrame::kRemote;
    EXPECT_EQ(decode(f), Reject::kRemote);
    f.flags = hal::CanFrame::kExtended;
    EXPECT_EQ(decode(f), Reject::kExtended);
    f.flags = hal::CanFrame::kFd;  // the same payload in an FD frame is fine
    EXPECT_EQ(decode(f), Reject::kNone);
    f.len = 12;  // an FD frame with more than the 8 bytes is not
    EXPECT_EQ(decode(f), Reject::kWrongLength);
  }
}

TEST(ImuAssembler, CompletesOnlyWithAllThreeFramesOfOneCounter) {
  // Fails if a sample is released early, frames of different counters are combined, a drop is
  // reported late or not at all, or a refused B or C drops the pending sample.
  const ImuConfig cfg;
  ImuAssembler a;
  ImuReading r;
  Reject why;
  bool dropped;
  using R = ImuAssembler::Result;
  EXPECT_EQ(a.Feed(kGyro, cfg, r, why, dropped), R::kPending);
  EXPECT_EQ(a.Feed(kAttitude, cfg, r, why, dropped), R::kPending);  // B and C in either order
  ASSERT_EQ(a.Feed(kAccel, cfg, r, why, dropped), R::kComplete);
  EXPECT_FALSE(dropped);
  EXPECT_EQ(r.counter, 0x2A);
  EXPECT_TRUE(r.usable);
  EXPECT_EQ(r.status, 0x01);
  EXPECT_NEAR(r.angular_velocity.x(), 1.0, 1e-15);
  EXPECT_NEAR(r.specific_force.y(), -9.81, 1e-12);
  EXPECT_NEAR(r.attitude.angularDistance(
                  Eigen::Quaterniond(Eigen::AngleAxisd(M_PI / 2, Eigen::Vector3d::UnitZ()))),
              0.0, 1e-4);
  // B or C without a pending A: rejected, nothing dropped.
  EXPECT_EQ(a.Feed(kAccel, cfg, r, why, dropped), R::kRejected);
  EXPECT_EQ(why, Reject::kUnpaired);
  EXPECT_FALSE(dropped);
  // A new A before the pending sample completed drops it, at once.
  a.Feed(kGyro, cfg, r, why, dropped);
  a.Feed(kAccel, cfg, r, why, dropped);
  hal::CanFrame next_a = kGyro, next_b = kAccel, next_c = kAttitude;
  next_a.data[7] = next_b.data[7] = next_c.data[7] = 0x2B;
  EXPECT_EQ(a.Feed(next_a, cfg, r, why, dropped), R::kPending);
  EXPECT_TRUE(dropped);
  EXPECT_EQ(a.dropped_counter(), 0x2A);
  EXPECT_EQ(a.Feed(next_b, cfg, r, why, dropped), R::kPending);
  EXPECT_FALSE(dropped);
  // A repeated B of the pending sample is refused, the sample still completes.
  EXPECT_EQ(a.Feed(next_b, cfg, r, why, dropped), R::kRejected);
  EXPECT_EQ(why, Reject::kUnpaired);
  ASSERT_EQ(a.Feed(next_c, cfg, r, why, dropped), R::kComplete);
  EXPECT_EQ(r.counter, 0x2B);
  // A C of another counter than the pending A is refused and drops nothing: the pending sample
  // still takes its own B (the full case: StrayFrameOfAnotherCounterDropsNothing).
  EXPECT_EQ(a.Feed(kGyro, cfg, r, why, dropped), R::kPending);
  EXPECT_FALSE(dropped);
  EXPECT_EQ(a.Feed(next_c, cfg, r, why, dropped), R::kRejected);
  EXPECT_EQ(why, Reject::kUnpaired);
  EXPECT_FALSE(dropped);
  EXPECT_EQ(a.Feed(kAccel, cfg, r, why, dropped), R::kPending);
  EXPECT_FALSE(dropped);
  // A malformed frame leaves the pending sample alone.
  hal::CanFrame bad = kAttitude;
  bad.data[6] = 0x11;
  EXPECT_EQ(a.Feed(bad, cfg, r, why, dropped), R::kRejected);
  EXPECT_EQ(why, Reject::kReservedBits);
  EXPECT_FALSE(dropped);
  ASSERT_EQ(a.Feed(kAttitude, cfg, r, why, dropped), R::kComplete);
  EXPECT_EQ(r.counter, 0x2A);
}

TEST(ImuAssembler, StrayFrameOfAnotherCounterDropsNothing) {
  // docs/can-devices.md section 4 (as the F/T cell): only a new frame A drops a pending sample;
  // a B or C of another counter is rejected as unpaired and the pending sample stays pending.
  // Fails if the stray B drops the pending sample (the assembler's old rule: then B(n) is refused
  // as unpaired, sample n never completes and two drops are counted instead of one), or if a
  // drop is reported on the wrong call or with the wrong counter.
  const ImuConfig cfg;
  ImuAssembler a;
  ImuReading r;
  Reject why = Reject::kNone;
  bool dropped = false;
  int drops = 0;
  using R = ImuAssembler::Result;
  constexpr std::uint8_t n = 0x2A;
  auto with_counter = [](hal::CanFrame f, int counter) {
    f.data[7] = static_cast<std::uint8_t>(counter);
    return f;
  };
  auto feed = [&](const hal::CanFrame& f) {
    const R result = a.Feed(f, cfg, r, why, dropped);
    drops += dropped ? 1 : 0;
    return result;
  };
  EXPECT_EQ(feed(with_counter(kGyro, n)), R::kPending);        // A(n)
  EXPECT_EQ(feed(with_counter(kAccel, n + 5)), R::kRejected);  // stray B(n+5)
  EXPECT_EQ(why, Reject::kUnpaired);
  EXPECT_FALSE(dropped);
  EXPECT_EQ(feed(with_counter(kAccel, n)), R::kPending);      // B(n): sample n still pending
  ASSERT_EQ(feed(with_counter(kAttitude, n)), R::kComplete);  // C(n)
  EXPECT_EQ(r.counter, n);
  EXPECT_TRUE(r.usable);
  EXPECT_EQ(drops, 0);
  EXPECT_EQ(feed(with_counter(kGyro, n + 1)), R::kPending);  // A(n+1): n was complete
  EXPECT_FALSE(dropped);
  EXPECT_EQ(feed(with_counter(kGyro, n + 2)), R::kPending);  // A(n+2) drops n+1
  EXPECT_TRUE(dropped);
  EXPECT_EQ(a.dropped_counter(), n + 1);
  EXPECT_EQ(drops, 1);
}

TEST(ImuAssembler, EveryFaultBitOnEveryFrameMakesTheSampleUnusable) {
  // Fails if a fault bit or a missing VALID on any one frame still gives a usable sample.
  const ImuConfig cfg;
  for (int frame = 0; frame < 3; ++frame) {
    for (std::uint8_t status : {std::uint8_t{0x00}, std::uint8_t{0x03}, std::uint8_t{0x05},
                                std::uint8_t{0x09}, std::uint8_t{0x0F}}) {
      hal::CanFrame f[3] = {kGyro, kAccel, kAttitude};
      f[frame].data[6] = status;
      ImuAssembler a;
      ImuReading r;
      Reject why;
      bool dropped;
      for (int k = 0; k < 2; ++k) a.Feed(f[k], cfg, r, why, dropped);
      ASSERT_EQ(a.Feed(f[2], cfg, r, why, dropped), ImuAssembler::Result::kComplete);
      EXPECT_FALSE(r.usable) << frame << " " << int(status);
      EXPECT_EQ(r.frame_status[frame], status);
      // Combined status: VALID only if all had it, a fault bit if any had it.
      EXPECT_EQ(r.status, (status & 0x0E) | (status & 0x01)) << frame << " " << int(status);
    }
  }
}

TEST(ImuCodec, EncoderClampsAndFlagsSaturation) {
  // Fails if an out-of-range value wraps around or is sent without its *_SATURATED bit.
  const ImuConfig cfg;  // ±32.767 rad/s, ±65.534 m/s²
  const Eigen::Quaterniond q = Eigen::Quaterniond::Identity();
  auto frames = EncodeImu(cfg, {40.0, -0.1, 0.0}, {0.0, 0.0, 9.81}, q, ImuStatus::kValid, 3);
  ImuFrameReading r;
  ASSERT_EQ(DecodeImuGyro(frames[0], cfg, r), Reject::kNone);
  EXPECT_EQ(r.raw, (Int16x3{32767, -100, 0}));
  for (const auto& f : frames) EXPECT_EQ(f.data[6], ImuStatus::kValid | ImuStatus::kGyroSaturated);
  frames = EncodeImu(cfg, {0.0, 0.0, 0.0}, {0.0, -70.0, 9.81}, q, ImuStatus::kValid, 3);
  ASSERT_EQ(DecodeImuAccel(frames[1], cfg, r), Reject::kNone);
  EXPECT_EQ(r.raw, (Int16x3{0, -32768, 4905}));
  for (const auto& f : frames) EXPECT_EQ(f.data[6], ImuStatus::kValid | ImuStatus::kAccelSaturated);
  // At the edge: 32.767 rad/s fits, 32.7675 rounds beyond.
  bool saturated = true;
  EXPECT_EQ(ImuGyroRaw(cfg, {32.767, -32.768, 0.0}, saturated), (Int16x3{32767, -32768, 0}));
  EXPECT_FALSE(saturated);
  ImuGyroRaw(cfg, {32.7676, 0.0, 0.0}, saturated);
  EXPECT_TRUE(saturated);
  ImuGyroRaw(cfg, {std::nan(""), 0.0, 0.0}, saturated);
  EXPECT_TRUE(saturated);
  // The assembled sample of saturated frames is unusable.
  ImuAssembler a;
  ImuReading out;
  Reject why;
  bool dropped;
  for (const auto& f : frames) a.Feed(f, cfg, out, why, dropped);
  EXPECT_FALSE(out.usable);
}

TEST(ImuCodec, RandomRoundTripsWithinHalfAnLsb) {
  // Fails if quantisation is not to the nearest unit or the attitude's sign/qw recovery is off.
  // Tolerances: half an LSB per component; the attitude's angle error follows from half a unit
  // in x, y, z propagated to qw = sqrt(1 − |v|²) (|δw| ≤ |v||δv|/w), so it grows as w → 0.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> w(-30.0, 30.0), f(-60.0, 60.0), u(-1.0, 1.0);
  const ImuConfig cfg;
  for (int k = 0; k < 5000; ++k) {
    const Eigen::Vector3d w_I(w(rng), w(rng), w(rng)), f_I(f(rng), f(rng), f(rng));
    Eigen::Quaterniond q(u(rng), u(rng), u(rng), u(rng));
    q.normalize();
    const auto frames =
        EncodeImu(cfg, w_I, f_I, q, ImuStatus::kValid, static_cast<std::uint8_t>(k));
    ImuAssembler a;
    ImuReading r;
    Reject why;
    bool dropped;
    for (const auto& fr : frames) a.Feed(fr, cfg, r, why, dropped);
    ASSERT_TRUE(r.usable);
    for (int i = 0; i < 3; ++i) {
      ASSERT_NEAR(r.angular_velocity[i], w_I[i], cfg.gyro_lsb / 2 + 1e-12);
      ASSERT_NEAR(r.specific_force[i], f_I[i], cfg.accel_lsb / 2 + 1e-12);
    }
    const double qw = std::abs(q.w());
    if (qw < 0.05) continue;  // near 180°: qw is ill-conditioned, see AttitudeNormBoundary
    const double dv = std::sqrt(3.0) * 0.5 / 32767;
    const double dq = dv * std::sqrt(1.0 + (1.0 - qw * qw) / (qw * qw));
    ASSERT_LE(r.attitude.angularDistance(q), 2.0 * dq * 1.01 + 1e-9) << k;
  }
}

}  // namespace
}  // namespace heft::drivers

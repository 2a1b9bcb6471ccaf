// The base IMU (docs/can-devices.md, section 4): golden bytes written by hand from the layout,
// every malformed case, the assembler's pairing and drops, the encoder's saturation; the driver
// loop turning the three frames into the base sample for an IMU mounted rotated and offset on the
// base, staleness, faults, FD frames, and encoder → loop round trips within the quantisation.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <random>

#include "heft/drivers/codecs.hpp"
#include "heft/drivers/driver_loop.hpp"
#include "imu_rig.hpp"

namespace heft::drivers {
namespace {

using test::ImuRig;
using test::RotatedImu;
using test::WithImu;

constexpr std::int64_t kMs = 1'000'000;

hal::CanFrame Bytes(std::uint32_t id, std::initializer_list<std::uint8_t> data) {
  hal::CanFrame f;
  f.id = id;
  f.len = static_cast<std::uint8_t>(data.size());
  std::copy(data.begin(), data.end(), f.data.begin());
  return f;
}

std::size_t Index(Reject r) {
  return static_cast<std::size_t>(r);
}

// ω = (1, −0.5, 0.002) rad/s → (1000, −500, 2) × 0.001; VALID; counter 0x2A.
const hal::CanFrame kGyro = Bytes(0x400, {0xE8, 0x03, 0x0C, 0xFE, 0x02, 0x00, 0x01, 0x2A});
// f = (0.1, −9.81, 0) m/s² → (50, −4905, 0) × 0.002.
const hal::CanFrame kAccel = Bytes(0x401, {0x32, 0x00, 0xD7, 0xEC, 0x00, 0x00, 0x01, 0x2A});
// 90° about z: qz = round(0.70710678 × 32767) = 23170 = 0x5A82, qx = qy = 0.
const hal::CanFrame kAttitude = Bytes(0x402, {0x00, 0x00, 0x00, 0x00, 0x82, 0x5A, 0x01, 0x2A});

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

// ---- the driver loop -------------------------------------------------------------------------

DriverConfig SmallConfig() {
  DriverConfig cfg = ReferenceDriverConfig({"j0", "j1", "j2", "j3"}, {"left_foot_ft"});
  return WithImu(cfg);
}

// What the IMU of RotatedImu() (R_BI = Rz(90°)) measures for a base at rest in orientation q_WB
// with angular velocity w_B and specific force f_B at the IMU's origin, in the base frame.
ImuValues Measured(const Eigen::Quaterniond& q_WB, const Eigen::Vector3d& w_B,
                   const Eigen::Vector3d& f_B) {
  // Written out for Rz(90°): x_I = y_B, y_I = −x_B, z_I = z_B, so v_I = (v_By, −v_Bx, v_Bz).
  ImuValues v;
  v.w_I = Eigen::Vector3d(w_B.y(), -w_B.x(), w_B.z());
  v.f_I = Eigen::Vector3d(f_B.y(), -f_B.x(), f_B.z());
  v.q_WI = q_WB * Eigen::Quaterniond(std::sqrt(0.5), 0.0, 0.0, std::sqrt(0.5));
  return v;
}

Eigen::Quaterniond Orientation(const hal::BaseSample& b) {
  return Eigen::Quaterniond(b.orientation[0], b.orientation[1], b.orientation[2], b.orientation[3]);
}

TEST(DriverLoopImu, HandWrittenFramesOfARotatedMountGiveTheBaseState) {
  // The golden frames above (ω_I, f_I, q_WI = Rz(90°)) through an IMU turned 90° about z: the
  // base is level (R_WB = I), ω_B = (0.5, 1, 0.002), f_B = (9.81, 0.1, 0) at p_BI. Fails if the
  // loop rotates the wrong way (R_IB for R_BI), forgets the mount, or mislabels the point.
  ImuRig rig(SmallConfig());
  for (const auto& f : {kGyro, kAccel, kAttitude}) (void)rig.can0.send(f);
  rig.loop.Tick(kMs);
  const hal::RobotStateSample& s = rig.out();
  ASSERT_TRUE(s.has_base);
  EXPECT_EQ(s.base.health.state, hal::ChannelState::kOk);
  EXPECT_EQ(s.base.health.status_bits, 0x01);
  EXPECT_NEAR(Orientation(s.base).angularDistance(Eigen::Quaterniond::Identity()), 0.0, 1e-4);
  EXPECT_NEAR(s.base.angular_velocity[0], 0.5, 1e-12);
  EXPECT_NEAR(s.base.angular_velocity[1], 1.0, 1e-12);
  EXPECT_NEAR(s.base.angular_velocity[2], 0.002, 1e-12);
  EXPECT_NEAR(s.base.specific_force[0], 9.81, 1e-12);
  EXPECT_NEAR(s.base.specific_force[1], 0.1, 1e-12);
  EXPECT_NEAR(s.base.specific_force[2], 0.0, 1e-12);
  EXPECT_EQ(s.base.specific_force_point, (std::array<double, 3>{0.05, -0.02, 0.08}));
  EXPECT_TRUE(s.base.has_specific_force);
  EXPECT_FALSE(s.base.has_linear_velocity);
}

TEST(DriverLoopImu, EncoderToLoopRoundTripWithinHalfAnLsb) {
  // Random base states through the simulator's encoder and the loop, mount Rz(90°): each
  // component of ω_B, f_B is one of ω_I's, f_I's, so half an LSB bounds it. Fails on any
  // rotation, sign or scale error between SampleEncoder and DriverLoop.
  ImuRig rig(SmallConfig());
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int k = 0; k < 200; ++k) {
    const Eigen::Quaterniond q_WB = Eigen::Quaterniond(u(rng), u(rng), u(rng), u(rng)).normalized();
    const Eigen::Vector3d w_B = 20.0 * Eigen::Vector3d(u(rng), u(rng), u(rng));
    const Eigen::Vector3d f_B = 50.0 * Eigen::Vector3d(u(rng), u(rng), u(rng));
    const ImuValues v = Measured(q_WB, w_B, f_B);
    // The encoder's own inverse agrees with the hand-written one.
    hal::BaseSample b;
    b.orientation = {q_WB.w(), q_WB.x(), q_WB.y(), q_WB.z()};
    for (int i = 0; i < 3; ++i) {
      b.angular_velocity[i] = w_B[i];
      b.specific_force[i] = f_B[i];
    }
    const ImuValues inv = ImuValuesFromBase(rig.cfg.imu.value(), b);
    ASSERT_LT((inv.w_I - v.w_I).norm(), 1e-12);
    ASSERT_LT(inv.q_WI.angularDistance(v.q_WI), 1e-9);
    rig.Step(v);
    const hal::BaseSample& o = rig.out().base;
    ASSERT_TRUE(o.health.ok()) << k;
    for (int i = 0; i < 3; ++i) {
      ASSERT_NEAR(o.angular_velocity[i], w_B[i], 0.001 / 2 + 1e-12) << k;
      ASSERT_NEAR(o.specific_force[i], f_B[i], 0.002 / 2 + 1e-12) << k;
    }
    // Attitude: half a unit of 1/32767 in x, y, z, through qw (see RandomRoundTrips).
    const double qw = std::abs(v.q_WI.normalized().w());
    if (qw < 0.05) continue;
    const double dq = std::sqrt(3.0) * 0.5 / 32767 * std::sqrt(1.0 + (1.0 - qw * qw) / (qw * qw));
    ASSERT_LE(Orientation(o).angularDistance(q_WB), 2.0 * dq * 1.01 + 1e-9) << k;
    ASSERT_NEAR(Orientation(o).norm(), 1.0, 1e-12);
  }
  EXPECT_EQ(rig.loop.counters().lost_samples, 0u);
  EXPECT_EQ(rig.loop.counters().rejected_total(), 0u);
}

TEST(DriverLoopImu, StaleAfterTheTimeoutAndRecovers) {
  // Fails if the base stays ok past drivers.imu.timeout_ms (3 ms), keeps nothing of its last
  // values, or the silence is not counted as lost samples when the IMU is back.
  ImuRig rig(SmallConfig());
  const ImuValues v = Measured(Eigen::Quaterniond::Identity(), {0.1, 0.2, 0.3}, {0, 0, 9.81});
  rig.Step(v);
  rig.Step(v);
  const auto before = rig.out().base.angular_velocity;
  for (int k = 0; k < 3; ++k) rig.Step({}, ImuStatus::kValid, false);
  EXPECT_EQ(rig.out().base.health.state, hal::ChannelState::kOk);  // 3 ms: not yet
  rig.Step({}, ImuStatus::kValid, false);
  EXPECT_EQ(rig.out().base.health.state, hal::ChannelState::kStale);
  EXPECT_EQ(rig.out().base.health.age_us, 4000u);
  EXPECT_TRUE(rig.out().has_base);
  EXPECT_EQ(rig.out().base.angular_velocity, before);  // last good values, flagged invalid
  EXPECT_EQ(rig.loop.counters().stale_events, 1u);
  EXPECT_EQ(rig.loop.counters().fault_events, 0u);
  rig.Step(v);
  EXPECT_TRUE(rig.out().base.health.ok());
  EXPECT_EQ(rig.out().base.health.lost_samples, 4u);
  EXPECT_EQ(rig.loop.counters().lost_samples, 4u);
}

TEST(DriverLoopImu, FaultBitsFlagTheBaseAndNothingIsUsed) {
  // Fails if a sample with a fault bit reaches the base values, or the fault is counted as a
  // stale event.
  ImuRig rig(SmallConfig());
  rig.Step(Measured(Eigen::Quaterniond::Identity(), {0.1, 0.2, 0.3}, {0, 0, 9.81}));
  const auto before = rig.out().base.angular_velocity;
  rig.Step(Measured(Eigen::Quaterniond::Identity(), {1, 1, 1}, {0, 0, 9.81}),
           ImuStatus::kValid | ImuStatus::kAttitudeNotConverged);
  EXPECT_EQ(rig.out().base.health.state, hal::ChannelState::kFault);
  EXPECT_EQ(rig.out().base.health.status_bits, 0x09);
  EXPECT_EQ(rig.out().base.angular_velocity, before);
  EXPECT_EQ(rig.loop.counters().fault_samples, 1u);
  EXPECT_EQ(rig.loop.counters().fault_events, 1u);
  EXPECT_EQ(rig.loop.counters().stale_events, 0u);
  // A saturated gyro (the encoder sets the bit) is a fault too.
  rig.Step(Measured(Eigen::Quaterniond::Identity(), {40, 0, 0}, {0, 0, 9.81}));
  EXPECT_EQ(rig.out().base.health.status_bits, 0x03);
  EXPECT_EQ(rig.out().base.health.state, hal::ChannelState::kFault);
  EXPECT_EQ(rig.loop.counters().fault_events, 1u);  // still in fault: one transition
  rig.Step(Measured(Eigen::Quaterniond::Identity(), {1, 1, 1}, {0, 0, 9.81}));
  EXPECT_TRUE(rig.out().base.health.ok());
  EXPECT_NEAR(rig.out().base.angular_velocity[0], 1.0, 1e-12);
}

TEST(DriverLoopImu, DropsAreCountedWhenDetected) {
  // A sample whose frame B or C is lost is counted when the next frame A shows it, even if no
  // complete sample follows; a whole lost sample is a counter gap. Fails on late or double counts.
  ImuRig rig(SmallConfig());
  const ImuValues v = Measured(Eigen::Quaterniond::Identity(), {0.1, 0.2, 0.3}, {0, 0, 9.81});
  rig.Step(v);
  auto frames = EncodeImu(rig.cfg.imu->imu, v.w_I, v.f_I, v.q_WI, ImuStatus::kValid, 1);
  (void)rig.can0.send(frames[0]);  // sample 1: A and C, B lost
  (void)rig.can0.send(frames[2]);
  rig.loop.Tick(rig.now += kMs);
  EXPECT_EQ(rig.loop.counters().lost_samples, 0u);  // not known yet
  frames = EncodeImu(rig.cfg.imu->imu, v.w_I, v.f_I, v.q_WI, ImuStatus::kValid, 2);
  (void)rig.can0.send(frames[0]);  // sample 2: only A
  rig.loop.Tick(rig.now += kMs);
  EXPECT_EQ(rig.loop.counters().lost_samples, 1u);  // sample 1, at once
  EXPECT_EQ(rig.out().base.health.lost_samples, 1u);
  for (int k = 0; k < 10; ++k) rig.loop.Tick(rig.now += kMs);  // then silence
  EXPECT_EQ(rig.loop.counters().lost_samples, 1u);
  EXPECT_EQ(rig.out().base.health.state, hal::ChannelState::kStale);
  // Back with sample 13: sample 2 (its A seen) and 3..12 (nothing seen) are lost, 12 in all.
  frames = EncodeImu(rig.cfg.imu->imu, v.w_I, v.f_I, v.q_WI, ImuStatus::kValid, 13);
  for (const auto& f : frames) (void)rig.can0.send(f);
  rig.loop.Tick(rig.now += kMs);
  EXPECT_TRUE(rig.out().base.health.ok());
  EXPECT_EQ(rig.loop.counters().lost_samples, 12u);
  EXPECT_EQ(rig.out().base.health.lost_samples, 12u);
  EXPECT_EQ(rig.loop.counters().rejected_total(), 0u);
}

TEST(DriverLoopImu, StrayFrameIsCountedAsUnpairedAndLosesNoSample) {
  // A frame B of another counter between a sample's A and its B, C: one unpaired rejection, no
  // lost sample, and the sample is used. Fails if the stray frame drops the pending sample (the
  // old rule: a lost sample, the sample's own B and C rejected as unpaired too, the base not ok).
  ImuRig rig(SmallConfig());
  const ImuValues v = Measured(Eigen::Quaterniond::Identity(), {0.1, 0.2, 0.3}, {0, 0, 9.81});
  const auto frames = EncodeImu(rig.cfg.imu->imu, v.w_I, v.f_I, v.q_WI, ImuStatus::kValid, 7);
  const auto stray = EncodeImu(rig.cfg.imu->imu, v.w_I, v.f_I, v.q_WI, ImuStatus::kValid, 12);
  (void)rig.can0.send(frames[0]);
  (void)rig.can0.send(stray[1]);
  (void)rig.can0.send(frames[1]);
  (void)rig.can0.send(frames[2]);
  rig.loop.Tick(rig.now += kMs);
  EXPECT_EQ(rig.loop.counters().rejected[Index(Reject::kUnpaired)], 1u);
  EXPECT_EQ(rig.loop.counters().rejected_total(), 1u);
  EXPECT_EQ(rig.out().base.health.rejected_frames, 1u);
  EXPECT_EQ(rig.loop.counters().lost_samples, 0u);
  EXPECT_EQ(rig.out().base.health.lost_samples, 0u);
  EXPECT_TRUE(rig.out().base.health.ok());
  EXPECT_NEAR(rig.out().base.angular_velocity[0], 0.1, 1e-3);  // ω_B, to the gyro's LSB
}

TEST(DriverLoopImu, MalformedFramesAreCountedByReasonAndFdFramesDecode) {
  // Fails if a malformed IMU frame is half-used or counted under the wrong reason, or an FD
  // frame with the classic payload is refused.
  ImuRig rig(SmallConfig());
  const ImuConfig& cfg = rig.cfg.imu->imu;
  auto frames = EncodeImu(cfg, {0.1, 0.2, 0.3}, {0, 0, 9.81}, Eigen::Quaterniond::Identity(),
                          ImuStatus::kValid, 0);
  hal::CanFrame f = frames[0];
  f.len = 6;
  (void)rig.can0.send(f);
  f = frames[1];
  f.flags = hal::CanFrame::kRemote;
  (void)rig.can0.send(f);
  f = frames[2];
  f.data[6] |= 0x40;
  (void)rig.can0.send(f);
  (void)rig.can0.send(EncodeImuAttitude(cfg, {32767, 32767, 0}, ImuStatus::kValid, 0));
  (void)rig.can0.send(frames[1]);  // B without its A
  rig.loop.Tick(rig.now += kMs);
  const auto& r = rig.loop.counters().rejected;
  EXPECT_EQ(r[Index(Reject::kWrongLength)], 1u);
  EXPECT_EQ(r[Index(Reject::kRemote)], 1u);
  EXPECT_EQ(r[Index(Reject::kReservedBits)], 1u);
  EXPECT_EQ(r[Index(Reject::kBadAttitude)], 1u);
  EXPECT_EQ(r[Index(Reject::kUnpaired)], 1u);
  EXPECT_EQ(rig.out().base.health.rejected_frames, 5u);
  EXPECT_EQ(rig.out().base.health.state, hal::ChannelState::kNeverSeen);
  EXPECT_TRUE(rig.out().has_base);
  // The same three frames as CAN FD frames.
  frames = EncodeImu(cfg, {0.1, 0.2, 0.3}, {0, 0, 9.81}, Eigen::Quaterniond::Identity(),
                     ImuStatus::kValid, 1);
  for (hal::CanFrame g : frames) {
    g.flags = hal::CanFrame::kFd;
    (void)rig.can0.send(g);
  }
  rig.loop.Tick(rig.now += kMs);
  EXPECT_TRUE(rig.out().base.health.ok());
  EXPECT_NEAR(rig.out().base.angular_velocity[0], -0.2, 1e-12);  // ω_B = R_BI ω_I
}

TEST(DriverLoopImu, TheImuIsTheBaseSourceAndTheTickArgumentIsIgnored) {
  // With an IMU configured, Tick's external base is ignored; without, it is used as before.
  // Fails if either source leaks into the other case.
  hal::BaseSample other;
  other.angular_velocity = {7, 7, 7};
  other.has_linear_velocity = true;
  other.health.state = hal::ChannelState::kOk;
  ImuRig rig(SmallConfig());
  rig.encoder.EmitImu(Measured(Eigen::Quaterniond::Identity(), {0.1, 0.2, 0.3}, {0, 0, 9.81}), kMs,
                      rig.buses);
  rig.loop.Tick(kMs, &other);
  EXPECT_NEAR(rig.out().base.angular_velocity[0], 0.1, 1e-12);
  EXPECT_FALSE(rig.out().base.has_linear_velocity);
  rig.loop.Tick(100 * kMs, &other);
  EXPECT_EQ(rig.out().base.health.state, hal::ChannelState::kStale);
  EXPECT_NEAR(rig.out().base.angular_velocity[0], 0.1, 1e-12);

  ImuRig plain(ReferenceDriverConfig({"j0"}, {}));
  plain.loop.Tick(kMs);
  EXPECT_FALSE(plain.out().has_base);
  plain.loop.Tick(2 * kMs, &other);
  EXPECT_TRUE(plain.out().has_base);
  EXPECT_EQ(plain.out().base.angular_velocity[0], 7.0);
  EXPECT_TRUE(plain.out().base.has_linear_velocity);
}

TEST(DriverLoopImu, IdentifierClashWithAnotherDeviceIsRefused) {
  // Fails if the loop lets the IMU's three identifiers overlap an F/T cell's.
  ImuDevice imu = RotatedImu();
  imu.imu.base_id = 0x2FF;  // 0x2FF, 0x300 (the left cell's frame A), 0x301
  DriverConfig cfg = WithImu(ReferenceDriverConfig({"j0"}, {"left_foot_ft"}), imu);
  MemoryBus bus0{"can0"}, bus1{"can1"};
  std::vector<hal::CanTransport*> buses{&bus0, &bus1};
  hal::StateBuffer buffer;
  auto make = [&] { DriverLoop loop(cfg, buses, buffer); };
  EXPECT_THROW(make(), std::invalid_argument);
  cfg.imu->bus = 1;  // the other bus is fine
  EXPECT_NO_THROW(make());
}

}  // namespace
}  // namespace heft::drivers

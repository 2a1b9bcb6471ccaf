// The base IMU in the driver loop (docs/can-devices.md, section 4): the three frames turned into
// the base sample for an IMU mounted rotated and offset on the base, staleness, faults, drops and
// stray frames, FD frames, encoder → loop round trips within the quantisation, the IMU as the base
// source, and an identifier clash refused. The codec and assembler are in test_imu.cpp.
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

using test::ImuRig;
using test::Index;
using test::kAccel;
using test::kAttitude;
using test::kGyro;
using test::kMs;
using test::RotatedImu;
using test::WithImu;

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

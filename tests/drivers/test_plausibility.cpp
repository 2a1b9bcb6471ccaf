// Faults a device does not flag itself (drivers.torque_stuck_*, drivers.error_frame_*, F/T gauges
// at their rail): each detected by the driver loop, and no false positive on normal noisy data — a
// still joint with a noisy or a real constant torque, a moving joint with a noisy torque, a few
// error frames.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "heft/drivers/driver_loop.hpp"
#include "heft/drivers/error_frames.hpp"
#include "heft/test/driver_rig.hpp"
#include "reference_motion.hpp"

namespace heft::drivers {
namespace {

constexpr std::int64_t kMs = 1'000'000;

struct Rig : heft::test::DriverRig {
  std::int64_t now = 0;
  // One millisecond of the reference motion; `shape` edits the truth before it is encoded.
  template <typename Shape>
  void Step(Shape shape) {
    now += kMs;
    test::SetReferenceMotion(truth, cfg.joints.size(), 1e-3 * static_cast<double>(now / kMs));
    shape(truth);
    encoder.Emit(truth, now, buses);
    loop.Tick(now);
  }
  void Step() {
    Step([](hal::RobotStateSample&) {});
  }
  const hal::RobotStateSample& out() const { return loop.last_sample(); }
};

// ---- F/T cell saturated ------------------------------------------------------------------------

TEST(FtSaturation, OneGaugeAtEitherRailMakesTheSampleUnusable) {
  // Fails if a gauge at INT16_MIN or INT16_MAX (the ADC's rail) passes as usable, or one count
  // inside the rail does not.
  FtConfig cfg;
  for (int g = 0; g < 6; ++g) {
    for (const int value : {-32768, 32767, -32767, 32766}) {
      Gauges gauges{100, -200, 300, -400, 500, -600};
      gauges[g] = static_cast<std::int16_t>(value);
      const auto frames = EncodeFt(cfg, gauges, 0, 7);
      FtAssembler assembler;
      FtReading r;
      Reject why = Reject::kNone;
      bool dropped = false;
      ASSERT_EQ(assembler.Feed(frames[0], cfg, r, why, dropped), FtAssembler::Result::kPending);
      ASSERT_EQ(assembler.Feed(frames[1], cfg, r, why, dropped), FtAssembler::Result::kComplete);
      const bool rail = value == -32768 || value == 32767;
      EXPECT_EQ(r.saturated, rail) << g << " " << value;
      EXPECT_EQ(r.usable, !rail) << g << " " << value;
    }
  }
}

TEST(FtSaturation, ASaturatedCellIsInFaultWithItsLastGoodWrenchAndRecovers) {
  // The simulator's ft_saturated: every gauge at its rail, status OK. Fails if the cell stays ok
  // (the estimator would take the clipped wrench), the other cell is touched, the clipped values
  // replace the last good ones, the samples are not counted, or the cell does not come back.
  Rig rig;
  for (int k = 0; k < 10; ++k) rig.Step();
  const hal::WrenchSample before = rig.out().wrenches[0];
  ASSERT_TRUE(before.health.ok());
  auto saturate = [](hal::RobotStateSample& t) {
    for (double& x : t.wrenches[0].wrench) x = x >= 0.0 ? 1e9 : -1e9;
  };
  for (int k = 0; k < 20; ++k) rig.Step(saturate);
  EXPECT_EQ(rig.out().wrenches[0].health.state, hal::ChannelState::kFault);
  EXPECT_TRUE(rig.out().wrenches[1].health.ok());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(rig.out().wrenches[0].wrench[i], before.wrench[i]) << i;
  EXPECT_EQ(rig.loop.counters().ft_saturated_samples, 20u);
  EXPECT_EQ(rig.loop.counters().fault_events, 1u);
  rig.Step();
  EXPECT_TRUE(rig.out().wrenches[0].health.ok());
  EXPECT_EQ(rig.loop.counters().ft_saturated_samples, 20u);
}

// ---- torque sensor stuck -----------------------------------------------------------------------

constexpr std::size_t kJoint = 0;  // reference velocity 0.5 cos(t): |v| ≥ 0.35 rad/s for t < 0.8 s

TEST(TorqueStuck, AConstantTorqueOnAMovingJointIsFlaggedAfterTheConfiguredTime) {
  // Fails if the frozen channel stays ok past torque_stuck_ms of motion, is flagged before it,
  // another joint is flagged, it is not counted, or the channel does not come back once the value
  // moves again.
  Rig rig;
  for (int k = 0; k < 500; ++k) rig.Step();  // a changing value arms the check (change_rate)
  ASSERT_GT(std::abs(rig.out().joints[kJoint].velocity), 0.2);
  auto freeze = [](hal::RobotStateSample& t) { t.joints[kJoint].torque = 3.0; };
  const int limit_ms = static_cast<int>(std::lround(rig.cfg.plausibility.torque_stuck_time * 1e3));
  // The first frozen sample is the reference value; it stays unchanged for limit_ms after it.
  for (int k = 0; k < limit_ms; ++k) rig.Step(freeze);
  EXPECT_TRUE(rig.out().joints[kJoint].torque_sensor.ok());
  rig.Step(freeze);
  EXPECT_EQ(rig.out().joints[kJoint].torque_sensor.state, hal::ChannelState::kFault);
  EXPECT_EQ(rig.loop.counters().torque_stuck_events, 1u);
  for (int k = 0; k < 100; ++k) rig.Step(freeze);
  EXPECT_EQ(rig.out().joints[kJoint].torque_sensor.state, hal::ChannelState::kFault);
  EXPECT_EQ(rig.loop.counters().torque_stuck_events, 1u);
  for (std::size_t j = 0; j < rig.cfg.joints.size(); ++j) {
    if (j != kJoint) {
      EXPECT_TRUE(rig.out().joints[j].torque_sensor.ok()) << j;
    }
  }
  rig.Step();  // the reference torque again: it moved
  EXPECT_TRUE(rig.out().joints[kJoint].torque_sensor.ok());
}

TEST(TorqueStuck, AStillJointHoldingAConstantTorqueIsNotFlagged) {
  // A joint held still against a real constant load reads one value: fails if the check does not
  // require motion.
  Rig rig;
  auto hold = [](hal::RobotStateSample& t) {
    t.joints[kJoint].position = 0.3;
    t.joints[kJoint].velocity = 0.0;
    t.joints[kJoint].torque = 3.0;
  };
  for (int k = 0; k < 2000; ++k) rig.Step(hold);
  EXPECT_TRUE(rig.out().joints[kJoint].torque_sensor.ok());
  EXPECT_EQ(rig.loop.counters().torque_stuck_events, 0u);
  EXPECT_EQ(rig.loop.counters().fault_samples, 0u);
}

TEST(TorqueStuck, NoisyTorquesAreNeverFlaggedStillOrMoving) {
  // A torque sensor's noise, σ = 20 LSB (0.002 N·m, far below the simulator's 0.3 N·m): two
  // consecutive samples are equal with probability ≈ 1/(2√π·20) ≈ 1.4 %, 50 in a row never. Fails
  // on any false positive over 2 s of every joint moving and one held still.
  Rig rig;
  std::mt19937 rng(17);
  std::normal_distribution<double> noise(0.0, 0.002);
  auto noisy = [&](hal::RobotStateSample& t) {
    t.joints[0].position = 0.1;
    t.joints[0].velocity = 0.0;
    t.joints[0].torque = 2.0;
    for (std::size_t j = 0; j < rig.cfg.joints.size(); ++j) t.joints[j].torque += noise(rng);
  };
  for (int k = 0; k < 2000; ++k) rig.Step(noisy);
  EXPECT_EQ(rig.loop.counters().torque_stuck_events, 0u);
  EXPECT_EQ(rig.loop.counters().fault_samples, 0u);
  for (std::size_t j = 0; j < rig.cfg.joints.size(); ++j)
    EXPECT_TRUE(rig.out().joints[j].torque_sensor.ok()) << j;
}

TEST(TorqueStuck, OnlyTimeInMotionCounts) {
  // Frozen while still, then moving: fails if the still time counts towards torque_stuck_ms.
  Rig rig;
  const int limit_ms = static_cast<int>(std::lround(rig.cfg.plausibility.torque_stuck_time * 1e3));
  auto still = [](hal::RobotStateSample& t) {
    t.joints[kJoint].velocity = 0.0;
    t.joints[kJoint].torque = 3.0;
  };
  auto moving = [](hal::RobotStateSample& t) { t.joints[kJoint].torque = 3.0; };
  for (int k = 0; k < 500; ++k) rig.Step();       // arms the check
  for (int k = 0; k < 100; ++k) rig.Step(still);  // then |v| = 0.5 cos(0.6) ≥ 0.4
  for (int k = 0; k < limit_ms - 5; ++k) rig.Step(moving);
  EXPECT_TRUE(rig.out().joints[kJoint].torque_sensor.ok());
  for (int k = 0; k < 10; ++k) rig.Step(moving);
  EXPECT_EQ(rig.out().joints[kJoint].torque_sensor.state, hal::ChannelState::kFault);
}

// ---- error-frame storms ------------------------------------------------------------------------

void Errors(Rig& rig, int per_ms) {
  for (int e = 0; e < per_ms; ++e)
    ASSERT_EQ(rig.can0.send(ErrorFrame(kErrProtocol | kErrBusError, rig.now)), hal::IoStatus::kOk);
}

TEST(ErrorFrameRate, AStormMarksTheBusDegradedWithoutTouchingItsChannels) {
  // The simulator's error_frames: 4 error frames a millisecond beside the devices' frames. Fails
  // if the bus is not degraded within one window, the other bus is, a channel loses its state
  // (no frame is missing), the entry is counted more than once, or it does not clear after a quiet
  // window.
  Rig rig;
  const int window_ms =
      static_cast<int>(std::lround(rig.cfg.plausibility.error_frame_window * 1e3));
  for (int k = 0; k < 10; ++k) rig.Step();
  for (int k = 0; k < 3 * window_ms; ++k) {
    Errors(rig, 4);
    rig.Step();
    if (k == window_ms) {
      EXPECT_TRUE(rig.loop.bus(0).degraded);
    }
  }
  EXPECT_TRUE(rig.loop.bus(0).degraded);
  EXPECT_EQ(rig.loop.bus(0).degraded_events, 1u);
  EXPECT_FALSE(rig.loop.bus(1).degraded);
  EXPECT_EQ(rig.loop.bus(1).degraded_events, 0u);
  for (std::size_t j = 0; j < rig.cfg.joints.size(); ++j) {
    EXPECT_TRUE(rig.out().joints[j].encoder.ok()) << j;
    EXPECT_TRUE(rig.out().joints[j].torque_sensor.ok()) << j;
  }
  for (int k = 0; k < 2 * window_ms + 1; ++k) rig.Step();
  EXPECT_FALSE(rig.loop.bus(0).degraded);
  EXPECT_EQ(rig.loop.bus(0).degraded_events, 1u);
}

TEST(ErrorFrameRate, ErrorsAtTheLimitAreOnlyCounted) {
  // One error frame a millisecond is the default limit (100 per 100 ms), not above it: fails if a
  // bus at the limit is marked degraded.
  Rig rig;
  for (int k = 0; k < 1000; ++k) {
    Errors(rig, 1);
    rig.Step();
  }
  EXPECT_EQ(rig.loop.bus(0).error_frames, 1000u);
  EXPECT_FALSE(rig.loop.bus(0).degraded);
  EXPECT_EQ(rig.loop.bus(0).degraded_events, 0u);
}

}  // namespace
}  // namespace heft::drivers

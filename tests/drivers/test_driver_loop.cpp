// The 1 kHz driver loop on two in-memory buses carrying the reference robot's devices, and on a
// GoogleMock transport: every fault is visible in the counters and validity flags, nothing else
// moves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "heft/drivers/driver_loop.hpp"
#include "heft/drivers/error_frames.hpp"
#include "heft/drivers/memory_bus.hpp"
#include "heft/drivers/sample_encoder.hpp"
#include "heft/dynamics/model.hpp"
#include "heft/hal/forwarding_transport.hpp"
#include "heft/test/alloc_counter.hpp"
#include "heft/test/driver_rig.hpp"
#include "imu_rig.hpp"
#include "reference_motion.hpp"

namespace heft::drivers {
namespace {

using ::testing::_;
using ::testing::Return;

class MockCanTransport : public hal::CanTransport {
 public:
  MOCK_METHOD(std::string_view, name, (), (const, noexcept, override));
  MOCK_METHOD(hal::IoStatus, receive, (hal::CanFrame&), (noexcept, override));
  MOCK_METHOD(hal::IoStatus, send, (const hal::CanFrame&), (noexcept, override));
  MOCK_METHOD(bool, wait, (std::int64_t), (noexcept, override));
  MOCK_METHOD(hal::CanBusStats, stats, (), (const, noexcept, override));
  MOCK_METHOD(bool, restart, (), (noexcept, override));
};

constexpr std::int64_t kMs = 1'000'000;

struct Rig : heft::test::DriverRig {
  std::int64_t now = 0;

  Rig() { Set(0.0); }
  void Set(double t) { test::SetReferenceMotion(truth, cfg.joints.size(), t); }
  // One millisecond: devices send, the loop ticks.
  void Step(const EmitOptions& opt = {}) {
    now += kMs;
    const std::int64_t whole_ms = now / kMs;
    Set(1e-3 * static_cast<double>(whole_ms));
    encoder.Emit(truth, now, buses, opt);
    loop.Tick(now);
  }
  const hal::RobotStateSample& out() const { return loop.last_sample(); }
};

TEST(DriverLoop, DecodesEveryDeviceWithinQuantisation) {
  Rig rig;
  for (int k = 0; k < 10; ++k) rig.Step();
  hal::RobotStateSample s;
  ASSERT_TRUE(rig.buffer.read_latest(s));
  EXPECT_EQ(s.sequence, 10u);
  EXPECT_EQ(s.stamp_ns, 10 * kMs);
  for (std::size_t i = 0; i < rig.cfg.joints.size(); ++i) {
    EXPECT_TRUE(s.joints[i].encoder.ok());
    EXPECT_TRUE(s.joints[i].torque_sensor.ok());
    EXPECT_NEAR(s.joints[i].position, rig.truth.joints[i].position, M_PI / 1048576.0 + 1e-12);
    EXPECT_NEAR(s.joints[i].velocity, rig.truth.joints[i].velocity, 0.00025 + 1e-12);
    EXPECT_NEAR(s.joints[i].torque, rig.truth.joints[i].torque, 0.00005 + 1e-12);
  }
  for (int k = 0; k < 2; ++k) {
    EXPECT_TRUE(s.wrenches[k].health.ok());
    for (int i = 0; i < 6; ++i)
      EXPECT_NEAR(s.wrenches[k].wrench[i], rig.truth.wrenches[k].wrench[i], 0.05) << k << i;
  }
  EXPECT_EQ(rig.loop.counters().rejected_total(), 0u);
  EXPECT_EQ(rig.loop.counters().lost_samples, 0u);
}

TEST(DriverLoop, DroppedFramesAreCountedAsCounterGaps) {
  Rig rig;
  rig.Step();
  std::vector<unsigned char> silent(rig.cfg.joints.size(), 1);
  silent[4] = 0;
  EmitOptions opt;
  opt.encoder_enabled = silent;
  rig.Step(opt);
  rig.Step(opt);  // joint 4's encoder lost two samples
  rig.Step();
  EXPECT_EQ(rig.loop.counters().lost_samples, 2u);
  EXPECT_EQ(rig.out().joints[4].encoder.lost_samples, 2u);
  EXPECT_TRUE(rig.out().joints[4].encoder.ok());  // 1 ms gaps stay within the 3 ms timeout
  EXPECT_EQ(rig.out().joints[3].encoder.lost_samples, 0u);
}

// Forwards every frame to `bus` except one chosen identifier, `times` times.
class DroppingLink final : public hal::ForwardingTransport {
 public:
  using ForwardingTransport::ForwardingTransport;
  void Drop(std::uint32_t id, int times) {
    id_ = id;
    times_ = times;
  }
  hal::IoStatus send(const hal::CanFrame& f) noexcept override {
    if (f.id == id_ && times_ > 0) {
      --times_;
      return hal::IoStatus::kOk;
    }
    return inner_.send(f);
  }

 private:
  std::uint32_t id_ = 0;
  int times_ = 0;
};

TEST(DriverLoop, ALostHalfOfAnFtSampleCountsOneLostSample) {
  Rig rig;
  DroppingLink link0(rig.can0), link1(rig.can1);
  std::vector<hal::CanTransport*> links{&link0, &link1};
  auto step = [&] {
    rig.now += kMs;
    rig.encoder.Emit(rig.truth, rig.now, links);
    rig.loop.Tick(rig.now);
  };
  step();
  const std::uint32_t base = rig.cfg.ft_cells[0].ft.base_id;
  link0.Drop(base + 1, 1);  // frame B of one sample: frame A is abandoned
  step();
  step();
  EXPECT_EQ(rig.loop.counters().lost_samples, 1u);
  EXPECT_EQ(rig.out().wrenches[0].health.lost_samples, 1u);
  link0.Drop(base, 1);  // frame A of one sample: frame B arrives unpaired and is rejected
  step();
  step();
  EXPECT_EQ(rig.loop.counters().lost_samples, 2u);
  EXPECT_EQ(rig.loop.counters().rejected[static_cast<std::size_t>(Reject::kUnpaired)], 1u);
  EXPECT_TRUE(rig.out().wrenches[0].health.ok());
}

TEST(DriverLoop, AnAbandonedFtFrameAIsCountedWhenDetectedEvenIfNoSampleCompletes) {
  // Frame B lost twice in a row, then the cell falls silent: the first abandoned frame A is
  // revealed by the second one and must be counted then. Fails if losses are only counted at
  // the next complete sample (there is none here until the cell comes back).
  Rig rig;
  DroppingLink link0(rig.can0), link1(rig.can1);
  std::vector<hal::CanTransport*> links{&link0, &link1};
  auto step = [&](const EmitOptions& opt = {}) {
    rig.now += kMs;
    rig.encoder.Emit(rig.truth, rig.now, links, opt);
    rig.loop.Tick(rig.now);
  };
  step();
  link0.Drop(rig.cfg.ft_cells[0].ft.base_id + 1, 2);
  step();
  EXPECT_EQ(rig.loop.counters().lost_samples, 0u);  // frame A pending: not known yet
  step();
  EXPECT_EQ(rig.loop.counters().lost_samples, 1u);  // the second frame A reveals the first
  EXPECT_EQ(rig.out().wrenches[0].health.lost_samples, 1u);
  const std::vector<unsigned char> cell1_only = {0, 1};
  EmitOptions silent;
  silent.ft_enabled = cell1_only;
  for (int k = 0; k < 5; ++k) step(silent);
  EXPECT_EQ(rig.loop.counters().lost_samples, 1u);
  EXPECT_EQ(rig.out().wrenches[0].health.state, hal::ChannelState::kStale);
  step();  // back: the second abandoned sample and the five silent ones, once each
  EXPECT_EQ(rig.loop.counters().lost_samples, 7u);
  EXPECT_EQ(rig.out().wrenches[0].health.lost_samples, 7u);
  EXPECT_TRUE(rig.out().wrenches[0].health.ok());
}

TEST(DriverLoop, StaleDeviceIsMarkedAndRecovers) {
  Rig rig;
  rig.Step();
  std::vector<unsigned char> mask(rig.cfg.joints.size(), 1);
  mask[7] = 0;
  EmitOptions opt;
  opt.torque_enabled = mask;
  const double before = rig.out().joints[7].torque;
  for (int k = 0; k < 5; ++k) rig.Step(opt);
  EXPECT_EQ(rig.out().joints[7].torque_sensor.state, hal::ChannelState::kStale);
  EXPECT_EQ(rig.out().joints[7].torque_sensor.age_us, 5000u);
  EXPECT_EQ(rig.out().joints[7].torque, before);  // the last good value is kept, flagged invalid
  EXPECT_TRUE(rig.out().joints[7].encoder.ok());
  EXPECT_TRUE(rig.out().joints[6].torque_sensor.ok());
  EXPECT_EQ(rig.loop.counters().stale_events, 1u);
  rig.Step();
  EXPECT_TRUE(rig.out().joints[7].torque_sensor.ok());
}

// Every device's frames of one millisecond, as a transport that stamps receive times hands them
// over: received at `received_ns` on the loop's clock (hal::CanFrame::kRxStamp) when `stamped`,
// queued on the rig's buses until the loop drains them.
void QueueReceived(Rig& rig, std::int64_t received_ns, bool stamped) {
  MemoryBus wire0("can0"), wire1("can1");
  std::vector<hal::CanTransport*> wire{&wire0, &wire1};
  rig.encoder.Emit(rig.truth, received_ns, wire);
  for (int b = 0; b < 2; ++b) {
    hal::CanFrame f;
    while (wire[b]->receive(f) == hal::IoStatus::kOk) {
      f.stamp_ns = received_ns;
      if (stamped) f.flags |= hal::CanFrame::kRxStamp;
      ASSERT_EQ(rig.buses[b]->send(f), hal::IoStatus::kOk);
    }
  }
}

// A sample's age counts from its frame's receive time, not from the tick that drained it. Fails if
// the loop times a stamped frame by the tick (a sample received 3.9 ms before the 4 ms tick would
// be 0 ms old and ok with the 3 ms timeout), if a frame received 2.9 ms before is not ok, or if a
// frame without a receive stamp (or one stamped after the tick: another clock) is not timed by the
// tick.
TEST(DriverLoop, AgeCountsFromTheFramesReceiveTime) {
  ASSERT_DOUBLE_EQ(Rig().cfg.joints[0].timeout, 0.003);
  struct Case {
    std::int64_t received_ns;
    bool stamped;
    hal::ChannelState state;
    std::uint32_t age_us;
  };
  for (const Case c : {Case{100'000, true, hal::ChannelState::kStale, 3900},
                       Case{1'100'000, true, hal::ChannelState::kOk, 2900},
                       Case{100'000, false, hal::ChannelState::kOk, 0},
                       Case{4'500'000, true, hal::ChannelState::kOk, 0}}) {
    SCOPED_TRACE(testing::Message()
                 << "received at " << c.received_ns << " ns, stamped " << c.stamped);
    Rig rig;
    QueueReceived(rig, c.received_ns, c.stamped);
    rig.loop.Tick(4 * kMs);  // the first tick after the frames arrived
    for (std::size_t j = 0; j < rig.cfg.joints.size(); ++j) {
      EXPECT_EQ(rig.out().joints[j].encoder.state, c.state) << "joint " << j;
      EXPECT_EQ(rig.out().joints[j].torque_sensor.age_us, c.age_us) << "joint " << j;
    }
    EXPECT_EQ(rig.out().wrenches[0].health.state, c.state);
    EXPECT_EQ(rig.out().wrenches[1].health.age_us, c.age_us);
    EXPECT_EQ(rig.loop.counters().rejected_total(), 0u);
  }
}

TEST(DriverLoop, CrcErrorsAreRejectedAndNothingHalfUsed) {
  Rig rig;
  rig.Step();
  const double before = rig.out().joints[0].torque;
  EmitOptions bad;
  bad.corrupt_crc = true;
  rig.Step(bad);
  EXPECT_EQ(rig.loop.counters().rejected[static_cast<std::size_t>(Reject::kBadCrc)],
            rig.cfg.joints.size());
  EXPECT_EQ(rig.out().joints[0].torque, before);
  EXPECT_EQ(rig.out().joints[0].torque_sensor.rejected_frames, 1u);
  EXPECT_TRUE(rig.out().joints[0].encoder.ok());
}

TEST(DriverLoop, DeviceFaultFlagsTheChannel) {
  Rig rig;
  rig.Step();
  EmitOptions fault;
  fault.encoder_status = 0x09;  // VALID | MULTITURN_LOST
  fault.ft_status = 0x21;
  rig.Step(fault);
  // Faults are not staleness: stale_events counts only ok → stale; fault_events counts each
  // channel entering fault (every encoder and the two cells). Fails if either is mixed up.
  EXPECT_EQ(rig.loop.counters().stale_events, 0u);
  EXPECT_EQ(rig.loop.counters().fault_events, rig.cfg.joints.size() + 2u);
  EXPECT_EQ(rig.out().joints[2].encoder.state, hal::ChannelState::kFault);
  EXPECT_EQ(rig.out().joints[2].encoder.status_bits, 0x09);
  EXPECT_EQ(rig.out().wrenches[1].health.state, hal::ChannelState::kFault);
  EXPECT_EQ(rig.out().wrenches[1].health.status_bits, 0x21);
  rig.Step();
  EXPECT_TRUE(rig.out().joints[2].encoder.ok());
}

TEST(DriverLoop, UnknownAndMalformedFramesAreCountedByReason) {
  Rig rig;
  hal::CanFrame f;
  f.id = 0x7AB;
  f.len = 8;
  (void)rig.can0.send(f);
  f.id = 0x100;
  f.len = 3;
  (void)rig.can0.send(f);
  f.flags = hal::CanFrame::kRemote;
  (void)rig.can0.send(f);
  f.flags = hal::CanFrame::kExtended;
  (void)rig.can0.send(f);
  rig.Step();
  const auto& r = rig.loop.counters().rejected;
  EXPECT_EQ(r[static_cast<std::size_t>(Reject::kUnknownId)], 1u);
  EXPECT_EQ(r[static_cast<std::size_t>(Reject::kWrongLength)], 1u);
  EXPECT_EQ(r[static_cast<std::size_t>(Reject::kRemote)], 1u);
  EXPECT_EQ(r[static_cast<std::size_t>(Reject::kExtended)], 1u);
  EXPECT_TRUE(rig.out().joints[0].encoder.ok());
}

TEST(DriverLoop, ErrorFramesByClassBusOffAndRestart) {
  Rig rig;
  rig.Step();
  hal::CanFrame err;
  err.flags = hal::CanFrame::kError;
  err.len = 8;
  err.id = kErrController;
  (void)rig.can1.send(err);
  err.id = kErrAck;
  (void)rig.can1.send(err);
  err.id = kErrBusOff;
  (void)rig.can1.send(err);
  rig.Step();
  const BusCounters& c1 = rig.loop.bus(1);
  EXPECT_EQ(c1.error_frames, 3u);
  EXPECT_EQ(c1.controller_errors, 1u);
  EXPECT_EQ(c1.ack_errors, 1u);
  EXPECT_EQ(c1.bus_off, 1u);
  EXPECT_EQ(rig.loop.bus(0).error_frames, 0u);
  // The bus goes down: can1's devices go stale, can0's keep going; the supervisor restarts it.
  rig.can1.set_down(true);
  for (int k = 0; k < 5; ++k) rig.Step();
  const std::size_t on_can1 = rig.cfg.joints.size() - 1;
  EXPECT_EQ(rig.out().joints[on_can1].encoder.state, hal::ChannelState::kStale);
  EXPECT_TRUE(rig.out().joints[0].encoder.ok());
  BusSupervisor supervisor(rig.loop, rig.buses);
  EXPECT_EQ(supervisor.Poll(), 1);
  EXPECT_EQ(rig.can1.stats().restarts, 1u);
  EXPECT_EQ(supervisor.Poll(), 0);  // served once
  rig.Step();
  EXPECT_TRUE(rig.out().joints[on_can1].encoder.ok());
}

TEST(DriverLoop, BusOffArrivesThroughTheErrorPathAndTheSupervisorRestartsTheBus) {
  Rig rig;
  rig.Step();
  EXPECT_TRUE(rig.can1.EnterBusOff(rig.now));
  EXPECT_FALSE(rig.can1.EnterBusOff(rig.now));  // already off
  EXPECT_FALSE(rig.can1.stats().up);
  for (int k = 0; k < 5; ++k) rig.Step();  // can1's devices cannot send
  const BusCounters& c1 = rig.loop.bus(1);
  EXPECT_EQ(c1.error_frames, 1u);
  EXPECT_EQ(c1.bus_off, 1u);
  EXPECT_EQ(c1.restart_requests, 1u);
  EXPECT_EQ(rig.loop.bus(0).error_frames, 0u);
  const std::size_t on_can1 = rig.cfg.joints.size() - 1;
  EXPECT_EQ(rig.out().joints[on_can1].encoder.state, hal::ChannelState::kStale);
  EXPECT_EQ(rig.out().wrenches[1].health.state, hal::ChannelState::kStale);
  EXPECT_TRUE(rig.out().joints[0].encoder.ok());
  BusSupervisor supervisor(rig.loop, rig.buses);
  EXPECT_EQ(supervisor.Poll(), 1);
  EXPECT_TRUE(rig.can1.stats().up);
  EXPECT_EQ(rig.can1.stats().restarts, 1u);
  EXPECT_EQ(rig.can1.stats().bus_off, 1u);
  rig.Step();
  EXPECT_TRUE(rig.out().joints[on_can1].encoder.ok());
  EXPECT_TRUE(rig.out().wrenches[1].health.ok());
  EXPECT_EQ(rig.out().joints[on_can1].encoder.lost_samples, 5u);  // the samples sent while off
  EXPECT_EQ(rig.out().joints[0].encoder.lost_samples, 0u);
  // Off for longer than the 8-bit counter's 256 samples: the time since the last sample tells.
  EXPECT_TRUE(rig.can1.EnterBusOff(rig.now));
  for (int k = 0; k < 300; ++k) rig.Step();
  EXPECT_EQ(supervisor.Poll(), 1);
  rig.Step();
  EXPECT_EQ(rig.out().joints[on_can1].encoder.lost_samples, 5u + 300u);
  EXPECT_EQ(rig.out().wrenches[1].health.lost_samples, 5u + 300u);
}

TEST(DriverLoop, OneSilentBusIsReportedAndDisturbsNothingElse) {
  Rig rig;
  rig.Step();
  // can1 goes silent (no frames, still up): only its devices go stale.
  std::vector<unsigned char> enc(rig.cfg.joints.size(), 1), ft = {1, 0};
  for (std::size_t i = 0; i < rig.cfg.joints.size(); ++i) enc[i] = rig.cfg.joints[i].bus == 0;
  EmitOptions opt;
  opt.encoder_enabled = enc;
  opt.torque_enabled = enc;
  opt.ft_enabled = ft;
  for (int k = 0; k < 20; ++k) rig.Step(opt);
  EXPECT_TRUE(rig.loop.Silent(1, rig.now));
  EXPECT_FALSE(rig.loop.Silent(0, rig.now));
  for (std::size_t i = 0; i < rig.cfg.joints.size(); ++i)
    EXPECT_EQ(rig.out().joints[i].encoder.ok(), rig.cfg.joints[i].bus == 0) << i;
  EXPECT_TRUE(rig.out().wrenches[0].health.ok());
  EXPECT_EQ(rig.out().wrenches[1].health.state, hal::ChannelState::kStale);
}

TEST(DriverLoop, MockTransportDownRequestsOneRestartFromTheSupervisor) {
  DriverConfig cfg;
  cfg.buses = {"mock0"};
  JointDevice j;
  j.joint = "j";
  cfg.joints.push_back(j);
  MockCanTransport mock;
  EXPECT_CALL(mock, receive(_)).WillRepeatedly(Return(hal::IoStatus::kDown));
  std::vector<hal::CanTransport*> buses{&mock};
  hal::StateBuffer buffer;
  DriverLoop loop(cfg, buses, buffer);
  for (int k = 0; k < 3; ++k) loop.Tick((k + 1) * kMs);
  EXPECT_EQ(loop.bus(0).down_ticks, 3u);
  EXPECT_EQ(loop.bus(0).restart_requests, 1u);
  EXPECT_CALL(mock, restart()).WillOnce(Return(false)).WillOnce(Return(true));
  BusSupervisor supervisor(loop, buses);
  EXPECT_EQ(supervisor.Poll(), 0);  // the restart failed
  loop.Tick(4 * kMs);               // still down: asks again
  EXPECT_EQ(supervisor.Poll(), 1);
  EXPECT_EQ(supervisor.failed_restarts(), 1u);
  EXPECT_EQ(loop.last_sample().joints[0].encoder.state, hal::ChannelState::kNeverSeen);
}

TEST(DriverLoop, TickAllocatesNothing) {
  // Fails if the real-time path (or the encoders the simulator runs at 1 kHz) allocates.
  Rig rig;
  for (int k = 0; k < 3; ++k) rig.Step();
  heft::test::AllocationScope scope;
  for (int k = 0; k < 10; ++k) rig.Step();
  EXPECT_EQ(scope.count(), 0u);
  // The same robot with the base IMU: every device, the IMU's three frames, drops and faults.
  test::ImuRig imu(test::WithImu(rig.cfg));
  ImuValues v;
  v.w_I = {0.1, -0.2, 0.3};
  v.f_I = {0.0, 0.5, 9.8};
  for (int k = 0; k < 3; ++k) imu.Step(v);
  heft::test::AllocationScope imu_scope;
  for (int k = 0; k < 10; ++k) imu.Step(v);
  imu.Step(v, ImuStatus::kValid | ImuStatus::kGyroSaturated);
  imu.Step(v, ImuStatus::kValid, false);
  for (int k = 0; k < 5; ++k) imu.Step(v);
  EXPECT_EQ(imu_scope.count(), 0u);
  EXPECT_TRUE(imu.out().base.health.ok());
  EXPECT_EQ(imu.out().base.health.lost_samples, 1u);
}

}  // namespace
}  // namespace heft::drivers

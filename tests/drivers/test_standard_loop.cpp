// The driver loop on standard actuators (drivers/README.md, "Standard actuators"): two MIT-mode
// actuators sharing the controller's reply identifier and a CiA 402 drive on one in-memory bus.
// Samples decode into the joints' channels, the drive's heartbeat and EMCY put both channels in
// fault and out of it, malformed frames are counted by reason, a silent actuator goes stale, and
// a tick with every kind allocates nothing.
#include <gtest/gtest.h>

#include "heft/drivers/driver_loop.hpp"
#include "heft/drivers/memory_bus.hpp"
#include "heft/drivers/sample_encoder.hpp"
#include "heft/test/alloc_counter.hpp"

namespace heft::drivers {
namespace {

constexpr std::int64_t kMs = 1'000'000;

DriverConfig Config() {
  DriverConfig cfg;
  cfg.buses = {"can0"};
  for (int k = 0; k < 2; ++k) {
    JointDevice j;
    j.joint = k == 0 ? "hip" : "knee";
    j.protocol = JointProtocol::kMit;
    j.mit.motor_id = static_cast<std::uint8_t>(k + 1);
    j.mit.p_max = 12.5;
    j.mit.v_max = 65.0;
    j.mit.t_max = k == 0 ? 18.0 : 40.0;
    if (k == 1) j.mit.current = {true, 0.091, 9.0, 0.1};
    cfg.joints.push_back(j);
  }
  JointDevice d;
  d.joint = "ankle";
  d.protocol = JointProtocol::kCia402;
  d.cia402.node = 5;
  d.cia402.tpdos[0] = {0x185, {Cia402Object::kStatusword, Cia402Object::kPosition}, 2};
  d.cia402.tpdos[1] = {0x285, {Cia402Object::kVelocity, Cia402Object::kTorque}, 2};
  d.cia402.num_tpdos = 2;
  d.cia402.gear_ratio = 100.0;
  d.cia402.rated_torque = 0.32;
  cfg.joints.push_back(d);
  return cfg;
}

struct Rig {
  Rig() = default;
  explicit Rig(const DriverConfig& c) : cfg(c) {}
  DriverConfig cfg = Config();
  MemoryBus can0{"can0"};
  std::vector<hal::CanTransport*> buses{&can0};
  hal::StateBuffer buffer;
  DriverLoop loop{cfg, buses, buffer};
  std::int64_t now = 0;
  static constexpr std::uint16_t kEnabled = 0x0237;

  void Send(const hal::CanFrame& f) { ASSERT_EQ(can0.send(f), hal::IoStatus::kOk); }
  // One millisecond: each actuator answers, the drive sends its TPDOs, the loop ticks.
  void Step(double q, std::uint16_t statusword = kEnabled, bool mit = true) {
    now += kMs;
    if (mit) {
      Send(EncodeMitReply(cfg.joints[0].mit, q, 0.5, 2.0));
      Send(EncodeMitReply(cfg.joints[1].mit, -q, -0.5, 20.0));
    }
    const Cia402Config& c = cfg.joints[2].cia402;
    Send(EncodeCia402Tpdo(c.tpdos[0], c, statusword, 0.5 * q, 0, 0));
    Send(EncodeCia402Tpdo(c.tpdos[1], c, statusword, 0, 0.25, 8.0));
    loop.Tick(now);
  }
  const hal::JointSample& joint(int j) const { return loop.last_sample().joints[j]; }
  bool Ok(int j) const { return joint(j).encoder.ok() && joint(j).torque_sensor.ok(); }
};

// Fails if a reply reaches another joint than its motor id's, or a value is not decoded.
TEST(StandardActuators, RepliesAndTpdosDecodeIntoTheirJoints) {
  Rig rig;
  for (int k = 0; k < 5; ++k) rig.Step(0.1 * k);
  for (int j = 0; j < 3; ++j) EXPECT_TRUE(rig.Ok(j)) << j;
  EXPECT_NEAR(rig.joint(0).position, 0.4, 25.0 / 65535.0);
  EXPECT_NEAR(rig.joint(1).position, -0.4, 25.0 / 65535.0);
  EXPECT_NEAR(rig.joint(0).torque, 2.0, 36.0 / 4095.0);
  EXPECT_NEAR(rig.joint(1).torque, 20.0, 80.0 / 4095.0 * 0.091 * 9.0);  // from the current
  EXPECT_NEAR(rig.joint(2).position, 0.2, 1e-5);
  EXPECT_NEAR(rig.joint(2).velocity, 0.25, 1e-3);
  EXPECT_NEAR(rig.joint(2).torque, 8.0, 0.032);
  EXPECT_EQ(rig.joint(2).encoder.status_bits, Rig::kEnabled);
  EXPECT_EQ(rig.loop.counters().rejected_total(), 0u);
}

// A drive in fault three ways: EMCY with an error code, a heartbeat outside operational, a
// statusword with its fault bit. Fails if the joint's channels stay ok while the drive says it is
// in fault, if the fault outlives its clearing (EMCY 0x0000, an operational heartbeat, a clean
// statusword) with the next TPDO, or if the MIT joints are touched.
TEST(StandardActuators, HeartbeatEmcyAndStatuswordFaultsAreChannelFaults) {
  Rig rig;
  const Cia402Config& c = rig.cfg.joints[2].cia402;
  rig.Step(0.0);
  ASSERT_TRUE(rig.Ok(2));
  auto expect_fault = [&](bool fault, const char* what) {
    EXPECT_EQ(rig.joint(2).encoder.state == hal::ChannelState::kFault, fault) << what;
    EXPECT_EQ(rig.joint(2).torque_sensor.state == hal::ChannelState::kFault, fault) << what;
    EXPECT_TRUE(rig.Ok(0) && rig.Ok(1)) << what;
  };
  rig.Send(EncodeEmcy(c, 0x2310, 0x03));
  rig.Step(0.0);
  expect_fault(true, "EMCY 0x2310");
  EXPECT_EQ(rig.loop.counters().emcy_errors, 1u);
  rig.Send(EncodeEmcy(c, 0x0000, 0x00));
  rig.Step(0.0);
  expect_fault(false, "EMCY reset");
  rig.Send(EncodeHeartbeat(c, NmtState::kStopped));
  rig.Step(0.0);
  expect_fault(true, "heartbeat: stopped");
  EXPECT_EQ(rig.loop.counters().heartbeat_faults, 1u);
  rig.Send(EncodeHeartbeat(c, NmtState::kOperational));
  rig.Step(0.0);
  expect_fault(false, "heartbeat: operational");
  rig.Step(0.0, Rig::kEnabled | CiaStatusword::kFault);
  expect_fault(true, "statusword fault bit");
  rig.Step(0.0);
  expect_fault(false, "statusword clean");
  EXPECT_EQ(rig.loop.counters().fault_events, 6u);  // 3 faults × 2 channels
}

// The consumer heartbeat time (CiA 301: monitored from the first heartbeat on). Fails if a drive
// without any heartbeat yet is put in fault, if one whose heartbeat stops stays ok beyond the
// consumer time (or goes to fault before it), if the lost heartbeat is not counted once, if the
// fault does not clear when heartbeats resume (with the next TPDO), if the check allocates, or if
// a consumer time of 0 still monitors.
TEST(StandardActuators, AHeartbeatThatStopsIsAChannelFaultUntilItResumes) {
  DriverConfig cfg = Config();
  cfg.joints[2].cia402.heartbeat_timeout_ns = 10 * kMs;
  Rig monitored(cfg);
  const Cia402Config& c = monitored.cfg.joints[2].cia402;
  for (int k = 0; k < 30; ++k) monitored.Step(0.0);
  ASSERT_TRUE(monitored.Ok(2)) << "no heartbeat yet: not monitored";
  monitored.Send(EncodeHeartbeat(c, NmtState::kOperational));
  monitored.Step(0.0);  // the heartbeat's time: this tick
  heft::test::AllocationScope scope;
  for (int k = 0; k < 10; ++k) monitored.Step(0.0);
  EXPECT_TRUE(monitored.Ok(2)) << "10 ms after the heartbeat: within the consumer time";
  monitored.Step(0.0);
  EXPECT_EQ(monitored.joint(2).encoder.state, hal::ChannelState::kFault);
  EXPECT_EQ(monitored.joint(2).torque_sensor.state, hal::ChannelState::kFault);
  EXPECT_TRUE(monitored.Ok(0) && monitored.Ok(1));
  for (int k = 0; k < 20; ++k) monitored.Step(0.0);
  EXPECT_EQ(monitored.joint(2).encoder.state, hal::ChannelState::kFault) << "until it resumes";
  EXPECT_EQ(monitored.loop.counters().heartbeat_timeouts, 1u);
  monitored.Send(EncodeHeartbeat(c, NmtState::kOperational));
  monitored.Step(0.0);
  EXPECT_TRUE(monitored.Ok(2)) << "heartbeat back, then the TPDOs of the same tick";
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_EQ(monitored.loop.counters().heartbeat_timeouts, 1u);
  EXPECT_EQ(monitored.loop.counters().heartbeat_faults, 0u);  // never left operational

  cfg.joints[2].cia402.heartbeat_timeout_ns = 0;
  Rig unmonitored(cfg);
  unmonitored.Send(EncodeHeartbeat(c, NmtState::kOperational));
  for (int k = 0; k < 30; ++k) unmonitored.Step(0.0);
  EXPECT_TRUE(unmonitored.Ok(2));
  EXPECT_EQ(unmonitored.loop.counters().heartbeat_timeouts, 0u);
}

// Fails if a malformed frame is used or not counted by its reason.
TEST(StandardActuators, MalformedFramesAreCountedByReason) {
  Rig rig;
  rig.Step(0.0);
  auto count = [&](Reject r) { return rig.loop.counters().rejected[static_cast<std::size_t>(r)]; };
  hal::CanFrame short_reply = EncodeMitReply(rig.cfg.joints[0].mit, 0, 0, 0);
  short_reply.len = 5;
  rig.Send(short_reply);
  hal::CanFrame stranger = EncodeMitReply(rig.cfg.joints[0].mit, 0, 0, 0);
  stranger.data[0] = 9;  // an actuator heft is not configured for
  rig.Send(stranger);
  hal::CanFrame long_tpdo =
      EncodeCia402Tpdo(rig.cfg.joints[2].cia402.tpdos[0], rig.cfg.joints[2].cia402, 0, 0, 0, 0);
  long_tpdo.len = 8;
  rig.Send(long_tpdo);
  hal::CanFrame heartbeat = EncodeHeartbeat(rig.cfg.joints[2].cia402, NmtState::kOperational);
  heartbeat.data[0] = 0x42;
  rig.Send(heartbeat);
  rig.Step(0.0);
  EXPECT_EQ(count(Reject::kWrongLength), 2u);
  EXPECT_EQ(count(Reject::kUnknownId), 1u);
  EXPECT_EQ(count(Reject::kBadNmtState), 1u);
  EXPECT_EQ(rig.joint(0).encoder.rejected_frames, 1u);
  for (int j = 0; j < 3; ++j) EXPECT_TRUE(rig.Ok(j)) << j;
}

// Fails if an actuator that stops answering is not stale after the timeout (3 ms).
TEST(StandardActuators, ASilentActuatorGoesStale) {
  Rig rig;
  rig.Step(0.0);
  for (int k = 0; k < 4; ++k) rig.Step(0.0, Rig::kEnabled, false);
  EXPECT_EQ(rig.joint(0).encoder.state, hal::ChannelState::kStale);
  EXPECT_EQ(rig.joint(1).torque_sensor.state, hal::ChannelState::kStale);
  EXPECT_TRUE(rig.Ok(2));
}

// Fails if the real-time path allocates on any of the standard actuators' frames.
TEST(StandardActuators, TickAllocatesNothing) {
  Rig rig;
  const Cia402Config& c = rig.cfg.joints[2].cia402;
  for (int k = 0; k < 3; ++k) rig.Step(0.01 * k);
  heft::test::AllocationScope scope;
  for (int k = 0; k < 10; ++k) rig.Step(0.01 * k);
  rig.Send(EncodeEmcy(c, 0x2310, 3));
  rig.Send(EncodeHeartbeat(c, NmtState::kPreOperational));
  hal::CanFrame bad = EncodeMitReply(rig.cfg.joints[0].mit, 0, 0, 0);
  bad.data[0] = 77;
  rig.Send(bad);
  rig.Step(0.0, Rig::kEnabled | CiaStatusword::kFault);
  for (int k = 0; k < 3; ++k) rig.Step(0.0, Rig::kEnabled, false);
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_EQ(rig.loop.counters().rejected_total(), 1u);
}

// The simulated robot's encoder speaks each joint's device: one MIT reply per actuator, the
// drive's two TPDOs, nothing from a joint whose encoder or torque device is silenced. Fails if a
// standard joint gets heft's frames, or its values do not decode within one code.
TEST(StandardActuators, TheSampleEncoderEmitsEachJointsDevice) {
  Rig rig;
  SampleEncoder encoder(rig.cfg);
  hal::RobotStateSample truth;
  truth.num_joints = 3;
  truth.joints[0].position = 0.3;
  truth.joints[0].velocity = -0.4;
  truth.joints[0].torque = 5.0;
  truth.joints[1].position = -1.0;
  truth.joints[1].velocity = 2.0;
  truth.joints[1].torque = -30.0;
  truth.joints[2].position = 0.2;
  truth.joints[2].velocity = 0.1;
  truth.joints[2].torque = 12.0;
  EXPECT_EQ(encoder.Emit(truth, kMs, rig.buses), 4);  // 2 replies, 2 TPDOs
  rig.loop.Tick(kMs);
  for (int j = 0; j < 3; ++j) {
    EXPECT_TRUE(rig.Ok(j)) << j;
    EXPECT_NEAR(rig.joint(j).position, truth.joints[j].position, 25.0 / 65535.0) << j;
    EXPECT_NEAR(rig.joint(j).velocity, truth.joints[j].velocity, 130.0 / 4095.0) << j;
  }
  EXPECT_NEAR(rig.joint(1).torque, -30.0, 80.0 / 4095.0 * 0.091 * 9.0);
  EXPECT_NEAR(rig.joint(2).torque, 12.0, 0.032);
  const unsigned char silent_knee[3] = {1, 0, 1};
  EmitOptions opt;
  opt.torque_enabled = silent_knee;
  EXPECT_EQ(encoder.Emit(truth, 2 * kMs, rig.buses, opt), 3);
  EXPECT_EQ(rig.loop.counters().rejected_total(), 0u);
}

// Fails if two joints claim one MIT motor id on a bus (their replies would be confused).
TEST(StandardActuators, AMotorIdTwiceOnABusIsRefused) {
  DriverConfig cfg = Config();
  cfg.joints[1].mit.motor_id = 1;
  MemoryBus can0{"can0"};
  std::vector<hal::CanTransport*> buses{&can0};
  hal::StateBuffer buffer;
  EXPECT_THROW(DriverLoop(cfg, buses, buffer), std::invalid_argument);
}

}  // namespace
}  // namespace heft::drivers

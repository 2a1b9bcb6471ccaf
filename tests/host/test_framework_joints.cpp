// The framework joint-state segment (hal/framework_joints.h) and heftd's validated reader
// (heft/host/framework_joints.hpp): the header's names and slots, a round trip into the state
// sample, every whole-sample and per-channel refusal with its counter, staleness, torn reads
// under a concurrent writer, no allocation in Read(), and the drivers' configuration that selects
// the path (errors naming file, line, key and the allowed values).
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <limits>
#include <string>
#include <thread>

#include "heft/config/yaml.hpp"
#include "heft/drivers/driver_config.hpp"
#include "heft/drivers/driver_loop.hpp"
#include "heft/host/framework_joints.hpp"
#include "heft/test/alloc_counter.hpp"

namespace heft::host {
namespace {

constexpr std::int64_t kNow = 5'000'000'000;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A segment in this process, as heftd would have created it.
struct LocalSegment {
  heft_joints_segment seg{};
};

// Two joints (a limited hinge: ±1 rad, 5 rad/s, 40 Nm; one without limits) and one wrench frame.
FrameworkJointsLayout Layout() {
  FrameworkJointsLayout l;
  l.joints = {"hip", "wheel"};
  JointLimits hinge;
  hinge.lower = -1.0;
  hinge.upper = 1.0;
  hinge.velocity = 5.0;
  hinge.effort = 40.0;
  l.limits = {hinge, JointLimits{}};
  l.wrench_frames = {"foot_ft"};
  return l;
}

heft_joints_sample Good(std::uint64_t seq, std::int64_t stamp) {
  heft_joints_sample s{};
  s.sequence = seq;
  s.stamp_ns = stamp;
  s.num_joints = 2;
  s.num_wrenches = 1;
  s.encoder_valid = s.torque_valid = 0x3;
  s.wrench_valid = 0x1;
  s.position[0] = 0.5;
  s.velocity[0] = -1.0;
  s.torque[0] = 12.0;
  s.position[1] = 100.0;  // a continuous joint: any position
  s.velocity[1] = 2.0;
  s.torque[1] = -3.0;
  const double w[6] = {1, 2, 300, 4, 5, 6};
  for (int i = 0; i < 6; ++i) s.wrench[0][i] = w[i];
  return s;
}

// Fails if heftd's names are not where a framework looks them up, or a wrong name finds a slot.
TEST(FrameworkJoints, InitWritesTheConfigurationsNamesForTheFramework) {
  LocalSegment local;
  EXPECT_FALSE(heft_joints_compatible(&local.seg));
  FrameworkJoints reader(&local.seg, Layout(), FrameworkJointsLimits{});
  EXPECT_TRUE(heft_joints_compatible(&local.seg));
  EXPECT_EQ(local.seg.header.num_joints, 2);
  EXPECT_EQ(local.seg.header.num_wrenches, 1);
  EXPECT_EQ(heft_joints_find_joint(&local.seg, "wheel"), 1);
  EXPECT_EQ(heft_joints_find_joint(&local.seg, "knee"), -1);
  EXPECT_EQ(heft_joints_find_wrench(&local.seg, "foot_ft"), 0);
}

// Fails if a good sample does not arrive value for value with every channel ok.
TEST(FrameworkJoints, AGoodSampleReachesTheStateSampleInConfigurationOrder) {
  LocalSegment local;
  FrameworkJoints reader(&local.seg, Layout(), FrameworkJointsLimits{});
  FrameworkJointsWriter writer(&local.seg);
  hal::RobotStateSample out;
  EXPECT_FALSE(reader.Read(kNow, out));  // nothing written yet
  EXPECT_EQ(out.joints[0].encoder.state, hal::ChannelState::kNeverSeen);
  writer.Write(Good(1, kNow - 1'000'000));
  ASSERT_TRUE(reader.Read(kNow, out));
  EXPECT_EQ(out.num_joints, 2);
  EXPECT_EQ(out.num_wrenches, 1);
  EXPECT_EQ(out.joints[0].position, 0.5);
  EXPECT_EQ(out.joints[0].velocity, -1.0);
  EXPECT_EQ(out.joints[1].torque, -3.0);
  EXPECT_EQ(out.wrenches[0].wrench[2], 300.0);
  for (int j = 0; j < 2; ++j) {
    EXPECT_TRUE(out.joints[j].encoder.ok());
    EXPECT_TRUE(out.joints[j].torque_sensor.ok());
  }
  EXPECT_TRUE(out.wrenches[0].health.ok());
  EXPECT_EQ(out.joints[0].encoder.age_us, 1000U);
  const FrameworkJointsCounters c = reader.counters();
  EXPECT_EQ(c.reads, 2U);
  EXPECT_EQ(c.empty, 1U);
  EXPECT_EQ(c.accepted, 1U);
}

// Each channel on its own: fails if a bad channel is used, is not counted under its reason, or
// takes the good channels of the same sample down with it.
TEST(FrameworkJoints, EachBadChannelIsRefusedAloneAndCountedByReason) {
  struct Case {
    const char* what;
    void (*spoil)(heft_joints_sample&);
    ChannelReject reason;
    bool encoder0, torque0, wrench0;  // which channel must be in fault
  };
  const Case cases[] = {
      {"encoder bit clear", [](heft_joints_sample& s) { s.encoder_valid = 0x2; },
       ChannelReject::kInvalid, true, false, false},
      {"NaN position", [](heft_joints_sample& s) { s.position[0] = kNaN; },
       ChannelReject::kNonFinite, true, false, false},
      {"beyond the position limit and margin", [](heft_joints_sample& s) { s.position[0] = 1.06; },
       ChannelReject::kPosition, true, false, false},
      {"velocity beyond 2x its limit", [](heft_joints_sample& s) { s.velocity[0] = -10.5; },
       ChannelReject::kVelocity, true, false, false},
      {"torque beyond 2x its effort", [](heft_joints_sample& s) { s.torque[0] = 81.0; },
       ChannelReject::kTorque, false, true, false},
      {"infinite torque", [](heft_joints_sample& s) { s.torque[0] = INFINITY; },
       ChannelReject::kNonFinite, false, true, false},
      {"wrench bit clear", [](heft_joints_sample& s) { s.wrench_valid = 0; },
       ChannelReject::kInvalid, false, false, true},
      {"force beyond its bound", [](heft_joints_sample& s) { s.wrench[0][2] = 2e4; },
       ChannelReject::kWrench, false, false, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    LocalSegment local;
    FrameworkJoints reader(&local.seg, Layout(), FrameworkJointsLimits{});
    FrameworkJointsWriter writer(&local.seg);
    hal::RobotStateSample out;
    writer.Write(Good(1, kNow));
    ASSERT_TRUE(reader.Read(kNow, out));
    heft_joints_sample bad = Good(2, kNow);
    c.spoil(bad);
    writer.Write(bad);
    EXPECT_TRUE(reader.Read(kNow + 1'000'000, out));  // the sample as a whole is accepted
    EXPECT_EQ(out.joints[0].encoder.state == hal::ChannelState::kFault, c.encoder0);
    EXPECT_EQ(out.joints[0].torque_sensor.state == hal::ChannelState::kFault, c.torque0);
    EXPECT_EQ(out.wrenches[0].health.state == hal::ChannelState::kFault, c.wrench0);
    EXPECT_TRUE(out.joints[1].encoder.ok());
    EXPECT_TRUE(out.joints[1].torque_sensor.ok());
    // The refused channel keeps its last good value; it never carries the bad one.
    EXPECT_EQ(out.joints[0].position, 0.5);
    EXPECT_EQ(out.joints[0].torque, 12.0);
    EXPECT_EQ(out.wrenches[0].wrench[2], 300.0);
    const FrameworkJointsCounters n = reader.counters();
    EXPECT_EQ(n.channel_rejected[static_cast<std::size_t>(c.reason)], 1U);
    EXPECT_EQ(n.channel_rejected_total(), 1U);
  }
}

// The whole sample: fails if a sample of the wrong size, from the future, too old or frozen is
// used, or is not counted under its reason, or leaves the channels in the wrong state.
TEST(FrameworkJoints, BadSamplesAreRefusedWholeWithTheirReason) {
  LocalSegment local;
  FrameworkJointsLimits limits;  // timeout 20 ms, future tolerance 1 ms
  FrameworkJoints reader(&local.seg, Layout(), limits);
  FrameworkJointsWriter writer(&local.seg);
  hal::RobotStateSample out;
  heft_joints_sample s = Good(1, kNow);
  s.num_joints = 3;
  writer.Write(s);
  EXPECT_FALSE(reader.Read(kNow, out));
  EXPECT_EQ(out.joints[0].encoder.state, hal::ChannelState::kNeverSeen);  // nothing accepted yet
  writer.Write(Good(2, kNow + 2'000'000));                                // 2 ms ahead
  EXPECT_FALSE(reader.Read(kNow, out));
  writer.Write(Good(3, kNow));
  EXPECT_TRUE(reader.Read(kNow, out));
  s = Good(3, kNow);
  s.num_wrenches = 2;
  writer.Write(s);
  EXPECT_FALSE(reader.Read(kNow + 1'000'000, out));
  EXPECT_EQ(out.joints[0].encoder.state, hal::ChannelState::kFault);
  writer.Write(Good(4, kNow));  // 21 ms later: old
  EXPECT_FALSE(reader.Read(kNow + 21'000'000, out));
  EXPECT_EQ(out.joints[0].encoder.state, hal::ChannelState::kStale);
  // Fresh stamps, one sequence: frozen once the sequence has not moved for the timeout.
  for (std::int64_t t = 0; t <= 25; ++t) {
    writer.Write(Good(5, kNow + 22'000'000 + t * 1'000'000));
    (void)reader.Read(kNow + 22'000'000 + t * 1'000'000, out);
  }
  EXPECT_EQ(out.joints[1].torque_sensor.state, hal::ChannelState::kStale);
  const FrameworkJointsCounters c = reader.counters();
  EXPECT_EQ(c.rejected[static_cast<std::size_t>(JointsReject::kCount)], 2U);
  EXPECT_EQ(c.rejected[static_cast<std::size_t>(JointsReject::kFuture)], 1U);
  EXPECT_EQ(c.rejected[static_cast<std::size_t>(JointsReject::kOld)], 1U);
  EXPECT_GE(c.rejected[static_cast<std::size_t>(JointsReject::kFrozen)], 1U);
  EXPECT_EQ(std::string(JointsRejectName(JointsReject::kFrozen)), "frozen_sequence");
}

// A framework that sends no wrenches (num_wrenches 0): its joints are used, the wrench is a fault
// (the estimator then takes the null-space measurement). Fails if the sample is refused whole.
TEST(FrameworkJoints, JointsWithoutWrenchesAreUsed) {
  LocalSegment local;
  FrameworkJoints reader(&local.seg, Layout(), FrameworkJointsLimits{});
  FrameworkJointsWriter writer(&local.seg);
  heft_joints_sample s = Good(1, kNow);
  s.num_wrenches = 0;
  writer.Write(s);
  hal::RobotStateSample out;
  EXPECT_TRUE(reader.Read(kNow, out));
  EXPECT_TRUE(out.joints[0].encoder.ok());
  EXPECT_EQ(out.wrenches[0].health.state, hal::ChannelState::kFault);
}

// Every word of the sample is written from one counter; a reader against a writer at full speed
// must never accept a sample mixing two. Fails on a torn copy.
TEST(FrameworkJointsConcurrent, NoMixedSampleUnderConcurrentWriter) {
  LocalSegment local;
  FrameworkJoints init(&local.seg, Layout(), FrameworkJointsLimits{});
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> reads{0};
  std::uint64_t ok = 0, mixed = 0;
  std::thread reader([&] {
    heft_joints_sample s{};
    while (!done.load(std::memory_order_acquire)) {
      const int r = heft_joints_read(&local.seg, &s, 2);
      reads.fetch_add(1, std::memory_order_relaxed);  // relaxed: a progress count
      if (r != HEFT_JOINTS_OK) continue;
      ++ok;
      const auto c = static_cast<double>(s.sequence);
      bool same = s.stamp_ns == static_cast<std::int64_t>(s.sequence);
      for (double x : s.position) same = same && x == c;
      for (double x : s.torque) same = same && x == c;
      for (const auto& w : s.wrench) same = same && w[5] == c;
      if (!same) ++mixed;
    }
  });
  heft_joints_sample s{};
  // relaxed: a progress count.
  for (std::uint64_t i = 1; i <= 50'000 || reads.load(std::memory_order_relaxed) < 5'000; ++i) {
    const auto c = static_cast<double>(i);
    s.sequence = i;
    s.stamp_ns = static_cast<std::int64_t>(i);
    for (double& x : s.position) x = c;
    for (double& x : s.torque) x = c;
    for (auto& w : s.wrench) w[5] = c;
    heft_joints_write(&local.seg, &s);
    if ((i & 1024U) != 0) std::this_thread::yield();
  }
  done.store(true, std::memory_order_release);
  reader.join();
  EXPECT_EQ(mixed, 0U);
  EXPECT_GT(ok, 0U);
}

// Read() on the 1 kHz thread: accepted, refused and per-channel paths allocate nothing, and the
// driver loop's tick that takes the result neither. Fails on any allocation.
TEST(FrameworkJoints, ReadAndTickDoNotAllocate) {
  LocalSegment local;
  FrameworkJoints reader(&local.seg, Layout(), FrameworkJointsLimits{});
  FrameworkJointsWriter writer(&local.seg);
  drivers::DriverConfig cfg;
  cfg.joints_from_framework = cfg.ft_cells_from_framework = true;
  cfg.joints.resize(2);
  cfg.ft_cells.resize(1);
  hal::StateBuffer buffer;
  drivers::DriverLoop loop(cfg, {}, buffer);
  hal::RobotStateSample out;
  heft_joints_sample good = Good(1, kNow), bad = Good(2, kNow);
  bad.position[0] = kNaN;
  bad.num_joints = 1;
  writer.Write(good);
  (void)reader.Read(kNow, out);  // warm-up
  heft::test::AllocationScope scope;
  for (std::uint64_t i = 0; i < 200; ++i) {
    good.sequence = bad.sequence = i + 2;
    writer.Write(i % 3 == 0 ? bad : good);
    (void)reader.Read(kNow + static_cast<std::int64_t>(i), out);
    loop.Tick(kNow + static_cast<std::int64_t>(i), nullptr, &out);
  }
  EXPECT_EQ(scope.count(), 0U);
  // And the loop published the framework's values with their health.
  hal::RobotStateSample published;
  ASSERT_TRUE(buffer.read_latest(published));
  EXPECT_EQ(published.num_joints, 2);
  EXPECT_EQ(published.joints[1].torque, -3.0);
}

TEST(FrameworkJoints, RefusesNonsenseSetUp) {
  LocalSegment local;
  FrameworkJointsLimits limits;
  limits.limit_factor = 0.5;
  EXPECT_THROW(FrameworkJoints(&local.seg, Layout(), limits), std::invalid_argument);
  FrameworkJointsLayout layout = Layout();
  layout.limits.pop_back();
  EXPECT_THROW(FrameworkJoints(&local.seg, layout, FrameworkJointsLimits{}), std::invalid_argument);
  EXPECT_THROW(FrameworkJoints("a/b", Layout()), std::invalid_argument);
  EXPECT_THROW(FrameworkJointsWriter("heft_joints_test_absent"), std::runtime_error);
}

// drivers.joints_from / ft_cells_from. Fails if a bad value or a CAN key on a framework joint is
// accepted, or if the error does not name the file, line, key and what is allowed.
TEST(FrameworkJointsConfig, TheDriversSectionSelectsThePathWithPreciseErrors) {
  const std::string dir = ::testing::TempDir();
  auto parse = [&](const std::string& text) {
    const std::string path = dir + "/framework_joints.yaml";
    std::ofstream(path) << text;
    const config::Document doc = config::Document::Load(path);
    return drivers::ParseDriverConfig(doc.root()["drivers"]);
  };
  const drivers::DriverConfig ok = parse(
      "drivers:\n  joints_from: framework\n  joints:\n    - {name: hip}\n    - {name: wheel}\n");
  EXPECT_TRUE(ok.joints_from_framework);
  EXPECT_FALSE(ok.ft_cells_from_framework);
  EXPECT_TRUE(ok.buses.empty());
  ASSERT_EQ(ok.joints.size(), 2U);
  EXPECT_EQ(ok.joints[1].joint, "wheel");
  auto error = [&](const std::string& text) {
    try {
      (void)parse(text);
    } catch (const config::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string bad_value =
      error("drivers:\n  joints_from: ethercat\n  joints:\n    - {name: hip}\n");
  EXPECT_NE(bad_value.find("framework_joints.yaml:2"), std::string::npos) << bad_value;
  EXPECT_NE(bad_value.find("joints_from"), std::string::npos) << bad_value;
  EXPECT_NE(bad_value.find("framework"), std::string::npos) << bad_value;
  const std::string can_key = error(
      "drivers:\n  joints_from: framework\n  joints:\n    - {name: hip, bus: can0, node: 1}\n");
  EXPECT_NE(can_key.find("framework_joints.yaml:4"), std::string::npos) << can_key;
  EXPECT_NE(can_key.find("allowed: name"), std::string::npos) << can_key;
  // A CAN device (the IMU) still needs a bus.
  const std::string no_bus = error(
      "drivers:\n  joints_from: framework\n  joints:\n    - {name: hip}\n  imu: {bus: can0}\n");
  EXPECT_NE(no_bus.find("bus"), std::string::npos) << no_bus;
}

}  // namespace
}  // namespace heft::host

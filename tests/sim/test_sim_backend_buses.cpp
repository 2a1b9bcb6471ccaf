// heft-sim's simulated robot's buses (sim/src/sim_backend.cpp): the IMU's faults reach the base
// channel; bursts and random loss are deterministic, lose frames on their bus only and are
// counted; its candump log replays through the drivers to the very samples the live buses gave.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <string>
#include <vector>

#include "heft/drivers/candump.hpp"
#include "heft/drivers/driver_config.hpp"
#include "heft/drivers/driver_loop.hpp"
#include "heft/dynamics/model.hpp"
#include "heft/sim/sim_backend.hpp"
#include "mujoco_truth.hpp"
#include "sim_rig.hpp"

namespace heft::sim {
namespace {

using test::kMs;
using test::LoadSetup;
using test::Options;
using test::SimLoop;
using test::SimRig;

// IMU faults: a silent IMU makes the base stale after its timeout and the drivers count every
// sample it skipped; ATTITUDE_NOT_CONVERGED and the saturation bits make the base faulty; the base
// recovers with the next good sample. Fails if a fault window is ignored or leaks past its end.
TEST(SimBackend, ImuFaultsReachTheBaseChannel) {
  const std::string scenario = "step-in-place";
  const SimRig s = LoadSetup(scenario);
  SimOptions opt = Options(scenario, true);
  SimFault silent, attitude, saturated;
  silent.kind = SimFault::Kind::kImu;
  silent.from = 0.1005;
  silent.to = 0.1105;  // 10 ms
  attitude.kind = SimFault::Kind::kImuAttitude;
  attitude.from = 0.2005;
  attitude.to = 0.2055;
  saturated.kind = SimFault::Kind::kImuSaturated;
  saturated.from = 0.3005;
  saturated.to = 0.3055;
  opt.faults = {silent, attitude, saturated};
  SimLoop rig(opt, s);
  int stale = 0, fault = 0;
  for (int k = 1; k <= 400; ++k) {
    rig.Step(k);
    const hal::BaseSample& b = rig.loop.last_sample().base;
    stale += b.health.state == hal::ChannelState::kStale;
    fault += b.health.state == hal::ChannelState::kFault;
    if (k >= 106 && k <= 111) {  // silent from step 102 (t = 0.101 s), stale past 3 ms
      ASSERT_NE(b.health.state, hal::ChannelState::kOk) << k;
    }
    if (k < 100 || (k > 112 && k <= 201) || (k > 206 && k <= 301) || k > 306) {
      ASSERT_TRUE(b.health.ok()) << k;
    }
  }
  EXPECT_EQ(rig.loop.counters().lost_samples, 10u);
  EXPECT_GE(stale, 7);   // ages 4..10 ms of the 3 ms timeout
  EXPECT_EQ(fault, 10);  // 5 ms of each flag
}

TEST(SimBackend, BurstsLoseEveryFrameOnTheirBusAndNothingElse) {
  const std::string scenario = "dumbbell-curl";  // arms on can0, legs on can1
  const SimRig s = LoadSetup(scenario);
  SimOptions opt = Options(scenario, true);
  SimFault burst;
  burst.kind = SimFault::Kind::kBurst;
  burst.device = 1;
  burst.from =
      0.1005;         // between two steps' times (the fault windows compare the time before a step)
  burst.to = 0.1055;  // 5 ms: longer than the 3 ms timeout
  burst.repeat = 3;
  burst.period = 0.050;
  opt.faults = {burst};
  SimLoop rig(opt, s);
  std::size_t on_can1 = 0;
  for (const auto& j : s.drivers.joints) on_can1 += j.bus == 1;
  int stale_ticks = 0;
  for (int k = 1; k <= 300; ++k) {
    rig.Step(k);
    const hal::RobotStateSample& out = rig.loop.last_sample();
    for (std::size_t i = 0; i < s.drivers.joints.size(); ++i) {
      if (s.drivers.joints[i].bus == 0) {
        ASSERT_TRUE(out.joints[i].encoder.ok() && out.joints[i].torque_sensor.ok()) << k;
      } else if (!out.joints[i].encoder.ok()) {
        ++stale_ticks;
        ASSERT_EQ(out.joints[i].encoder.state, hal::ChannelState::kStale);
      }
    }
  }
  // Each 5 ms burst: every can1 frame lost; the channels go stale for 2 ticks (ages 4 and 5 ms)
  // and recover with the next frame; the counter gaps account for every lost sample.
  const SimBusCounters& c1 = rig.sim.bus_counters()[1];
  EXPECT_EQ(c1.lost_burst, 3u * 5u * 2u * on_can1);
  EXPECT_EQ(rig.sim.bus_counters()[0].lost_burst, 0u);
  EXPECT_EQ(rig.loop.counters().lost_samples, c1.lost_burst);
  EXPECT_EQ(stale_ticks, static_cast<int>(3 * 2 * on_can1));
  EXPECT_EQ(rig.loop.counters().stale_events, 3u * 2u * on_can1);  // encoders and torque sensors
  EXPECT_TRUE(rig.loop.last_sample().joints[s.drivers.joints.size() - 1].encoder.ok());
}

TEST(SimBackend, RandomFrameLossIsDeterministicForTheSeedAndLeavesTheNoiseAlone) {
  const std::string scenario = "dumbbell-curl";
  const SimRig s = LoadSetup(scenario);
  auto run = [&](std::uint64_t seed, double loss) {
    SimOptions opt = Options(scenario, true);
    opt.seed = seed;
    if (loss > 0) {
      SimFault f;
      f.kind = SimFault::Kind::kLoss;
      f.device = -1;
      f.probability = loss;
      f.to = 1e6;
      opt.faults = {f};
    }
    SimLoop rig(opt, s);
    std::vector<double> torques;
    for (int k = 1; k <= 200; ++k) {
      rig.Step(k);
      torques.push_back(rig.loop.last_sample().joints[6].torque);
    }
    return std::make_pair(
        rig.sim.bus_counters()[0].lost_random + rig.sim.bus_counters()[1].lost_random, torques);
  };
  const auto a = run(7, 0.05), b = run(7, 0.05), c = run(8, 0.05), clean = run(7, 0.0);
  EXPECT_EQ(a.first, b.first);
  EXPECT_EQ(a.second, b.second);
  EXPECT_NE(a.first, c.first);
  EXPECT_GT(a.first, 0u);
  EXPECT_EQ(clean.first, 0u);
  // Where a sample arrived, the loss did not change the sensor noise drawn for it.
  int same = 0;
  for (std::size_t k = 0; k < a.second.size(); ++k) same += a.second[k] == clean.second[k];
  EXPECT_GT(same, 150);
}

// The candump test's faults, in the log too: random loss, a burst, and a bus-off the supervisor
// restarts.
std::vector<SimFault> CandumpFaults() {
  SimFault loss, burst, off;
  loss.kind = SimFault::Kind::kLoss;
  loss.device = -1;
  loss.probability = 0.02;
  loss.to = 1e6;
  burst.kind = SimFault::Kind::kBurst;
  burst.device = 0;
  burst.from = 0.1005;
  burst.to = 0.1045;
  off.kind = SimFault::Kind::kBusOff;
  off.device = 1;
  off.from = 0.2005;
  off.to = 0.2105;
  return {loss, burst, off};
}

// The live run: its samples, the loop's counters and bus 1's bus-offs, and the frames the log
// holds (every frame the buses carried, none dropped).
struct LiveRun {
  std::vector<hal::RobotStateSample> samples;
  drivers::DriverCounters counters;
  std::uint64_t bus_off = 0, written = 0;
};
LiveRun RunLive(const SimOptions& opt, const SimRig& s, int steps) {
  LiveRun live;
  SimLoop rig(opt, s);
  drivers::BusSupervisor supervisor(rig.loop, rig.buses);
  for (int k = 1; k <= steps; ++k) {
    rig.Step(k);
    live.samples.push_back(rig.loop.last_sample());
    if (k % 20 == 0) supervisor.Poll();
  }
  EXPECT_EQ(supervisor.restarts(), 1u);
  live.counters = rig.loop.counters();
  live.bus_off = rig.loop.bus(1).bus_off;
  rig.sim.CloseCandump();
  live.written = rig.sim.candump()->written();
  EXPECT_EQ(rig.sim.candump()->dropped(), 0u);
  std::uint64_t frames = 0;
  for (const auto& c : rig.sim.bus_counters()) frames += c.frames;
  EXPECT_EQ(live.written, frames);
  return live;
}

// The replayed sample `b` is the live sample `a` at step k, bit for bit.
void ExpectSameSample(const SimRig& s, int k, const hal::RobotStateSample& a,
                      const hal::RobotStateSample& b) {
  for (std::size_t i = 0; i < s.drivers.joints.size(); ++i) {
    ASSERT_EQ(a.joints[i].position, b.joints[i].position) << k << " " << i;
    ASSERT_EQ(a.joints[i].velocity, b.joints[i].velocity) << k << " " << i;
    ASSERT_EQ(a.joints[i].torque, b.joints[i].torque) << k << " " << i;
    ASSERT_EQ(a.joints[i].encoder.state, b.joints[i].encoder.state) << k << " " << i;
    ASSERT_EQ(a.joints[i].torque_sensor.state, b.joints[i].torque_sensor.state) << k << " " << i;
    ASSERT_EQ(a.joints[i].encoder.lost_samples, b.joints[i].encoder.lost_samples) << k;
  }
  for (std::size_t c = 0; c < s.drivers.ft_cells.size(); ++c) {
    ASSERT_EQ(a.wrenches[c].health.state, b.wrenches[c].health.state) << k << " " << c;
    for (int i = 0; i < 6; ++i) ASSERT_EQ(a.wrenches[c].wrench[i], b.wrenches[c].wrench[i]) << k;
  }
}

TEST(SimBackend, CandumpLogReplaysThroughTheDriversToTheLiveSamples) {
  const std::string scenario = "step-in-place";  // joints and both F/T cells
  const SimRig s = LoadSetup(scenario);
  const std::string path = testing::TempDir() + "/sim_backend_candump.log";
  constexpr std::int64_t kEpoch = 1'700'000'000LL * 1'000'000'000LL;
  SimOptions opt = Options(scenario, true);
  opt.candump = path;
  opt.candump_epoch_ns = kEpoch;
  opt.faults = CandumpFaults();
  constexpr int kSteps = 400;
  const LiveRun live = RunLive(opt, s, kSteps);
  EXPECT_EQ(live.bus_off, 1u);
  EXPECT_GT(live.counters.lost_samples, 100u);
  // The log, read back and replayed bus by bus through a fresh driver loop.
  std::ifstream in(path);
  std::vector<drivers::CandumpError> errors;
  const auto records = drivers::ReadCandump(in, errors);
  ASSERT_TRUE(errors.empty()) << errors.front().line << ": " << errors.front().reason;
  ASSERT_EQ(records.size(), live.written);
  drivers::CandumpReplay r0("can0", records), r1("can1", records);
  std::vector<hal::CanTransport*> replay{&r0, &r1};
  hal::StateBuffer buffer;
  drivers::DriverLoop loop(s.drivers, replay, buffer);
  for (int k = 1; k <= kSteps; ++k) {
    r0.AdvanceTo(kEpoch + k * kMs);
    r1.AdvanceTo(kEpoch + k * kMs);
    loop.Tick(k * kMs);
    ASSERT_NO_FATAL_FAILURE(
        ExpectSameSample(s, k, live.samples[static_cast<std::size_t>(k - 1)], loop.last_sample()));
  }
  EXPECT_TRUE(r0.done() && r1.done());
  EXPECT_EQ(loop.counters().lost_samples, live.counters.lost_samples);
  EXPECT_EQ(loop.counters().rejected_total(), live.counters.rejected_total());
  EXPECT_EQ(loop.bus(1).bus_off, live.bus_off);  // the error frame is in the log
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace heft::sim

// The fault matrix's faults in the simulated robot's frames (sim_backend.hpp, SimFault;
// docs/reliability.md, "Reliability"): a stuck torque sensor, a saturated F/T cell, an error-frame
// storm and a clock step, each seen through heft's driver loop reading the simulated buses.
#include <gtest/gtest.h>

#include <cmath>

#include "fault_window.hpp"
#include "sim_rig.hpp"

namespace heft::sim::test {
namespace {

// Joint index (drivers order) of `name`.
int JointIndex(const SimRig& s, const std::string& name) {
  for (std::size_t i = 0; i < s.drivers.joints.size(); ++i)
    if (s.drivers.joints[i].joint == name) return static_cast<int>(i);
  ADD_FAILURE() << "no joint " << name;
  return 0;
}

// Fails if the stuck sensor's value moves inside its window (the noise of 0.3 N·m would move it
// every millisecond), if its frames stop being valid, or if it stays stuck after the window.
TEST(SimFaults, StuckTorqueSensorRepeatsOneValidValueForItsWindow) {
  const std::string scenario = "step-in-place";
  const SimRig s = LoadSetup(scenario);
  SimOptions opt = Options(scenario, true);
  const int knee = JointIndex(s, "left_knee");
  // Windows compare the time before a step: from step 102 (t = 0.101 s) to step 201.
  opt.faults = {FaultWindow(SimFault::Kind::kTorqueStuck, knee, 0.1005, 0.2005)};
  SimLoop rig(opt, s);
  double stuck = 0.0;
  int changed_after = 0;
  double last = 0.0;
  for (int k = 1; k <= 300; ++k) {
    rig.Step(k);
    const hal::JointSample& j = rig.loop.last_sample().joints[knee];
    ASSERT_TRUE(j.torque_sensor.ok()) << k;
    if (k == 102) stuck = j.torque;
    if (k > 102 && k <= 201) {
      ASSERT_EQ(j.torque, stuck) << k;
    }
    if (k > 202) changed_after += j.torque != last;
    last = j.torque;
  }
  EXPECT_GT(changed_after, 90);  // noisy again: nearly every millisecond differs
}

// Fails if the saturated cell's gauges are not at their rails inside the window (the drivers
// count each such sample: 98 whole milliseconds of it at least), if the drivers take the clipped
// wrench (the cell must be in fault with its last good, sub-1000 N, wrench) or if the cell does not
// return, ok, to the robot's weight share after it.
TEST(SimFaults, SaturatedForceTorqueCellSitsAtItsRails) {
  const std::string scenario = "step-in-place";
  const SimRig s = LoadSetup(scenario);
  SimOptions opt = Options(scenario, true);
  opt.faults = {FaultWindow(SimFault::Kind::kFtSaturated, 0, 0.1005, 0.2005)};
  SimLoop rig(opt, s);
  for (int k = 1; k <= 300; ++k) {
    rig.Step(k);
    const hal::WrenchSample& w = rig.loop.last_sample().wrenches[0];
    // The cell's status says nothing; the drivers see every gauge at its rail (plausibility):
    // the cell is in fault with its last good wrench kept, and back once the fault ends.
    if (k > 103 && k <= 201) {
      ASSERT_EQ(w.health.state, hal::ChannelState::kFault) << k;
      ASSERT_LT(std::abs(w.wrench[2]), 1000.0) << k;
    }
    if (k > 205) {
      ASSERT_TRUE(w.health.ok()) << k;
      ASSERT_LT(std::abs(w.wrench[2]), 1000.0) << k;
    }
  }
  EXPECT_GE(rig.loop.counters().ft_saturated_samples, 98u);
}

// Fails if the storm's error frames are not on the bus (the simulator's count and the drivers'
// must both be 4 per millisecond of the window) or if they cost the devices' frames anything.
TEST(SimFaults, ErrorFrameStormReachesTheDriversBesideEveryDataFrame) {
  const std::string scenario = "dumbbell-curl";
  const SimRig s = LoadSetup(scenario);
  SimOptions opt = Options(scenario, true);
  opt.faults = {FaultWindow(SimFault::Kind::kErrorFrames, 0, 0.1005, 0.1505)};  // 50 ms on can0
  SimLoop rig(opt, s);
  for (int k = 1; k <= 200; ++k) {
    rig.Step(k);
    for (std::size_t i = 0; i < s.drivers.joints.size(); ++i)
      ASSERT_TRUE(rig.loop.last_sample().joints[i].encoder.ok()) << k;
  }
  EXPECT_EQ(rig.sim.bus_counters()[0].error_frames, 50u * kErrorFramesPerMs);
  EXPECT_EQ(rig.loop.bus(0).error_frames, 50u * kErrorFramesPerMs);
  EXPECT_EQ(rig.sim.bus_counters()[1].error_frames, 0u);
  EXPECT_EQ(rig.loop.counters().lost_samples, 0u);
}

// Fails if the stepped clock's offset is not the configured step inside the window (summed over
// overlapping steps) and 0 outside it.
TEST(SimFaults, ClockStepShiftsTheStampsForItsWindowOnly) {
  const std::string scenario = "dumbbell-curl";
  const SimRig s = LoadSetup(scenario);
  SimOptions opt = Options(scenario, true);
  SimFault a = FaultWindow(SimFault::Kind::kClockStep, 0, 0.0505, 0.1005);
  a.step = 1.5;
  SimFault b = FaultWindow(SimFault::Kind::kClockStep, 0, 0.0805, 0.0905);
  b.step = -0.25;
  opt.faults = {a, b};
  SimLoop rig(opt, s);
  for (int k = 1; k <= 150; ++k) {
    rig.Step(k);
    const std::int64_t expected =
        (k > 51 && k <= 101 ? 1'500'000'000 : 0) + (k > 81 && k <= 91 ? -250'000'000 : 0);
    ASSERT_EQ(rig.sim.clock_offset_ns(), expected) << k;
    ASSERT_TRUE(rig.loop.last_sample().joints[0].encoder.ok()) << k;  // heft ignores the stamps
  }
}

}  // namespace
}  // namespace heft::sim::test

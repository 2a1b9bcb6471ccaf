// The simulated robot's stand-in for a controller framework that owns the joints: what its
// hardware layer would write into heft's joint-state segment (hal/framework_joints.h) each
// millisecond — the sensors' readings of MuJoCo's state (SimulatedRobot::measured: noise, gains,
// offsets, the F/T frames) with a validity bit per channel clear while the simulated device is
// silent (a fault) — so that heft-sim runs the whole service through the framework path
// (drivers.joints_from / ft_cells_from: framework) as it runs through the CAN frames.
#pragma once

#include <cstdint>

#include "heft/hal/framework_joints.h"
#include "heft/sim/sim_backend.hpp"

namespace heft::sim {

// The sample of the robot's last step, stamped `stamp_ns`, counted `sequence`; wrenches when
// `wrenches` (the segment expects them). Writes every field of `out`; no allocation.
void FillFrameworkJoints(const SimulatedRobot& robot, std::int64_t stamp_ns, std::uint64_t sequence,
                         bool wrenches, heft_joints_sample& out) noexcept;

}  // namespace heft::sim

// The motion the driver tests send through the sample encoder: every joint and both F/T cells of
// the reference configuration move, each joint on its own phase. Header-only, so that
// test_socketcan_vcan stays one self-contained executable (it runs inside a QEMU guest).
#pragma once

#include <cmath>
#include <cstddef>

#include "heft/hal/robot_state.hpp"

namespace heft::drivers::test {

// `truth` at time `t` (seconds) for its first `num_joints` joints and two F/T cells.
inline void SetReferenceMotion(hal::RobotStateSample& truth, std::size_t num_joints, double t) {
  for (std::size_t i = 0; i < num_joints; ++i) {
    truth.joints[i].position = 0.5 * std::sin(t + static_cast<double>(i));
    truth.joints[i].velocity = 0.5 * std::cos(t + static_cast<double>(i));
    truth.joints[i].torque = 20.0 * std::sin(2 * t + static_cast<double>(i));
  }
  truth.wrenches[0].wrench = {10, -5, 400 + 10 * std::sin(t), 1, -2, 0.5};
  truth.wrenches[1].wrench = {-3, 4, 350, -0.5, 1.5, -0.2};
}

}  // namespace heft::drivers::test

// The reference robot's state as the plugin tests publish it: one 1 kHz sample of its 29 joints,
// each at 0.1 rad with zero torque, the encoders good and the torque sensors good or stale.
#pragma once

#include <cstdint>

#include "heft/hal/robot_state.hpp"

namespace heft::plugin {

inline hal::RobotStateSample JointSample(std::uint64_t sequence, std::int64_t stamp_ns,
                                         bool torque_ok = true) {
  hal::RobotStateSample s;
  s.sequence = sequence;
  s.stamp_ns = stamp_ns;
  s.num_joints = 29;
  for (int j = 0; j < 29; ++j) {
    s.joints[j].position = 0.1;
    s.joints[j].torque = 0.0;
    s.joints[j].encoder.state = hal::ChannelState::kOk;
    s.joints[j].torque_sensor.state =
        torque_ok ? hal::ChannelState::kOk : hal::ChannelState::kStale;
  }
  return s;
}

}  // namespace heft::plugin

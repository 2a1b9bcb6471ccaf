// The state buffer between the 1 kHz driver thread (sole writer) and the 333 Hz control thread
// (reader): the newest robot state and the last 63 before it, for finite differences and delay
// compensation. Wait-free on both sides (see SeqlockRing).
#pragma once

#include "heft/hal/robot_state.hpp"
#include "heft/hal/seqlock_ring.hpp"

namespace heft::hal {

inline constexpr std::size_t kStateHistory = 64;
using StateBuffer = SeqlockRing<RobotStateSample, kStateHistory>;

}  // namespace heft::hal

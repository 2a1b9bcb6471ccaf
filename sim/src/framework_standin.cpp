#include "heft/sim/framework_standin.hpp"

#include <algorithm>
#include <cstring>

namespace heft::sim {

void FillFrameworkJoints(const SimulatedRobot& robot, std::int64_t stamp_ns, std::uint64_t sequence,
                         bool wrenches, heft_joints_sample& out) noexcept {
  std::memset(&out, 0, sizeof(out));
  const hal::RobotStateSample& m = robot.measured();
  out.sequence = sequence;
  out.stamp_ns = stamp_ns;
  out.num_joints =
      static_cast<std::uint16_t>(std::min<std::size_t>(m.num_joints, HEFT_JOINTS_MAX_JOINTS));
  const auto encoders = robot.encoders_on(), torques = robot.torques_on();
  for (std::size_t j = 0; j < out.num_joints; ++j) {
    out.position[j] = m.joints[j].position;
    out.velocity[j] = m.joints[j].velocity;
    out.torque[j] = m.joints[j].torque;
    if (j >= encoders.size() || encoders[j]) out.encoder_valid |= std::uint64_t{1} << j;
    if (j >= torques.size() || torques[j]) out.torque_valid |= std::uint64_t{1} << j;
  }
  if (!wrenches) return;
  out.num_wrenches =
      static_cast<std::uint16_t>(std::min<std::size_t>(m.num_wrenches, HEFT_JOINTS_MAX_WRENCHES));
  const auto cells = robot.ft_cells_on();
  for (std::size_t k = 0; k < out.num_wrenches; ++k) {
    std::copy_n(m.wrenches[k].wrench.begin(), 6, out.wrench[k]);
    if (k >= cells.size() || cells[k]) out.wrench_valid |= 1U << k;
  }
}

}  // namespace heft::sim

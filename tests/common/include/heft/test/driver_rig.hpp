// The reference humanoid's drivers on two in-memory buses: devices (SampleEncoder) → can0/can1 →
// DriverLoop → StateBuffer, with the truth sample sized for its joints and both F/T cells. The
// set-up shared by the driver, candump and identification tests and the drivers' benchmark; the
// including target defines HEFT_ROBOTS_DIR.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heft/drivers/driver_loop.hpp"
#include "heft/drivers/memory_bus.hpp"
#include "heft/drivers/sample_encoder.hpp"
#include "heft/dynamics/model.hpp"

namespace heft::test {

struct DriverRig {
  dynamics::Model model =
      dynamics::LoadModelFromUrdfFile(std::string(HEFT_ROBOTS_DIR) + "/heft_humanoid.urdf", {});
  drivers::DriverConfig cfg =
      drivers::ReferenceDriverConfig(model.joint_names(), {"left_foot_ft", "right_foot_ft"});
  drivers::MemoryBus can0{"can0"}, can1{"can1"};
  std::vector<hal::CanTransport*> buses{&can0, &can1};
  hal::StateBuffer buffer;
  drivers::DriverLoop loop{cfg, buses, buffer};
  drivers::SampleEncoder encoder{cfg};
  hal::RobotStateSample truth;

  DriverRig() {
    truth.num_joints = static_cast<std::uint16_t>(cfg.joints.size());
    truth.num_wrenches = 2;
  }
  DriverRig(const DriverRig&) = delete;
  DriverRig& operator=(const DriverRig&) = delete;
};

}  // namespace heft::test

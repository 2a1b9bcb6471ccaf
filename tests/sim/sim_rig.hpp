// The simulated robot of one of heft-sim's configurations (config/sim/<scenario>.yaml) with heft's
// driver loop reading its buses: what the simulator's tests drive.
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "heft/drivers/driver_config.hpp"
#include "heft/drivers/driver_loop.hpp"
#include "heft/dynamics/model.hpp"
#include "heft/hal/state_buffer.hpp"
#include "heft/host/configuration.hpp"
#include "heft/sim/sim_backend.hpp"

namespace heft::sim::test {

inline constexpr std::int64_t kMs = 1'000'000;
inline const std::string kConfigDir = HEFT_CONFIG_DIR;

// The drivers (checked against the URDF: the IMU's pose resolved) and robot of a configuration.
struct SimRig {
  drivers::DriverConfig drivers;
  dynamics::Model model;
};
inline SimRig LoadSetup(const std::string& scenario) {
  const plugin::PluginConfig c =
      host::LoadConfiguration(kConfigDir + "/sim/" + scenario + ".yaml", host::Reader::kTool)
          .plugin;
  SimRig s;
  s.drivers = c.drivers;
  s.model = dynamics::LoadModelFromUrdfFile(c.urdf_path, dynamics::ModelOptions{c.floating_base});
  return s;
}

// The scenario with the default noise, or none at all (every sensor, the IMU included).
inline SimOptions Options(const std::string& scenario, bool noise) {
  SimOptions o;
  o.scenario = scenario;
  o.seed = 1;
  if (!noise) {
    o.noise = SimNoise{};
    o.noise.joint_torque = o.noise.velocity = o.noise.force = o.noise.moment = 0.0;
    o.noise.gyro = o.noise.accel = o.noise.attitude = 0.0;
  }
  return o;
}

// The simulated robot with heft's driver loop reading its buses.
struct SimLoop {
  SimLoop(const SimOptions& opt, const SimRig& s)
      : sim(opt, s.drivers, s.model), loop(s.drivers, buses, buffer) {}
  // Simulated millisecond k (from 1): the devices send, the loop ticks.
  void Step(int k) {
    sim.Step(nullptr);
    loop.Tick(k * kMs);
  }
  SimulatedRobot sim;
  hal::StateBuffer buffer;
  const std::vector<hal::CanTransport*> buses = sim.buses();
  drivers::DriverLoop loop;
};

// A perfect estimator: a hand-off (estimating) of every payload link, whose π StepWithTruth fills
// with the simulated robot's truth before each step.
struct PerfectHandOff {
  explicit PerfectHandOff(const SimulatedRobot& robot) {
    estimate.status.state = hal::EstimatorState::kEstimating;
    estimate.num_links = static_cast<std::uint16_t>(robot.scenario().payloads.size());
    for (std::size_t i = 0; i < estimate.num_links; ++i) {
      const std::string& link = robot.scenario().payloads[i].link;
      std::memcpy(estimate.links[i].name.data(), link.data(),
                  std::min(link.size(), estimate.links[i].name.size() - 1));
    }
  }
  // One simulated millisecond with the truth handed on.
  void StepWithTruth(SimulatedRobot& robot) {
    robot.TruePayload(truth);
    for (std::size_t i = 0; i < estimate.num_links; ++i)
      for (int j = 0; j < 10; ++j)
        estimate.links[i].parameters[static_cast<std::size_t>(j)] =
            truth[static_cast<Eigen::Index>(10 * i) + j];
    robot.Step(&estimate);
  }
  hal::InertialEstimate estimate;
  Eigen::VectorXd truth;
};

}  // namespace heft::sim::test

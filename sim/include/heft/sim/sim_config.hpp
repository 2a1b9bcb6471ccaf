// The `simulation:` section of heft's configuration (schema: config/README.md): the scenario, its
// noise, its deviations from the URDF, lockstep or real time, when the robot counts as walking,
// faults on request and the candump log. Set-up only; errors name the file, line, key and allowed
// values.
#pragma once

#include <string>
#include <vector>

#include "heft/config/yaml.hpp"
#include "heft/drivers/driver_config.hpp"
#include "heft/sim/sim_backend.hpp"

namespace heft::sim {

struct SimulationConfig {
  SimOptions options;
  bool lockstep = true;
  double walking_after = 0.5;  // s of simulated time
  // simulation.controller_model: the simulated controllers model the bodies of robot.parameters
  // (the identified model heft estimates against) when it is set and the key is `nominal` (the
  // default) or `parameters`; with `urdf`, or without robot.parameters, the URDF's.
  bool controller_model_from_parameters = false;
  std::vector<std::string> fault_names;   // per fault: the joint, F/T frame or bus it hits
  std::vector<config::Node> fault_nodes;  // per fault: where it is written (for errors)
};

// One entry of simulation.faults; `name` receives the device or bus it names (resolved later,
// against the drivers, by ResolveFaultNames).
SimFault ParseFault(const config::Node& f, std::string& name);
// simulation.deviations: a preset (ideal | default), its seed and per-field overrides of the
// preset's magnitudes (config/README.md).
DeviationConfig ParseDeviations(const config::Node& deviations);
// The required `simulation:` section of `root`.
SimulationConfig ParseSimulation(const config::Node& root);
// simulation.faults[i].name → joint, F/T cell or bus index (drivers order).
void ResolveFaultNames(SimulationConfig& sim, const drivers::DriverConfig& d);

}  // namespace heft::sim

// What test_deviations.cpp and test_deviations_effects.cpp share: the reference robots' folder,
// the reference humanoid's role map, and a deviation configuration of the default or the ideal
// preset with a seed.
#pragma once

#include <cstdint>
#include <string>

#include "heft/sim/deviations.hpp"
#include "roles_yaml.hpp"
#include "sim_rig.hpp"

namespace heft::sim::test {

inline const std::string kRobots = kConfigDir + "/robots/";
// The reference humanoid's role map (simulation.roles, required) for the configurations below.
inline const std::string kRoles = RolesYaml(kRobots + "heft_humanoid_roles.yaml");

inline DeviationConfig Preset(bool default_preset, std::uint64_t seed) {
  DeviationConfig c;
  c.preset = default_preset ? "default" : "ideal";
  c.seed = seed;
  c.magnitudes = default_preset ? DeviationMagnitudes::Default() : DeviationMagnitudes::Ideal();
  return c;
}

}  // namespace heft::sim::test

// heft's YAML configuration as the estimator plugin reads it (schema: config/README.md):
//   robot:      urdf (relative to the file), floating_base
//   drivers:    the sensors (drivers/README.md); their joint and cell order is the state sample's
//   estimator:  links, filter, measurement, noise, gating, rate limits, calibration, start policy
// Everything is validated at init: unknown keys, missing keys, wrong types, out-of-range values and
// names that are not in the URDF are refused with the file, key and allowed values.
#pragma once

#include <string>

#include "heft/drivers/driver_config.hpp"
#include "heft/estimator/inertial_estimator.hpp"
#include "heft/estimator/sample_mapping.hpp"

namespace heft::plugin {

struct PluginConfig {
  std::string file;
  std::string urdf_path;  // absolute or relative to the working directory
  bool floating_base = true;
  bool repair_inertia = false;
  drivers::DriverConfig drivers;
  est::EstimatorConfig estimator;
  est::SampleMappingConfig mapping;
  bool wait_for_walking = true;  // false: estimation starts at activation
};

// Reads `robot`, `drivers` and `estimator` (other top-level sections are the host's and are
// ignored here). Throws config::ConfigError.
PluginConfig LoadPluginConfig(const std::string& path);
PluginConfig ParsePluginConfig(const config::Node& root, const std::string& config_dir);

}  // namespace heft::plugin

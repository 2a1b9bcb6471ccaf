// The drivers' configuration: buses, one encoder + torque sensor per joint, the F/T cells. Read
// from the `drivers:` section of heft's YAML (schema in drivers/README.md) and checked against the
// URDF.
#pragma once

#include <string>
#include <vector>

#include "heft/config/yaml.hpp"
#include "heft/drivers/codecs.hpp"

namespace heft::drivers {

struct JointDevice {
  std::string joint;  // URDF joint name
  int bus = 0;        // index into DriverConfig::buses
  EncoderConfig encoder;
  TorqueConfig torque;
  double timeout = 0.003;  // s
};

struct FtDevice {
  std::string frame;  // URDF link (frame) name of the sensor frame
  int bus = 0;
  FtConfig ft;
  double timeout = 0.003;  // s
};

struct DriverConfig {
  std::vector<std::string> buses;  // interface names (can0, ...)
  std::vector<JointDevice> joints;
  std::vector<FtDevice> ft_cells;
};

// Reads the `drivers:` section; throws config::ConfigError naming file, key and allowed values.
DriverConfig ParseDriverConfig(const config::Node& drivers);

// Checks every joint and frame name against the URDF (joints must exist and move, frames must be
// links) and every identifier for clashes on its bus; throws config::ConfigError naming the entry.
// `config_file` prefixes every message.
void CheckDriverConfig(const DriverConfig& config, const std::string& urdf_path,
                       const std::string& config_file = "");
// The same, each message at the offending entry's file:line:column and key in `drivers`, the
// section `config` was read from by ParseDriverConfig.
void CheckDriverConfig(const DriverConfig& config, const std::string& urdf_path,
                       const config::Node& drivers);

// The reference robot's defaults for a list of joints and two foot cells (tests, simulator).
DriverConfig ReferenceDriverConfig(const std::vector<std::string>& joints,
                                   const std::vector<std::string>& ft_frames);

}  // namespace heft::drivers

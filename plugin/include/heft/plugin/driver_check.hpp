// The drivers' configuration against the robot's model (the model loader's dynamics::Model, the one
// reading of the URDF): every configured joint exists and has one DoF, every moving joint is
// configured once, every F/T frame is a link, no identifier is used twice on a bus (the IMU's
// three included), and the IMU's frame is rigidly attached to the floating base's link (the child
// of the root's floating joint, else the root link), its pose there resolved into
// config.imu->R_BI and p_BI. Throws config::ConfigError naming the entry. Set-up only.
#pragma once

#include <string>
#include <vector>

#include "heft/config/yaml.hpp"
#include "heft/drivers/driver_config.hpp"
#include "heft/dynamics/model.hpp"

namespace heft::plugin {

// Each message at the offending entry's file:line:column and key in `drivers`, the section
// `config` was read from by ParseDriverConfig; `urdf_path` names the URDF `model` was read from.
void CheckDriverConfig(drivers::DriverConfig& config, const dynamics::Model& model,
                       const std::string& urdf_path, const config::Node& drivers);
// The same on the URDF at `urdf_path` (loaded as it is: floating when it has a floating joint),
// each message prefixed by `config_file`.
void CheckDriverConfig(drivers::DriverConfig& config, const std::string& urdf_path,
                       const std::string& config_file = "");

// The estimator's torque-scale term per joint in `model`'s v order (the floating base's six rows
// left out): a joint whose torque the drivers convert from a motor current has its conversion's
// uncertainty (JointDevice::torque_scale_uncertainty), the others `common`
// (estimator.noise.joint_torque_scale). Empty when no joint has one of its own, so that the
// estimator keeps the common term. The joints must be the model's (CheckDriverConfig).
std::vector<double> JointTorqueScales(const drivers::DriverConfig& config, double common,
                                      const dynamics::Model& model);

}  // namespace heft::plugin

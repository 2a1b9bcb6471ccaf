// Internal to driver_config: the standard actuators' entries of drivers.joints[].
#pragma once

#include "heft/config/schema.hpp"
#include "heft/config/yaml.hpp"
#include "heft/drivers/driver_config.hpp"

namespace heft::drivers {

// The entry's `device` (default heft); refuses keys of another device kind, naming them.
JointProtocol ParseJointProtocol(const config::Node& joint);
// The `mit` or `cia402` part of a joint entry into `device` (protocol already set).
void ParseStandardActuator(const config::Node& joint, JointDevice& device);

}  // namespace heft::drivers

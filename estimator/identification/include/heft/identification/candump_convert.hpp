// candump logs of the robot's buses → a .heftrec recording, decoded by heft's own drivers exactly
// as heftd decodes live traffic (the configuration's joints, F/T cells and scaling), one sample per
// millisecond of log time.
//
// The floating base's state is not on the CAN buses (on a robot it comes from the walking
// controller's state estimator): records of a floating-base robot are written with the base
// marked invalid, so heft-identify uses them only once the base is merged in (not yet supported)
// — fixed-base robots and the joint-torque channels are fully usable.
#pragma once

#include <vector>

#include "heft/drivers/candump.hpp"
#include "heft/drivers/driver_config.hpp"
#include "heft/identification/recording.hpp"

namespace heft::ident {

// The recording header for the drivers' samples: joint and F/T channels in the configuration's
// order, named by URDF joint and frame, at the driver loop's 1 kHz.
RecordingInfo InfoFromDrivers(const drivers::DriverConfig& config, bool floating_base);

// The driver-loop sample as a record (channel order = the configuration's order).
RecordSample ToRecord(const hal::RobotStateSample& sample, std::size_t joints, std::size_t wrenches,
                      bool floating_base);

// Throws RecordingError for an empty log or one without frames on the configured buses.
Recording ConvertCandump(const drivers::DriverConfig& config,
                         const std::vector<drivers::CandumpRecord>& log, bool floating_base,
                         const std::string& source);

}  // namespace heft::ident

// candump logs of the robot's buses → a .heftrec recording, decoded by heft's own drivers exactly
// as heftd decodes live traffic (the configuration's joints, F/T cells and scaling), one sample per
// millisecond of log time.
//
// Bounded by the log's content: a gap longer than ConvertOptions::max_gap_ns between
// consecutive frames on the configured buses is refused with its line (a damaged time stamp made a
// two-line log tick through years of milliseconds), so the output holds at most max_gap worth of
// samples per frame; the streaming overload keeps none of them in memory. A bus going back in time
// is refused with its line: frames are replayed in the log's order, never re-sorted.
//
// The floating base's state is not on the CAN buses (on a robot it comes from the walking
// controller's state estimator): records of a floating-base robot are written with the base
// marked invalid, so heft-identify uses them only once the base is merged in (not yet supported)
// — fixed-base robots and the joint-torque channels are fully usable.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "heft/drivers/candump.hpp"
#include "heft/drivers/driver_config.hpp"
#include "heft/recording/recording.hpp"

namespace heft::recording {

// The recording header for the drivers' samples: joint and F/T channels in the configuration's
// order, named by URDF joint and frame, at the driver loop's 1 kHz.
RecordingInfo InfoFromDrivers(const drivers::DriverConfig& config, bool floating_base);

// The driver-loop sample as a record (channel order = the configuration's order).
RecordSample ToRecord(const hal::RobotStateSample& sample, std::size_t joints, std::size_t wrenches,
                      bool floating_base);

struct ConvertOptions {
  // The longest time without frames on the configured buses that is ticked through (its samples
  // are marked stale by the drivers, which heft-identify leaves out); longer is refused.
  std::int64_t max_gap_ns = 10'000'000'000;
};
inline constexpr std::int64_t kMaxConvertGapNs = 3'600'000'000'000;  // what --max-gap allows

// Streams one sample per millisecond to `sink` and returns the recording's header. Throws
// RecordingError ("<source>:<line>: <what>") for a log without frames on the configured buses, a
// gap longer than options.max_gap_ns, a bus going back in time, or time stamps within 2 ms of the
// int64 limit.
RecordingInfo ConvertCandump(const drivers::DriverConfig& config,
                             const std::vector<drivers::CandumpRecord>& log, bool floating_base,
                             const std::string& source, const ConvertOptions& options,
                             const std::function<void(const RecordSample&)>& sink);
// The same, with the samples in memory.
Recording ConvertCandump(const drivers::DriverConfig& config,
                         const std::vector<drivers::CandumpRecord>& log, bool floating_base,
                         const std::string& source, const ConvertOptions& options = {});

}  // namespace heft::recording

// The host's telemetry: drains the plugin's telemetry queue (records pushed by the control thread)
// on the host's non-real-time thread, logs the estimator's state changes, and writes one CSV row
// per control tick — time, status, NIS, the handed and estimated π of every link, plus the
// backend's extra columns (the simulator's truth). Column reference: config/README.md, "Telemetry".
//
// The CSV's schema (its columns) and its one reader: telemetry_table.hpp. The file appends and
// rotates by size (drivers/rotating_file.hpp): every file starts with the header.
#pragma once

#include <spdlog/logger.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "heft/drivers/rotating_file.hpp"
#include "heft/host/backend.hpp"
#include "heft/host/telemetry_table.hpp"
#include "heft/plugin/controller_interface.hpp"

namespace heft::host {

// estimator::TickStatus as the telemetry spells it: calibrating, updated, gated, released,
// rejected_numeric, invalid_input ("unknown" otherwise).
const char* TickStatusName(std::uint8_t status);
// The hold reason bits as names joined with '+' ("torques+base"); "none" for 0.
std::string HoldReasonText(std::uint32_t bits);

class Telemetry {
 public:
  // Opens `path` (appending or rotating as `rotation` says; throws when it cannot); empty path: no
  // CSV, state changes are logged all the same.
  Telemetry(const std::string& path, drivers::RotationPolicy rotation,
            plugin::ControllerInterface& plugin, Backend& backend,
            std::shared_ptr<spdlog::logger> log);
  // Everything queued so far, then the file flushed. Not for real-time threads.
  void Drain();
  bool writing() const { return file_ != nullptr; }
  std::uint64_t rows() const { return rows_; }
  // Times the estimator entered `holding` (from the records drained so far).
  std::uint64_t holds() const { return holds_; }
  const std::string& path() const { return path_; }
  std::uint64_t rotations() const { return file_ ? file_->rotations() : 0; }
  const std::string& header() const { return header_; }

 private:
  // One line when a calibration ends: its samples, a load it left to the filter, the friction
  // joints it averaged held still (TelemetryRecord's calibration fields).
  void LogCalibration(const plugin::TelemetryRecord& rec) const;
  // Whether this state change, into a gated hold (`gated`) or out of one, is logged at debug
  // level: a gated hold within a minute of the last one logged as a warning.
  bool GatedHoldQuiet(std::int64_t time_ns, bool gated);

  std::string path_;
  plugin::ControllerInterface& plugin_;
  Backend& backend_;
  std::shared_ptr<spdlog::logger> log_;
  std::string header_;
  std::unique_ptr<drivers::RotatingFile> file_;
  std::size_t link_columns_ = 0, extra_columns_ = 0;
  std::vector<double> link_values_, extra_values_;
  plugin::TelemetryRecord record_;
  hal::EstimatorState last_state_ = hal::EstimatorState::kInactive;
  std::uint64_t rows_ = 0, holds_ = 0;
  // The gated holds' log lines: a warning at most once a minute, each hold and its end at debug
  // level in between, counted (a robot whose gate opens now and then would log every few s).
  std::int64_t gated_logged_ns_ = 0;
  bool gated_logged_once_ = false, gated_quiet_ = false, gated_hold_ = false;
  std::uint64_t gated_quieted_ = 0;
  bool write_failed_ = false;
};

}  // namespace heft::host

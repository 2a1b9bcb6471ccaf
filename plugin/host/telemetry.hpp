// The host's telemetry: drains the plugin's telemetry queue (records pushed by the control thread)
// on the host's non-real-time thread, logs the estimator's state changes, and writes one CSV row
// per control tick — time, status, NIS, the handed and estimated π of every link, plus the
// backend's extra columns (the simulator's truth).
#pragma once

#include <spdlog/logger.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "backend.hpp"
#include "heft/plugin/controller_interface.hpp"

namespace heft::host {

class Telemetry {
 public:
  // Opens `path` and writes the header (throws when it cannot); empty path: no CSV, state
  // changes are logged all the same.
  Telemetry(const std::string& path, plugin::ControllerInterface& plugin, Backend& backend,
            std::shared_ptr<spdlog::logger> log);
  // Everything queued so far. Not for real-time threads.
  void Drain();
  bool writing() const { return csv_.is_open(); }
  std::uint64_t rows() const { return rows_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  plugin::ControllerInterface& plugin_;
  Backend& backend_;
  std::shared_ptr<spdlog::logger> log_;
  std::ofstream csv_;
  std::size_t link_columns_ = 0, extra_columns_ = 0;
  std::vector<double> link_values_, extra_values_;
  plugin::TelemetryRecord record_;
  hal::EstimatorState last_state_ = hal::EstimatorState::kInactive;
  std::uint64_t rows_ = 0;
};

}  // namespace heft::host

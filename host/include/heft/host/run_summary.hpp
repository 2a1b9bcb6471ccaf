// The end-of-run summary of heftd and heft-sim: the drivers' counters (per bus, per channel), the
// candump tap's and the telemetry's, and what the backend adds (heft-sim: what the simulated buses
// did). Logged as sentences for a reader of the journal and written as JSON for programs and tests
// (which read the counters there, never from the log's wording), next to the telemetry:
// <telemetry without .csv>.summary.json. Layout: config/README.md, "The run summary". Not for
// real-time threads.
#pragma once

#include <spdlog/logger.h>

#include <string>
#include <vector>

#include "heft/drivers/driver_loop.hpp"
#include "heft/hal/can.hpp"
#include "heft/host/json.hpp"
#include "heft/host/telemetry_table.hpp"  // SummaryPath
#include "heft/plugin/plugin_config.hpp"

namespace heft::host {

// Logs the drivers' summary (counters; channels not ok at the end and those that lost most; per
// bus) and returns the same as JSON: {"drivers": {...}, "channels": {...}, "buses": {"<bus>":
// {...}}}.
Json SummarizeDrivers(spdlog::logger& log, const drivers::DriverLoop& loop,
                      const plugin::PluginConfig& pcfg,
                      const std::vector<hal::CanTransport*>& buses);

// Writes `summary` to `path` whole (a temporary file renamed over it: a reader never sees half of
// one). False (and a log line) when it cannot.
bool WriteSummary(spdlog::logger& log, const std::string& path, const Json& summary);

}  // namespace heft::host

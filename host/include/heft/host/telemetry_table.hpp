// The telemetry CSV's schema and its one reader. heftd and heft-sim write the file
// (telemetry.hpp); heft-report and the tests read it here, every column by its header name, never
// by position; and where a run's JSON summary goes beside it. Column reference: config/README.md,
// "Telemetry".
//
// The layout: a header of names with their units as suffixes (`t_ns`, `left_forearm_mass_kg`),
// times as integer nanoseconds, enumerations as names (`estimating`, `torques+base`), numbers with
// 9 significant digits. No dependencies: heft-report links it without the host.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace heft::host {

// The columns every row starts with, in this order.
inline constexpr std::array<const char*, 12> kTickColumns = {
    "t_ns", "stamp_ns", "state",      "model",        "tick_status",          "hold_reason",
    "nis",  "gamma",    "consistent", "rate_limited", "calibration_progress", "compute_us"};

// π's ten columns, units in the names: mass [kg], first moment m·c [kg·m], inertia about the link
// frame's origin [kg·m²]. A link's columns are "<link>_<name>" (handed on), "<link>_est_<name>"
// (the raw estimate) and the backend's (heft-sim: "<link>_true_<name>").
inline constexpr std::array<const char*, 10> kInertialColumns = {
    "mass_kg",   "hx_kg_m",   "hy_kg_m",   "hz_kg_m",   "ixx_kg_m2",
    "ixy_kg_m2", "ixz_kg_m2", "iyy_kg_m2", "iyz_kg_m2", "izz_kg_m2"};

// One telemetry CSV read whole.
struct TelemetryTable {
  std::vector<std::string> names;
  std::vector<std::vector<double>> rows;       // every cell as a number; NaN where it is a name
  std::vector<std::vector<std::string>> text;  // per column, its cells when any is not a number
  std::size_t left_out = 0;  // rows with another number of cells than the header (torn, foreign)
  bool ok = false;           // read, with at least one row

  // The column's index; -1 when there is none of that name.
  int col(const std::string& name) const;
  bool has(const std::string& name) const { return col(name) >= 0; }
  // The column's numbers (empty when there is no such column).
  std::vector<double> column(const std::string& name) const;
  // A column of integer nanoseconds in seconds (`t_ns`, `stamp_ns`).
  std::vector<double> seconds(const std::string& name) const;
  // The column's cells as written (names of `state`, `tick_status`, ...).
  std::vector<std::string> strings(const std::string& name) const;
  // One cell: its number (NaN when the column is missing or the cell is a name) and as written
  // ("" when the column is missing).
  double number(std::size_t row, const std::string& name) const;
  std::string cell(std::size_t row, const std::string& name) const;
};

// Rows with another number of cells than the header are left out (counted in left_out). Not ok
// when the file is missing or holds no row.
TelemetryTable ReadTelemetryTable(const std::string& path);

// Where the run summary (run_summary.hpp: the end-of-run counters as JSON) of a run with this
// telemetry file goes: "run.csv" → "run.summary.json".
std::string SummaryPath(const std::string& telemetry_path);

}  // namespace heft::host

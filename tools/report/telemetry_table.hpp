// One telemetry CSV read whole (the host's layout: plugin/host/telemetry.hpp, config/README.md
// "Telemetry"), its columns found by their header names: numbers (times as integer nanoseconds,
// units in the names) and the enumerations written as names (`state`, `tick_status`, ...).
#pragma once

#include <string>
#include <vector>

namespace heft::report {

struct Table {
  std::vector<std::string> names;
  std::vector<std::vector<double>> rows;       // every cell as a number; NaN where it is a name
  std::vector<std::vector<std::string>> text;  // per column, its cells when any is not a number
  bool ok = false;                             // read, with at least one row

  // The column's index; -1 when there is none of that name.
  int col(const std::string& name) const;
  // The column's numbers (empty when there is no such column).
  std::vector<double> column(const std::string& name) const;
  // A column of integer nanoseconds in seconds (`t_ns`, `stamp_ns`).
  std::vector<double> seconds(const std::string& name) const;
  // The column's cells as written (names of `state`, `tick_status`, ...).
  std::vector<std::string> strings(const std::string& name) const;
};

// Rows with another number of cells than the header are left out. Not ok when the file is
// missing or holds no row.
Table Read(const std::string& path);

}  // namespace heft::report

#include "heft/host/telemetry_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace heft::host {
namespace {

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream s(line);
  for (std::string c; std::getline(s, c, ',');) cells.push_back(c);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

// The whole cell as one number, else NaN.
double Number(const std::string& cell) {
  if (cell.empty()) return NAN;
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  return end == cell.c_str() + cell.size() ? v : NAN;
}

}  // namespace

int TelemetryTable::col(const std::string& name) const {
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

std::vector<double> TelemetryTable::column(const std::string& name) const {
  std::vector<double> out;
  const int c = col(name);
  if (c < 0) return out;
  for (const auto& r : rows) out.push_back(r[c]);
  return out;
}

std::vector<double> TelemetryTable::seconds(const std::string& name) const {
  std::vector<double> out = column(name);
  for (double& v : out) v *= 1e-9;
  return out;
}

std::vector<std::string> TelemetryTable::strings(const std::string& name) const {
  const int c = col(name);
  if (c < 0) return {};
  if (!text[c].empty()) return text[c];
  std::vector<std::string> out;
  for (const auto& r : rows) {
    std::ostringstream s;
    s << r[c];
    out.push_back(s.str());
  }
  return out;
}

double TelemetryTable::number(std::size_t row, const std::string& name) const {
  const int c = col(name);
  return c < 0 || row >= rows.size() ? NAN : rows[row][c];
}

std::string TelemetryTable::cell(std::size_t row, const std::string& name) const {
  const int c = col(name);
  if (c < 0 || row >= rows.size()) return {};
  if (!text[c].empty()) return text[c][row];
  std::ostringstream s;
  s.precision(17);
  s << rows[row][c];
  return s.str();
}

TelemetryTable ReadTelemetryTable(const std::string& path) {
  TelemetryTable t;
  std::ifstream in(path);
  if (!in) return t;
  std::string line;
  std::getline(in, line);
  t.names = Split(line);
  std::vector<std::vector<std::string>> cells(t.names.size());
  std::vector<bool> textual(t.names.size(), false);
  while (std::getline(in, line)) {
    const std::vector<std::string> r = Split(line);
    if (r.size() != t.names.size()) {
      ++t.left_out;
      continue;
    }
    std::vector<double> numbers(r.size());
    for (std::size_t c = 0; c < r.size(); ++c) {
      numbers[c] = Number(r[c]);
      textual[c] = textual[c] || std::isnan(numbers[c]);
      cells[c].push_back(r[c]);
    }
    t.rows.push_back(std::move(numbers));
  }
  t.text.resize(t.names.size());
  for (std::size_t c = 0; c < t.names.size(); ++c)
    if (textual[c]) t.text[c] = std::move(cells[c]);
  t.ok = !t.rows.empty();
  return t;
}

std::string SummaryPath(const std::string& telemetry_path) {
  const std::string ext = ".csv";
  const bool csv = telemetry_path.size() >= ext.size() &&
                   telemetry_path.compare(telemetry_path.size() - ext.size(), ext.size(), ext) == 0;
  return (csv ? telemetry_path.substr(0, telemetry_path.size() - ext.size()) : telemetry_path) +
         ".summary.json";
}

}  // namespace heft::host

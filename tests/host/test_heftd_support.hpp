// What test_heftd.cpp, test_heftd_faults.cpp and test_heftd_refusals.cpp share: the shipped
// configurations to edit, heftd's telemetry read whole, the first hold in it, and a refusal's
// exit code and messages.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "heft/host/telemetry_table.hpp"
#include "heft/test/config_builder.hpp"
#include "heft/test/heftd_run.hpp"

namespace heft::host::test {

using Result = heft::test::HeftdResult;

inline const std::string kConfigDir = HEFT_CONFIG_DIR;

// A shipped configuration (config/<name>) to edit through yaml-cpp, written into a fresh temporary
// directory of its own (heft/test/config_builder.hpp).
inline heft::test::ConfigBuilder Shipped(const std::string& name) {
  return heft::test::ConfigBuilder(kConfigDir + "/" + name);
}

// heftd's telemetry through the host's one reader (heft/host/telemetry_table.hpp), every row
// whole.
inline TelemetryTable ReadCsv(const std::string& path) {
  TelemetryTable t = ReadTelemetryTable(path);
  EXPECT_TRUE(t.ok) << path;
  EXPECT_EQ(t.left_out, 0u) << path;
  for (const char* c :
       {"t_ns", "state", "hold_reason", "left_forearm_mass_kg", "left_forearm_true_mass_kg"})
    EXPECT_TRUE(t.has(c)) << "no column " << c;
  return t;
}

// The first hold after `after` seconds in the telemetry: when it began, why, and when the
// estimator was estimating again (-1 where it did not happen).
struct Hold {
  double from = -1, to = -1;
  std::string reason;
};
inline Hold FirstHoldAfter(const TelemetryTable& t, double after) {
  Hold h;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const double time = 1e-9 * t.number(i, "t_ns");
    if (time < after) continue;
    const std::string state = t.cell(i, "state");
    if (h.from < 0 && state == "holding") {
      h.from = time;
      h.reason = t.cell(i, "hold_reason");
    } else if (h.from >= 0 && state == "estimating") {
      h.to = time;
      break;
    }
  }
  return h;
}

// A refusal: EX_CONFIG (78: systemd does not restart it) and every one of `messages` in the output.
inline void ExpectRefused(const Result& r, const std::vector<std::string>& messages) {
  EXPECT_EQ(r.code, 78) << r.output;
  for (const std::string& m : messages) EXPECT_THAT(r.output, ::testing::HasSubstr(m));
}

}  // namespace heft::host::test

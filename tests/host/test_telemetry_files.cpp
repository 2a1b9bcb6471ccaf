// The telemetry CSV as files: size-based rotation with a header at the top of every file, appending
// to a file with the same header, rotating away one with another layout, and the columns the host
// writes (names with units, integer nanoseconds, enumerations spelled out). The host's Telemetry
// runs on a scripted plugin, without threads.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "heft/drivers/rotating_file.hpp"
#include "heft/estimator/inertial_estimator.hpp"
#include "heft/estimator/sample_mapping.hpp"
#include "heft/host/telemetry.hpp"

namespace heft::host {
namespace {

namespace fs = std::filesystem;
using drivers::RotatingFile;
using drivers::RotationPolicy;

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

std::string Fresh(const std::string& name) {
  const std::string path = testing::TempDir() + "/" + name;
  for (int n = 0; n <= 8; ++n) fs::remove(n == 0 ? path : path + "." + std::to_string(n));
  return path;
}

// Fails if a file grows past max_bytes, a rotated file lacks the header, more than `keep` old
// files stay, or a line is lost beyond what `keep` allows.
TEST(RotatingFile, RotatesBySizeKeepsTheNewestFilesAndStartsEachWithTheHeader) {
  const std::string path = Fresh("rotating.csv");
  const std::string header = "t_ns,value";
  {
    RotatingFile f(path, RotationPolicy{1024, 2, true}, header);
    for (int i = 0; i < 300; ++i) ASSERT_TRUE(f.Write(std::to_string(i) + ",12345678\n"));
    EXPECT_TRUE(f.Close());
    EXPECT_GE(f.rotations(), 3u);
  }
  EXPECT_TRUE(fs::exists(path + ".1"));
  EXPECT_TRUE(fs::exists(path + ".2"));
  EXPECT_FALSE(fs::exists(path + ".3"));  // keep: 2
  std::vector<int> seen;
  for (const std::string& p : {path + ".2", path + ".1", path}) {
    EXPECT_LE(fs::file_size(p), 1024u) << p;
    const auto lines = Lines(p);
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(lines.front(), header) << p;
    for (std::size_t i = 1; i < lines.size(); ++i) seen.push_back(std::stoi(lines[i]));
  }
  // The three files hold the newest rows, in order, without a gap; the oldest file is gone.
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), 299);
  EXPECT_GT(seen.front(), 0);
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_EQ(seen[i], seen[i - 1] + 1);
}

// Fails if reopening truncates (append lost), writes a second header, or appends rows of another
// layout below a header that does not describe them.
TEST(RotatingFile, AppendsUnderTheSameHeaderAndRotatesAwayAnotherLayout) {
  const std::string path = Fresh("appending.csv");
  {
    RotatingFile f(path, RotationPolicy{0, 3, true}, "a,b");
    f.Write("1,2\n");
  }
  {
    RotatingFile f(path, RotationPolicy{0, 3, true}, "a,b");
    f.Write("3,4\n");
  }
  EXPECT_EQ(Lines(path), (std::vector<std::string>{"a,b", "1,2", "3,4"}));
  EXPECT_FALSE(fs::exists(path + ".1"));
  {
    RotatingFile f(path, RotationPolicy{0, 3, true}, "a,b,c");  // another configuration's columns
    f.Write("5,6,7\n");
  }
  EXPECT_EQ(Lines(path), (std::vector<std::string>{"a,b,c", "5,6,7"}));
  EXPECT_EQ(Lines(path + ".1"), (std::vector<std::string>{"a,b", "1,2", "3,4"}));
  {
    RotatingFile f(path, RotationPolicy{0, 3, false}, "a,b,c");  // append: false: a new file
    f.Write("8,9,10\n");
  }
  EXPECT_EQ(Lines(path), (std::vector<std::string>{"a,b,c", "8,9,10"}));
  EXPECT_EQ(Lines(path + ".1"), (std::vector<std::string>{"a,b,c", "5,6,7"}));
  EXPECT_EQ(Lines(path + ".2"), (std::vector<std::string>{"a,b", "1,2", "3,4"}));
}

// A writer killed mid-line (heftd under the watchdog's SIGKILL) leaves a partial row; fails if
// the rows appended after a restart continue that line instead of starting whole ones.
TEST(RotatingFile, APartialLastLineIsCutBeforeAppending) {
  const std::string path = Fresh("partial.csv");
  std::ofstream(path) << "a,b\n1,2\n3,";
  {
    RotatingFile f(path, RotationPolicy{0, 3, true}, "a,b");
    f.Write("5,6\n");
  }
  EXPECT_EQ(Lines(path), (std::vector<std::string>{"a,b", "1,2", "5,6"}));
}

TEST(RotatingFile, AnUnwritablePathIsRefusedWithItsName) {
  try {
    RotatingFile f("/nonexistent-dir/telemetry.csv", RotationPolicy{}, "a");
    FAIL() << "opened";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/telemetry.csv"), std::string::npos);
  }
}

// A plugin that replays scripted telemetry records (one link, "forearm").
class ScriptedPlugin final : public plugin::ControllerInterface {
 public:
  std::deque<plugin::TelemetryRecord> records;
  const char* name() const noexcept override { return "scripted"; }
  void init(const std::string&, const plugin::HardwareInterface&) override {}
  void start_from(const hal::InertialEstimate&, double) override {}
  void configure() override {}
  void activate() override {}
  plugin::UpdateResult update(std::int64_t, std::int64_t) noexcept override {
    return plugin::UpdateResult::kOk;
  }
  void deactivate() override {}
  void command(plugin::Command) noexcept override {}
  bool pop_telemetry(plugin::TelemetryRecord& r) noexcept override {
    if (records.empty()) return false;
    r = records.front();
    records.pop_front();
    return true;
  }
  std::size_t num_links() const noexcept override { return 1; }
  const char* link_name(std::size_t) const noexcept override { return "forearm"; }
};

class NoBuses final : public Backend {
 public:
  std::vector<hal::CanTransport*> buses() override { return {}; }
};

plugin::TelemetryRecord Record(std::int64_t t_ns, hal::EstimatorState state, std::uint32_t hold) {
  plugin::TelemetryRecord r;
  r.time_ns = t_ns;
  r.stamp_ns = t_ns - 2'000'000;
  r.status.state = state;
  r.status.hold_reason = hold;
  r.status.model = hal::MeasurementModel::kFullWrench;
  r.tick_status = static_cast<std::uint8_t>(estimator::TickStatus::kGated);
  r.num_links = 1;
  r.handed[0] = {6.94, 0.1, 0.2, 0.3, 1, 0, 0, 1, 0, 1};
  r.estimate[0] = r.handed[0];
  r.compute_ns = 12'345;
  return r;
}

// The host's rows: fails if a column loses its unit, time is not the exact integer nanoseconds
// (a 10⁶ s uptime with a 1 ns step needs 16 digits), an enumeration is written as a number, or
// heftd's restart truncates the file instead of appending under the same header.
TEST(Telemetry, RowsSpellEnumerationsAndExactNanosecondsAndAppendAcrossRestarts) {
  const std::string path = Fresh("telemetry_host.csv");
  auto log = std::make_shared<spdlog::logger>("test");
  NoBuses backend;
  const std::int64_t t0 = 1'000'000'000'000'001;  // 10⁶ s and 1 ns
  for (int run = 0; run < 2; ++run) {
    ScriptedPlugin plug;
    plug.records.push_back(Record(t0 + 3 * run, hal::EstimatorState::kEstimating, 0));
    plug.records.push_back(Record(t0 + 3 * run + 1, hal::EstimatorState::kHolding,
                                  estimator::kHoldTorques | estimator::kHoldBase));
    Telemetry telemetry(path, RotationPolicy{0, 5, true}, plug, backend, log);
    telemetry.Drain();
    EXPECT_EQ(telemetry.rows(), 2u);
    EXPECT_EQ(telemetry.holds(), 1u);
  }
  const auto lines = Lines(path);
  ASSERT_EQ(lines.size(), 5u);  // one header, two runs of two rows
  // Read back through the one reader (telemetry_table.hpp), by column name.
  const TelemetryTable t = ReadTelemetryTable(path);
  ASSERT_TRUE(t.ok);
  ASSERT_EQ(t.rows.size(), 4u);
  EXPECT_EQ(t.left_out, 0u);
  for (const char* n : {"forearm_mass_kg", "forearm_hx_kg_m", "forearm_izz_kg_m2",
                        "forearm_est_mass_kg", "compute_us", "stamp_ns"})
    EXPECT_TRUE(t.has(n)) << n;
  // The time as written: all 16 digits, no exponent (t_ns is the first column).
  EXPECT_EQ(lines[4].substr(0, lines[4].find(',')), "1000000000000005");
  EXPECT_EQ(t.number(3, "t_ns"), 1000000000000005.0);
  EXPECT_EQ(t.number(3, "stamp_ns"), 999999998000005.0);
  EXPECT_EQ(t.cell(3, "state"), "holding");
  EXPECT_EQ(t.cell(3, "hold_reason"), "torques+base");
  EXPECT_EQ(t.cell(3, "tick_status"), "gated");
  EXPECT_EQ(t.cell(3, "model"), "full_wrench");
  EXPECT_EQ(t.number(3, "compute_us"), 12.345);
  EXPECT_EQ(t.number(3, "forearm_mass_kg"), 6.94);
  EXPECT_EQ(t.cell(0, "hold_reason"), "none");
}

// A gate that opens now and then: gated holds every 10 s for 100 s. The first one is a warning
// and its end an info line; the next ones within the minute after it go to debug level, counted,
// and the first after the minute is a warning again that says how many it left out. Fails if a
// gated hold is never a warning, every one is, or the count is lost.
TEST(Telemetry, AGateThatOpensNowAndThenWarnsOnceAMinute) {
  std::ostringstream out;
  auto text = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  auto log = std::make_shared<spdlog::logger>("test", text);
  log->set_level(spdlog::level::info);
  log->set_pattern("%l %v");
  NoBuses backend;
  ScriptedPlugin plug;
  for (int k = 0; k < 10; ++k) {
    const std::int64_t t = 1'000'000'000LL * (10 * k + 1);
    plug.records.push_back(Record(t, hal::EstimatorState::kEstimating, 0));
    plug.records.push_back(
        Record(t + 2'000'000'000, hal::EstimatorState::kHolding, estimator::kHoldGated));
  }
  plug.records.push_back(Record(200'000'000'000, hal::EstimatorState::kEstimating, 0));
  Telemetry telemetry("", RotationPolicy{0, 5, true}, plug, backend, log);
  telemetry.Drain();
  const std::string s = out.str();
  auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
  };
  // Holds at 3, 13, ..., 93 s: warnings at 3 and 63 s (the second names the five in between).
  EXPECT_EQ(count("warning estimator: estimating → holding"), 2u) << s;
  EXPECT_EQ(count("[5 more gated holds in the minute before, logged at debug level]"), 1u) << s;
  EXPECT_EQ(count("info estimator: holding → estimating"), 2u) << s;
}

// Fails if a rotated telemetry file starts without the header (pandas would take a data row for
// the column names) or the rows are not all there across the files.
TEST(Telemetry, EveryRotatedFileStartsWithTheHeader) {
  const std::string path = Fresh("telemetry_rotating.csv");
  auto log = std::make_shared<spdlog::logger>("test");
  NoBuses backend;
  ScriptedPlugin plug;
  for (int i = 0; i < 60; ++i)
    plug.records.push_back(Record(3'000'000LL * (i + 1), hal::EstimatorState::kEstimating, 0));
  Telemetry telemetry(path, RotationPolicy{2048, 10, true}, plug, backend, log);
  telemetry.Drain();
  EXPECT_GE(telemetry.rotations(), 3u);
  std::size_t rows = 0;
  for (std::uint64_t n = 0; n <= telemetry.rotations(); ++n) {
    const std::string p = n == 0 ? path : path + "." + std::to_string(n);
    const auto lines = Lines(p);
    ASSERT_FALSE(lines.empty()) << p;
    EXPECT_EQ(lines.front(), telemetry.header()) << p;
    EXPECT_LE(fs::file_size(p), 2048u) << p;
    rows += lines.size() - 1;
  }
  EXPECT_EQ(rows, 60u);
}

}  // namespace
}  // namespace heft::host

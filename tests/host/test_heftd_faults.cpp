// Bus faults on the simulated robot (heft-sim with simulation.faults on the fixed-base dumbbell
// curl): random frame loss counted in the run's summary while the estimator keeps estimating, a
// bus-off that makes the estimator hold until the supervisor restarts the bus, and the candump
// log of the simulated buses as can-utils read it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "heft/host/json.hpp"
#include "heft/host/telemetry_table.hpp"
#include "heft/test/config_builder.hpp"
#include "heft/test/heftd_run.hpp"
#include "test_heftd_support.hpp"

namespace {

using heft::host::test::FirstHoldAfter;
using heft::host::test::Hold;
using heft::host::test::ReadCsv;
using heft::host::test::Result;
using heft::host::test::Shipped;
using heft::test::ConfigBuilder;
using heft::test::RunHeftSim;
using heft::test::Slurp;

// dumbbell-curl (fixed humanoid; the left arm on can0, the legs on can1) with `faults` (YAML, a
// list) as its simulation.faults, written as <tag>.yaml into `config`'s directory.
std::string FaultConfig(ConfigBuilder& config, const std::string& tag, const std::string& faults) {
  return config.SetYaml("simulation.faults", faults).Write(tag + ".yaml");
}

// heftd's end-of-run summary, per bus: the drivers' counters and what the simulator did — read
// from the run summary's JSON beside the telemetry (heft/host/run_summary.hpp), not the log.
struct BusSummary {
  std::uint64_t frames = 0, error_frames = 0, bus_off = 0, down_ticks = 0, restart_requests = 0,
                restarts = 0;
  std::uint64_t sim_frames = 0, lost_random = 0, lost_burst = 0, lost_off = 0, sim_bus_off = 0;
};
struct Summary {
  std::uint64_t published = 0, rejected = 0, lost = 0, stale = 0;
  std::uint64_t device_faults = 0;  // fault_events + emcy_errors + heartbeat_faults + _timeouts
  std::uint64_t not_ok = 0, with_lost_samples = 0;
  std::map<std::string, BusSummary> buses;
  heft::host::Json json;
};
// The number at `key` of `group`; a missing counter fails the test.
std::uint64_t Counter(const heft::host::Json& group, const char* key) {
  const heft::host::Json* v = group.Find(key);
  EXPECT_TRUE(v != nullptr && v->type == heft::host::Json::Type::kNumber) << "no counter " << key;
  return v != nullptr ? static_cast<std::uint64_t>(v->number) : 0;
}
const heft::host::Json& Group(const heft::host::Json& parent, const char* key) {
  static const heft::host::Json kNone;
  const heft::host::Json* v = parent.Find(key);
  EXPECT_NE(v, nullptr) << "no " << key << " in the run summary";
  return v != nullptr ? *v : kNone;
}
// The summary of the run whose telemetry is `csv`.
Summary ReadSummary(const std::string& csv) {
  Summary s;
  std::string error;
  const std::optional<heft::host::Json> json =
      heft::host::ParseJson(Slurp(heft::host::SummaryPath(csv)), &error);
  EXPECT_TRUE(json.has_value()) << heft::host::SummaryPath(csv) << ": " << error;
  if (!json) return s;
  s.json = *json;
  const heft::host::Json& d = Group(s.json, "drivers");
  s.published = Counter(d, "published");
  s.rejected = Counter(d, "rejected");
  s.lost = Counter(d, "lost_samples");
  s.stale = Counter(d, "stale_events");
  for (const char* key : {"fault_events", "emcy_errors", "heartbeat_faults", "heartbeat_timeouts"})
    s.device_faults += Counter(d, key);
  const heft::host::Json& ch = Group(s.json, "channels");
  s.not_ok = Counter(ch, "not_ok");
  s.with_lost_samples = Counter(ch, "with_lost_samples");
  for (const auto& [name, g] : Group(s.json, "buses").object) {
    BusSummary& b = s.buses[name];
    b.frames = Counter(g, "frames");
    b.error_frames = Counter(g, "error_frames");
    b.bus_off = Counter(g, "bus_off");
    b.down_ticks = Counter(g, "down_ticks");
    b.restart_requests = Counter(g, "restart_requests");
    b.restarts = Counter(g, "restarts");
    b.sim_frames = Counter(g, "sim_frames");
    b.lost_random = Counter(g, "lost_random");
    b.lost_burst = Counter(g, "lost_burst");
    b.lost_off = Counter(g, "lost_bus_off");
    b.sim_bus_off = Counter(g, "sim_bus_off");
  }
  return s;
}

// Telemetry rows of the dumbbell curl: time [s], state and hold reason (names), the forearm's
// handed and true mass.
struct Row {
  double t;
  std::string state, hold_reason;
  double mass, true_mass;
};
std::vector<Row> ReadTelemetry(const std::string& path) {
  const heft::host::TelemetryTable csv = ReadCsv(path);
  std::vector<Row> rows;
  for (std::size_t i = 0; i < csv.rows.size(); ++i)
    rows.push_back({1e-9 * csv.number(i, "t_ns"), csv.cell(i, "state"), csv.cell(i, "hold_reason"),
                    csv.number(i, "left_forearm_mass_kg"),
                    csv.number(i, "left_forearm_true_mass_kg")});
  return rows;
}

TEST(Heftd, RandomFrameLossIsCountedAndTheEstimatorKeepsEstimating) {
  // 3 % of the frames on both buses lost at random, for the whole run.
  constexpr double kLoss = 0.03;
  ConfigBuilder config = Shipped("sim/dumbbell-curl.yaml");
  const std::string cfg = FaultConfig(config, "loss", "[{device: loss, probability: 0.03}]");
  const std::string csv = config.dir() + "/loss.csv";
  const Result r = RunHeftSim({"--config", cfg, "--duration", "4", "--telemetry", csv});
  ASSERT_EQ(r.code, 0) << r.output;
  const Summary s = ReadSummary(csv);
  ASSERT_EQ(s.buses.size(), 2u) << r.output;
  std::uint64_t injected = 0, sent = 0;
  for (const auto& [name, b] : s.buses) {
    // Each bus loses its share: binomial, within 4 σ of the configured probability.
    const double n = static_cast<double>(b.sim_frames + b.lost_random);
    const double sigma = std::sqrt(kLoss * (1 - kLoss) / n);
    EXPECT_NEAR(static_cast<double>(b.lost_random) / n, kLoss, 4 * sigma) << name;
    EXPECT_EQ(b.frames, b.sim_frames) << name;  // what was put on the bus was received
    EXPECT_EQ(b.error_frames, 0u);
    EXPECT_EQ(b.lost_burst + b.lost_off, 0u);
    injected += b.lost_random;
    sent += b.sim_frames;
  }
  std::printf("frame loss: %llu of %llu frames lost, drivers counted %llu lost samples\n",
              static_cast<unsigned long long>(injected),
              static_cast<unsigned long long>(injected) + static_cast<unsigned long long>(sent),
              static_cast<unsigned long long>(s.lost));
  // Every lost frame is a counter gap the drivers count, except the devices' last few frames of
  // the run (nothing follows them to reveal the gap).
  EXPECT_LE(s.lost, injected);
  EXPECT_GE(s.lost + 20, injected);
  EXPECT_EQ(s.rejected, 0u);
  EXPECT_EQ(s.device_faults, 0u) << "frame loss is not a device's fault";
  // The estimator keeps estimating: 1 ms gaps stay within the 3 ms timeout; only four losses in a
  // row on one device make it hold (a tick or two).
  const std::vector<Row> rows = ReadTelemetry(csv);
  int after_start = 0, estimating = 0;
  for (const Row& row : rows) {
    if (row.t < 0.6) continue;
    ++after_start;
    estimating += row.state == "estimating";
  }
  ASSERT_GT(after_start, 1000);
  EXPECT_GT(estimating, after_start * 99 / 100);
  EXPECT_GT(std::abs(rows.front().mass - rows.front().true_mass), 4.0);  // the dumbbell, unknown
  EXPECT_LT(std::abs(rows.back().mass - rows.back().true_mass), 0.5);    // caught up all the same
}

TEST(Heftd, BusOffMakesTheEstimatorHoldUntilTheSupervisorRestartsTheBus) {
  // can0 (the arms, with the estimated forearm's elbow) is off from 2.0 s to 2.3 s.
  ConfigBuilder config = Shipped("sim/dumbbell-curl.yaml");
  const std::string cfg =
      FaultConfig(config, "bus_off", "[{device: bus_off, name: can0, from: 2.0, to: 2.3}]");
  const std::string csv = config.dir() + "/bus_off.csv";
  const Result r = RunHeftSim({"--config", cfg, "--duration", "3.5", "--telemetry", csv});
  ASSERT_EQ(r.code, 0) << r.output;
  // The hold begins within 10 ms of the bus going off, for the encoders and the torques (0x3).
  const Hold hold = FirstHoldAfter(ReadCsv(csv), 1.0);  // not the start-up hold (history)
  EXPECT_GE(hold.from, 2.0) << r.output;
  EXPECT_LT(hold.from, 2.01);
  EXPECT_EQ(hold.reason, "encoders+torques");
  // It resumes once a restart after the window has brought the frames back: the first row
  // estimating again after the hold that began at 2.0 s.
  const std::vector<Row> rows = ReadTelemetry(csv);
  double resumed = -1;
  bool held_after_2 = false;
  for (const Row& row : rows) {
    held_after_2 = held_after_2 || (row.t >= 2.0 && row.state == "holding");
    if (held_after_2 && row.state == "estimating") {
      resumed = row.t;
      break;
    }
  }
  EXPECT_GE(resumed, 2.3) << r.output;
  EXPECT_LT(resumed, 3.0);
  const Summary s = ReadSummary(csv);
  const BusSummary& can0 = s.buses.at("can0");
  const BusSummary& can1 = s.buses.at("can1");
  // Bus-off arrives through the transport's error path: error frames of class bus-off, one restart
  // request each, served by the supervisor.
  EXPECT_GE(can0.bus_off, 1u);
  EXPECT_GE(can0.restarts, 1u);  // the supervisor restarted it
  EXPECT_EQ(can0.bus_off, can0.sim_bus_off);
  EXPECT_EQ(can0.error_frames, can0.bus_off);
  EXPECT_EQ(can0.restart_requests, can0.bus_off);
  EXPECT_EQ(can0.restarts, can0.restart_requests);
  EXPECT_GE(can0.lost_off, 17u * 2u * 300u);  // every frame of its 17 joints, at least 300 ms
  EXPECT_EQ(can1.error_frames + can1.restarts + can1.lost_off, 0u);  // can1 untouched
  // Every sample sent while can0 was off shows up as lost (counter gaps, longer than 256 samples).
  EXPECT_EQ(s.lost, can0.lost_off);
  EXPECT_GE(s.stale, 34u);  // can0's encoders and torque sensors went stale
  // Per channel: can0's 17 encoders and 17 torque sensors lost samples, and all are ok again.
  EXPECT_EQ(s.not_ok, 0u);
  EXPECT_EQ(s.with_lost_samples, 34u);
  // While holding, the handed mass does not move.
  int holding_rows = 0;
  double held = -1;
  for (const Row& row : rows) {
    if (row.state != "holding" || row.t < 1.0) continue;  // not the start-up hold (history)
    ++holding_rows;
    // Encoders and torques while can0 is off; encoders alone for the ticks after the restart
    // whose finite-difference window still reaches back into the outage.
    EXPECT_TRUE(row.hold_reason == "encoders+torques" || row.hold_reason == "encoders")
        << row.t << " " << row.hold_reason;
    if (held < 0) held = row.mass;
    EXPECT_EQ(row.mass, held);
  }
  EXPECT_GE(holding_rows, 100);  // at least the 300 ms outage at 3 ms
}

TEST(Heftd, CandumpLogOfTheSimulatedBusesReadsWithCanUtils) {
  ConfigBuilder config = Shipped("sim/dumbbell-curl.yaml");
  const std::string log = config.dir() + "/candump.log";
  const std::string csv = config.dir() + "/candump.csv";
  config.Set("simulation.candump", log);
  const std::string cfg =
      FaultConfig(config, "candump", "[{device: bus_off, name: can1, from: 0.2, to: 0.25}]");
  const Result r = RunHeftSim({"--config", cfg, "--duration", "0.5", "--telemetry", csv});
  ASSERT_EQ(r.code, 0) << r.output;
  const Summary s = ReadSummary(csv);
  const heft::host::Json& candump = Group(s.json, "candump");
  const std::uint64_t written = Counter(candump, "written");
  EXPECT_EQ(candump.String("path"), log) << r.output;
  EXPECT_EQ(Counter(candump, "left_out"), 0u);
  EXPECT_EQ(written, s.buses.at("can0").sim_frames + s.buses.at("can1").sim_frames);
  // One line per frame, the bus-off error frame included (CAN_ERR_FLAG | CAN_ERR_BUSOFF).
  std::ifstream in(log);
  std::uint64_t lines = 0, errors = 0;
  for (std::string line; std::getline(in, line);) {
    ++lines;
    errors += line.find(" can1 20000040#") != std::string::npos;
  }
  EXPECT_EQ(lines, written);
  EXPECT_EQ(errors, s.buses.at("can1").sim_bus_off);
  EXPECT_GE(errors, 1u);
  // can-utils' own reader: log2asc converts every line (after its 3-line header).
  if (std::system("command -v log2asc > /dev/null") != 0) GTEST_SKIP() << "can-utils missing";
  const std::string asc = config.dir() + "/candump.asc";
  ASSERT_EQ(std::system(("log2asc -I " + log + " -O " + asc + " can0 can1").c_str()), 0);
  std::ifstream ain(asc);
  std::uint64_t asc_lines = 0, asc_frames = 0;
  for (std::string line; std::getline(ain, line);) {
    ++asc_lines;
    asc_frames += line.find(" Rx ") != std::string::npos;
  }
  EXPECT_EQ(asc_lines, written + 3);
  EXPECT_EQ(asc_frames, written - errors);  // data frames; error frames are written differently
}

}  // namespace

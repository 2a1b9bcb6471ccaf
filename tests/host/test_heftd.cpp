// The host as the service runs it, on the simulated robot (heft-sim: the same host, threads,
// drivers and plugin as heftd): a bounded lockstep run, faults, SIGTERM in real time, the
// shared-memory hand-off, and a table of malformed configurations, each refused with its own
// message. And heftd itself (no simulator): what it refuses — a simulated configuration, bad
// command-line numbers, CPUs the machine does not have — and its --help / --version.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "heft/host/json.hpp"
#include "heft/host/telemetry_table.hpp"
#include "heft/test/config_builder.hpp"
#include "heft/test/heftd_run.hpp"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using heft::test::ConfigBuilder;
using heft::test::RunHeftSim;
using heft::test::Slurp;
using Result = heft::test::HeftdResult;

const std::string kConfigDir = HEFT_CONFIG_DIR;

// A shipped configuration (config/<name>) to edit through yaml-cpp, written into a fresh temporary
// directory of its own (heft/test/config_builder.hpp).
ConfigBuilder Shipped(const std::string& name) {
  return ConfigBuilder(kConfigDir + "/" + name);
}

// heftd's telemetry through the host's one reader (heft/host/telemetry_table.hpp), every row
// whole.
heft::host::TelemetryTable ReadCsv(const std::string& path) {
  heft::host::TelemetryTable t = heft::host::ReadTelemetryTable(path);
  EXPECT_TRUE(t.ok) << path;
  EXPECT_EQ(t.left_out, 0u) << path;
  for (const char* c :
       {"t_ns", "state", "hold_reason", "left_forearm_mass_kg", "left_forearm_true_mass_kg"})
    EXPECT_TRUE(t.has(c)) << "no column " << c;
  return t;
}

// Whether any row of `t` is in estimator state `state` (the telemetry's `state` column).
bool AnyRowIn(const heft::host::TelemetryTable& t, const std::string& state) {
  const std::vector<std::string> states = t.strings("state");
  return std::find(states.begin(), states.end(), state) != states.end();
}

TEST(Heftd, BoundedLockstepRunOnTheSimulatedRobot) {
  const std::string csv = heft::test::FreshTempDir("heftd-run") + "/telemetry.csv";
  const Result r = RunHeftSim(
      {"--config", kConfigDir + "/sim/dumbbell-curl.yaml", "--duration", "4", "--telemetry", csv});
  ASSERT_EQ(r.code, 0) << r.output;
  // The summary line heft-report and main-job.sh read from the log (tools/report/heft_report.cpp):
  // its wording is their interface, and the run summary's JSON has no tick times.
  EXPECT_THAT(r.output, HasSubstr("control tick compute"));
  // Telemetry: a header and one row per 3 ms; the estimator estimates and the handed mass
  // converges towards the truth.
  const heft::host::TelemetryTable t = ReadCsv(csv);
  EXPECT_TRUE(AnyRowIn(t, "estimating"));
  std::vector<double> err;
  for (std::size_t i = 0; i < t.rows.size(); ++i)
    err.push_back(
        std::abs(t.number(i, "left_forearm_mass_kg") - t.number(i, "left_forearm_true_mass_kg")));
  EXPECT_NEAR(static_cast<double>(t.rows.size()), 4000.0 / 3, 2);
  ASSERT_GT(err.size(), 100u);
  EXPECT_GT(err.front(), 4.0);  // the dumbbell is unknown at first
  EXPECT_LT(err.back(), 0.5);   // the estimate has caught up
}

// estimator.control_period sets the control thread's period, not only the filter's time step:
// at 0.002 s (500 Hz) a 2 s lockstep run writes one telemetry row per 2 ms and estimates. Fails if
// heftd kept its 3 ms thread under a 2 ms filter (667 rows) or did not estimate at that rate.
TEST(Heftd, TheControlThreadRunsAtTheConfiguredPeriod) {
  ConfigBuilder config = Shipped("sim/dumbbell-curl.yaml");
  const std::string cfg = config.Set("estimator.control_period", "0.002").Write("period.yaml");
  const std::string csv = config.dir() + "/period.csv";
  const Result r = RunHeftSim({"--config", cfg, "--duration", "2", "--telemetry", csv});
  ASSERT_EQ(r.code, 0) << r.output;
  const heft::host::TelemetryTable t = ReadCsv(csv);
  EXPECT_TRUE(AnyRowIn(t, "estimating"));
  EXPECT_NEAR(static_cast<double>(t.rows.size()), 2000.0 / 2, 2);
  ASSERT_GT(t.rows.size(), 2u);
  EXPECT_NEAR(t.number(1, "t_ns") - t.number(0, "t_ns"), 2e6, 1.0);
}

// The first hold after `after` seconds in the telemetry: when it began, why, and when the
// estimator was estimating again (-1 where it did not happen).
struct Hold {
  double from = -1, to = -1;
  std::string reason;
};
Hold FirstHoldAfter(const heft::host::TelemetryTable& t, double after) {
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

// heft-sim on the shipped dumbbell-curl with `key` set to `yaml` (written as <tag>.yaml), for
// `duration` s: its result, its telemetry and the first hold after 1 s (not the start-up hold,
// which lasts while the differencing history fills).
struct HoldRun {
  Result run;
  heft::host::TelemetryTable telemetry;
  Hold hold;
};
HoldRun RunDumbbellCurlWith(const std::string& key, const std::string& yaml, const std::string& tag,
                            const std::string& duration) {
  ConfigBuilder config = Shipped("sim/dumbbell-curl.yaml");
  const std::string cfg = config.SetYaml(key, yaml).Write(tag + ".yaml");
  const std::string csv = config.dir() + "/" + tag + ".csv";
  HoldRun r;
  r.run = RunHeftSim({"--config", cfg, "--duration", duration, "--telemetry", csv});
  if (r.run.code != 0) return r;
  r.telemetry = ReadCsv(csv);
  r.hold = FirstHoldAfter(r.telemetry, 1.0);
  return r;
}

// Fails if the estimator does not hold within a few milliseconds of the sensor's silence (for the
// torques, as the hold reason says), does not resume as soon as it is back, or lets the handed mass
// move while holding. Read from the telemetry, not the log's sentences (that such a hold is logged
// as a warning: HeftdService.JournalLinesCarryTheirPriority).
TEST(Heftd, ADeadSensorMakesTheEstimatorHoldItsLastGoodEstimateAndSaySo) {
  // The elbow's torque sensor falls silent from 2.0 s to 2.5 s of simulated time.
  const HoldRun run = RunDumbbellCurlWith(
      "simulation.faults", "[{device: torque, name: left_elbow, from: 2.0, to: 2.5}]", "fault",
      "3.5");
  const Result& r = run.run;
  ASSERT_EQ(r.code, 0) << r.output;
  const heft::host::TelemetryTable& t = run.telemetry;
  const Hold& hold = run.hold;
  // Within the drivers' 3 ms timeout and a tick or two of each edge (lockstep: 2.007, 2.505).
  EXPECT_GE(hold.from, 2.0) << r.output;
  EXPECT_LT(hold.from, 2.02);
  EXPECT_EQ(hold.reason, "torques");  // joint torques (0x2)
  EXPECT_GE(hold.to, 2.5);
  EXPECT_LT(hold.to, 2.52);
  // While holding (and saying why), the handed mass does not move.
  int holding_rows = 0;
  double held = -1;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    if (1e-9 * t.number(i, "t_ns") < 1.0 || t.cell(i, "state") != "holding") continue;
    ++holding_rows;
    EXPECT_EQ(t.cell(i, "hold_reason"), "torques");
    const double mass = t.number(i, "left_forearm_mass_kg");
    if (held < 0) held = mass;
    EXPECT_EQ(mass, held);
  }
  EXPECT_GT(holding_rows, 150);
}

// Torque sensors that read 2 N·m off on every joint (simulation.deviations), not calibrated (the
// shipped dumbbell-curl runs without): a residual the forearm cannot explain, so the gate refuses
// nearly every measurement and the estimate is held by it. Fails if the status does not say so
// (state holding, reason gated) after estimator.gating.hold_after (2 s) of refusals, says so
// before that, or heftd's log does not warn about it with the likely causes.
TEST(Heftd, AGateThatRefusesEveryMeasurementHoldsAndSaysSo) {
  const HoldRun run = RunDumbbellCurlWith(
      "simulation.deviations", "{preset: ideal, seed: 1, torque_offset: 2.0}", "offsets", "6");
  const Result& r = run.run;
  ASSERT_EQ(r.code, 0) << r.output;
  const Hold& hold = run.hold;
  EXPECT_EQ(hold.reason, "gated") << r.output;
  EXPECT_GE(hold.from, 2.0) << "2 s of gated ticks at the least";
  EXPECT_THAT(r.output, HasSubstr("[warning] estimator: estimating → holding"));
  EXPECT_THAT(r.output, HasSubstr("an uncalibrated torque offset"));
}

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

TEST(Heftd, ExitsCleanlyOnSigtermWithItsLogFlushed) {
  const Result r = RunHeftSim(
      {"--config", kConfigDir + "/sim/forearm-load.yaml", "--realtime", "--duration", "60"}, 1500);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("stopped after"));
  EXPECT_THAT(r.output, HasSubstr("control wake-up lateness"));
}

TEST(Heftd, HandOffInSharedMemoryForAnotherProcess) {
  const std::string name = "heft_test_" + std::to_string(getpid());
  const pid_t daemon = fork();
  if (daemon == 0) {
    std::FILE* f = std::freopen("/dev/null", "w", stdout);
    (void)f;
    execl(HEFT_HEFT_SIM, HEFT_HEFT_SIM, "--config",
          (kConfigDir + "/sim/dumbbell-curl.yaml").c_str(), "--realtime", "--duration", "60",
          "--shm", name.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  // The example reader, in its own process.
  const std::string out = testing::TempDir() + "/reader_" + std::to_string(getpid()) + ".txt";
  const std::string cmd = std::string(HEFT_READER) + " " + name + " --once > " + out + " 2>&1";
  const int rc = std::system(cmd.c_str());
  kill(daemon, SIGTERM);
  int status = 0;
  waitpid(daemon, &status, 0);
  EXPECT_EQ(rc, 0) << Slurp(out);
  EXPECT_THAT(Slurp(out), HasSubstr("left_forearm m="));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_FALSE(std::filesystem::exists("/dev/shm/" + name));  // removed at exit
}

// Each case sets (or adds) one value of forearm-load.yaml and expects heft-sim to refuse the file
// with exit code 78 and its own message. Fails if a case is accepted, refused with another message
// or another exit code.
TEST(Heftd, EveryMalformedConfigurationGetsItsOwnMessage) {
  // Files a refused configuration would name, in a directory of the test's own.
  const std::string dir = heft::test::FreshTempDir("heftd-malformed");
  // One edit: the key path and its new value (YAML: a scalar, or a list or map in flow style).
  const auto set = [](const std::string& key, const std::string& yaml) {
    return [=](ConfigBuilder& c) { c.SetYaml(key, yaml); };
  };
  const auto faults = [&](const std::string& list) { return set("simulation.faults", list); };
  struct Case {
    const char* name;
    std::function<void(ConfigBuilder&)> edit;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"unknown top-level key", set("bakend", "x"),
       "unknown key 'bakend'; allowed: robot, drivers, estimator, backend, host, simulation"},
      {"bad backend", set("backend", "ethercat"),
       "backend: 'ethercat' is not allowed; allowed: simulated, socketcan"},
      {"unknown scenario", set("simulation.scenario", "forarm-load"),
       "simulation.scenario: unknown scenario 'forarm-load'; allowed: forearm-load"},
      {"bad filter", set("estimator.filter", "ukf"),
       "estimator.filter: 'ukf' is not allowed; allowed: ekf, kf"},
      {"control period not whole milliseconds", set("estimator.control_period", "0.0025"),
       "estimator.control_period: heftd's control thread runs on the drivers' 1 ms samples"},
      {"bad base acceleration", set("estimator.base_acceleration", "gps"),
       "estimator.base_acceleration: 'gps' is not allowed; allowed: auto, imu, velocity"},
      {"out of range", set("estimator.rate_limits.mass", "-1"),
       "estimator.rate_limits.mass: value -1 is out of range"},
      {"wrong type", set("estimator.gating.confidence", "high"),
       "estimator.gating.confidence: expected a number"},
      {"unknown joint", set("drivers.joints[6].name", "left_elbo"), "joint 'left_elbo' is not in"},
      {"unknown bus", set("drivers.joints[6].bus", "can7"),
       "unknown bus 'can7'; allowed: can0, can1"},
      {"unknown link", set("estimator.links", "[left_forarm]"),
       "unknown body (moving link) 'left_forarm'"},
      {"missing urdf", set("robot.urdf", "../robots/nope.urdf"), "robot.urdf: no such file"},
      {"unknown fault", faults("[{device: motor, from: 1, to: 2}]"),
       "simulation.faults[0].device: 'motor' is not allowed; allowed: encoder, torque, ft, crc, "
       "loss, burst, bus_off"},
      {"key of another fault kind",
       faults("[{device: torque, name: left_elbow, from: 1, to: 2, probability: 1}]"),
       "unknown key 'probability'; allowed: device, name, from, to"},
      {"loss probability", faults("[{device: loss, probability: 1.5}]"),
       "simulation.faults[0].probability: value 1.5 is out of range; allowed: [0, 1]"},
      {"unknown bus in a fault", faults("[{device: bus_off, name: can7, from: 1, to: 2}]"),
       "simulation.faults[0].name: 'can7' is not a bus of drivers.buses; allowed: can0, can1"},
      {"unknown joint in a fault", faults("[{device: encoder, name: left_elbo, from: 1, to: 2}]"),
       "simulation.faults[0].name: 'left_elbo' is not a joint of drivers.joints; allowed: "
       "waist_yaw,"},
      {"fault ends before it starts", faults("[{device: burst, name: can0, from: 2, to: 1}]"),
       "simulation.faults[0].to: must be after from (2 s)"},
      {"overlapping bursts",
       faults("[{device: burst, name: can0, from: 1, to: 1.2, repeat: 3, period: 0.1}]"),
       "simulation.faults[0].period: back-to-back bursts must start further apart than one burst"},
      {"IMU on a fixed base", set("drivers.imu", "{bus: can0}"),
       "drivers.imu: the base IMU measures a floating base; allowed only with "
       "robot.floating_base: true"},
      {"bus name longer than an interface name", set("drivers.buses[1]", "can_bus_number_one"),
       "bus name 'can_bus_number_one' has 18 characters; allowed: 1 to 15"},
      {"bus fault without a bus", faults("[{device: bus_off, from: 1, to: 2}]"),
       "simulation.faults[0]: missing required key 'name'"},
      {"telemetry files smaller than a row or two",
       [&](ConfigBuilder& c) {
         c.Set("host.telemetry.path", dir + "/t.csv").Set("host.telemetry.max_bytes", "10");
       },
       "host.telemetry.max_bytes: at least 1024 bytes per file (0: never rotate)"},
      {"unknown key of the candump log",
       [&](ConfigBuilder& c) {
         c.Set("host.candump.path", dir + "/frames.log").Set("host.candump.size", "1000000");
       },
       "unknown key 'size'; allowed: path, max_bytes, keep, append"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    ConfigBuilder config = Shipped("sim/forearm-load.yaml");
    c.edit(config);
    const std::string path = config.WriteTo(dir + "/case" + std::to_string(i) + ".yaml");
    const Result r = RunHeftSim({"--config", path, "--duration", "0.1"});
    EXPECT_EQ(r.code, 78) << c.name << "\n" << r.output;  // EX_CONFIG: systemd does not restart
    EXPECT_THAT(r.output, HasSubstr(c.message)) << c.name;
    EXPECT_THAT(r.output, HasSubstr(path + ":")) << c.name;  // the file, named
  }
}

// A refusal: EX_CONFIG (78: systemd does not restart it) and every one of `messages` in the output.
void ExpectRefused(const Result& r, const std::vector<std::string>& messages) {
  EXPECT_EQ(r.code, 78) << r.output;
  for (const std::string& m : messages) EXPECT_THAT(r.output, HasSubstr(m));
}

// heftd (the service, no simulator) refuses a simulated configuration and names heft-sim, with
// the configuration's exit code. Fails if heftd tried to run it (or died with another message).
TEST(Heftd, TheServiceRefusesASimulatedConfigurationAndNamesHeftSim) {
  ExpectRefused(
      heft::test::RunProgram(HEFT_HEFTD, {"--config", kConfigDir + "/sim/forearm-load.yaml"}),
      {"forearm-load.yaml:", "backend: ", "runs in heft-sim"});
}

// Numbers on the command line are checked with a message naming the option and what it expects
// (not the C library's "stod"); the simulator's options are not heftd's. Fails on a generic or
// missing message or a run that starts anyway.
TEST(Heftd, CommandLineNumbersAndOptionsAreRefusedByName) {
  const std::string cfg = kConfigDir + "/sim/forearm-load.yaml";
  for (const char* bad : {"abc", "1.5s", "", "-1", "nan"}) {
    const Result r = RunHeftSim({"--config", cfg, "--duration", bad});
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr("heft-sim: --duration expects a duration in simulated seconds"))
        << bad;
    EXPECT_THAT(r.output, HasSubstr("not '" + std::string(bad) + "'")) << bad;
    EXPECT_THAT(r.output, Not(HasSubstr("stod")));
  }
  const Result r = heft::test::RunProgram(
      HEFT_HEFTD, {"--config", kConfigDir + "/heft.yaml", "--duration", "5"});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("heftd: unknown argument '--duration'"));
}

// host.realtime.cpus must name CPUs this machine has (sysconf(_SC_NPROCESSORS_CONF)); the error
// points at the file and line. Fails if a CPU beyond the machine is accepted.
TEST(Heftd, RealtimeCpusBeyondTheMachineAreRefusedWithFileAndLine) {
  const std::string cfg =
      Shipped("heft.yaml").SetYaml("host.realtime.cpus", "[0, 1000]").Write("cpus.yaml");
  const Result r = heft::test::RunProgram(HEFT_HEFTD, {"--config", cfg});
  EXPECT_EQ(r.code, 78) << r.output;
  EXPECT_THAT(r.output, HasSubstr(cfg + ":"));
  EXPECT_THAT(r.output,
              HasSubstr("host.realtime.cpus[1]: CPU 1000 does not exist: this machine has "));
}

// heftd refuses to run as root (exit 78, EX_CONFIG: systemd does not restart it) unless
// host.allow_root or --allow-root says so; then it goes on (here: to the SocketCAN buses this
// machine does not have, exit 1). heft-sim, a developer's tool, runs as root (every other test
// here). Fails if root is accepted silently, refused without the way out in the message, or
// refused although allowed. Skipped when the tests do not run as root (CI and the main job do).
TEST(Heftd, RootIsRefusedUnlessTheConfigurationOrTheCommandLineAllowsIt) {
  if (geteuid() != 0) GTEST_SKIP() << "not root: nothing to refuse";
  ExpectRefused(
      heft::test::RunProgram(HEFT_HEFTD, {"--config", kConfigDir + "/heft.yaml"}),
      {"heft.yaml: heftd refuses to run as root (uid 0)", "host.allow_root: true or --allow-root"});

  // Allowed: the robot's configuration with its host section replaced, so that everything it
  // would create is kept in the test's own directory, without the machine-wide CPU latency request.
  ConfigBuilder config = Shipped("heft.yaml");
  const std::string dir = config.dir();
  const std::string input = "heft_root_test_" + std::to_string(getpid());
  config.Remove("host")
      .Set("host.framework_input.name", input)
      .Set("host.control_socket", dir + "/heftd.sock")
      .Set("host.persistence.file", dir + "/estimate.yaml")
      .Set("host.realtime.lock_memory", "false")
      .Set("host.realtime.cpu_dma_latency_us", "-1");
  const std::string cfg = config.Write("heft.yaml");
  const std::string allowing = config.Set("host.allow_root", "true").Write("heft-root.yaml");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--config", allowing}, {"--config", cfg, "--allow-root"}}) {
    const Result r = heft::test::RunProgram(HEFT_HEFTD, args);
    EXPECT_THAT(r.output, Not(HasSubstr("refuses to run as root"))) << args.back();
    // Went on past every check (78: refused; 2: usage) to the buses it cannot open: exit 1.
    EXPECT_EQ(r.code, 1) << r.output;
  }
  std::filesystem::remove("/dev/shm/" + input);
}

// In real time each thread gets its own host.realtime.driver_cpus / control_cpus and SCHED_FIFO at
// host.realtime.priority, read from /proc while heft-sim runs. Fails if the per-thread keys are
// not applied (no task pinned to CPU 0 alone and one to CPU 1 alone, or not SCHED_FIFO 80), or if
// a per-thread CPU beyond the machine is accepted. Needs 2 CPUs and root (CI's machine has both).
TEST(Heftd, DriverAndControlThreadsGetTheirOwnCpusAndFifoPriority) {
  if (geteuid() != 0 || sysconf(_SC_NPROCESSORS_ONLN) < 2)
    GTEST_SKIP() << "needs root (SCHED_FIFO) and 2 CPUs";
  ConfigBuilder config = Shipped("sim/dumbbell-curl.yaml");
  const std::string cfg = config.SetYaml("host.realtime.driver_cpus", "[0]")
                              .SetYaml("host.realtime.control_cpus", "[1]")
                              .Write("affinity.yaml");
  const std::string log = config.dir() + "/affinity.log";
  const pid_t pid = fork();
  if (pid == 0) {
    std::FILE* f = std::freopen(log.c_str(), "w", stdout);
    (void)f;
    dup2(fileno(stdout), fileno(stderr));
    execl(HEFT_HEFT_SIM, HEFT_HEFT_SIM, "--config", cfg.c_str(), "--realtime", "--duration", "2",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // Per task: its CPU list and (stat fields 40, 41) real-time priority and policy.
  std::map<std::string, std::string> pinned;  // CPU list → "priority policy"
  for (int attempt = 0; attempt < 40 && pinned.size() < 2; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    pinned.clear();
    const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
    std::error_code ec;
    for (const auto& t : std::filesystem::directory_iterator(tasks, ec)) {
      std::string cpus;
      std::istringstream status(Slurp(t.path().string() + "/status"));
      for (std::string line; std::getline(status, line);)
        if (line.rfind("Cpus_allowed_list:", 0) == 0)
          cpus = line.substr(line.find_last_of("\t ") + 1);
      if (cpus != "0" && cpus != "1") continue;
      const std::string stat = Slurp(t.path().string() + "/stat");
      std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // field 3 onwards
      std::vector<std::string> f;
      for (std::string x; fields >> x;) f.push_back(x);
      if (f.size() > 38) pinned[cpus] = f[37] + " " + f[38];  // rt_priority, policy
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << Slurp(log);
  EXPECT_EQ(pinned["0"], "80 1") << "the driver thread: CPU 0 alone, SCHED_FIFO (1) 80";
  EXPECT_EQ(pinned["1"], "80 1") << "the control thread: CPU 1 alone, SCHED_FIFO (1) 80";

  const std::string beyond =
      config.SetYaml("host.realtime.control_cpus", "[1000]").Write("affinity-1000.yaml");
  ExpectRefused(RunHeftSim({"--config", beyond, "--duration", "0.1"}),
                {"host.realtime.control_cpus[0]: CPU 1000 does not exist"});
}

// Both programs print their usage and the project's version. Fails on a missing or wrong line or a
// non-zero exit.
TEST(Heftd, BothProgramsPrintHelpAndVersion) {
  for (const char* program : {HEFT_HEFTD, HEFT_HEFT_SIM}) {
    const std::string name = std::filesystem::path(program).filename().string();
    const Result help = heft::test::RunProgram(program, {"--help"});
    EXPECT_EQ(help.code, 0) << help.output;
    EXPECT_THAT(help.output, HasSubstr("usage: " + name + " --config FILE"));
    EXPECT_THAT(help.output, HasSubstr("  78  configuration refused"));
    EXPECT_THAT(help.output, HasSubstr("   2  usage"));
    const Result version = heft::test::RunProgram(program, {"--version"});
    EXPECT_EQ(version.code, 0) << version.output;
    EXPECT_EQ(version.output, name + " " + HEFT_VERSION_STRING + "\n");
  }
}

}  // namespace

// heftctl on the running service: walking → stopped → reset → walking, and `status` shows each
// state. heft-sim in real time with the fixed-base dumbbell curl, waiting for "walking" (its
// simulated framework would send it only after 60 s), its command socket in the test's temp
// directory. Fails if a command does not reach the plugin through the socket, if status does not
// report the state the command leads to, or if the service does not stop cleanly.
TEST(Heftd, HeftctlDrivesWalkingStoppedResetWalkingAndStatusShowsEachState) {
  ConfigBuilder config = Shipped("sim/dumbbell-curl.yaml");
  const std::string dir = config.dir();
  const std::string socket = dir + "/heftd.sock";
  const std::string cfg = config.Set("simulation.walking_after", "60")
                              .Set("host.control_socket", socket)
                              .Write("curl.yaml");
  const pid_t daemon = fork();
  if (daemon == 0) {
    std::FILE* f = std::freopen((dir + "/heft-sim.log").c_str(), "w", stdout);
    (void)f;
    dup2(fileno(stdout), fileno(stderr));
    execl(HEFT_HEFT_SIM, HEFT_HEFT_SIM, "--config", cfg.c_str(), "--realtime", "--duration", "120",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  auto heftctl = [&](const std::string& args) {
    const std::string out = dir + "/heftctl.out";
    const int rc = std::system(
        (std::string(HEFT_HEFTCTL) + " --socket " + socket + " " + args + " > " + out + " 2>&1")
            .c_str());
    return std::make_pair(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, Slurp(out));
  };
  // The state status reports, waiting up to 5 s for `want` (the control thread applies a command
  // at its next tick; the socket may need a moment to appear).
  auto state_becomes = [&](const std::string& want) {
    std::string last;
    for (int i = 0; i < 100; ++i) {
      const auto [rc, out] = heftctl("status --json");
      last = out;
      if (rc == 0 && out.find("\"state\":\"" + want + "\"") != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "state never became " << want << "; last status: " << last;
    return false;
  };
  EXPECT_TRUE(state_becomes("wait_for_walking"));
  EXPECT_EQ(heftctl("walking").first, 0);
  EXPECT_TRUE(state_becomes("estimating"));
  EXPECT_EQ(heftctl("stopped").first, 0);
  EXPECT_TRUE(state_becomes("wait_for_walking"));
  EXPECT_EQ(heftctl("reset").first, 0);
  const auto [rc_reset, after_reset] = heftctl("status");
  EXPECT_EQ(rc_reset, 0) << after_reset;
  EXPECT_THAT(after_reset, HasSubstr("left_forearm"));  // the table names the estimated link
  EXPECT_EQ(heftctl("walking").first, 0);
  EXPECT_TRUE(state_becomes("estimating"));
  kill(daemon, SIGTERM);
  int status = 0;
  waitpid(daemon, &status, 0);
  const std::string log = Slurp(dir + "/heft-sim.log");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log;
  // The socket was where the configuration put it: heftctl's replies above came through it.
  EXPECT_FALSE(std::filesystem::exists(socket));  // removed at exit
}

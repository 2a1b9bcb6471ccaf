// heftd as the service runs it: a bounded lockstep run on the simulated robot, SIGTERM in real
// time, and a table of malformed configurations, each refused with its own message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace {

using ::testing::HasSubstr;

struct Result {
  int code = -1;
  std::string output;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs heftd with `args`; sends SIGTERM after `term_after_ms` when > 0.
Result RunHeftd(const std::vector<std::string>& args, int term_after_ms = 0) {
  const std::string out = testing::TempDir() + "/heftd_" + std::to_string(getpid()) + ".log";
  const pid_t pid = fork();
  if (pid == 0) {
    std::FILE* f = std::freopen(out.c_str(), "w", stdout);
    (void)f;
    dup2(fileno(stdout), fileno(stderr));
    std::vector<char*> argv{const_cast<char*>(HEFT_HEFTD)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(HEFT_HEFTD, argv.data());
    _exit(127);
  }
  if (term_after_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(term_after_ms));
    kill(pid, SIGTERM);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(out)};
}

const std::string kConfigDir = HEFT_CONFIG_DIR;

TEST(Heftd, BoundedLockstepRunOnTheSimulatedRobot) {
  const std::string csv = testing::TempDir() + "/heftd_telemetry.csv";
  const Result r = RunHeftd(
      {"--config", kConfigDir + "/sim/dumbbell-curl.yaml", "--duration", "4", "--telemetry", csv});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("→ estimating at t = "));
  EXPECT_THAT(r.output, HasSubstr("control tick compute"));
  // Telemetry: a header and one row per 3 ms; the handed mass converges towards the truth.
  std::ifstream in(csv);
  std::string header, line;
  std::getline(in, header);
  EXPECT_THAT(header, HasSubstr("left_forearm_m,"));
  EXPECT_THAT(header, HasSubstr("left_forearm_true_m"));
  std::vector<std::string> cols;
  std::stringstream hs(header);
  for (std::string c; std::getline(hs, c, ',');) cols.push_back(c);
  const auto col = [&](const std::string& name) {
    return std::find(cols.begin(), cols.end(), name) - cols.begin();
  };
  const auto m = col("left_forearm_m"), truth = col("left_forearm_true_m");
  std::vector<double> err;
  int rows = 0;
  while (std::getline(in, line)) {
    std::vector<double> v;
    std::stringstream ls(line);
    for (std::string c; std::getline(ls, c, ',');) v.push_back(std::stod(c));
    err.push_back(std::abs(v[m] - v[truth]));
    ++rows;
  }
  EXPECT_NEAR(rows, 4000 / 3, 2);
  ASSERT_GT(err.size(), 100u);
  EXPECT_GT(err.front(), 4.0);  // the dumbbell is unknown at first
  EXPECT_LT(err.back(), 0.5);   // the estimate has caught up
}

TEST(Heftd, ADeadSensorMakesTheEstimatorHoldItsLastGoodEstimateAndSaySo) {
  // The elbow's torque sensor falls silent from 2.0 s to 2.5 s of simulated time.
  std::string text = Slurp(kConfigDir + "/sim/dumbbell-curl.yaml");
  text.replace(text.find("urdf: ../robots"), 15, "urdf: " + kConfigDir + "/robots");
  text.replace(
      text.find("  seed: 1"), 9,
      "  seed: 1\n  faults:\n    - {device: torque, name: left_elbow, from: 2.0, to: 2.5}");
  const std::string cfg = testing::TempDir() + "/heftd_fault.yaml",
                    csv = testing::TempDir() + "/heftd_fault.csv";
  std::ofstream(cfg) << text;
  const Result r = RunHeftd({"--config", cfg, "--duration", "3.5", "--telemetry", csv});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("estimating → holding at t = 2.0"));
  EXPECT_THAT(r.output, HasSubstr("(hold reason 0x2)"));  // joint torques
  EXPECT_THAT(r.output, HasSubstr("holding → estimating at t = 2.5"));
  // While holding, the handed mass does not move.
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  int holding_rows = 0;
  double held = -1;
  while (std::getline(in, line)) {
    std::vector<double> v;
    std::stringstream ls(line);
    for (std::string c; std::getline(ls, c, ',');) v.push_back(std::stod(c));
    if (v[0] < 1.0 || v[2] != 4) continue;  // column 0: t; column 2: state, 4 = holding
    ++holding_rows;
    const double mass = v[12];  // first link's handed mass
    if (held < 0) held = mass;
    EXPECT_EQ(mass, held);
  }
  EXPECT_GT(holding_rows, 150);
}

TEST(Heftd, ExitsCleanlyOnSigtermWithItsLogFlushed) {
  const Result r = RunHeftd(
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
    execl(HEFT_HEFTD, HEFT_HEFTD, "--config", (kConfigDir + "/sim/dumbbell-curl.yaml").c_str(),
          "--realtime", "--duration", "60", "--shm", name.c_str(), static_cast<char*>(nullptr));
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

TEST(Heftd, EveryMalformedConfigurationGetsItsOwnMessage) {
  const std::string good = Slurp(kConfigDir + "/sim/forearm-load.yaml");
  struct Case {
    const char* name;
    std::string from, to;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"unknown top-level key", "backend: simulated", "backend: simulated\nbakend: x",
       "unknown key 'bakend'; allowed: robot, drivers, estimator, backend, host, simulation"},
      {"bad backend", "backend: simulated", "backend: ethercat",
       "backend: 'ethercat' is not allowed; allowed: simulated, socketcan"},
      {"unknown scenario", "scenario: forearm-load", "scenario: forarm-load",
       "simulation.scenario: unknown scenario 'forarm-load'; allowed: forearm-load"},
      {"bad filter", "filter: ekf", "filter: ukf",
       "estimator.filter: 'ukf' is not allowed; allowed: ekf, kf"},
      {"out of range", "rate_limits: {mass: 600", "rate_limits: {mass: -1",
       "estimator.rate_limits.mass: value -1 is out of range"},
      {"wrong type", "confidence: 0.999", "confidence: high",
       "estimator.gating.confidence: expected a number"},
      {"unknown joint", "name: left_elbow,", "name: left_elbo,", "joint 'left_elbo' is not in"},
      {"unknown bus", "name: left_elbow, bus: can0", "name: left_elbow, bus: can7",
       "unknown bus 'can7'; allowed: can0, can1"},
      {"unknown link", "links: [left_forearm]", "links: [left_forarm]",
       "unknown body (moving link) 'left_forarm'"},
      {"missing urdf", "urdf: ../robots/heft_humanoid_fixed.urdf", "urdf: ../robots/nope.urdf",
       "robot.urdf: no such file"},
  };
  for (const Case& c : cases) {
    std::string text = good;
    const auto at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.name;
    text.replace(at, c.from.size(), c.to);
    const std::string path = kConfigDir + "/sim/.test_" + std::to_string(getpid()) + ".yaml";
    std::ofstream(path) << text;
    const Result r = RunHeftd({"--config", path, "--duration", "0.1"});
    std::filesystem::remove(path);
    EXPECT_EQ(r.code, 2) << c.name << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.message)) << c.name;
    EXPECT_THAT(r.output, HasSubstr(".yaml")) << c.name;
  }
}

}  // namespace

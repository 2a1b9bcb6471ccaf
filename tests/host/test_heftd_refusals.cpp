// What the host refuses, each with its own message: a table of malformed configurations heft-sim
// refuses with exit code 78, naming the file; and heftd itself (no simulator): a simulated
// configuration, bad command-line numbers, CPUs the machine does not have, running as root unless
// allowed; and both programs' --help / --version.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "heft/test/config_builder.hpp"
#include "heft/test/heftd_run.hpp"
#include "test_heftd_support.hpp"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using heft::host::test::ExpectRefused;
using heft::host::test::kConfigDir;
using heft::host::test::Result;
using heft::host::test::Shipped;
using heft::test::ConfigBuilder;
using heft::test::RunHeftSim;

// One malformed configuration: what it is, its edit of forearm-load.yaml and heft-sim's message.
struct MalformedCase {
  const char* name;
  std::function<void(ConfigBuilder&)> edit;
  const char* message;
};

// The malformed configurations, one edit each; files a refused configuration would name go into
// `dir`.
std::vector<MalformedCase> MalformedCases(const std::string& dir) {
  // One edit: the key path and its new value (YAML: a scalar, or a list or map in flow style).
  const auto set = [](const std::string& key, const std::string& yaml) {
    return [=](ConfigBuilder& c) { c.SetYaml(key, yaml); };
  };
  const auto faults = [&](const std::string& list) { return set("simulation.faults", list); };
  return {
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
       [dir](ConfigBuilder& c) {
         c.Set("host.telemetry.path", dir + "/t.csv").Set("host.telemetry.max_bytes", "10");
       },
       "host.telemetry.max_bytes: at least 1024 bytes per file (0: never rotate)"},
      {"unknown key of the candump log",
       [dir](ConfigBuilder& c) {
         c.Set("host.candump.path", dir + "/frames.log").Set("host.candump.size", "1000000");
       },
       "unknown key 'size'; allowed: path, max_bytes, keep, append"},
  };
}

// Each case sets (or adds) one value of forearm-load.yaml and expects heft-sim to refuse the file
// with exit code 78 and its own message. Fails if a case is accepted, refused with another message
// or another exit code.
TEST(Heftd, EveryMalformedConfigurationGetsItsOwnMessage) {
  // Files a refused configuration would name, in a directory of the test's own.
  const std::string dir = heft::test::FreshTempDir("heftd-malformed");
  const std::vector<MalformedCase> cases = MalformedCases(dir);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const MalformedCase& c = cases[i];
    ConfigBuilder config = Shipped("sim/forearm-load.yaml");
    c.edit(config);
    const std::string path = config.WriteTo(dir + "/case" + std::to_string(i) + ".yaml");
    const Result r = RunHeftSim({"--config", path, "--duration", "0.1"});
    EXPECT_EQ(r.code, 78) << c.name << "\n" << r.output;  // EX_CONFIG: systemd does not restart
    EXPECT_THAT(r.output, HasSubstr(c.message)) << c.name;
    EXPECT_THAT(r.output, HasSubstr(path + ":")) << c.name;  // the file, named
  }
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

// The estimator plugin as a host loads it: dlopen, interface version, lifecycle, the state machine
// driven with synthetic state samples and synthetic time. (No allocation in update():
// test_plugin_allocations, where the counter reaches the plugin's code.)
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>

#include "heft/drivers/driver_config.hpp"
#include "heft/hal/shared_hand_off.h"
#include "heft/host/configuration.hpp"
#include "heft/plugin/controller_interface.hpp"
#include "heft/test/config_builder.hpp"
#include "robot_samples.hpp"

namespace heft::plugin {
namespace {

struct Library {
  void* handle = dlopen(HEFT_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  ~Library() {
    if (handle) dlclose(handle);
  }
  template <typename F>
  F Get(const char* name) const {
    return reinterpret_cast<F>(dlsym(handle, name));
  }
};

const std::string kConfig = std::string(HEFT_CONFIG_DIR) + "/sim/forearm-load.yaml";

// The same configuration with start-up calibration on (a 15 ms window), written into a temporary
// directory.
std::string CalibratingConfig() {
  return heft::test::ConfigBuilder(kConfig)
      .Set("estimator.calibration.enabled", "true")
      .Set("estimator.calibration.window", "0.015")
      .Write("calibrating.yaml");
}

TEST(Plugin, LoadsThroughDlopenAndRefusesAnotherInterfaceVersion) {
  Library lib;
  ASSERT_NE(lib.handle, nullptr) << dlerror();
  auto version = lib.Get<std::uint32_t (*)()>("heft_plugin_api_version");
  auto create =
      lib.Get<ControllerInterface* (*)(std::uint32_t, char*, std::size_t)>("heft_plugin_create");
  auto destroy = lib.Get<void (*)(ControllerInterface*)>("heft_plugin_destroy");
  ASSERT_TRUE(version && create && destroy);
  EXPECT_EQ(version(), kApiVersion);
  char error[256] = "";
  EXPECT_EQ(create(kApiVersion + 1, error, sizeof(error)), nullptr);
  EXPECT_STREQ(
      error, ("heft_estimator plugin implements interface version " + std::to_string(kApiVersion) +
              ", the host speaks " + std::to_string(kApiVersion + 1))
                 .c_str());
  ControllerInterface* c = create(kApiVersion, error, sizeof(error));
  ASSERT_NE(c, nullptr);
  EXPECT_STREQ(c->name(), "heft_estimator");
  destroy(c);
}

// A fixed-base robot holding still, its sensors read perfectly: the state buffer as drivers fill
// it.
struct Rig {
  Library lib;
  std::unique_ptr<ControllerInterface, void (*)(ControllerInterface*)> plugin{
      nullptr, lib.Get<void (*)(ControllerInterface*)>("heft_plugin_destroy")};
  hal::StateBuffer state;
  HandOffMailbox hand_off;
  std::int64_t now = 0;
  std::uint64_t seq = 0;
  bool torque_ok = true;

  explicit Rig(const std::string& config = kConfig) {
    char error[256];
    plugin.reset(lib.Get<ControllerInterface* (*)(std::uint32_t, char*, std::size_t)>(
        "heft_plugin_create")(kApiVersion, error, sizeof(error)));
    plugin->init(config, HardwareInterface{&state, &hand_off});
    plugin->configure();
  }
  // 3 ms of state (three 1 kHz samples), then one update.
  void Tick() {
    for (int i = 0; i < 3; ++i) state.publish(JointSample(++seq, now += 1'000'000, torque_ok));
    plugin->update(now, 3'000'000);
  }
  hal::InertialEstimate Latest() {
    hal::InertialEstimate e;
    EXPECT_TRUE(hand_off.read_latest(e));
    return e;
  }
};

TEST(Plugin, StateMachineThroughEveryState) {
  Rig rig;
  hal::InertialEstimate e = rig.Latest();  // configure() hands on nominal parameters
  EXPECT_EQ(e.num_links, 1);
  EXPECT_STREQ(e.links[0].name.data(), "left_forearm");
  EXPECT_DOUBLE_EQ(e.links[0].parameters[0], 1.5);
  rig.plugin->activate();
  rig.Tick();
  EXPECT_EQ(rig.Latest().status.state, hal::EstimatorState::kWaitForWalking);
  rig.plugin->command(Command::kRobotWalking);
  for (int k = 0; k < 5; ++k) rig.Tick();
  e = rig.Latest();
  EXPECT_EQ(e.status.state, hal::EstimatorState::kEstimating);  // calibration is off in this config
  EXPECT_EQ(e.status.model, hal::MeasurementModel::kFullWrench);
  // A stale torque sensor: hold the last good estimate and say why.
  rig.torque_ok = false;
  rig.Tick();
  e = rig.Latest();
  EXPECT_EQ(e.status.state, hal::EstimatorState::kHolding);
  EXPECT_NE(e.status.hold_reason, 0u);
  rig.torque_ok = true;
  for (int k = 0; k < 2; ++k) rig.Tick();
  EXPECT_EQ(rig.Latest().status.state, hal::EstimatorState::kEstimating);
  rig.plugin->command(Command::kDisable);
  rig.Tick();
  e = rig.Latest();
  EXPECT_EQ(e.status.state, hal::EstimatorState::kInactive);
  EXPECT_DOUBLE_EQ(e.links[0].parameters[0], 1.5);  // nominal while disabled
  rig.plugin->command(Command::kEnable);
  rig.Tick();
  EXPECT_EQ(rig.Latest().status.state, hal::EstimatorState::kWaitForWalking);
  rig.plugin->command(Command::kRobotWalking);
  rig.Tick();
  EXPECT_EQ(rig.Latest().status.state, hal::EstimatorState::kEstimating);
  TelemetryRecord rec;
  int records = 0;
  while (rig.plugin->pop_telemetry(rec)) ++records;
  EXPECT_EQ(records, 12);  // one per update
}

// Fails if the hand-off's status does not count the filter's accepted updates (it stayed 0
// before: heftctl showed no updates, and host.persistence, which waits for updates, never saw a
// settled estimate).
TEST(Plugin, StatusCountsTheAcceptedUpdates) {
  // The rig's torques are not the model's: without the gate its updates are taken.
  Rig rig(heft::test::ConfigBuilder(kConfig)
              .Set("estimator.gating.enabled", "false")
              .Write("ungated.yaml"));
  rig.plugin->activate();
  rig.plugin->command(Command::kRobotWalking);
  for (int k = 0; k < 20; ++k) rig.Tick();
  // estimator::TickStatus: 1 updated, 3 released (a release applies the update too).
  std::uint64_t accepted = 0;
  TelemetryRecord rec;
  while (rig.plugin->pop_telemetry(rec)) accepted += rec.tick_status == 1 || rec.tick_status == 3;
  const hal::InertialEstimate e = rig.Latest();
  EXPECT_GT(accepted, 0U);
  EXPECT_EQ(e.status.updates, accepted);
}

// Fails if start_from does not hand on the given estimate at once (its covariance used and
// inflated: the hand-off's is at least the given one times the inflation, and grows at least as
// much with it, the map from θ adding its curvature), accepts another configuration's links, or
// runs after activation.
TEST(Plugin, StartsFromAGivenEstimate) {
  Rig rig;
  hal::InertialEstimate e = rig.Latest();  // nominal
  const double fresh = e.links[0].covariance[0];
  for (double& p : e.links[0].parameters) p *= 2.0;  // twice as heavy, same shape
  e.links[0].covariance.fill(0.0);
  for (std::size_t i = 0; i < 10; ++i) e.links[0].covariance[11 * i] = 1e-9;
  rig.plugin->start_from(e, 10.0);
  const hal::InertialEstimate got = rig.Latest();
  EXPECT_DOUBLE_EQ(got.links[0].parameters[0], 3.0);
  Rig uninflated;
  uninflated.plugin->start_from(e, 1.0);
  const double once = uninflated.Latest().links[0].covariance[0];
  EXPECT_GE(once, 1e-9 * (1.0 - 1e-6));
  EXPECT_GE(got.links[0].covariance[0], 10.0 * once * (1.0 - 1e-6));
  EXPECT_LT(got.links[0].covariance[0], 1e-2 * fresh);  // not the nominal's prior
  hal::InertialEstimate other = e;
  std::snprintf(other.links[0].name.data(), other.links[0].name.size(), "right_forearm");
  try {
    rig.plugin->start_from(other, 10.0);
    ADD_FAILURE() << "another link accepted";
  } catch (const PluginError& err) {
    EXPECT_NE(std::string(err.what()).find("'right_forearm'"), std::string::npos) << err.what();
  }
  rig.plugin->activate();
  rig.Tick();
  EXPECT_THROW(rig.plugin->start_from(e, 10.0), PluginError);
}

// Fails if a hand-off does not name the model it is a change of — FNV-1a over the URDF's bytes, as
// shared_hand_off.h's C function computes it for a controller — or if start_from accepts an
// estimate made against another model.
TEST(Plugin, EveryHandOffNamesItsNominalModel) {
  Rig rig;
  hal::InertialEstimate e = rig.Latest();
  std::ifstream urdf(std::string(HEFT_CONFIG_DIR) + "/robots/heft_humanoid_fixed.urdf",
                     std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(urdf)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(bytes.empty());
  const std::uint32_t expected =
      heft_model_identity_update(HEFT_MODEL_IDENTITY_SEED, bytes.data(), bytes.size());
  EXPECT_EQ(e.nominal_model, expected);
  rig.plugin->activate();
  rig.Tick();
  EXPECT_EQ(rig.Latest().nominal_model, expected);
  Rig other;
  e.nominal_model = expected + 1;
  try {
    other.plugin->start_from(e, 10.0);
    ADD_FAILURE() << "an estimate of another nominal model accepted";
  } catch (const PluginError& err) {
    EXPECT_NE(std::string(err.what()).find("another nominal model"), std::string::npos)
        << err.what();
  }
  e.nominal_model = 0;  // unknown (a file from before the identity): taken
  EXPECT_NO_THROW(other.plugin->start_from(e, 10.0));
}

TEST(Plugin, CalibratesTheBiasBeforeEstimating) {
  Rig rig(CalibratingConfig());
  rig.plugin->activate();
  rig.Tick();
  rig.plugin->command(Command::kRobotWalking);
  rig.Tick();
  EXPECT_EQ(rig.Latest().status.state, hal::EstimatorState::kCalibratingBias);
  for (int k = 0; k < 8; ++k) rig.Tick();  // the 15 ms window, at rest
  EXPECT_EQ(rig.Latest().status.state, hal::EstimatorState::kEstimating);
  // Stop, then walk again: the estimate and the bias are kept, no re-calibration (a payload held
  // meanwhile would go into the bias). Fails if walking after a stop calibrates again.
  rig.plugin->command(Command::kRobotStopped);
  rig.Tick();
  EXPECT_EQ(rig.Latest().status.state, hal::EstimatorState::kWaitForWalking);
  rig.plugin->command(Command::kRobotWalking);
  rig.Tick();
  EXPECT_EQ(rig.Latest().status.state, hal::EstimatorState::kEstimating);
  rig.plugin->command(Command::kReset);  // asked: back to calibrating, from nominal
  rig.Tick();
  EXPECT_EQ(rig.Latest().status.state, hal::EstimatorState::kCalibratingBias);
}

// A plugin made by the library's factory, destroyed by it.
std::unique_ptr<ControllerInterface, void (*)(ControllerInterface*)> Create(Library& lib) {
  char error[256];
  return {lib.Get<ControllerInterface* (*)(std::uint32_t, char*, std::size_t)>(
              "heft_plugin_create")(kApiVersion, error, sizeof(error)),
          lib.Get<void (*)(ControllerInterface*)>("heft_plugin_destroy")};
}

TEST(Plugin, InitRefusesABadConfigurationWithItsReason) {
  Library lib;
  const auto p = Create(lib);
  hal::StateBuffer state;
  HandOffMailbox hand_off;
  try {
    p->init("/nonexistent/heft.yaml", HardwareInterface{&state, &hand_off});
    ADD_FAILURE() << "accepted";
  } catch (const PluginError& e) {
    EXPECT_STREQ(e.what(),
                 "/nonexistent/heft.yaml: cannot open the configuration file: No such file or "
                 "directory");
  }
}

// heftd and heft-sim read the file once and hand the plugin its validated part
// (HardwareInterface::config): init takes it and does not read the file again. Fails if the plugin
// parsed `config_path` (here a file that does not exist) instead of taking the host's reading, or
// took another configuration than the one handed.
TEST(Plugin, InitTakesTheHostsReadingWithoutReadingTheFileAgain) {
  Library lib;
  const auto p = Create(lib);
  hal::StateBuffer state;
  HandOffMailbox hand_off;
  host::Configuration c = host::LoadConfiguration(kConfig, host::Reader::kTool);
  c.plugin.estimator.bodies.push_back("right_forearm");  // not what the file says
  p->init("/nonexistent/heft.yaml", HardwareInterface{&state, &hand_off, &c.plugin});
  EXPECT_EQ(p->num_links(), c.plugin.estimator.bodies.size());
}

// A nearly degenerate estimated link is refused at init (or repaired when robot.repair_inertia
// says so): left_forearm as heft-identify's SDP used to write it, a point mass of 1.406 kg whose
// inertia about its centre of mass is 2e-7 kg·m² (λ_min(J) ≈ 1e-7 for a threshold of ≈ 1.4e-6).
struct DegenerateForearm {
  // Files of its own: ctest runs the cases that write them in parallel.
  const std::string dir = heft::test::FreshTempDir("heft-point-mass");
  host::Configuration c = host::LoadConfiguration(kConfig, host::Reader::kTool);
  dynamics::Vector10 pi = [] {
    dynamics::RigidBodyInertia b;
    b.mass = 1.406;
    b.com = Eigen::Vector3d(0.01, 0.005, -0.11);
    b.inertia_com = 2e-7 * Eigen::Matrix3d::Identity();
    return dynamics::ParametersFromInertia(b);
  }();
  // "<file>: estimated link 'left_forearm' ... smallest eigenvalue <λ_min> is below the
  // estimator's margin <threshold>", the values formatted as the message does (3 digits).
  std::string Expected(const std::string& file) const {
    const dynamics::PseudoInertiaExtremes e = dynamics::PseudoInertiaEigenvalues(pi);
    std::ostringstream m;
    m.precision(3);
    m << file << ": estimated link 'left_forearm' is nearly degenerate (a point mass, rod or "
      << "plate): its pseudo-inertia's smallest eigenvalue " << e.min
      << " is below the estimator's margin " << e.threshold();
    return m.str();
  }
  std::string WriteParameters() const {
    const std::string path = dir + "/heft_point_mass_forearm.yaml";
    std::ofstream out(path);
    out.precision(17);
    out << "links:\n  left_forearm:\n    pi: [";
    for (int k = 0; k < 10; ++k) out << (k ? ", " : "") << pi[k];
    out << "]\n";
    return path;
  }
  // init's error ("" when it accepts); `hand_off` gets configure()'s nominal when accepted.
  std::string Init(HandOffMailbox& hand_off) {
    Library lib;
    const auto p = Create(lib);
    hal::StateBuffer state;
    try {
      p->init("/nonexistent/heft.yaml", HardwareInterface{&state, &hand_off, &c.plugin});
    } catch (const PluginError& e) {
      return e.what();
    }
    p->configure();
    return "";
  }
};

// robot.parameters carries the point mass: refused with the parameters file, the link, λ_min(J),
// the threshold and what to do. Fails if init accepts it (before the fix it did: the point mass
// passed λ_min > 0) or the message lacks the file, link or values.
TEST(Plugin, InitRefusesAPointMassEstimatedLinkFromTheParametersFile) {
  DegenerateForearm f;
  f.c.plugin.parameters_path = f.WriteParameters();
  HandOffMailbox hand_off;
  const std::string error = f.Init(hand_off);
  EXPECT_NE(error.find(f.Expected(f.c.plugin.parameters_path)), std::string::npos) << error;
  EXPECT_NE(error.find("re-identify with heft-identify"), std::string::npos) << error;
  EXPECT_NE(error.find("robot.repair_inertia: true"), std::string::npos) << error;
}

// An exact point mass (no inertia about its centre of mass: λ_min(J) zero up to rounding, of
// either sign) is refused the same way, as degenerate with the file and the repair. Fails if it is
// refused as massless or inconsistent (the estimator's own check, which it used to reach: "a
// massless link cannot be estimated" for a 1.4 kg link), or accepted.
TEST(Plugin, InitRefusesAnExactPointMassAsDegenerateNotMassless) {
  DegenerateForearm f;
  f.pi.tail<6>() =
      (dynamics::ParametersFromInertia({1.406, {0.01, 0.005, -0.11}, Eigen::Matrix3d::Zero()}))
          .tail<6>();
  f.c.plugin.parameters_path = f.WriteParameters();
  HandOffMailbox hand_off;
  const std::string error = f.Init(hand_off);
  EXPECT_NE(error.find(f.c.plugin.parameters_path + ": estimated link 'left_forearm' is nearly "
                                                    "degenerate (a point mass"),
            std::string::npos)
      << error;
  EXPECT_EQ(error.find("massless"), std::string::npos) << error;
  EXPECT_NE(error.find("robot.repair_inertia: true"), std::string::npos) << error;
}

// The same point mass in the URDF's <inertial>: refused naming the URDF. Fails if accepted or if
// the message names another file.
TEST(Plugin, InitRefusesAPointMassEstimatedLinkFromTheUrdf) {
  DegenerateForearm f;
  std::ifstream in(f.c.plugin.urdf_path);
  std::stringstream text;
  text << in.rdbuf();
  std::string urdf = text.str();
  const std::size_t link = urdf.find("<link name=\"left_forearm\">");
  ASSERT_NE(link, std::string::npos);
  const std::size_t mass = urdf.find("<mass value=\"1.5\"/>", link);
  const std::size_t from = urdf.find("<inertia ", link), to = urdf.find("/>", from);
  ASSERT_TRUE(mass != std::string::npos && from != std::string::npos && to != std::string::npos);
  urdf.replace(from, to + 2 - from,
               "<inertia ixx=\"2e-7\" ixy=\"0\" ixz=\"0\" iyy=\"2e-7\" iyz=\"0\" izz=\"2e-7\"/>");
  urdf.replace(mass, std::strlen("<mass value=\"1.5\"/>"), "<mass value=\"1.406\"/>");
  const std::size_t origin = urdf.find("<origin ", link);
  urdf.replace(origin, urdf.find("/>", origin) + 2 - origin, "<origin xyz=\"0.01 0.005 -0.11\"/>");
  f.c.plugin.urdf_path = f.dir + "/heft_point_mass_forearm.urdf";
  std::ofstream(f.c.plugin.urdf_path) << urdf;
  HandOffMailbox hand_off;
  const std::string error = f.Init(hand_off);
  EXPECT_NE(error.find(f.Expected(f.c.plugin.urdf_path)), std::string::npos) << error;
  EXPECT_NE(error.find("fix the link's <inertial> in the URDF"), std::string::npos) << error;
}

// With robot.repair_inertia the point mass is inflated to the margin and handed on: first moment
// kept, the mass moved by at most 2e-6 λ_max(J) (dynamics::InflateToMargin), the margin kept. Fails
// if init still refuses, the repaired set lacks the margin, or the repair moved more than that.
TEST(Plugin, RepairInertiaInflatesAnEstimatedPointMassToTheMargin) {
  DegenerateForearm f;
  f.c.plugin.parameters_path = f.WriteParameters();
  f.c.plugin.repair_inertia = true;
  HandOffMailbox hand_off;
  ASSERT_EQ(f.Init(hand_off), "");
  hal::InertialEstimate e;
  ASSERT_TRUE(hand_off.read_latest(e));
  dynamics::Vector10 handed;
  for (int k = 0; k < 10; ++k) handed[k] = e.links[0].parameters[k];
  EXPECT_TRUE(dynamics::HasConsistencyMargin(handed));
  const double scale =
      2.0 * dynamics::kConsistencyMargin * dynamics::PseudoInertiaEigenvalues(f.pi).max;
  EXPECT_GT(handed[0], f.pi[0]);
  EXPECT_LE(handed[0], f.pi[0] + scale);
  for (int k = 1; k < 4; ++k) EXPECT_EQ(handed[k], f.pi[k]);
}

}  // namespace
}  // namespace heft::plugin

#include "heft/sim/sim_config.hpp"

#include <algorithm>
#include <limits>

#include "heft/config/schema.hpp"
#include "heft/sim/roles.hpp"
#include "heft/sim/scenario.hpp"

namespace heft::sim {
namespace {

// Faults that name no device or bus.
bool NoName(SimFault::Kind k) {
  using K = SimFault::Kind;
  return k == K::kCrc || k == K::kImu || k == K::kImuSaturated || k == K::kImuAttitude ||
         k == K::kClockStep || k == K::kInputStale || k == K::kInputGarbage;
}

}  // namespace

namespace {

// Before the names are resolved against the drivers: every device and bus may exist.
constexpr std::size_t kAny = std::numeric_limits<int>::max();
constexpr FaultTargets kAnyTarget{kAny, kAny, kAny, true};

// A problem of simulation.faults[i] at its key (or at the entry when the key is not written).
[[noreturn]] void Fail(const config::Node& fault, const FaultProblem& problem) {
  if (fault.Has(problem.key)) fault[problem.key].Fail(problem.what);
  fault.Fail(problem.what);
}

}  // namespace

SimFault ParseFault(const config::Node& f, std::string& name) {
  using K = SimFault::Kind;
  static constexpr K kinds[] = {
      K::kEncoder,      K::kTorque,      K::kForceTorque, K::kCrc,
      K::kLoss,         K::kBurst,       K::kBusOff,      K::kImu,
      K::kImuSaturated, K::kImuAttitude, K::kTorqueStuck, K::kFtSaturated,
      K::kErrorFrames,  K::kClockStep,   K::kInputStale,  K::kInputGarbage};
  SimFault fault;
  fault.kind =
      kinds[f.Enum("device", {"encoder", "torque", "ft", "crc", "loss", "burst", "bus_off", "imu",
                              "imu_saturated", "imu_attitude", "torque_stuck", "ft_saturated",
                              "error_frames", "clock_step", "input_stale", "input_garbage"})];
  const bool no_name = NoName(fault.kind);
  constexpr config::Range kTime{0.0, 1e6};
  switch (fault.kind) {
    case K::kCrc:
    case K::kImu:
    case K::kImuSaturated:
    case K::kImuAttitude:
    case K::kInputStale:
    case K::kInputGarbage:
      f.AllowOnly({"device", "from", "to"});
      break;
    case K::kClockStep:
      f.AllowOnly({"device", "from", "to", "step"});
      fault.step = f.Get<double>("step", {-1e6, 1e6});
      if (fault.step == 0.0) f["step"].Fail("a clock step of 0 s changes nothing");
      break;
    case K::kLoss:
      f.AllowOnly({"device", "name", "probability", "from", "to"});
      break;
    case K::kBurst:
      f.AllowOnly({"device", "name", "from", "to", "repeat", "period"});
      break;
    default:
      f.AllowOnly({"device", "name", "from", "to"});
  }
  if (fault.kind == K::kLoss) {
    fault.probability = f.Get<double>("probability", {0.0, 1.0});
    fault.from = f.Get<double>("from", 0.0, kTime);
    fault.to = f.Get<double>("to", kTime.max, kTime);
    name = f.Get<std::string>("name", std::string(), {});  // empty: every bus
  } else {
    fault.from = f.Get<double>("from", kTime);
    fault.to = f.Get<double>("to", kTime);
    if (!no_name) name = f.Get<std::string>("name");
  }
  if (fault.kind == K::kBurst) {
    fault.repeat = f.Get<int>("repeat", fault.repeat, {1, 1000000});
    if (fault.repeat > 1)
      fault.period = f.Get<double>("period", kTime);
    else if (f.Has("period"))
      f["period"].Fail("only with repeat > 1");
  }
  // The fault's consistency: CheckFault (sim_backend.hpp), the same rules as the simulated robot's.
  if (const auto problem = CheckFault(fault, kAnyTarget)) Fail(f, *problem);
  return fault;
}

DeviationConfig ParseDeviations(const config::Node& d) {
  d.AllowOnly(config::schema::kSimulationDeviations);
  DeviationConfig c;
  const std::size_t preset = d.Enum("preset", {"ideal", "default"});
  c.preset = preset == 0 ? "ideal" : "default";
  c.magnitudes = preset == 0 ? DeviationMagnitudes::Ideal() : DeviationMagnitudes::Default();
  c.seed = static_cast<std::uint64_t>(d.Get<int>("seed", 1, {0, 1 << 30}));
  DeviationMagnitudes& m = c.magnitudes;
  // Relative magnitudes stay below 1 (a mass or a principal second moment never reaches 0).
  m.mass = d.Get<double>("mass", m.mass, {0.0, 0.5});
  m.com = d.Get<double>("com", m.com, {0.0, 0.1});
  m.inertia = d.Get<double>("inertia", m.inertia, {0.0, 0.5});
  m.coulomb = d.Get<double>("coulomb", m.coulomb, {0.0, 50.0});
  m.viscous = d.Get<double>("viscous", m.viscous, {0.0, 50.0});
  m.torque_offset = d.Get<double>("torque_offset", m.torque_offset, {0.0, 50.0});
  m.torque_gain = d.Get<double>("torque_gain", m.torque_gain, {0.0, 0.5});
  m.ft_force_offset = d.Get<double>("ft_force_offset", m.ft_force_offset, {0.0, 500.0});
  m.ft_moment_offset = d.Get<double>("ft_moment_offset", m.ft_moment_offset, {0.0, 50.0});
  m.gyro_bias = d.Get<double>("gyro_bias", m.gyro_bias, {0.0, 0.5});
  m.accelerometer_bias = d.Get<double>("accelerometer_bias", m.accelerometer_bias, {0.0, 5.0});
  return c;
}

SimulationConfig ParseSimulation(const config::Node& root) {
  SimulationConfig sim;
  const config::Node s = root["simulation"];  // throws: missing required key
  s.AllowOnly(config::schema::kSimulation);
  sim.options.scenario = s.Get<std::string>("scenario");
  const auto names = sim::ScenarioNames();
  if (std::find(names.begin(), names.end(), sim.options.scenario) == names.end()) {
    std::string allowed;
    for (const auto& n : names) allowed += (allowed.empty() ? "" : ", ") + n;
    s["scenario"].Fail("unknown scenario '" + sim.options.scenario + "'; allowed: " + allowed);
  }
  // The robot's role map: which links and joints the scenarios and controllers use (roles.hpp).
  sim.options.roles = ParseRoles(s["roles"]);
  sim.options.adaptation = s.Get<bool>("adaptation", sim.options.adaptation, {});
  sim.options.duration_scale =
      s.Get<double>("duration_scale", sim.options.duration_scale, {0.001, 1000.0});
  sim.lockstep = s.Get<bool>("lockstep", sim.lockstep, {});
  sim.options.seed = static_cast<std::uint64_t>(
      s.Get<int>("seed", static_cast<int>(sim.options.seed), {0, 1 << 30}));
  sim.walking_after = s.Get<double>("walking_after", sim.walking_after, {0.0, 60.0});
  // The operator's procedure: the scenario starts (load, task) this late (scenario.hpp).
  sim.options.load_after = s.Get<double>("load_after", sim.options.load_after, {0.0, 600.0});
  sim.options.candump = s.Get<std::string>("candump", std::string(), {});
  // The controllers' model of the bodies: heft's nominal model by default (robot.parameters when
  // the service has it, else the URDF), so that the hand-off is consistent with it.
  enum : std::size_t { kNominal, kUrdf, kParameters };  // in the order of the allowed values
  const bool has_parameters = root.Has("robot") && root["robot"].Has("parameters");
  const std::size_t controller_model =
      s.Enum("controller_model", {"nominal", "urdf", "parameters"}, "nominal");
  if (controller_model == kParameters && !has_parameters)
    s["controller_model"].Fail("'parameters' needs robot.parameters (the model it would take)");
  sim.controller_model_from_parameters = controller_model != kUrdf && has_parameters;
  if (auto faults = s.Optional("faults")) {
    for (const config::Node& f : faults->Elements()) {
      std::string name;
      sim.options.faults.push_back(ParseFault(f, name));
      // Devices and buses by name, resolved against the drivers once they are read.
      sim.fault_names.push_back(name);
      sim.fault_nodes.push_back(f);
    }
  }
  if (auto d = s.Optional("deviations")) sim.options.deviations = ParseDeviations(*d);
  if (auto d = s.Optional("drives")) {
    d->AllowOnly(config::schema::kSimulationDrives);
    sim.options.drive_damping = d->Get<double>("damping", 0.0, {0.0, 100.0});
  }
  if (auto n = s.Optional("noise")) {
    SimNoise& noise = sim.options.noise;
    n->AllowOnly(config::schema::kSimulationNoise);
    noise.joint_torque = n->Get<double>("joint_torque", noise.joint_torque, {0.0, 100.0});
    noise.torque_bias = n->Get<double>("torque_bias", noise.torque_bias, {-100.0, 100.0});
    noise.velocity = n->Get<double>("velocity", noise.velocity, {0.0, 10.0});
    noise.force = n->Get<double>("force", noise.force, {0.0, 1000.0});
    noise.moment = n->Get<double>("moment", noise.moment, {0.0, 100.0});
    noise.force_bias = n->Get<double>("force_bias", noise.force_bias, {-1000.0, 1000.0});
    noise.gyro = n->Get<double>("gyro", noise.gyro, {0.0, 10.0});
    noise.accel = n->Get<double>("accel", noise.accel, {0.0, 100.0});
    noise.attitude = n->Get<double>("attitude", noise.attitude, {0.0, 0.5});
    auto vec3 = [&](const char* key, Eigen::Vector3d& out, double limit) {
      if (auto v = n->Optional(key)) {
        const std::vector<double> xyz = v->Numbers(3, {-limit, limit});  // the IMU's x, y, z
        out = Eigen::Vector3d(xyz[0], xyz[1], xyz[2]);
      }
    };
    vec3("gyro_bias", noise.gyro_bias, 1.0);
    vec3("accel_bias", noise.accel_bias, 10.0);
  }
  return sim;
}

void ResolveFaultNames(SimulationConfig& sim, const drivers::DriverConfig& d) {
  using K = SimFault::Kind;
  const FaultTargets targets{d.joints.size(), d.ft_cells.size(), d.buses.size(), d.imu.has_value()};
  for (std::size_t i = 0; i < sim.options.faults.size(); ++i) {
    SimFault& f = sim.options.faults[i];
    const std::string& name = sim.fault_names[i];
    const bool named = !NoName(f.kind);
    if (f.kind == K::kLoss && name.empty()) {
      f.device = -1;  // every bus
    } else if (named) {
      std::vector<std::string> candidates;
      const char* what = "a joint of drivers.joints";
      if (f.kind == K::kForceTorque || f.kind == K::kFtSaturated) {
        for (const auto& c : d.ft_cells) candidates.push_back(c.frame);
        what = "an F/T frame of drivers.ft_cells";
      } else if (f.kind == K::kLoss || f.kind == K::kBurst || f.kind == K::kBusOff ||
                 f.kind == K::kErrorFrames) {
        candidates = d.buses;
        what = "a bus of drivers.buses";
      } else {
        for (const auto& j : d.joints) candidates.push_back(j.joint);
      }
      const auto it = std::find(candidates.begin(), candidates.end(), name);
      if (it == candidates.end()) {
        std::string allowed;
        for (const auto& c : candidates) allowed += (allowed.empty() ? "" : ", ") + c;
        sim.fault_nodes[i]["name"].Fail("'" + name + "' is not " + what + "; allowed: " +
                                        (allowed.empty() ? std::string("none") : allowed));
      }
      f.device = static_cast<int>(it - candidates.begin());
    }
    // Against this robot's devices (an IMU for the IMU's faults).
    if (const auto problem = CheckFault(f, targets)) Fail(sim.fault_nodes[i], *problem);
  }
}

}  // namespace heft::sim

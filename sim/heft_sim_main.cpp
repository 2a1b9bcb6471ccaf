// heft-sim: heft's host (host/: drivers, the estimator plugin, the 1 kHz and 333 Hz threads,
// hand-off, telemetry, recorder) on the simulated robot — a MuJoCo scenario whose sensors arrive as
// CAN frames on in-memory buses, in lockstep on simulated time or in real time. The same host,
// threads, drivers and plugin as heftd; only the backend differs.
#include <spdlog/logger.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "heft/dynamics/model.hpp"
#include "heft/hal/model_identity.hpp"
#include "heft/host/host.hpp"
#include "heft/plugin/plugin_config.hpp"
#include "heft/sim/mujoco_model.hpp"
#include "heft/sim/roles.hpp"
#include "heft/sim/sim_config.hpp"
#include "heft/sim/simulated_backend.hpp"

namespace heft::sim {
namespace {

class SimulatedFactory final : public host::BackendFactory {
 public:
  void Configure(const config::Node& root, const host::CommandLine& cli,
                 host::HostConfig& host) override {
    // backend: simulated is checked by host::LoadConfiguration (Reader::kSimulator).
    config_ = ParseSimulation(root);
    CheckRoles(root, config_.options.roles);
    deviations_ = root["simulation"].Has("deviations");
    if (cli.lockstep >= 0) config_.lockstep = cli.lockstep == 1;
    config_.options.base_from_input = host.input_base;  // the simulated framework writes it
  }
  bool lockstep() const override { return config_.lockstep; }
  // The simulation went unstable during the run (MuJoCo reset it): the run is void.
  bool void_run() const { return void_run_; }
  std::unique_ptr<host::Backend> Create(const host::HostConfig& host,
                                        const plugin::PluginConfig& config,
                                        const dynamics::Model& model,
                                        spdlog::logger& log) override {
    SimulationConfig sim = WithRobotsDir(config_, config.urdf_path);
    // The controllers' friction model is the identified one (robot.parameters), as on a robot; its
    // bodies too unless simulation.controller_model is urdf (docs/imperfect-robot.md, "The
    // controller's model and heft's").
    if (!config.parameters_path.empty())
      sim.options.controller_friction = plugin::ReadNominalFriction(config.parameters_path, model);
    if (config_.controller_model_from_parameters) {
      dynamics::Model identified = model;
      for (const std::string& body :
           plugin::ApplyNominalParameters(config.parameters_path, identified))
        sim.options.controller_parameters.push_back(
            {body, dynamics::GetBodyParameters(identified, identified.body_index(body))});
    }
    // heft's nominal of the estimated links, the model the hand-off is consistent with: the
    // controllers keep their own model of a link while heft hands this nominal of it, and take
    // the handed π once heft hands anything else (Controller::SetHandOffReference).
    {
      dynamics::Model nominal = model;
      if (!config.parameters_path.empty())
        (void)plugin::ApplyNominalParameters(config.parameters_path, nominal);
      for (const std::string& body : config.estimator.bodies)
        sim.options.hand_off_reference.push_back(
            {body, dynamics::GetBodyParameters(nominal, nominal.body_index(body))});
      sim.options.hand_off_model = hal::ModelIdentity(config.urdf_path, config.parameters_path);
    }
    const std::size_t friction_joints = sim.options.controller_friction.size();
    const std::size_t identified_bodies = sim.options.controller_parameters.size();
    auto backend =
        std::make_unique<SimulatedBackend>(std::move(sim), host.duration, config.drivers, model);
    log.info("simulated robot: scenario {} ({}), adaptation {}, {:.1f} s", config_.options.scenario,
             backend->robot().scenario().description, config_.options.adaptation ? "on" : "off",
             backend->duration());
    backend->ReportVoidRunTo(&void_run_);
    if (identified_bodies > 0)
      log.info("simulated controllers: the identified model of {} bodies ({})", identified_bodies,
               config.parameters_path);
    if (friction_joints > 0)
      log.info("simulated controllers: the identified friction of {} joints fed forward ({})",
               friction_joints, config.parameters_path);
    if (deviations_)
      WriteDeviations(backend->robot(), host.telemetry, log);
    else
      log.info("simulated robot: exactly its URDF (no simulation.deviations)");
    return backend;
  }

 private:
  // The role map against the robot's URDF (robot.urdf, found by the host's reading before this):
  // what a run would refuse, --check refuses too.
  static void CheckRoles(const config::Node& root, const RoleMap& roles) {
    std::filesystem::path urdf = root["robot"].Get<std::string>("urdf");
    if (urdf.is_relative()) urdf = std::filesystem::path(root.file()).parent_path() / urdf;
    const MjModelPtr model = LoadMujocoModel(urdf.string(), MujocoLoadOptions{});
    (void)ResolveRoles(roles, model.get(), urdf.string());
  }
  // The simulated robot is the configuration's URDF (config/robots in the source tree,
  // /usr/share/heft/robots installed), never a path fixed at build time: the estimator and the
  // plant see the same robot.
  static SimulationConfig WithRobotsDir(SimulationConfig c, const std::string& urdf_path) {
    c.options.robots_dir = std::filesystem::path(urdf_path).parent_path().string();
    c.options.urdf = urdf_path;
    return c;
  }
  // The drawn deviations into the run's log and, with telemetry, the truth next to it
  // (<telemetry without .csv>.truth.yaml).
  static void WriteDeviations(const SimulatedRobot& robot, const std::string& telemetry,
                              spdlog::logger& log) {
    for (const std::string& line : DeviationLogLines(robot.deviations())) log.info("{}", line);
    if (telemetry.empty()) return;
    std::filesystem::path path(telemetry);
    path.replace_extension(".truth.yaml");
    std::vector<std::string> links;
    for (const auto& p : robot.scenario().payloads) links.push_back(p.link);
    std::ofstream out(path);
    out << DeviationsYaml(robot.deviations(), robot.scenario().name, links);
    out.close();
    if (!out)
      throw std::runtime_error("cannot write the simulated robot's truth to '" + path.string() +
                               "'");
    log.info("simulated robot's truth (deviations from the URDF): {}", path.string());
  }
  SimulationConfig config_;
  bool deviations_ = false;  // simulation.deviations is configured
  bool void_run_ = false;
};

}  // namespace
}  // namespace heft::sim

int main(int argc, char** argv) {
  heft::sim::SimulatedFactory factory;
  const int code = heft::host::Main({"heft-sim", true}, argc, argv, factory);
  // A run MuJoCo had to reset is void: its telemetry is not the scenario's (exit 1).
  return code == 0 && factory.void_run() ? 1 : code;
}

// The plugin's sections (robot, drivers, estimator) read into PluginConfig, each key checked on its
// own and against the sections read before it. The URDF's checks: plugin_config_urdf.cpp.

#include "heft/plugin/plugin_config.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <system_error>

#include "heft/config/schema.hpp"

namespace heft::plugin {
namespace {

dynamics::Vector10 Ten(const config::Node& node, const std::string& key,
                       const dynamics::Vector10& fallback, config::Range r) {
  auto child = node.Optional(key);
  if (!child) return fallback;
  const std::vector<double> v = child->Numbers(10, r);
  dynamics::Vector10 out;
  for (int i = 0; i < 10; ++i) out[i] = v[i];
  return out;
}

// A file named under robot: absolute, or relative to the configuration's folder; it must exist.
std::string RobotFile(const config::Node& robot, const char* key, const std::string& config_dir) {
  const std::string p = robot.Get<std::string>(key);
  const std::string resolved =
      std::filesystem::path(p).is_absolute() ? p : (std::filesystem::path(config_dir) / p).string();
  // The error_code overloads: a name the OS refuses (too long, ...) is "no such file", not a
  // std::filesystem_error escaping the parser (found by fuzz_config).
  std::error_code ec;
  const auto status = std::filesystem::status(resolved, ec);
  if (!std::filesystem::exists(status)) robot[key].Fail("no such file: " + resolved);
  if (!std::filesystem::is_regular_file(status)) robot[key].Fail("not a regular file: " + resolved);
  return resolved;
}

// robot: the URDF, its base, the inertia repair and the nominal parameters.
void ParseRobot(const config::Node& root, const std::string& config_dir, PluginConfig& cfg) {
  const config::Node robot = root["robot"];
  robot.AllowOnly(config::schema::kRobot);
  cfg.urdf_path = RobotFile(robot, "urdf", config_dir);
  cfg.floating_base = robot.Get<bool>("floating_base", cfg.floating_base, {});
  cfg.repair_inertia = robot.Get<bool>("repair_inertia", cfg.repair_inertia, {});
  if (robot.Has("parameters")) cfg.parameters_path = RobotFile(robot, "parameters", config_dir);
}

// drivers: the sensors, and the sample mapping's joints and wrench frames in their order.
void ParseDrivers(const config::Node& root, PluginConfig& cfg) {
  cfg.drivers = drivers::ParseDriverConfig(root["drivers"]);
  if (cfg.drivers.imu && !cfg.floating_base)
    root["drivers"]["imu"].Fail(
        "the base IMU measures a floating base; allowed only with robot.floating_base: true");
  for (const auto& j : cfg.drivers.joints) cfg.mapping.joints.push_back(j.joint);
  for (const auto& c : cfg.drivers.ft_cells) cfg.mapping.wrench_frames.push_back(c.frame);
}

// estimator.links, filter and measurement.
void ParseLinksAndFilter(const config::Node& e, estimator::EstimatorConfig& ec) {
  for (const config::Node& l : e["links"].Elements()) ec.bodies.push_back(l.As<std::string>());
  if (ec.bodies.empty() || ec.bodies.size() > hal::kMaxEstimatedLinks)
    e["links"].Fail("between 1 and " + std::to_string(hal::kMaxEstimatedLinks) + " links");
  ec.filter = e.Enum("filter", {"ekf", "kf"}, "ekf") == 0 ? estimator::FilterKind::kLogCholesky
                                                          : estimator::FilterKind::kKalman;
  switch (e.Enum("measurement", {"auto", "full", "null_space"}, "auto")) {
    case 0:
      ec.measurement = estimator::MeasurementChoice::kAuto;
      break;
    case 1:
      ec.measurement = estimator::MeasurementChoice::kFullWrench;
      break;
    default:
      ec.measurement = estimator::MeasurementChoice::kTorqueNullSpace;
      break;
  }
}

// estimator.contact_frames: a floating robot without foot F/T cells names the frames its feet touch
// the ground with, assumed in contact (no cell says otherwise), so that the null-space measurement
// projects their unknown wrenches out. With cells, the contacts are the cells' frames.
void ParseContactFrames(const config::Node& e, PluginConfig& cfg) {
  const estimator::EstimatorConfig& ec = cfg.estimator;
  if (auto frames = e.Optional("contact_frames")) {
    if (!cfg.drivers.ft_cells.empty())
      frames->Fail(
          "the contacts are the F/T cells' frames (drivers.ft_cells); only a robot "
          "without cells lists them");
    if (!cfg.floating_base) frames->Fail("only a floating base has contacts to project out");
    for (const config::Node& f : frames->Elements())
      cfg.mapping.wrench_frames.push_back(f.As<std::string>());
    if (cfg.mapping.wrench_frames.empty()) frames->Fail("list at least one frame");
    if (ec.measurement == estimator::MeasurementChoice::kFullWrench)
      e["measurement"].Fail(
          "full needs the contact wrenches: without F/T cells use auto or "
          "null_space");
  }
}

// estimator.noise.ft: per F/T cell, {frame, force, moment}, the frame one of drivers.ft_cells,
// each at most once.
void ParseFtNoise(const config::Node& ft, PluginConfig& cfg) {
  estimator::EstimatorConfig& ec = cfg.estimator;
  std::string frames;
  for (const std::string& f : cfg.mapping.wrench_frames) frames += (frames.empty() ? "" : ", ") + f;
  for (const config::Node& cell : ft.Elements()) {
    cell.AllowOnly(config::schema::kEstimatorNoiseFt);
    estimator::FtNoise noise;
    noise.frame = cell.Get<std::string>("frame");
    if (std::find(cfg.mapping.wrench_frames.begin(), cfg.mapping.wrench_frames.end(),
                  noise.frame) == cfg.mapping.wrench_frames.end())
      cell["frame"].Fail("'" + noise.frame + "' is not an F/T cell of drivers.ft_cells (" +
                         (frames.empty() ? std::string("none configured") : frames) + ")");
    for (const estimator::FtNoise& other : ec.ft_noise)
      if (other.frame == noise.frame) cell["frame"].Fail("'" + noise.frame + "' given twice");
    noise.force = cell.Get<double>("force", 0.0, {0.0, 1e5});
    noise.moment = cell.Get<double>("moment", 0.0, {0.0, 1e4});
    ec.ft_noise.push_back(noise);
  }
}

// estimator.noise: the sensors' noise and the measurement's σ.
void ParseNoise(const config::Node& e, PluginConfig& cfg) {
  estimator::EstimatorConfig& ec = cfg.estimator;
  if (auto n = e.Optional("noise")) {
    n->AllowOnly(config::schema::kEstimatorNoise);
    // The noise of the measured velocities and of the IMU's specific force (per 1 kHz sample):
    // the accelerations made from them enter R (EstimatorConfig::acceleration_sigma).
    cfg.gyro_sigma = n->Get<double>("gyro", cfg.gyro_sigma, {0.0, 10.0});
    cfg.accelerometer_sigma =
        n->Get<double>("accelerometer", cfg.accelerometer_sigma, {0.0, 100.0});
    cfg.joint_velocity_sigma =
        n->Get<double>("joint_velocity", cfg.joint_velocity_sigma, {0.0, 10.0});
    // The base's linear velocity, where its difference is the base's linear acceleration
    // (ReadPluginConfig decides where, and the default); 10 m/s is the framework input's bound.
    if (auto v = n->Optional("base_velocity")) cfg.base_velocity_sigma = v->As<double>({0.0, 10.0});
    cfg.acceleration_inflation =
        n->Get<double>("acceleration_inflation", cfg.acceleration_inflation, {1.0, 100.0});
    ec.joint_torque_sigma = n->Get<double>("joint_torque", ec.joint_torque_sigma, {1e-6, 1e4});
    ec.joint_torque_scale = n->Get<double>("joint_torque_scale", ec.joint_torque_scale, {0.0, 0.5});
    ec.base_force_sigma = n->Get<double>("base_force", ec.base_force_sigma, {1e-6, 1e5});
    ec.base_torque_sigma = n->Get<double>("base_torque", ec.base_torque_sigma, {1e-6, 1e4});
    if (auto ft = n->Optional("ft")) ParseFtNoise(*ft, cfg);
  }
}

// estimator.initial_sigma, process_noise, prior_time_constant, stiction_band and
// measurement_lowpass (below the control rate's Nyquist frequency).
void ParsePriorAndLowpass(const config::Node& e, estimator::EstimatorConfig& ec) {
  ec.initial_sigma = Ten(e, "initial_sigma", ec.initial_sigma, {1e-9, 1e3});
  ec.process_noise = Ten(e, "process_noise", ec.process_noise, {0.0, 1e3});
  ec.prior_time_constant = e.Get<double>("prior_time_constant", ec.prior_time_constant, {0.0, 1e6});
  ec.stiction_band = e.Get<bool>("stiction_band", ec.stiction_band, {});
  ec.measurement_lowpass =
      e.Get<double>("measurement_lowpass", ec.measurement_lowpass, {0.0, 1000.0});
  if (ec.measurement_lowpass >= 0.5 / ec.control_period) {
    std::ostringstream why;
    why << "a cutoff of " << ec.measurement_lowpass
        << " Hz is not below the control rate's Nyquist frequency (" << 0.5 / ec.control_period
        << " Hz at control_period " << ec.control_period << " s); 0 turns the low-pass off";
    e["measurement_lowpass"].Fail(why.str());
  }
}

// The parameter_frame key of `n` (estimator or one of its link_priors).
estimator::EstimatorConfig::ParameterFrame ReadParameterFrame(
    const config::Node& n, estimator::EstimatorConfig::ParameterFrame fallback) {
  using F = estimator::EstimatorConfig::ParameterFrame;
  return n.Enum("parameter_frame", {"link", "com"}, fallback == F::kCom ? "com" : "link") == 1
             ? F::kCom
             : F::kLink;
}

// estimator.link_priors: per estimated link, each at most once, initial_sigma, process_noise,
// prior_time_constant and parameter_frame for that link alone.
void ParseLinkPriors(const config::Node& e, estimator::EstimatorConfig& ec) {
  if (auto priors = e.Optional("link_priors")) {
    std::string names;
    for (const std::string& b : ec.bodies) names += (names.empty() ? "" : ", ") + b;
    for (const config::Node& lp : priors->Elements()) {
      lp.AllowOnly(config::schema::kEstimatorLinkPriors);
      estimator::EstimatorConfig::LinkPrior prior;
      prior.link = lp.Get<std::string>("link");
      if (std::find(ec.bodies.begin(), ec.bodies.end(), prior.link) == ec.bodies.end())
        lp["link"].Fail("'" + prior.link + "' is not one of estimator.links (" + names + ")");
      for (const auto& other : ec.link_priors)
        if (other.link == prior.link) lp["link"].Fail("'" + prior.link + "' given twice");
      if (lp.Optional("initial_sigma"))
        prior.initial_sigma = Ten(lp, "initial_sigma", ec.initial_sigma, {1e-9, 1e3});
      if (lp.Optional("process_noise"))
        prior.process_noise = Ten(lp, "process_noise", ec.process_noise, {0.0, 1e3});
      if (lp.Optional("prior_time_constant"))
        prior.prior_time_constant = lp.Get<double>("prior_time_constant", 0.0, {0.0, 1e6});
      if (lp.Optional("parameter_frame"))
        prior.parameter_frame = ReadParameterFrame(lp, ec.parameter_frame);
      ec.link_priors.push_back(prior);
    }
  }
}

// estimator.gating: the outlier gate.
void ParseGating(const config::Node& e, estimator::EstimatorConfig& ec) {
  if (auto g = e.Optional("gating")) {
    g->AllowOnly(config::schema::kEstimatorGating);
    ec.gating.enabled = g->Get<bool>("enabled", ec.gating.enabled, {});
    ec.gating.confidence = g->Get<double>("confidence", ec.gating.confidence, {0.5, 0.999999});
    ec.gating.gamma = g->Get<double>("gamma", ec.gating.gamma, {0.0, 1e9});
    ec.gating.release_after = g->Get<double>("release_after", ec.gating.release_after, {0.0, 60.0});
    ec.gating.quick_release_after =
        g->Get<double>("quick_release_after", ec.gating.quick_release_after, {0.0, 60.0});
    ec.gating.inflation = g->Get<double>("inflation", ec.gating.inflation, {1.0, 1e6});
    ec.gating.open_for = g->Get<double>("open_for", ec.gating.open_for, {0.0, 60.0});
    ec.gating.max_covariance_factor =
        g->Get<double>("max_covariance_factor", ec.gating.max_covariance_factor, {1.0, 1e6});
    ec.gating.hold_after = g->Get<double>("hold_after", ec.gating.hold_after, {0.0, 600.0});
  }
}

// estimator.rate_limits: how fast a change the hand-off policy lets through reaches the
// controller. The service's default (the library's is the paper's 3 kg/s): 600 kg/s hands a 6 kg
// step on in 10 ms, h and I at a 0.3 m lever (docs/handoff.md, "The hand-off policy").
void ParseRateLimits(const config::Node& e, estimator::EstimatorConfig& ec) {
  ec.rate_limits = estimator::RateLimits{600.0, 180.0, 50.0};
  if (auto r = e.Optional("rate_limits")) {
    r->AllowOnly(config::schema::kEstimatorRateLimits);
    ec.rate_limits.mass = r->Get<double>("mass", ec.rate_limits.mass, {1e-6, 1e4});
    ec.rate_limits.first_moment =
        r->Get<double>("first_moment", ec.rate_limits.first_moment, {1e-6, 1e4});
    ec.rate_limits.inertia = r->Get<double>("inertia", ec.rate_limits.inertia, {1e-6, 1e4});
  }
}

// estimator.handoff_confidence, handoff_return_after, nominal_uncertainty, consider_nominal,
// consider_gain and load_shape, load_extent, shape_memory: when the hand-off moves, and what its
// covariance owns up to.
constexpr double kHandOffConfidence = 0.999;
void ParseHandOffPolicy(const config::Node& e, estimator::EstimatorConfig& ec) {
  // The service's default is on (EstimatorConfig's, for a program of its own, off).
  ec.handoff_confidence = e.Get<double>("handoff_confidence", kHandOffConfidence, {0.0, 0.999999});
  ec.handoff_return_after =
      e.Get<double>("handoff_return_after", ec.handoff_return_after, {0.0, 10.0});
  // The other bodies' nominal error in the handed covariance (the service's default: on).
  ec.consider_nominal = e.Get<bool>("consider_nominal", true, {});
  // The Schmidt gain (opt-in: docs/handoff.md, "The Schmidt gain").
  ec.consider_gain = e.Get<bool>("consider_gain", ec.consider_gain, {});
  // A load's unknown shape in the handed covariance (the service's default: on).
  ec.load_shape = e.Get<bool>("load_shape", true, {});
  ec.load_extent = e.Get<double>("load_extent", ec.load_extent, {0.0, 2.0});
  ec.shape_memory = e.Get<double>("shape_memory", ec.shape_memory, {0.0, 60.0});
  if (auto u = e.Optional("nominal_uncertainty")) {
    u->AllowOnly(config::schema::kEstimatorNominalUncertainty);
    estimator::EstimatorConfig::NominalUncertainty& n = ec.nominal_uncertainty;
    n.mass = u->Get<double>("mass", n.mass, {0.0, 10.0});
    n.com = u->Get<double>("com", n.com, {0.0, 1.0});
    n.inertia = u->Get<double>("inertia", n.inertia, {0.0, 10.0});
    n.turn = u->Get<double>("turn", n.turn, {0.0, 1.0});
  }
}

// estimator.calibration: the window at rest, its limits and timeout (longer than the window).
void ParseCalibration(const config::Node& e, estimator::EstimatorConfig& ec) {
  if (auto c = e.Optional("calibration")) {
    c->AllowOnly(config::schema::kEstimatorCalibration);
    ec.calibration.enabled = c->Get<bool>("enabled", ec.calibration.enabled, {});
    ec.calibration.window = c->Get<double>("window", ec.calibration.window, {0.01, 600.0});
    ec.calibration.max_speed = c->Get<double>("max_speed", ec.calibration.max_speed, {0.0, 100.0});
    ec.calibration.max_motion =
        c->Get<double>("max_motion", ec.calibration.max_motion, {0.0, 60.0});
    ec.calibration.timeout = c->Get<double>("timeout", ec.calibration.timeout, {0.01, 3600.0});
    if (ec.calibration.timeout <= ec.calibration.window)
      (*c)["timeout"].Fail("must be longer than window (" + std::to_string(ec.calibration.window) +
                           " s)");
  }
}

// The estimate's plausibility limits, the sample mapping's keys and the start policy.
void ParseLimitsMappingStart(const config::Node& e, PluginConfig& cfg) {
  estimator::EstimatorConfig& ec = cfg.estimator;
  ec.min_mass_fraction = e.Get<double>("min_mass_fraction", ec.min_mass_fraction, {0.0, 1.0});
  ec.max_added_mass = e.Get<double>("max_added_mass", ec.max_added_mass, {0.0, 1e4});
  ec.max_com_distance = e.Get<double>("max_com_distance", ec.max_com_distance, {1e-3, 100.0});
  cfg.mapping.difference_samples =
      e.Get<int>("difference_samples", cfg.mapping.difference_samples, {1, 31});
  cfg.mapping.contact_force = e.Get<double>("contact_force", cfg.mapping.contact_force, {0.0, 1e5});
  cfg.mapping.base_acceleration = static_cast<estimator::BaseAcceleration>(
      e.Enum("base_acceleration", {"auto", "imu", "velocity"}, "auto"));
  cfg.wait_for_walking = e.Get<bool>("wait_for_walking", cfg.wait_for_walking, {});
}

// The estimator section, its keys in the order they were always read.
void ParseEstimator(const config::Node& root, PluginConfig& cfg) {
  const config::Node e = root["estimator"];
  e.AllowOnly(config::schema::kEstimator);
  estimator::EstimatorConfig& ec = cfg.estimator;
  ParseLinksAndFilter(e, ec);
  ParseContactFrames(e, cfg);
  ec.contact_frames = cfg.mapping.wrench_frames;
  ec.control_period = e.Get<double>("control_period", ec.control_period, {1e-4, 0.1});
  ParseNoise(e, cfg);
  ParsePriorAndLowpass(e, ec);
  ec.parameter_frame = ReadParameterFrame(e, ec.parameter_frame);
  ParseLinkPriors(e, ec);
  ParseGating(e, ec);
  ParseRateLimits(e, ec);
  ParseHandOffPolicy(e, ec);
  ParseCalibration(e, ec);
  ParseLimitsMappingStart(e, cfg);
}

}  // namespace

PluginConfig ParsePluginConfig(const config::Node& root, const std::string& config_dir) {
  PluginConfig cfg;
  cfg.file = root.file();
  ParseRobot(root, config_dir, cfg);
  ParseDrivers(root, cfg);
  ParseEstimator(root, cfg);
  return cfg;
}

}  // namespace heft::plugin

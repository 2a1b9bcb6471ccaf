#include "heft/plugin/plugin_config.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>
#include <system_error>

#include "heft/config/schema.hpp"
#include "heft/plugin/driver_check.hpp"

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
    ec.gating.inflation = g->Get<double>("inflation", ec.gating.inflation, {1.0, 1e6});
    ec.gating.open_for = g->Get<double>("open_for", ec.gating.open_for, {0.0, 60.0});
    ec.gating.max_covariance_factor =
        g->Get<double>("max_covariance_factor", ec.gating.max_covariance_factor, {1.0, 1e6});
  }
}

// estimator.rate_limits: how fast a change the hand-off policy lets through reaches the
// controller. The service's default (the library's is the paper's 3 kg/s): 600 kg/s hands a 6 kg
// step on in 10 ms, h and I at a 0.3 m lever (docs/estimator.md, "The hand-off policy").
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

// estimator.handoff_confidence, nominal_uncertainty and consider_nominal: when the hand-off
// moves, and what its covariance owns up to.
constexpr double kHandOffConfidence = 0.999;
void ParseHandOffPolicy(const config::Node& e, estimator::EstimatorConfig& ec) {
  // The service's default is on (EstimatorConfig's, for a program of its own, off).
  ec.handoff_confidence = e.Get<double>("handoff_confidence", kHandOffConfidence, {0.0, 0.999999});
  // The other bodies' nominal error in the handed covariance (the service's default: on).
  ec.consider_nominal = e.Get<bool>("consider_nominal", true, {});
  if (auto u = e.Optional("nominal_uncertainty")) {
    u->AllowOnly(config::schema::kEstimatorNominalUncertainty);
    estimator::EstimatorConfig::NominalUncertainty& n = ec.nominal_uncertainty;
    n.mass = u->Get<double>("mass", n.mass, {0.0, 10.0});
    n.com = u->Get<double>("com", n.com, {0.0, 1.0});
    n.inertia = u->Get<double>("inertia", n.inertia, {0.0, 10.0});
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

// Acceleration noise from the sensors' noise (EstimatorConfig::acceleration_sigma): a central
// difference over 2h samples of 1 ms turns a velocity's σ into √2 σ / (2h · 1 ms). The base's
// linear acceleration comes from one of two paths (sample_mapping.hpp):
//   - the specific force: the accelerometer's σ and the gyro's difference through the transport
//     from the IMU to the base origin (ω̇ × p_BS), combined as independent;
//   - the base's linear velocity differenced: √2 σ_v / (2h · 1 ms) alone (the gyro does not enter:
//     a = dv/dt on those rows).
// base_acceleration: imu takes the first, velocity the second. auto takes the first with
// drivers.imu (the CAN IMU always carries a specific force and never a velocity); without it the
// base comes from the controller framework, which may send either, sample by sample, and the
// rows' covariance is set once: it takes the larger of the two, so that whichever path runs is
// covered (a larger σ than the path's costs some information on the base's rows; a smaller one
// gates them). The base's angular rows are the gyro's difference on both paths. Each σ then times
// acceleration_inflation (PluginConfig).
//
// Where the velocity path can run and base_velocity is not given, the other sensors' noise being
// modelled, PluginConfig::kDefaultBaseVelocitySigma stands in for it (and is recorded in
// cfg.base_velocity_sigma): without it the differenced velocity's noise — 154.5 N RMS on the
// humanoid's base force rows at 5 mm/s against R's ~10 N — would be unmodelled and nearly every
// tick gated. A default rather than a refusal because `auto` without drivers.imu is what every
// framework-fed configuration gets without choosing (scripts/faults.py's framework-input cells
// among them), and one rule for both paths keeps the key's meaning simple; `base_velocity: 0`
// states an exact velocity (the old behaviour). Nothing modelled at all (every σ 0 or absent):
// no acceleration noise, as before.
void SetAccelerationNoise(const dynamics::Model& model, PluginConfig& cfg) {
  const bool floating = model.floating_base;
  const estimator::BaseAcceleration source = cfg.mapping.base_acceleration;
  const bool velocity_path =
      floating && (source == estimator::BaseAcceleration::kVelocity ||
                   (source == estimator::BaseAcceleration::kAuto && !cfg.drivers.imu));
  const bool sensors =
      cfg.gyro_sigma > 0.0 || cfg.accelerometer_sigma > 0.0 || cfg.joint_velocity_sigma > 0.0;
  if (velocity_path && sensors && !cfg.base_velocity_sigma)
    cfg.base_velocity_sigma = PluginConfig::kDefaultBaseVelocitySigma;
  const double base_velocity = velocity_path ? cfg.base_velocity_sigma.value_or(0.0) : 0.0;
  if (!sensors && !(base_velocity > 0.0)) return;
  const double span = 2.0 * cfg.mapping.difference_samples * 1e-3;
  const double angular = std::sqrt(2.0) * cfg.gyro_sigma / span;
  const double lever = cfg.drivers.imu ? cfg.drivers.imu->p_BI.norm() : 0.0;
  Eigen::VectorXd sigma =
      Eigen::VectorXd::Constant(model.nv, std::sqrt(2.0) * cfg.joint_velocity_sigma / span);
  if (floating) {
    const double from_specific_force = std::hypot(cfg.accelerometer_sigma, lever * angular);
    const double from_velocity = std::sqrt(2.0) * base_velocity / span;
    double linear = from_specific_force;
    if (source == estimator::BaseAcceleration::kVelocity)
      linear = from_velocity;
    else if (velocity_path)
      linear = std::max(from_specific_force, from_velocity);
    sigma.head<3>().setConstant(linear);
    sigma.segment<3>(3).setConstant(angular);
  }
  cfg.estimator.acceleration_sigma = cfg.acceleration_inflation * sigma;
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

PluginConfig ReadPluginConfig(const config::Node& root) {
  PluginConfig cfg =
      ParsePluginConfig(root, std::filesystem::path(root.file()).parent_path().string());
  // Cross-checks against the URDF (read once, by the model loader), each error at the entry's
  // line and key.
  const dynamics::Model model = dynamics::LoadModelFromUrdfFile(
      cfg.urdf_path, dynamics::ModelOptions{cfg.floating_base, cfg.repair_inertia});
  plugin::CheckDriverConfig(cfg.drivers, model, cfg.urdf_path, root["drivers"]);
  if (auto frames = root["estimator"].Optional("contact_frames")) {
    const std::vector<config::Node> f = frames->Elements();
    for (std::size_t k = 0; k < f.size(); ++k) {
      try {
        (void)model.frame_index(cfg.mapping.wrench_frames[k]);
      } catch (const dynamics::ModelError& e) {
        f[k].Fail(std::string(e.what()) + " (in " + cfg.urdf_path + ")");
      }
    }
  }
  const std::vector<config::Node> links = root["estimator"]["links"].Elements();
  for (std::size_t k = 0; k < links.size(); ++k) {
    try {
      (void)model.body_index(cfg.estimator.bodies[k]);
    } catch (const dynamics::ModelError& e) {
      links[k].Fail(std::string(e.what()) + " (in " + cfg.urdf_path + ")");
    }
    for (std::size_t i = 0; i < k; ++i)
      if (cfg.estimator.bodies[i] == cfg.estimator.bodies[k])
        links[k].Fail("link '" + cfg.estimator.bodies[k] + "' is listed twice");
  }
  SetAccelerationNoise(model, cfg);
  return cfg;
}

namespace {

// A link's `covariance` (heft-identify's posterior of π: 100 numbers, row major), when given:
// finite, symmetric and positive semidefinite within the rounding of its printed digits.
std::optional<Eigen::Matrix<double, 10, 10>> ReadCovariance(const config::Node& link) {
  const std::optional<config::Node> node = link.Optional("covariance");
  if (!node) return std::nullopt;
  const std::vector<double> v = node->Numbers(100);
  Eigen::Matrix<double, 10, 10> c;
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 10; ++j)
      c(i, j) = v[static_cast<std::size_t>(i) * 10 + static_cast<std::size_t>(j)];
  if (!c.allFinite()) node->Fail("not finite (π's 10 x 10 covariance, row major)");
  const double scale = c.cwiseAbs().maxCoeff();
  // heft-identify prints 9 significant digits: an honest matrix is symmetric to ~1e-9 of its
  // largest entry and its eigenvalues ≥ −1e-9 of the largest.
  constexpr double kTolerance = 1e-6;
  if ((c - c.transpose()).cwiseAbs().maxCoeff() > kTolerance * scale)
    node->Fail("not symmetric (π's 10 x 10 covariance, row major)");
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 10, 10>> eig(c);
  const double lmax = eig.eigenvalues().maxCoeff(), lmin = eig.eigenvalues().minCoeff();
  if (lmin < -kTolerance * std::max(lmax, 0.0) || (lmax <= 0.0 && scale > 0.0)) {
    std::ostringstream msg;
    msg.precision(3);
    msg << "not positive semidefinite: smallest eigenvalue " << lmin << " against the largest "
        << lmax << " (π's 10 x 10 covariance, row major)";
    node->Fail(msg.str());
  }
  return Eigen::Matrix<double, 10, 10>(0.5 * (c + c.transpose()));
}

}  // namespace

std::vector<std::string> ApplyNominalParameters(const std::string& path, dynamics::Model& model) {
  return ApplyNominalParameters(config::Document::Load(path), model);
}

std::vector<std::string> ApplyNominalParameters(const config::Document& doc,
                                                dynamics::Model& model) {
  std::vector<std::string> applied;
  const config::Node links = doc.root()["links"];
  if (!links.IsMap()) links.Fail("expected a map of link names");
  for (const std::string& name : links.Keys()) {
    const config::Node link = links[name];
    int body = -1;
    try {
      body = model.body_index(name);
    } catch (const std::exception&) {
      link.Fail("'" + name + "' is not a moving link of the URDF");
    }
    const std::vector<double> v = link["pi"].Numbers(10);
    dynamics::Vector10 pi;
    for (int k = 0; k < 10; ++k) pi[k] = v[k];
    // A body on the boundary (a point mass, rod or plate) is realisable and fine for the
    // dynamics; an estimated one is refused as degenerate, with its repair, by
    // CheckEstimatedNominals.
    const dynamics::PseudoInertiaExtremes e = dynamics::PseudoInertiaEigenvalues(pi);
    if (!pi.allFinite() || !(pi[0] > 0.0) || e.min < -dynamics::kDegenerateTolerance * e.max)
      link["pi"].Fail(
          "not physically consistent (mass not positive, or pseudo-inertia with a negative "
          "eigenvalue: an inertia about the centre of mass that is not positive semidefinite or "
          "breaks the triangle inequalities)");
    dynamics::SetBodyParameters(model, body, pi);
    model.bodies[body].covariance = ReadCovariance(link);
    applied.push_back(name);
  }
  return applied;
}

void CheckEstimatedNominals(const PluginConfig& cfg,
                            const std::vector<std::string>& from_parameters,
                            dynamics::Model& model) {
  for (const std::string& name : cfg.estimator.bodies) {
    const int body = model.body_index(name);
    const dynamics::Vector10 pi = dynamics::GetBodyParameters(model, body);
    // Massless or clearly inconsistent: the estimator's own check says so (InertialEstimator). A
    // body on the boundary (a point mass, rod or plate: λ_min(J) zero up to rounding, either sign)
    // is degenerate, named here with its file and the repair.
    if (!(pi[0] > 0.0) || !pi.allFinite() || dynamics::HasConsistencyMargin(pi)) continue;
    if (const dynamics::PseudoInertiaExtremes x = dynamics::PseudoInertiaEigenvalues(pi);
        x.min < -dynamics::kDegenerateTolerance * x.max)
      continue;
    const bool param =
        std::find(from_parameters.begin(), from_parameters.end(), name) != from_parameters.end();
    const std::string& source = param ? cfg.parameters_path : cfg.urdf_path;
    const dynamics::PseudoInertiaExtremes e = dynamics::PseudoInertiaEigenvalues(pi);
    std::ostringstream msg;
    msg.precision(3);
    msg << source << ": estimated link '" << name << "' is nearly degenerate (a point mass, rod or "
        << "plate): its pseudo-inertia's smallest eigenvalue " << e.min << " is below the "
        << "estimator's margin " << e.threshold() << " (" << dynamics::kConsistencyMargin
        << " x its largest, " << e.max << ")";
    if (!cfg.repair_inertia)
      throw config::ConfigError(
          msg.str() + "; " +
          (param ? "re-identify with heft-identify (its SDP keeps a margin, --sdp-margin)"
                 : "fix the link's <inertial> in the URDF") +
          ", stop estimating the link (estimator.links), or set robot.repair_inertia: true to "
          "inflate its inertia to the margin");
    // Repair: J + δ·1 (mass +δ, inertia about the origin +2δ·1), δ ≤ 2e-6 λ_max(J).
    const dynamics::Vector10 repaired = dynamics::InflateToMargin(pi);
    dynamics::SetBodyParameters(model, body, repaired);
    const dynamics::PseudoInertiaExtremes r = dynamics::PseudoInertiaEigenvalues(repaired);
    std::ostringstream fixed;
    fixed.precision(3);
    fixed << msg.str() << "; repaired (robot.repair_inertia): mass + " << repaired[0] - pi[0]
          << " kg, inertia + " << repaired[4] - pi[4]
          << " kg m^2 on each axis, smallest eigenvalue now " << r.min;
    model.warnings.push_back(fixed.str());
  }
}

std::vector<estimator::JointFriction> ReadNominalFriction(const std::string& path,
                                                          const dynamics::Model& model) {
  const config::Document doc = config::Document::Load(path);
  std::vector<estimator::JointFriction> out;
  const auto friction = doc.root().Optional("friction");
  if (!friction) return out;
  if (!friction->IsMap()) friction->Fail("expected a map of joint names");
  for (const std::string& name : friction->Keys()) {
    const config::Node joint = (*friction)[name];
    bool known = false;
    for (const dynamics::Body& b : model.bodies)
      known = known || (b.joint.type != dynamics::JointType::kFree && b.joint.name == name);
    if (!known) joint.Fail("'" + name + "' is not a moving joint of the URDF");
    joint.AllowOnly({"fc", "fv"});
    estimator::JointFriction f;
    f.joint = name;
    f.coulomb = joint.Get<double>("fc", 0.0, {-1e4, 1e4});
    f.viscous = joint.Get<double>("fv", 0.0, {-1e4, 1e4});
    out.push_back(f);
  }
  return out;
}

}  // namespace heft::plugin

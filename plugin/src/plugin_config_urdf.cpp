// ReadPluginConfig: the sections (plugin_config.cpp) checked against the URDF's model, and the
// acceleration noise that needs it.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "heft/plugin/driver_check.hpp"
#include "heft/plugin/plugin_config.hpp"

namespace heft::plugin {
namespace {

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

}  // namespace heft::plugin

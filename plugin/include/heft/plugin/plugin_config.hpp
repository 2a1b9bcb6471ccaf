// The estimator plugin's part of heft's configuration (schema: config/README.md):
//   robot:      urdf (relative to the file), floating_base
//   drivers:    the sensors (drivers/README.md); their joint and cell order is the state sample's
//   estimator:  links, filter, measurement, noise, gating, rate limits, calibration, start policy
// Everything is validated at init: unknown keys, missing keys, wrong types, out-of-range values and
// names that are not in the URDF are refused with the file, key and allowed values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "heft/drivers/driver_config.hpp"
#include "heft/estimator/inertial_estimator.hpp"
#include "heft/estimator/sample_mapping.hpp"

namespace heft::plugin {

struct PluginConfig {
  std::string file;
  std::string urdf_path;  // absolute or relative to the working directory
  bool floating_base = true;
  bool repair_inertia = false;
  // robot.parameters: heft-identify's YAML; its links' π replace the URDF's as the nominal model.
  std::string parameters_path;  // empty: the URDF's inertials
  drivers::DriverConfig drivers;
  estimator::EstimatorConfig estimator;
  estimator::SampleMappingConfig mapping;
  bool wait_for_walking = true;  // false: estimation starts at activation
  // estimator.noise.gyro / accelerometer / joint_velocity: σ per 1 kHz sample [rad/s, m/s², rad/s]
  // (0: not modelled); ReadPluginConfig turns them into estimator.acceleration_sigma.
  double gyro_sigma = 0.0, accelerometer_sigma = 0.0, joint_velocity_sigma = 0.0;
  // estimator.noise.base_velocity: σ of the base's linear velocity per 1 kHz sample [m/s], for
  // the base's linear acceleration made by its central difference (estimator.base_acceleration:
  // velocity, or auto on a floating base without drivers.imu, where the framework may send a
  // velocity): √2 σ / (2h · 1 ms) on the base's linear rows of acceleration_sigma. Absent there
  // while any of the three above is > 0: ReadPluginConfig takes kDefaultBaseVelocitySigma and
  // sets it here; absent elsewhere: unset (the specific force's path ignores it).
  std::optional<double> base_velocity_sigma;
  // The default: twice the 5 mm/s of docs/estimator.md's state estimator (154.5 N RMS on the
  // humanoid's base force rows, differenced over 4 ms). Too large a σ only trusts the base's rows
  // less; too small a one gates nearly every tick, so the default errs large.
  static constexpr double kDefaultBaseVelocitySigma = 0.01;  // m/s
  // estimator.noise.acceleration_inflation: k on those accelerations' σ in R. R then holds k² times
  // the variance the noise adds to each row, so the rows the differenced accelerations corrupt
  // most count less: a correct R (k = 1) models the noise's variance but not the bias it causes
  // through the regressor (errors in variables), which pulls the weakly seen parameters (a
  // torso's CoM height) toward zero. Default 1 (the sensors' σ as they are); docs/estimator.md,
  // "The acceleration noise's bias", measures 2 and 5.
  double acceleration_inflation = 1.0;
};

// Reads `robot`, `drivers` and `estimator` of a parsed file (other top-level sections are the
// host's and the simulator's) and checks them against the URDF. Throws config::ConfigError.
// Programs and tests read the whole file with host::LoadConfiguration (configuration.hpp).
PluginConfig ReadPluginConfig(const config::Node& root);
// Replaces the π of every link listed under `links` (each with `pi: [10 numbers]`, the format
// heft-identify writes) in `model` and returns those links' names; a link's optional
// `covariance: [100 numbers]` (π's 10 × 10 covariance, row major) goes to Body::covariance. Throws
// config::ConfigError naming the file, line and key for an unknown link, a missing or malformed π,
// a physically inconsistent one, or a covariance that is not finite, symmetric and positive
// semidefinite.
std::vector<std::string> ApplyNominalParameters(const std::string& path, dynamics::Model& model);
// The joint friction under `friction` in the same file (heft-identify --friction writes
// `joint: {fc: N·m, fv: N·m·s/rad}` for τ_f = fc·tanh(q̇/0.01) + fv·q̇); none if the key is absent.
// Throws config::ConfigError naming the file, line and key for an unknown joint or a bad value.
std::vector<estimator::JointFriction> ReadNominalFriction(const std::string& path,
                                                          const dynamics::Model& model);
// The same from a parsed document (file name from the document).
std::vector<std::string> ApplyNominalParameters(const config::Document& doc,
                                                dynamics::Model& model);
// Every ESTIMATED link's nominal π in `model` (the URDF's, or robot.parameters' for the links in
// `from_parameters`) must keep the estimator's margin from the point mass: λ_min(J) >
// dynamics::kConsistencyMargin · λ_max(J) (inertia.hpp). A thinner one is refused with a
// config::ConfigError naming the file, the link, λ_min(J) and the threshold and saying what to do;
// with cfg.repair_inertia it is moved into the margin (dynamics::InflateToMargin: mass and inertia
// raised by ≤ 2e-6 of J's scale, first moment kept), with a warning in model.warnings. Links that
// are not estimated are left alone: the dynamics takes a point mass (J semidefinite) as it is.
void CheckEstimatedNominals(const PluginConfig& cfg,
                            const std::vector<std::string>& from_parameters,
                            dynamics::Model& model);
// The sections alone, without the URDF's checks (file names resolved against `config_dir`).
PluginConfig ParsePluginConfig(const config::Node& root, const std::string& config_dir);

}  // namespace heft::plugin

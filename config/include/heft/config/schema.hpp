// The keys of heft's configuration file, every section in one table: the parsers refuse any other
// key with these lists (Node::AllowOnly), and test_config_schema checks config/README.md (and
// drivers/README.md for `drivers:`) against them, key by key, both ways. A new key is one entry
// here, the line that reads it in its section's parser, and its line in the README.
#pragma once

#include <span>
#include <string_view>

namespace heft::config::schema {

using Keys = std::span<const char* const>;

// The top level.
inline constexpr const char* kRoot[] = {"robot",   "drivers", "estimator",
                                        "backend", "host",    "simulation"};
// robot: (config/src/plugin_config.cpp)
inline constexpr const char* kRobot[] = {"urdf", "floating_base", "repair_inertia", "parameters"};
// drivers: (drivers/src/driver_config.cpp)
inline constexpr const char* kDrivers[] = {"timeout_ms",
                                           "buses",
                                           "joints",
                                           "ft_cells",
                                           "imu",
                                           "joints_from",
                                           "ft_cells_from",
                                           "torque_stuck_ms",
                                           "torque_stuck_velocity",
                                           "error_frame_window_ms",
                                           "error_frame_limit"};
inline constexpr const char* kDriversJoint[] = {"name",
                                                "bus",
                                                "device",
                                                "node",
                                                "encoder_node",
                                                "torque_node",
                                                "counts_per_rev",
                                                "zero_offset",
                                                "direction",
                                                "velocity_lsb",
                                                "heartbeat_timeout_ms",
                                                "torque_offset",
                                                "nm_per_count",
                                                "torque_direction",
                                                "timeout_ms",
                                                "motor_id",
                                                "reply_id",
                                                "p_max",
                                                "v_max",
                                                "t_max",
                                                "torque_constant",
                                                "gear_ratio",
                                                "torque_uncertainty",
                                                "tpdos",
                                                "rated_torque",
                                                "rated_current"};
inline constexpr const char* kDriversJointTpdo[] = {"cob_id", "map"};
inline constexpr const char* kDriversFtCell[] = {"frame",       "bus",  "base_id",
                                                 "calibration", "tare", "timeout_ms"};
inline constexpr const char* kDriversImu[] = {"bus",      "base_id",   "frame",
                                              "gyro_lsb", "accel_lsb", "timeout_ms"};
// estimator: (config/src/plugin_config.cpp)
inline constexpr const char* kEstimator[] = {"links",
                                             "filter",
                                             "measurement",
                                             "noise",
                                             "initial_sigma",
                                             "process_noise",
                                             "gating",
                                             "rate_limits",
                                             "handoff_confidence",
                                             "handoff_return_after",
                                             "consider_nominal",
                                             "consider_gain",
                                             "load_shape",
                                             "load_extent",
                                             "shape_memory",
                                             "nominal_uncertainty",
                                             "calibration",
                                             "difference_samples",
                                             "contact_force",
                                             "wait_for_walking",
                                             "control_period",
                                             "min_mass_fraction",
                                             "max_added_mass",
                                             "max_com_distance",
                                             "base_acceleration",
                                             "prior_time_constant",
                                             "link_priors",
                                             "contact_frames",
                                             "stiction_band",
                                             "measurement_lowpass",
                                             "parameter_frame"};
inline constexpr const char* kEstimatorLinkPriors[] = {"link", "initial_sigma", "process_noise",
                                                       "prior_time_constant", "parameter_frame"};
inline constexpr const char* kEstimatorNoise[] = {"joint_torque",
                                                  "joint_torque_scale",
                                                  "base_force",
                                                  "base_torque",
                                                  "ft",
                                                  "gyro",
                                                  "accelerometer",
                                                  "joint_velocity",
                                                  "acceleration_inflation",
                                                  "base_velocity"};
inline constexpr const char* kEstimatorNoiseFt[] = {"frame", "force", "moment"};
inline constexpr const char* kEstimatorGating[] = {"enabled",
                                                   "confidence",
                                                   "gamma",
                                                   "release_after",
                                                   "quick_release_after",
                                                   "inflation",
                                                   "open_for",
                                                   "max_covariance_factor",
                                                   "hold_after"};
inline constexpr const char* kEstimatorRateLimits[] = {"mass", "first_moment", "inertia"};
inline constexpr const char* kEstimatorNominalUncertainty[] = {"mass", "com", "inertia", "turn"};
inline constexpr const char* kEstimatorCalibration[] = {"enabled", "window", "max_speed",
                                                        "max_motion", "timeout"};
// host: (config/src/host_config.cpp)
inline constexpr const char* kHost[] = {
    "plugin",          "telemetry",       "log_file",        "shm",         "realtime",
    "recording",       "framework_input", "control_socket",  "persistence", "candump",
    "counters_period", "allow_root",      "framework_joints"};
inline constexpr const char* kHostRotatingFile[] = {"path", "max_bytes", "keep", "append"};
inline constexpr const char* kHostRealtime[] = {
    "priority", "cpus", "driver_cpus", "control_cpus", "lock_memory", "cpu_dma_latency_us"};
inline constexpr const char* kHostRecording[] = {"enabled", "path"};
inline constexpr const char* kHostFrameworkInput[] = {"name", "base", "timeout_ms"};
inline constexpr const char* kHostFrameworkJoints[] = {"name", "timeout_ms"};
inline constexpr const char* kHostPersistence[] = {"file", "max_age", "interval",
                                                   "covariance_inflation"};
// simulation: (sim/src/sim_config.cpp; heft-sim only)
inline constexpr const char* kSimulation[] = {
    "scenario", "adaptation", "duration_scale", "lockstep", "seed",       "walking_after",
    "noise",    "deviations", "faults",         "candump",  "load_after", "controller_model",
    "roles",    "drives"};
// simulation.drives: the robot's actuators beyond its URDF (sim/src/sim_config.cpp)
inline constexpr const char* kSimulationDrives[] = {"damping"};
inline constexpr const char* kSimulationNoise[] = {
    "joint_torque", "torque_bias", "velocity",  "force",      "moment",  "force_bias",
    "gyro",         "accel",       "gyro_bias", "accel_bias", "attitude"};
// simulation.roles: the robot's role map (sim/src/roles.cpp)
inline constexpr const char* kSimulationRoles[] = {"pelvis",   "torso",     "left_leg", "right_leg",
                                                   "left_arm", "right_arm", "payload"};
inline constexpr const char* kSimulationRolesLeg[] = {"hip_pitch", "knee", "ankle_pitch", "foot"};
inline constexpr const char* kSimulationRolesArm[] = {"shoulder_roll", "elbow", "forearm", "hand"};
inline constexpr const char* kSimulationRolesPayload[] = {"arm"};
inline constexpr const char* kSimulationDeviations[] = {"preset",
                                                        "seed",
                                                        "mass",
                                                        "com",
                                                        "inertia",
                                                        "coulomb",
                                                        "viscous",
                                                        "torque_offset",
                                                        "torque_gain",
                                                        "ft_force_offset",
                                                        "ft_moment_offset",
                                                        "gyro_bias",
                                                        "accelerometer_bias"};
// Each fault takes `device` and a subset of the rest (which: sim/src/sim_config.cpp, and
// config/README.md, "Simulated faults").
inline constexpr const char* kSimulationFault[] = {"device", "name",   "probability", "from",
                                                   "to",     "repeat", "period",      "step"};

// Every map of the file: its key path ("[]" for the elements of a list) and its keys. A key whose
// value is a map of its own has a row of its own.
struct Section {
  std::string_view path;
  Keys keys;
};
inline constexpr Section kSections[] = {
    {"", kRoot},
    {"robot", kRobot},
    {"drivers", kDrivers},
    {"drivers.joints[]", kDriversJoint},
    {"drivers.joints[].tpdos[]", kDriversJointTpdo},
    {"drivers.ft_cells[]", kDriversFtCell},
    {"drivers.imu", kDriversImu},
    {"estimator", kEstimator},
    {"estimator.noise", kEstimatorNoise},
    {"estimator.noise.ft[]", kEstimatorNoiseFt},
    {"estimator.link_priors[]", kEstimatorLinkPriors},
    {"estimator.gating", kEstimatorGating},
    {"estimator.rate_limits", kEstimatorRateLimits},
    {"estimator.nominal_uncertainty", kEstimatorNominalUncertainty},
    {"estimator.calibration", kEstimatorCalibration},
    {"host", kHost},
    {"host.telemetry", kHostRotatingFile},
    {"host.candump", kHostRotatingFile},
    {"host.realtime", kHostRealtime},
    {"host.recording", kHostRecording},
    {"host.framework_input", kHostFrameworkInput},
    {"host.framework_joints", kHostFrameworkJoints},
    {"host.persistence", kHostPersistence},
    {"simulation", kSimulation},
    {"simulation.noise", kSimulationNoise},
    {"simulation.deviations", kSimulationDeviations},
    {"simulation.drives", kSimulationDrives},
    {"simulation.faults[]", kSimulationFault},
    {"simulation.roles", kSimulationRoles},
    {"simulation.roles.left_leg", kSimulationRolesLeg},
    {"simulation.roles.right_leg", kSimulationRolesLeg},
    {"simulation.roles.left_arm", kSimulationRolesArm},
    {"simulation.roles.right_arm", kSimulationRolesArm},
    {"simulation.roles.payload", kSimulationRolesPayload},
};

}  // namespace heft::config::schema

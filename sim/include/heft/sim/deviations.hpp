// The simulated robot is not its URDF: seeded deviations of the plant heft-sim simulates from the
// URDF the service is given (simulation.deviations; config/README.md). Per body its mass, centre of
// mass and rotational inertia (kept physically consistent); per joint Coulomb and viscous friction
// (in the plant: the torque sensors measure the actuator's torque, friction included) and the
// torque sensor's offset and gain error; per F/T cell force and moment offsets; the base IMU's gyro
// and accelerometer biases. Every quantity is drawn from its own random stream, named by its kind
// and the body, joint or cell it belongs to: the same seed gives the same robot, whatever else the
// configuration says. Set-up only: these functions allocate and throw.
#pragma once

#include <mujoco/mujoco.h>

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "heft/sim/mujoco_model.hpp"

namespace heft::sim {

using sim::Vector10;

// The largest deviation of each kind. Signed quantities are drawn uniformly in [−x, x], friction
// (never negative) in [0, x].
struct DeviationMagnitudes {
  double mass = 0.0;                // relative: m' = m (1 + δ)
  double com = 0.0;                 // m, per axis of the link frame
  double inertia = 0.0;             // relative, each principal moment about the centre of mass
  double coulomb = 0.0;             // N·m
  double viscous = 0.0;             // N·m·s/rad
  double torque_offset = 0.0;       // N·m
  double torque_gain = 0.0;         // relative: τ_sensed = (1 + g) τ + offset
  double ft_force_offset = 0.0;     // N, per axis of the cell
  double ft_moment_offset = 0.0;    // N·m, per axis of the cell
  double gyro_bias = 0.0;           // rad/s, per axis of the IMU
  double accelerometer_bias = 0.0;  // m/s², per axis of the IMU

  // `ideal`: the URDF exactly (every magnitude 0). `default`: the magnitudes chosen for the
  // inertial parameters and plausible ones for a ~90 kg humanoid's friction and sensors
  // (config/README.md says why).
  static DeviationMagnitudes Ideal() { return {}; }
  static DeviationMagnitudes Default();
  bool inertial() const { return mass > 0.0 || com > 0.0 || inertia > 0.0; }
  bool friction() const { return coulomb > 0.0 || viscous > 0.0; }
};

// simulation.deviations as configured (absent: ideal).
struct DeviationConfig {
  std::string preset = "ideal";  // ideal | default
  std::uint64_t seed = 1;
  DeviationMagnitudes magnitudes;  // the preset's, with the configured overrides
};

struct BodyDeviation {
  std::string name;  // the URDF link (MuJoCo body; links on fixed joints merged into it)
  int mujoco_body = 0;
  Vector10 urdf = Vector10::Zero();   // π in the URDF (heft's order, about the link origin)
  Vector10 truth = Vector10::Zero();  // π of the simulated body (before any scenario payload)
};

struct JointDeviation {
  std::string name;
  double coulomb = 0.0, viscous = 0.0;            // N·m, N·m·s/rad
  double torque_offset = 0.0, torque_gain = 0.0;  // N·m, relative
};

struct FtDeviation {
  std::string frame;
  Eigen::Vector3d force_offset = Eigen::Vector3d::Zero();   // N, cell axes
  Eigen::Vector3d moment_offset = Eigen::Vector3d::Zero();  // N·m, cell axes
};

// What was drawn: the simulated robot's truth next to its URDF.
struct RobotDeviations {
  DeviationConfig config;
  std::vector<BodyDeviation> bodies;   // every MuJoCo body with mass, in MuJoCo's order
  std::vector<JointDeviation> joints;  // the drivers' joint order
  std::vector<FtDeviation> ft_cells;   // the drivers' F/T cell order
  bool imu = false;
  Eigen::Vector3d gyro_bias = Eigen::Vector3d::Zero();           // rad/s, IMU axes
  Eigen::Vector3d accelerometer_bias = Eigen::Vector3d::Zero();  // m/s², IMU axes
  // The body of this link, or nullptr.
  const BodyDeviation* body(std::string_view name) const;
};

// One body's deviation from seven unit draws u ∈ [−1, 1]: mass × (1 + mass·u₀), centre of mass +
// com·(u₁, u₂, u₃), and the mass distribution's second moments along the principal axes of inertia
// (Σ = ½ tr(I_c) 1 − I_c) scaled by 1 + inertia·u₄₋₆ — each principal moment (a sum of two of them)
// then stays within ±inertia of its URDF value, and the triangle inequality holds by construction.
// The inertia about the centre of mass does not follow the mass (the quantities deviate
// independently). A magnitude of 0 leaves its quantity exactly as it was.
Vector10 DeviateBody(const Vector10& pi, const DeviationMagnitudes& magnitudes,
                     const std::array<double, 7>& u);

// Draws the deviations of the bodies of `model` (a URDF loaded into MuJoCo), of `joints`, of the
// F/T cells `ft_frames` and, when `imu`, of the base IMU.
RobotDeviations DrawDeviations(const DeviationConfig& config, const mjModel* model,
                               std::span<const std::string> joints,
                               std::span<const std::string> ft_frames, bool imu);

// The extremes of what was drawn (heft-sim's log line, the tests).
struct DeviationExtremes {
  double mass = 0.0;  // largest |m'/m − 1|
  std::string mass_body;
  double com = 0.0;  // largest per-axis |c' − c|, m
  std::string com_body;
  double inertia_low = 1.0, inertia_high = 1.0;  // generalized eigenvalues of (I_c', I_c)
  double coulomb_low = 0.0, coulomb_high = 0.0, viscous_low = 0.0, viscous_high = 0.0;
  double torque_offset = 0.0, torque_gain = 0.0;  // largest |·|
  double ft_force_offset = 0.0, ft_moment_offset = 0.0;
  double gyro_bias = 0.0, accelerometer_bias = 0.0;
};
DeviationExtremes Extremes(const RobotDeviations& d);
// The generalized eigenvalues λ of I_c' x = λ I_c x (inertia about the centre of mass): how far
// the deviated inertia is from the URDF's in every direction at once.
Eigen::Vector3d InertiaRatios(const Vector10& urdf, const Vector10& truth);

// The run's log: a summary line, then one line per body, joint, F/T cell and the IMU.
std::vector<std::string> DeviationLogLines(const RobotDeviations& d);
// The truth as YAML (`<telemetry>.truth.yaml`): per body URDF and true mass, CoM, inertia and π,
// per joint friction and torque-sensor errors, per F/T cell offsets, the IMU's biases.
// `payload_links`: the links whose telemetry truth adds the scenario's payload to the body's truth.
std::string DeviationsYaml(const RobotDeviations& d, std::string_view scenario,
                           std::span<const std::string> payload_links);

}  // namespace heft::sim

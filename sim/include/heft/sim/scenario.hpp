// The paper's scenarios (Foster et al., section IV, Tables I-II, Figs. 3, 5, 7, 8) as named,
// runnable things: robot, payload schedule (the true π of the loaded link over time), controller,
// the links the estimator should estimate, and the task errors to record.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "heft/sim/controller.hpp"
#include "heft/sim/mujoco_model.hpp"
#include "heft/sim/roles.hpp"

namespace heft::sim {

/// Total mass of a link over time (Table I): offset + amplitude × wave(2π f t).
struct MassWaveform {
  enum class Shape : std::uint8_t { kConstant, kSine, kSquare, kSineThenSquare };
  Shape shape = Shape::kConstant;
  double offset = 0.0;       ///< [kg]
  double amplitude = 0.0;    ///< [kg]
  double frequency = 0.0;    ///< [Hz]
  double switch_time = 0.0;  ///< [s] kSineThenSquare: sine before, square after
  [[nodiscard]] double Mass(double t) const noexcept;
};

/// The true π of one link: its nominal π scaled to the waveform's mass (centre of mass kept,
/// inertia scaled with the mass), plus a rigidly attached body (e.g. a dumbbell). Before `start`
/// the link is unloaded (its nominal π); the waveform and `attach_time` count from `start`.
struct Payload {
  std::string link;
  Vector10 nominal = Vector10::Zero();  ///< the link's π in the URDF
  MassWaveform mass;
  Vector10 attached = Vector10::Zero();  ///< added π (link frame)
  double attach_time = 0.0;              ///< [s] after `start`: `attached` is held from then on
  double start = 0.0;                    ///< [s] the load's arrival
  [[nodiscard]] Vector10 At(double t) const noexcept;
};

struct ScenarioOptions {
  bool adaptation = true;       ///< false: the controller ignores every hand-off
  double duration_scale = 1.0;  ///< CI's shortened form: < 1
  std::uint64_t seed = 0;       ///< 0: start at the reference pose; otherwise the joints outside
                                ///< the legs start up to ±0.05 rad away from it (deterministic)
  std::string robots_dir;       ///< directory of the URDFs; empty: the source tree's config/robots
  /// The robot's URDF (heft-sim: the configuration's robot.urdf): fixed-base for forearm-load and
  /// dumbbell-curl, floating for the others. Empty: robots_dir's heft_humanoid_fixed.urdf /
  /// heft_humanoid.urdf. Its proportions (legs, sole, wrist, link masses) are measured on it.
  std::string urdf_path;
  /// The robot's role map (simulation.roles: its pelvis, torso, legs, arms and payload arm).
  /// Empty: with urdf_path empty, robots_dir's heft_humanoid_roles.yaml (the reference
  /// humanoid's); otherwise refused.
  RoleMap roles;
  /// Joint order of the state samples the controller will receive; empty: the URDF's order as
  /// MuJoCo loads it (the scenarios' Plant).
  std::vector<std::string> state_joint_names;
  /// [s] The operator's procedure: the robot holds its pose (stands still), unloaded, for this
  /// long — the estimator's start-up calibration — and then the scenario runs as it would from
  /// t = 0 (payload, task, gait all shifted; the duration grows by as much). 0: from t = 0.
  double load_after = 0.0;
  /// False: the robot has no foot F/T cells (floating base; the controller then takes contact
  /// from the feet's kinematics and the plant measures no foot wrench).
  bool foot_sensors = true;
  /// [N·m·s/rad] The robot's drives' viscous damping on every joint (simulation.drives.damping;
  /// Plant::SetDriveDamping): a property of the actuators that the URDF does not carry. 0: none.
  double drive_damping = 0.0;
};

/// A foot's sole (the foot link's URDF collision box: the centre of its bottom face and its half
/// sizes), in the foot frame. The defaults are heft_humanoid's.
struct Sole {
  Eigen::Vector3d centre{0.03, 0.0, -0.07};
  double half_length = 0.12, half_width = 0.06;
};

struct Scenario {
  std::string name;
  std::string description;
  double duration = 0.0;  ///< [s], already scaled
  std::string urdf_path;
  bool floating_base = false;
  std::vector<Payload> payloads;
  std::vector<std::string> estimated_links;
  std::vector<std::string> wrench_links;  ///< links carrying a six-axis cell (sample order)
  std::vector<std::string> joint_names;   ///< state sample joint order
  std::vector<double> initial_joints;     ///< sample order
  std::string scored_error;               ///< the task error of Table II
  Sole sole;                              ///< floating base: the feet's soles (from the URDF)
  double fall_height = 0.6;               ///< [m] floating base: a pelvis below this has fallen
  double drive_damping = 0.0;             ///< [N·m·s/rad] the plant's (ScenarioOptions)
  std::unique_ptr<Controller> controller;
};

/// The registered names: forearm-load, torso-load, dumbbell-curl, step-in-place, walk,
/// standing-curl, excite.
std::vector<std::string> ScenarioNames();

/// Builds a scenario. Unknown names throw std::invalid_argument listing the known ones.
Scenario MakeScenario(std::string_view name, const ScenarioOptions& options);

// ------------------------------------------------------------------------------------------------
// Standalone runs on the scenarios' Plant.

enum class HandOff : std::uint8_t {
  kNone,   ///< nothing is handed on (nominal parameters throughout)
  kTruth,  ///< every 3 ms the true π of the payload links, as a perfect estimator would hand on
};

struct RunOptions {
  HandOff hand_off = HandOff::kNone;
  std::string csv_path;     ///< empty: no CSV
  int csv_decimation = 10;  ///< one row per this many 1 ms ticks
};

struct RunResult {
  double simulated = 0.0;  ///< [s]
  double wall = 0.0;       ///< [s]
  std::vector<std::string> error_names;
  std::vector<double> rmse;        ///< per error
  std::vector<double> max_abs;     ///< per error
  double scored_rmse = 0.0;        ///< RMSE of Scenario::scored_error
  bool fell = false;               ///< floating base: pelvis below fall_height at any time
  bool controller_failed = false;  ///< Compute refused, or the simulation went unstable (run cut)
  int touchdowns = 0;
  /// Steps on which a commanded joint torque was beyond its URDF effort limit (Plant counts them).
  std::int64_t steps_beyond_effort = 0;
  /// Centre of pressure of each loaded foot (fz > 100 N, after 0.5 s) relative to its sole: the
  /// largest of |x − x_c| / half-length and |y| / half-width (≤ 1: inside the sole).
  double max_cop_fraction = 0.0;
  std::array<double, 3> final_base_position{};  ///< floating base: where the pelvis ended
  double peak_foot_force = 0.0;                 ///< [N] largest vertical foot force seen
  double peak_foot_force_rate =
      0.0;  ///< [N/s] largest 1 ms rise of a vertical foot force after 0.5 s
};

RunResult RunScenario(Scenario& scenario, const RunOptions& options);

}  // namespace heft::sim

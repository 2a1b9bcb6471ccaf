// The scenarios' own simulated robot: MuJoCo stepping the URDF at 1 kHz with joint torques applied
// directly, a floor for the floating-base robot, per-link inertial parameters that can be changed
// while running (the payload), and a hal::RobotStateSample out. It is the reference plant for the
// standalone runner (heft-scenario), for the scenario tests (tests/sim) and, under heft-sim, for
// the simulated robot whose sensors arrive as CAN frames (sim/src/sim_backend.cpp).
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "heft/hal/robot_state.hpp"
#include "heft/sim/mujoco_model.hpp"

namespace heft::sim {

// What an IMU rigidly mounted on the floating base measures after a step: frame I's pose in the
// base link B (R_BI, p_BI) is the caller's (a massless URDF frame: MuJoCo merges it into B).
struct ImuTruth {
  Eigen::Vector3d w_I = Eigen::Vector3d::Zero();  // angular velocity of I, in I [rad/s]
  Eigen::Vector3d f_I = Eigen::Vector3d::Zero();  // specific force (a − g) at I's origin, in I
  Eigen::Quaterniond q_WI = Eigen::Quaterniond::Identity();  // attitude I → world (gravity-aligned)
};

class Plant {
 public:
  /// `foot_links`: links whose contact wrench with the floor is reported (in their frame, at their
  /// origin), in hal::RobotStateSample::wrenches order. Throws on unknown links.
  Plant(const std::string& urdf_path, std::span<const std::string> foot_links,
        double timestep = 0.001);
  Plant(const Plant&) = delete;
  Plant& operator=(const Plant&) = delete;

  [[nodiscard]] bool floating_base() const noexcept { return floating_; }
  [[nodiscard]] double time() const noexcept { return data_->time; }
  [[nodiscard]] double timestep() const noexcept { return model_->opt.timestep; }
  [[nodiscard]] int num_joints() const noexcept { return num_joints_; }
  [[nodiscard]] std::vector<std::string> joint_names() const;
  [[nodiscard]] int body(const std::string& link) const;
  [[nodiscard]] const std::string& source() const noexcept { return source_; }

  /// Initial configuration: joints by position (state order), base pose (floating only) and zero
  /// velocity. The base height is chosen so that the lowest foot touches the floor when
  /// `drop_to_floor` is set.
  void Reset(std::span<const double> joint_positions, bool drop_to_floor);

  /// The true π of a link, changed while running. False if not physically consistent.
  bool SetLinkParameters(int body, const Vector10& pi) noexcept;
  /// The drives' viscous damping [N·m·s/rad] on every joint, set-up only: what the robot's
  /// actuators take in proportion to the velocity (back-EMF, gearbox), a property of the robot
  /// (simulation.drives) that a URDF does not carry. SetJointFriction's viscous friction adds to
  /// it.
  void SetDriveDamping(double damping);
  /// Joint friction (state joint order), set-up only: MuJoCo's dry friction (`dof_frictionloss`,
  /// a constraint: ±coulomb while the joint slides, up to it while it sticks) and viscous damping
  /// (`dof_damping` = the drive's damping + viscous, integrated implicitly: the torque is that
  /// coefficient × the velocity after the step). The applied joint torques (what Sample()
  /// reports) include what friction takes.
  void SetJointFriction(int joint, double coulomb, double viscous);
  [[nodiscard]] Vector10 LinkParameters(int body) const noexcept;

  /// One step with these joint torques (state joint order), each saturated at its drive's effort
  /// limit as a real drive saturates (a command beyond it is counted: beyond_effort_steps).
  /// Sample() reports the torques applied.
  void Step(std::span<const double> joint_torques) noexcept;
  /// The drives' effort limits (state joint order) [N·m or N], the URDF's `<limit effort>`; +inf
  /// where it gives none.
  [[nodiscard]] const std::vector<double>& effort_limits() const noexcept { return effort_; }
  /// Steps on which each joint's commanded torque was beyond its effort limit (state joint order),
  /// and steps on which any joint's was, since construction: what the drive could not deliver.
  [[nodiscard]] const std::vector<std::int64_t>& beyond_effort_steps() const noexcept {
    return beyond_effort_steps_;
  }
  [[nodiscard]] std::int64_t steps_beyond_effort() const noexcept { return steps_beyond_effort_; }
  /// The state sample after the last step (measured torque = applied torque).
  void Sample(hal::RobotStateSample& out) const noexcept;
  /// The floating base's acceleration over the last step, [a_WB in W; ω̇_WB in B] (model.hpp's
  /// convention): the free joint's velocity change divided by the step, i.e. exactly the
  /// acceleration the integrator applied (with joint damping MuJoCo's semi-implicit Euler step
  /// uses a corrected acceleration, not mjData::qacc). Zero after Reset; floating base only.
  [[nodiscard]] const Eigen::Matrix<double, 6, 1>& base_acceleration() const noexcept {
    return base_acceleration_;
  }
  /// The base IMU's true readings for the state after the last step (same instant as Sample()):
  /// ω and q_WI of the state after the step, the specific force from base_acceleration() (the
  /// step that led to it), transported from B's origin to p_BI with ω and ω̇. Floating base only.
  [[nodiscard]] ImuTruth Imu(const Eigen::Matrix3d& R_BI,
                             const Eigen::Vector3d& p_BI) const noexcept;

  /// MuJoCo found the simulation unstable (and reset it): the run is void.
  [[nodiscard]] bool unstable() const noexcept { return data_->warning[mjWARN_BADQACC].number > 0; }
  [[nodiscard]] const mjModel* model() const noexcept { return model_.get(); }
  [[nodiscard]] const mjData* data() const noexcept { return data_.get(); }

 private:
  std::string source_;
  MjModelPtr model_;
  MjDataPtr data_;
  bool floating_ = false;
  int num_joints_ = 0;
  int joint_q0_ = 0, joint_v0_ = 0;
  std::vector<int> foot_bodies_;
  std::vector<double> last_torque_;
  std::vector<double> effort_;                     // [N·m or N] per joint, +inf: no limit
  std::vector<std::int64_t> beyond_effort_steps_;  // per joint
  std::int64_t steps_beyond_effort_ = 0;           // steps with any joint beyond its limit
  double drive_damping_ = 0.0;                     // [N·m·s/rad] SetDriveDamping
  Eigen::Matrix<double, 6, 1> base_acceleration_ = Eigen::Matrix<double, 6, 1>::Zero();
};

}  // namespace heft::sim

// The controllers' own rigid-body model of the robot: mass matrix, bias forces, point Jacobians
// and their drift, with the inertial parameters of chosen links replaceable every tick.
//
// Conventions are heft::dynamics's (and MuJoCo's): floating base q = [p_W (3), quat wxyz base→world
// (4), joints], v = [linear velocity of the base origin in world (3), angular velocity in the base
// frame (3), joints]. Jacobians are 6 × nv with rows [linear; angular], both in world axes.
//
// Backed by heft's own rigid-body dynamics (heft::dynamics: CRBA, RNEA, frame Jacobians) on a
// private copy of the model; the plant (MuJoCo) is independent of it. Construction allocates and
// throws; everything else is noexcept and allocation-free.
#pragma once

#include <Eigen/Core>
#include <string>
#include <string_view>
#include <vector>

#include "heft/dynamics/dynamics.hpp"
#include "heft/dynamics/model.hpp"
#include "heft/sim/mujoco_model.hpp"

namespace heft::sim {

using Vector6 = Eigen::Matrix<double, 6, 1>;
using Matrix6X = Eigen::Matrix<double, 6, Eigen::Dynamic>;

struct Pose {
  Eigen::Matrix3d R = Eigen::Matrix3d::Identity();
  Eigen::Vector3d p = Eigen::Vector3d::Zero();
};

class ControlModel {
 public:
  explicit ControlModel(const std::string& urdf_path);
  ControlModel(const ControlModel&) = delete;
  ControlModel& operator=(const ControlModel&) = delete;

  [[nodiscard]] int nq() const noexcept { return model_.nq; }
  [[nodiscard]] int nv() const noexcept { return model_.nv; }
  [[nodiscard]] bool floating_base() const noexcept { return floating_; }
  [[nodiscard]] const std::string& source() const noexcept { return source_; }

  /// Set-up look-ups; they throw std::invalid_argument naming the unknown name and the known ones.
  [[nodiscard]] int body(std::string_view link) const;
  [[nodiscard]] int joint_v_index(std::string_view joint) const;
  /// Names of the 1-DoF joints in v order.
  [[nodiscard]] std::vector<std::string> joint_names() const;
  /// The drives' effort limits in v order [N·m or N], the URDF's `<limit effort>`; +inf where it
  /// gives none and on the floating base's six. Set-up.
  [[nodiscard]] Eigen::VectorXd effort_limits() const;

  [[nodiscard]] Vector10 parameters(int body) const noexcept;
  /// Replaces a body's π (see mujoco_model.hpp); false (and unchanged) if not physically
  /// consistent.
  bool SetParameters(int body, const Vector10& pi) noexcept;
  [[nodiscard]] double total_mass() const noexcept;

  /// Kinematics, mass matrix and bias forces h = C(q, v) v + g(q) at (q, v).
  void Update(const Eigen::Ref<const Eigen::VectorXd>& q,
              const Eigen::Ref<const Eigen::VectorXd>& v) noexcept;
  [[nodiscard]] const Eigen::MatrixXd& M() const noexcept { return M_; }
  [[nodiscard]] const Eigen::VectorXd& h() const noexcept { return h_; }

  /// After Update: pose of a body frame in the world, centre of mass of the whole robot.
  [[nodiscard]] Pose BodyPose(int body) const noexcept;
  [[nodiscard]] Eigen::Vector3d CenterOfMass() const noexcept;
  /// After Update: velocity of the centre of mass, J_com v.
  [[nodiscard]] Eigen::Vector3d CenterOfMassVelocity() noexcept;
  /// After Update: Jacobian of the point p_B (body coordinates) fixed in a body.
  void PointJacobian(int body, const Eigen::Vector3d& p_B, Eigen::Ref<Matrix6X> J) noexcept;
  /// After Update: J̇ v of that point ([linear; angular] acceleration at v̇ = 0), by a forward
  /// difference of the Jacobian along v (one extra kinematics pass).
  Vector6 PointDriftAcceleration(int body, const Eigen::Vector3d& p_B) noexcept;

 private:
  // Jacobian of p_B in body `body` from the body's frame Jacobian (world-aligned at its origin).
  void Jacobian(const dynamics::Workspace& ws, int body, const Eigen::Vector3d& p_B,
                Eigen::Ref<Matrix6X> J) const noexcept;

  std::string source_;
  dynamics::Model model_;
  dynamics::Workspace ws_;
  dynamics::Workspace ws_shifted_;  // kinematics at q + ε v for the Jacobian drift
  std::vector<int> body_frame_;     // frame index of each body's own link
  bool floating_ = false;
  Eigen::MatrixXd M_;
  Eigen::VectorXd h_;
  Matrix6X J0_, J1_;
  Eigen::VectorXd q_, v_, q_shifted_, zero_;
};

}  // namespace heft::sim

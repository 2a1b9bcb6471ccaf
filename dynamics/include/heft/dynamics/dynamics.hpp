// Rigid-body algorithms as free functions over a const Model and a preallocated Workspace.
//
// Everything here except the Workspace constructor is allocation-free and noexcept; sizes are the
// caller's contract (q: nq, v and a: nv, tau: nv, M: nv × nv, J: 6 × nv), checked by asserts in
// debug builds. Conventions are MuJoCo's; see model.hpp.
#pragma once

#include <Eigen/Core>
#include <span>
#include <vector>

#include "heft/dynamics/model.hpp"

namespace heft::dynamics {

using Matrix6 = Eigen::Matrix<double, 6, 6>;
using Matrix6x10 = Eigen::Matrix<double, 6, 10>;
using Matrix6X = Eigen::Matrix<double, 6, Eigen::Dynamic>;

// Per-body scratch, sized once from the model. Not shared between threads.
struct Workspace {
  explicit Workspace(const Model& model);

  // Pose of each body B in its parent P (world W for the root): R_PB, p_PB (x_P = R_PB x_B +
  // p_PB), valid after any algorithm taking q.
  std::vector<Eigen::Matrix3d> R;
  std::vector<Eigen::Vector3d> p;
  // Pose of each body in the world: R_WB, p_WB, valid after ForwardKinematics.
  std::vector<Eigen::Matrix3d> oR;
  std::vector<Eigen::Vector3d> op;
  // Body-frame spatial velocity V_WB_B, acceleration (gravity included) and force, expressed in B.
  std::vector<Vector6> v, a, f;
  std::vector<Vector10> Ic;  // composite inertias as π (CRBA)
};

// Body poses in the world (Workspace::oR, op) and relative poses.
void ForwardKinematics(const Model& model, Workspace& ws,
                       const Eigen::Ref<const Eigen::VectorXd>& q) noexcept;

// Pose of a frame F in the world, after ForwardKinematics: R = R_WF, p = p_WF.
struct Pose {
  Eigen::Matrix3d R;  // R_WF
  Eigen::Vector3d p;  // p_WF
};
Pose FramePose(const Model& model, const Workspace& ws, int frame) noexcept;

// Inverse dynamics: tau = M(q) a + C(q, v) v + g(q), with gravity; no external forces.
void Rnea(const Model& model, Workspace& ws, const Eigen::Ref<const Eigen::VectorXd>& q,
          const Eigen::Ref<const Eigen::VectorXd>& v, const Eigen::Ref<const Eigen::VectorXd>& a,
          Eigen::Ref<Eigen::VectorXd> tau) noexcept;

// Joint-space mass matrix (full, symmetric).
void Crba(const Model& model, Workspace& ws, const Eigen::Ref<const Eigen::VectorXd>& q,
          Eigen::Ref<Eigen::MatrixXd> M) noexcept;

// Jacobian of a frame, after ForwardKinematics: rows [linear velocity of the frame origin;
// angular velocity], both in WORLD axes (Pinocchio's LOCAL_WORLD_ALIGNED).
void FrameJacobian(const Model& model, const Workspace& ws, int frame,
                   Eigen::Ref<Matrix6X> J) noexcept;

// out = Σ_i J_iᵀ λ_i: the generalized force of wrenches λ_i = F_Si = [f; n] applied BY THE
// ENVIRONMENT ON THE ROBOT at the origin of frame Si and expressed in Si's axes (as a force/torque
// cell in that frame reports them, hal::WrenchSample). Uses the relative poses of the last
// algorithm called with q (Rnea, ForwardKinematics, Crba or CondensedRegressor) — call it after one
// of them at the same q.
void ContactTerm(const Model& model, Workspace& ws, std::span<const int> frames,
                 std::span<const Vector6> wrenches, Eigen::Ref<Eigen::VectorXd> out) noexcept;

}  // namespace heft::dynamics

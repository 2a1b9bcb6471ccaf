// Spatial algebra on [linear; angular] 6-vectors with 3×3 blocks (private to the estimator).
// A child frame's pose in its parent is (R, p): x_parent = R x_child + p.
#pragma once

#include <Eigen/Geometry>

#include "heft/dynamics/dynamics.hpp"

namespace heft::dynamics {

namespace detail {
// The passes shared by RNEA, the regressor and the contact term (dynamics.cpp).
void RelativePoses(const Model& model, Workspace& ws,
                   const Eigen::Ref<const Eigen::VectorXd>& q) noexcept;
void ForwardPass(const Model& model, Workspace& ws, const Eigen::Ref<const Eigen::VectorXd>& v,
                 const Eigen::Ref<const Eigen::VectorXd>& a) noexcept;
// tau = Sᵀ f per joint, accumulating the body forces Workspace::f towards the root (consumes f).
void BackwardPass(const Model& model, Workspace& ws, Eigen::Ref<Eigen::VectorXd> tau) noexcept;
}  // namespace detail

inline Eigen::Matrix3d Skew(const Eigen::Vector3d& v) {
  Eigen::Matrix3d s;
  s << 0.0, -v.z(), v.y(), v.z(), 0.0, -v.x(), -v.y(), v.x(), 0.0;
  return s;
}

// A motion vector at the parent's origin in parent axes → at the child's origin in child axes.
inline Vector6 MotionToChild(const Eigen::Matrix3d& R, const Eigen::Vector3d& p, const Vector6& m) {
  Vector6 out;
  out.tail<3>().noalias() = R.transpose() * m.tail<3>();
  out.head<3>().noalias() = R.transpose() * (m.head<3>() + m.tail<3>().cross(p));
  return out;
}

// A force vector at the child's origin in child axes → at the parent's origin in parent axes.
inline Vector6 ForceToParent(const Eigen::Matrix3d& R, const Eigen::Vector3d& p, const Vector6& f) {
  Vector6 out;
  out.head<3>().noalias() = R * f.head<3>();
  out.tail<3>().noalias() = R * f.tail<3>();
  out.tail<3>() += p.cross(out.head<3>());
  return out;
}

// The same for a 6×N block of forces (column by column).
template <int N>
inline void ForceBlockToParent(const Eigen::Matrix3d& R, const Eigen::Vector3d& p,
                               Eigen::Matrix<double, 6, N>& F) {
  Eigen::Matrix<double, 3, N> lin = R * F.template topRows<3>();
  Eigen::Matrix<double, 3, N> ang = R * F.template bottomRows<3>();
  for (int c = 0; c < N; ++c) ang.col(c) += p.cross(lin.col(c));
  F.template topRows<3>() = lin;
  F.template bottomRows<3>() = ang;
}

// Spatial cross product of motions v × m.
inline Vector6 MotionCross(const Vector6& v, const Vector6& m) {
  Vector6 out;
  out.head<3>() = v.tail<3>().cross(m.head<3>()) + v.head<3>().cross(m.tail<3>());
  out.tail<3>() = v.tail<3>().cross(m.tail<3>());
  return out;
}

inline Vector6 MotionSubspace(const Body& b) {
  Vector6 s = Vector6::Zero();
  if (b.joint.type == JointType::kPrismatic)
    s.head<3>() = b.axis;
  else
    s.tail<3>() = b.axis;
  return s;
}

// The 6×6 spatial inertia at the body origin: [[m 1, −[h]ₓ], [[h]ₓ, I_o]].
inline Matrix6 SpatialInertia(const Vector10& pi) {
  Matrix6 I;
  const Eigen::Matrix3d sh = Skew(pi.segment<3>(1));
  I.topLeftCorner<3, 3>() = pi[0] * Eigen::Matrix3d::Identity();
  I.topRightCorner<3, 3>() = -sh;
  I.bottomLeftCorner<3, 3>() = sh;
  I.bottomRightCorner<3, 3>() = InertiaFromParameters(pi);
  return I;
}

}  // namespace heft::dynamics

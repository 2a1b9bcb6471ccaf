// The nominal model's own error as a covariance (EstimatorConfig::nominal_uncertainty), from the
// stated model of dynamics/nominal_uncertainty.hpp (heft-identify's prior is the same). The
// identified covariance robot.parameters may carry (dynamics::Body::covariance) is not used: it is
// tighter than the SDP result's real error (docs/handoff.md, "The nominal model's uncertainty").
// Set-up only.
#pragma once

#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <algorithm>

#include "heft/dynamics/inertia.hpp"
#include "heft/dynamics/nominal_uncertainty.hpp"

namespace heft::estimator {

using dynamics::NominalFactor;

inline Eigen::Matrix<double, 10, 10> NominalCovariance(const dynamics::Vector10& pi,
                                                       const dynamics::NominalSigmas& sigmas) {
  const Eigen::Matrix<double, 10, 10> f = NominalFactor(pi, sigmas);
  return f * f.transpose();
}

// A body's second moments about its CoM, Σ_c = ½ tr(I_c) 1 − I_c, in their principal axes (the
// box both load covariances below take their half-sides √(3 λᵢ / m) from).
inline Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> SecondMomentsAboutCom(
    const dynamics::RigidBodyInertia& body) {
  return Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(
      0.5 * body.inertia_com.trace() * Eigen::Matrix3d::Identity() - body.inertia_com);
}

// The covariance of π that a load of 1 kg and unknown shape adds to a link (EstimatorConfig::
// load_shape; scale it by Δm²): the load's second moments about its own centre of mass, Σ_ii
// along the link's axes uniform in [0, R²] (σ = R² / √12) and each product Σ_ij with σ / 2,
// independent. R is the larger of `load_extent` (EstimatorConfig::load_extent, m) and the link's
// own half-extent √(3 λ_max / m) from the nominal's second moments about its CoM (a box's
// half-side). In π the inertia I = tr(Σ)·1 − Σ moves, the mass and first moment do not.
inline Eigen::Matrix<double, 10, 10> LoadShapeCovariance(const dynamics::Vector10& nominal,
                                                         double load_extent = 0.0) {
  const dynamics::RigidBodyInertia body = dynamics::InertiaFromParameters10(nominal);
  const double second_moment_max = SecondMomentsAboutCom(body).eigenvalues().maxCoeff();
  const double own2 = body.mass > 0.0 ? 3.0 * second_moment_max / body.mass : 0.0;
  const double extent2 = std::max(own2, load_extent * load_extent);
  const double var = extent2 * extent2 / 12.0;
  Eigen::Matrix<double, 10, 10> c = Eigen::Matrix<double, 10, 10>::Zero();
  // Ixx = Σyy + Σzz, Iyy = Σxx + Σzz, Izz = Σxx + Σyy (π's indices 4, 7, 9): each the sum of two
  // independent diagonal terms, each pair sharing one.
  constexpr int kDiagonal[3] = {4, 7, 9};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) c(kDiagonal[i], kDiagonal[j]) = (i == j ? 2.0 : 1.0) * var;
  for (const int k : {5, 6, 8}) c(k, k) = 0.25 * var;  // Ixy, Ixz, Iyz = −Σxy, −Σxz, −Σyz
  return c;
}

// The covariance of a point load's π per kilogram about the link's own per-kilogram π, the load
// anywhere in the link's box (EstimatorConfig::shape_memory; scale it by f², f in kg): the box is
// centred at the nominal's CoM along its principal axes with half-sides √(3 λᵢ / m), λᵢ its second
// moments about the CoM, so that a uniform load over it has the link's own second moments. By
// Gauss–Legendre's three points per axis (exact for the quartic entries of v vᵀ). The mass row
// and column are zero (a load's mass is what the estimate knows).
inline Eigen::Matrix<double, 10, 10> LoadPlacementCovariance(const dynamics::Vector10& nominal) {
  const dynamics::RigidBodyInertia body = dynamics::InertiaFromParameters10(nominal);
  Eigen::Matrix<double, 10, 10> c = Eigen::Matrix<double, 10, 10>::Zero();
  if (!(body.mass > 0.0)) return c;
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> axes = SecondMomentsAboutCom(body);
  const Eigen::Vector3d half = (3.0 * axes.eigenvalues().cwiseMax(0.0) / body.mass).cwiseSqrt();
  constexpr double kNodes[3] = {-0.7745966692414834, 0.0, 0.7745966692414834};  // ±√(3/5)
  constexpr double kWeights[3] = {5.0 / 18.0, 8.0 / 18.0, 5.0 / 18.0};          // sum to 1
  dynamics::Vector10 mean = dynamics::Vector10::Zero();
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      for (int e = 0; e < 3; ++e) {
        const Eigen::Vector3d u(kNodes[a] * half[0], kNodes[b] * half[1], kNodes[e] * half[2]);
        dynamics::RigidBodyInertia point;  // 1 kg at r, no extent of its own
        point.mass = 1.0;
        point.com = body.com + axes.eigenvectors() * u;
        const dynamics::Vector10 v = dynamics::ParametersFromInertia(point);
        const double w = kWeights[a] * kWeights[b] * kWeights[e];
        mean += w * v;
        c.noalias() += w * v * v.transpose();
      }
  c -= mean * mean.transpose();
  c.row(0).setZero();
  c.col(0).setZero();
  return 0.5 * (c + c.transpose());
}

}  // namespace heft::estimator

// The nominal model's own error as a covariance (EstimatorConfig::nominal_uncertainty), from the
// stated model of dynamics/nominal_uncertainty.hpp (heft-identify's prior is the same), or from
// the identified covariance that robot.parameters carries for a body (dynamics::Body::covariance).
// Set-up only.
#pragma once

#include <Eigen/Core>
#include <Eigen/Eigenvalues>

#include "heft/dynamics/model.hpp"
#include "heft/dynamics/nominal_uncertainty.hpp"

namespace heft::estimator {

using dynamics::NominalFactor;

inline Eigen::Matrix<double, 10, 10> NominalCovariance(const dynamics::Vector10& pi, double mass,
                                                       double com, double inertia) {
  const Eigen::Matrix<double, 10, 7> f = NominalFactor(pi, mass, com, inertia);
  return f * f.transpose();
}

// A body's factor F (10 × 7, Σ = F Fᵀ): from its identified covariance when it has one (its seven
// largest eigen-directions: heft-identify's posterior has rank ≤ 7 per body, its prior's), else
// from the stated uncertainty.
inline Eigen::Matrix<double, 10, 7> BodyNominalFactor(const dynamics::Body& body, double mass,
                                                      double com, double inertia) {
  if (!body.covariance) return NominalFactor(body.parameters, mass, com, inertia);
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 10, 10>> eig(*body.covariance);
  Eigen::Matrix<double, 10, 7> f;
  for (int j = 0; j < 7; ++j)  // eigenvalues ascending: the last seven
    f.col(j) = eig.eigenvectors().col(9 - j) * std::sqrt(std::max(0.0, eig.eigenvalues()[9 - j]));
  return f;
}

}  // namespace heft::estimator

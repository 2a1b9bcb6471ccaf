// The nominal model's own error as a covariance (EstimatorConfig::nominal_uncertainty): the mass
// (relative), each coordinate of the centre of mass (m) and each principal moment of inertia about
// it (relative; at least m·σ_c², so that a point mass or rod gets one) as independent errors of a
// body's nominal, mapped into π (heft's order: m, h, I at the body origin) to first order.
// Set-up only.
#pragma once

#include <Eigen/Core>

#include "heft/dynamics/inertia.hpp"

namespace heft::estimator {

// The columns J_j σ_j (10 × 7: π's change for one standard deviation of the mass, the CoM's three
// coordinates and the three principal moments, by central differences): the covariance of π is
// F Fᵀ, and its first four rows, F(0:4, 0:4), factor the covariance of the mass and first moment
// (the principal moments do not move them).
Eigen::Matrix<double, 10, 7> NominalFactor(const dynamics::Vector10& pi, double mass, double com,
                                           double inertia);

inline Eigen::Matrix<double, 10, 10> NominalCovariance(const dynamics::Vector10& pi, double mass,
                                                       double com, double inertia) {
  const Eigen::Matrix<double, 10, 7> f = NominalFactor(pi, mass, com, inertia);
  return f * f.transpose();
}

}  // namespace heft::estimator

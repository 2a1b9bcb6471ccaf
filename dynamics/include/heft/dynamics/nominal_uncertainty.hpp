// A body's stated nominal uncertainty as a covariance of π: the mass (relative), each coordinate of
// the centre of mass (m) and each principal moment of inertia about it (relative; at least m·σ_c²,
// so that a point mass or rod gets one) as independent errors of the nominal, mapped into π
// (heft's order: m, h, I at the body origin) to first order. heft-identify's prior
// (identification/posterior.hpp); the same model as the estimator's nominal_uncertainty.
// Set-up only.
#pragma once

#include <Eigen/Core>

#include "heft/dynamics/inertia.hpp"

namespace heft::dynamics {

// The columns J_j σ_j (10 × 7: π's change for one standard deviation of the mass, the CoM's three
// coordinates and the three principal moments, by central differences): the covariance of π is
// F Fᵀ (rank ≤ 7: the principal axes' orientation is taken as known), and its first four rows
// factor the covariance of the mass and first moment (the principal moments do not move them).
Eigen::Matrix<double, 10, 7> NominalFactor(const Vector10& pi, double mass, double com,
                                           double inertia);

}  // namespace heft::dynamics

// A body's stated nominal uncertainty as a covariance of π: the mass (relative), each coordinate of
// the centre of mass (m), each principal moment of inertia about it (relative; at least m·σ_c²,
// so that a point mass or rod gets one) and a turn of the principal axes about each of them (rad)
// as independent errors of the nominal, mapped into π (heft's order: m, h, I at the body origin)
// to first order. A turn moves the products of inertia by the angle times the difference of two
// principal moments: nothing for a sphere, most for a body whose moments differ. heft-identify's
// prior (identification/posterior.hpp); the same model as the estimator's nominal_uncertainty.
// Set-up only.
#pragma once

#include <Eigen/Core>

#include "heft/dynamics/inertia.hpp"

namespace heft::dynamics {

// The stated standard deviations (estimator.nominal_uncertainty; heft-identify's prior).
struct NominalSigmas {
  double mass = 0.03;    // relative
  double com = 0.01;     // m, per axis
  double inertia = 0.1;  // relative, per principal moment about the CoM
  double turn = 0.1;     // rad, the principal axes about each of them
};

// NominalFactor's columns: the mass, the CoM's three coordinates, the three principal moments and
// the three turns.
inline constexpr int kNominalColumns = 10;

// The columns J_j σ_j (10 × kNominalColumns: π's change for one standard deviation of the mass, the
// CoM's three coordinates, the three principal moments and the three turns, by central
// differences): the covariance of π is F Fᵀ, and its first four rows factor the covariance of the
// mass and first moment (the moments and turns do not move them; its first four columns are that
// factor).
Eigen::Matrix<double, 10, kNominalColumns> NominalFactor(const Vector10& pi,
                                                         const NominalSigmas& sigmas);

}  // namespace heft::dynamics

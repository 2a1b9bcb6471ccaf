// The nominal model's own error as a covariance (EstimatorConfig::nominal_uncertainty), from the
// stated model of dynamics/nominal_uncertainty.hpp (heft-identify's prior is the same). The
// identified covariance robot.parameters may carry (dynamics::Body::covariance) is not used: it is
// tighter than the SDP result's real error (docs/estimator.md, "The nominal model's uncertainty").
// Set-up only.
#pragma once

#include <Eigen/Core>

#include "heft/dynamics/nominal_uncertainty.hpp"

namespace heft::estimator {

using dynamics::NominalFactor;

inline Eigen::Matrix<double, 10, 10> NominalCovariance(const dynamics::Vector10& pi, double mass,
                                                       double com, double inertia) {
  const Eigen::Matrix<double, 10, 7> f = NominalFactor(pi, mass, com, inertia);
  return f * f.transpose();
}

}  // namespace heft::estimator

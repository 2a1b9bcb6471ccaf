#include <cmath>

#include "heft/dynamics/inertia.hpp"
#include "heft/identification/sdp.hpp"

namespace heft::identification {

namespace {

// dI_c/dπ of one body at π: I_c = I_o − [h]ₓᵀ[h]ₓ / m = I_o − (|h|² 1 − h hᵀ) / m, as rows over
// π's six inertia entries (heft's order xx, xy, xz, yy, yz, zz) and columns over π. At m ≤ 0 the
// origin's inertia.
Eigen::Matrix<double, 6, 10> CentralInertiaJacobian(const dynamics::Vector10& pi) {
  Eigen::Matrix<double, 6, 10> J = Eigen::Matrix<double, 6, 10>::Zero();
  J.rightCols<6>().setIdentity();
  const double m = pi[0];
  if (!(m > 0.0)) return J;
  const auto entries = [](const Eigen::Matrix3d& M) {
    Eigen::Matrix<double, 6, 1> e;
    e << M(0, 0), M(0, 1), M(0, 2), M(1, 1), M(1, 2), M(2, 2);
    return e;
  };
  const Eigen::Vector3d h = pi.segment<3>(1);
  const Eigen::Matrix3d I3 = Eigen::Matrix3d::Identity();
  J.col(0) = entries(h.squaredNorm() * I3 - h * h.transpose()) / (m * m);
  for (int k = 0; k < 3; ++k) {
    const Eigen::Vector3d e = Eigen::Vector3d::Unit(k);
    J.col(1 + k) = -entries(2.0 * h[k] * I3 - e * h.transpose() - h * e.transpose()) / m;
  }
  return J;
}

}  // namespace

Eigen::MatrixXd PriorPull(const Problem& problem, const SdpOptions& options) {
  const int n = problem.size();
  const int ni = problem.inertial_size();
  const Eigen::VectorXd scale = PriorScale(problem);
  Eigen::MatrixXd P = Eigen::MatrixXd::Zero(n, n);
  P.diagonal() = scale.cwiseInverse();
  for (int b = 0; b < problem.selection.size(); ++b)
    P.block<6, 10>(10 * b + 4, 10 * b) = scale.segment<6>(10 * b + 4).cwiseInverse().asDiagonal() *
                                         CentralInertiaJacobian(problem.prior.segment<10>(10 * b));
  // Friction: the URDF states none, so its pull is toward 0. At the inertial unknowns' strength
  // (μ per plausible size squared) that pull halved the viscous terms the data fix (the deviated
  // robot's elbows: 0.23 against 0.43 N·m·s/rad). The friction unknowns take their stated prior
  // σ_f instead, one whitened row's weight: μ p² = 1 / σ_f².
  const double friction_pull =
      options.regularisation > 0.0 && options.friction_sigma > 0.0
          ? 1.0 / (options.friction_sigma * std::sqrt(options.regularisation))
          : 0.0;
  for (int i = ni; i < ni + problem.friction_size(); ++i) P(i, i) = friction_pull;
  return P;
}

}  // namespace heft::identification

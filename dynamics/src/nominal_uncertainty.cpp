#include "heft/dynamics/nominal_uncertainty.hpp"

#include <Eigen/Eigenvalues>

namespace heft::dynamics {

Eigen::Matrix<double, 10, 7> NominalFactor(const Vector10& pi, double mass, double com,
                                           double inertia) {
  const RigidBodyInertia body = InertiaFromParameters10(pi);
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(body.inertia_com);
  const Eigen::Matrix3d& axes = eig.eigenvectors();
  const Eigen::Vector3d& moments = eig.eigenvalues();
  Eigen::Matrix<double, 7, 1> p, sigma;
  p << body.mass, body.com, moments;
  sigma << mass * body.mass, Eigen::Vector3d::Constant(com),
      (inertia * moments.cwiseAbs()).cwiseMax(Eigen::Vector3d::Constant(body.mass * com * com));
  const auto at = [&](const Eigen::Matrix<double, 7, 1>& q) {
    RigidBodyInertia b;
    b.mass = q[0];
    b.com = q.segment<3>(1);
    b.inertia_com = axes * q.tail<3>().asDiagonal() * axes.transpose();
    return ParametersFromInertia(b);
  };
  Eigen::Matrix<double, 10, 7> f = Eigen::Matrix<double, 10, 7>::Zero();
  for (int j = 0; j < 7; ++j) {
    if (!(sigma[j] > 0.0)) continue;
    Eigen::Matrix<double, 7, 1> plus = p, minus = p;
    plus[j] += 0.5 * sigma[j];
    minus[j] -= 0.5 * sigma[j];
    f.col(j) = at(plus) - at(minus);  // J_j σ_j by central differences
  }
  return f;
}

}  // namespace heft::dynamics

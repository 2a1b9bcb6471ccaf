#include "heft/dynamics/nominal_uncertainty.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

namespace heft::dynamics {

Eigen::Matrix<double, 10, kNominalColumns> NominalFactor(const Vector10& pi,
                                                         const NominalSigmas& s) {
  const RigidBodyInertia body = InertiaFromParameters10(pi);
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(body.inertia_com);
  const Eigen::Matrix3d& axes = eig.eigenvectors();
  const Eigen::Vector3d& moments = eig.eigenvalues();
  // p: the mass, the CoM, the principal moments and a turn of the principal axes about each of
  // them (rad, 0 at the nominal).
  using Stated = Eigen::Matrix<double, kNominalColumns, 1>;
  Stated p, sigma;
  p << body.mass, body.com, moments, Eigen::Vector3d::Zero();
  sigma << s.mass * body.mass, Eigen::Vector3d::Constant(s.com),
      (s.inertia * moments.cwiseAbs())
          .cwiseMax(Eigen::Vector3d::Constant(body.mass * s.com * s.com)),
      Eigen::Vector3d::Constant(s.turn);
  const auto at = [&](const Stated& q) {
    RigidBodyInertia b;
    b.mass = q[0];
    b.com = q.segment<3>(1);
    const Eigen::Vector3d turn = q.tail<3>();
    const Eigen::Matrix3d r =
        turn.isZero() ? Eigen::Matrix3d(axes)
                      : Eigen::Matrix3d(axes * Eigen::AngleAxisd(turn.norm(), turn.normalized()));
    b.inertia_com = r * q.segment<3>(4).asDiagonal() * r.transpose();
    return ParametersFromInertia(b);
  };
  Eigen::Matrix<double, 10, kNominalColumns> f = Eigen::Matrix<double, 10, kNominalColumns>::Zero();
  for (int j = 0; j < kNominalColumns; ++j) {
    if (!(sigma[j] > 0.0)) continue;
    Stated plus = p, minus = p;
    plus[j] += 0.5 * sigma[j];
    minus[j] -= 0.5 * sigma[j];
    f.col(j) = at(plus) - at(minus);  // J_j σ_j by central differences
  }
  return f;
}

}  // namespace heft::dynamics

#include "heft/identification/consistency.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>

namespace heft::identification {

dynamics::Vector10 ParametersFromPseudoInertia(const Eigen::Matrix4d& J) {
  const Eigen::Matrix3d sigma = J.topLeftCorner<3, 3>();
  const Eigen::Matrix3d I = sigma.trace() * Eigen::Matrix3d::Identity() - sigma;
  dynamics::Vector10 pi;
  pi << J(3, 3), J(0, 3), J(1, 3), J(2, 3), I(0, 0), I(0, 1), I(0, 2), I(1, 1), I(1, 2), I(2, 2);
  return pi;
}

ProjectedBody ProjectToConsistent(const dynamics::Vector10& pi, double epsilon) {
  ProjectedBody out{pi, false, true};
  const Eigen::Matrix4d J = dynamics::PseudoInertia(pi);
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix4d> eig(J);
  if (eig.eigenvalues()[0] >= epsilon) return out;
  out.changed = true;
  const double m = pi[0];
  if (m > 2.0 * epsilon) {
    const Eigen::Vector3d h = pi.segment<3>(1);
    const Eigen::Matrix3d hh = h * h.transpose() / (m - epsilon);
    const Eigen::Matrix3d S = J.topLeftCorner<3, 3>() - epsilon * Eigen::Matrix3d::Identity() - hh;
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(S);
    const Eigen::Vector3d clamped = es.eigenvalues().cwiseMax(0.0);
    Eigen::Matrix4d Jp = J;
    Jp.topLeftCorner<3, 3>() =
        es.eigenvectors() * clamped.asDiagonal() * es.eigenvectors().transpose() +
        epsilon * Eigen::Matrix3d::Identity() + hh;
    out.pi = ParametersFromPseudoInertia(Jp);
    return out;
  }
  out.kept_mass_and_com = false;
  const Eigen::Vector4d clamped = eig.eigenvalues().cwiseMax(2.0 * epsilon);
  out.pi = ParametersFromPseudoInertia(eig.eigenvectors() * clamped.asDiagonal() *
                                       eig.eigenvectors().transpose());
  return out;
}

}  // namespace heft::identification

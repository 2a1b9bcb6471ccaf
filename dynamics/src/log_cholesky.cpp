#include "heft/dynamics/log_cholesky.hpp"

#include <Eigen/Cholesky>
#include <cmath>

namespace heft::dynamics {
namespace {

// Ū = U / e^α from θ, with its diagonal's exponentials e^{d1}, e^{d2}, e^{d3} given.
Eigen::Matrix4d UnitU(const Vector10& th, double e1, double e2, double e3) {
  Eigen::Matrix4d U;
  U << e1, th[4], th[5], th[7],  //
      0.0, e2, th[6], th[8],     //
      0.0, 0.0, e3, th[9],       //
      0.0, 0.0, 0.0, 1.0;
  return U;
}

Eigen::Matrix4d UnitU(const Vector10& th) {
  return UnitU(th, std::exp(th[1]), std::exp(th[2]), std::exp(th[3]));
}

// π from a (pseudo-inertia-like) symmetric 4×4 J; linear in J.
Vector10 FromPseudoInertia(const Eigen::Matrix4d& J) {
  const Eigen::Matrix3d S = J.topLeftCorner<3, 3>();
  const Eigen::Matrix3d I = S.trace() * Eigen::Matrix3d::Identity() - S;
  Vector10 pi;
  pi << J(3, 3), J(0, 3), J(1, 3), J(2, 3), I(0, 0), I(0, 1), I(0, 2), I(1, 1), I(1, 2), I(2, 2);
  return pi;
}

}  // namespace

Vector10 LogCholeskyToParameters(const Vector10& theta) noexcept {
  const Eigen::Matrix4d U = UnitU(theta);
  return std::exp(2.0 * theta[0]) * FromPseudoInertia(U.transpose() * U);
}

Vector10 LogCholeskyToParameters(const Vector10& theta, const Eigen::Vector4d& exps) noexcept {
  const Eigen::Matrix4d U = UnitU(theta, exps[1], exps[2], exps[3]);
  return exps[0] * exps[0] * FromPseudoInertia(U.transpose() * U);
}

Matrix10 LogCholeskyJacobian(const Vector10& theta) noexcept {
  const Eigen::Matrix4d U = UnitU(theta);
  const double scale = std::exp(2.0 * theta[0]);
  Matrix10 G;
  G.col(0) = 2.0 * scale * FromPseudoInertia(U.transpose() * U);
  // Each other θ_k moves one entry of Ū: dJ = e^{2α}(dŪᵀŪ + ŪᵀdŪ).
  static constexpr int kRow[9] = {0, 1, 2, 0, 0, 1, 0, 1, 2};
  static constexpr int kCol[9] = {0, 1, 2, 1, 2, 2, 3, 3, 3};
  for (int k = 1; k < 10; ++k) {
    const int r = kRow[k - 1], c = kCol[k - 1];
    const double entry = k <= 3 ? U(r, r) : 1.0;  // ∂e^{d}/∂d = e^{d}
    // dŪ = entry·E_rc, so ŪᵀdŪ is zero but for its column c, entry·Ū(r, :)ᵀ.
    Eigen::Matrix4d dJ = Eigen::Matrix4d::Zero();
    dJ.col(c) = entry * U.row(r).transpose();
    dJ += dJ.transpose().eval();
    G.col(k) = scale * FromPseudoInertia(dJ);
  }
  return G;
}

bool ParametersToLogCholesky(const Vector10& pi, Vector10& theta) noexcept {
  if (!IsPhysicallyConsistent(pi, 0.0)) return false;
  Eigen::LLT<Eigen::Matrix4d> llt(PseudoInertia(pi));
  if (llt.info() != Eigen::Success) return false;
  const Eigen::Matrix4d U = llt.matrixU();  // J = UᵀU, U upper triangular with a positive diagonal
  const double ea = U(3, 3);
  const Eigen::Matrix4d Ub = U / ea;
  theta << std::log(ea), std::log(Ub(0, 0)), std::log(Ub(1, 1)), std::log(Ub(2, 2)), Ub(0, 1),
      Ub(0, 2), Ub(1, 2), Ub(0, 3), Ub(1, 3), Ub(2, 3);
  return theta.allFinite();
}

}  // namespace heft::dynamics

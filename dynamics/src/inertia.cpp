#include "heft/dynamics/inertia.hpp"

#include <Eigen/Eigenvalues>

namespace heft::dynamics {
namespace {

Eigen::Matrix3d Skew(const Eigen::Vector3d& v) {
  Eigen::Matrix3d s;
  s << 0.0, -v.z(), v.y(), v.z(), 0.0, -v.x(), -v.y(), v.x(), 0.0;
  return s;
}

void PutInertia(const Eigen::Matrix3d& I, Vector10& pi) {
  pi[4] = I(0, 0);
  pi[5] = I(0, 1);
  pi[6] = I(0, 2);
  pi[7] = I(1, 1);
  pi[8] = I(1, 2);
  pi[9] = I(2, 2);
}

}  // namespace

Eigen::Matrix3d InertiaFromParameters(const Vector10& pi) noexcept {
  Eigen::Matrix3d I;
  I << pi[4], pi[5], pi[6], pi[5], pi[7], pi[8], pi[6], pi[8], pi[9];
  return I;
}

Vector10 ParametersFromInertia(const RigidBodyInertia& body) noexcept {
  Vector10 pi;
  pi[0] = body.mass;
  pi.segment<3>(1) = body.mass * body.com;
  const Eigen::Matrix3d sc = Skew(body.com);
  // Parallel axis: I_o = I_c + m [c]ₓᵀ[c]ₓ.
  PutInertia(body.inertia_com + body.mass * sc.transpose() * sc, pi);
  return pi;
}

RigidBodyInertia InertiaFromParameters10(const Vector10& pi) noexcept {
  RigidBodyInertia body;
  body.mass = pi[0];
  if (pi[0] != 0.0) body.com = pi.segment<3>(1) / pi[0];
  const Eigen::Matrix3d sc = Skew(body.com);
  body.inertia_com = InertiaFromParameters(pi) - body.mass * sc.transpose() * sc;
  return body;
}

Vector10 TransformParameters(const Vector10& pi_b, const Eigen::Matrix3d& R,
                             const Eigen::Vector3d& p) noexcept {
  // Linear in π (no division by the mass): h_A = R h + m p and, about each frame's origin (parallel
  // axes), I_A = R I Rᵀ + (2 (R h)·p + m |p|²) 1 − ((R h) pᵀ + p (R h)ᵀ + m p pᵀ).
  const double m = pi_b[0];
  const Eigen::Vector3d h = R * pi_b.segment<3>(1);
  const Eigen::Vector3d mp = m * p;
  Eigen::Matrix3d I = R * InertiaFromParameters(pi_b) * R.transpose();
  I.diagonal().array() += 2.0 * h.dot(p) + mp.dot(p);
  I.noalias() -= h * p.transpose() + p * h.transpose() + mp * p.transpose();
  Vector10 out;
  out[0] = m;
  out.segment<3>(1) = h + mp;
  PutInertia(I, out);
  return out;
}

Eigen::Matrix<double, 10, 10> TranslationMatrix(const Eigen::Vector3d& p) noexcept {
  // I_A = I_B + (2 hᵀp + m|p|²) 1 − (h pᵀ + p hᵀ + m p pᵀ), h_A = h + m p, m_A = m.
  Eigen::Matrix<double, 10, 10> X;
  for (int k = 0; k < 10; ++k) {
    Vector10 e = Vector10::Zero();
    e[k] = 1.0;
    const double m = e[0];
    const Eigen::Vector3d h = e.segment<3>(1);
    const Eigen::Matrix3d I = InertiaFromParameters(e) +
                              (2.0 * h.dot(p) + m * p.squaredNorm()) * Eigen::Matrix3d::Identity() -
                              (h * p.transpose() + p * h.transpose() + m * p * p.transpose());
    Vector10 out;
    out[0] = m;
    out.segment<3>(1) = h + m * p;
    PutInertia(I, out);
    X.col(k) = out;
  }
  return X;
}

Eigen::Matrix4d PseudoInertia(const Vector10& pi) noexcept {
  const Eigen::Matrix3d I = InertiaFromParameters(pi);
  Eigen::Matrix4d J;
  J.topLeftCorner<3, 3>() = 0.5 * I.trace() * Eigen::Matrix3d::Identity() - I;
  J.topRightCorner<3, 1>() = pi.segment<3>(1);
  J.bottomLeftCorner<1, 3>() = pi.segment<3>(1).transpose();
  J(3, 3) = pi[0];
  return J;
}

bool IsPhysicallyConsistent(const Vector10& pi, double tol) noexcept {
  if (!pi.allFinite() || !(pi[0] > 0.0)) return false;
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix4d> eig(PseudoInertia(pi), Eigen::EigenvaluesOnly);
  return eig.eigenvalues()[0] > tol;
}

PseudoInertiaExtremes PseudoInertiaEigenvalues(const Vector10& pi) noexcept {
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix4d> eig(PseudoInertia(pi), Eigen::EigenvaluesOnly);
  return {eig.eigenvalues()[0], eig.eigenvalues()[3]};
}

bool HasConsistencyMargin(const Vector10& pi) noexcept {
  if (!pi.allFinite() || !(pi[0] > 0.0)) return false;
  const PseudoInertiaExtremes e = PseudoInertiaEigenvalues(pi);
  return e.min > e.threshold();
}

Vector10 InflateToMargin(const Vector10& pi) noexcept {
  // One eigen-solve (HasConsistencyMargin's test on the same extremes); on the hand-off's path.
  const PseudoInertiaExtremes e = PseudoInertiaEigenvalues(pi);
  if (pi.allFinite() && pi[0] > 0.0 && e.min > e.threshold()) return pi;
  // J + δ·1 shifts every eigenvalue by δ: (λ_min + δ) = 2ε (λ_max + δ).
  const double eps = 2.0 * kConsistencyMargin;
  const double delta = (eps * e.max - e.min) / (1.0 - eps);
  Vector10 out = pi;
  out[0] += delta;  // J's (3, 3)
  // Σ + δ·1 is I + 2δ·1 (I = tr(Σ)·1 − Σ).
  out[4] += 2.0 * delta;
  out[7] += 2.0 * delta;
  out[9] += 2.0 * delta;
  return out;
}

}  // namespace heft::dynamics

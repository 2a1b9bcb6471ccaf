#include "heft/estimator/inertial_filter.hpp"

#include <cmath>

namespace heft::est {

InertialFilter::InertialFilter(FilterKind kind, int bodies, int rows)
    : kind_(kind),
      k_(bodies),
      n_(10 * bodies),
      x_(Eigen::VectorXd::Zero(n_)),
      pi_(Eigen::VectorXd::Zero(n_)),
      x_candidate_(Eigen::VectorXd::Zero(n_)),
      b_(Eigen::VectorXd::Zero(n_)),
      dx_(Eigen::VectorXd::Zero(n_)),
      x_previous_(Eigen::VectorXd::Zero(n_)),
      p0_diagonal_(Eigen::VectorXd::Zero(n_)),
      P_(Eigen::MatrixXd::Identity(n_, n_)),
      P_candidate_(Eigen::MatrixXd::Identity(n_, n_)),
      P_previous_(Eigen::MatrixXd::Identity(n_, n_)),
      A_(Eigen::MatrixXd::Zero(n_, n_)),
      G_(Eigen::MatrixXd::Identity(10, n_)),
      H_(Eigen::MatrixXd::Zero(rows, n_)),
      tmp_(Eigen::MatrixXd::Zero(rows, 1)),
      llt_(n_) {}

bool InertialFilter::Reset(const Eigen::Ref<const Eigen::VectorXd>& pi0,
                           const dyn::Vector10& sigma0) {
  for (int j = 0; j < k_; ++j) {
    const dyn::Vector10 pi = pi0.segment<10>(10 * j);
    if (kind_ == FilterKind::kLogCholesky) {
      dyn::Vector10 theta;
      if (!dyn::ParametersToLogCholesky(pi, theta)) return false;
      x_.segment<10>(10 * j) = theta;
    } else {
      x_.segment<10>(10 * j) = pi;
    }
  }
  P_.setZero();
  for (int i = 0; i < n_; ++i) P_(i, i) = p0_diagonal_[i] = sigma0[i % 10] * sigma0[i % 10];
  RefreshParameters();
  return true;
}

void InertialFilter::RefreshParameters() noexcept {
  for (int j = 0; j < k_; ++j) {
    if (kind_ == FilterKind::kLogCholesky) {
      const dyn::Vector10 theta = x_.segment<10>(10 * j);
      pi_.segment<10>(10 * j) = dyn::LogCholeskyToParameters(theta);
      G_.block<10, 10>(0, 10 * j) = dyn::LogCholeskyJacobian(theta);
    } else {
      pi_.segment<10>(10 * j) = x_.segment<10>(10 * j);
    }
  }
}

void InertialFilter::Predict(const dyn::Vector10& q_per_second, double dt) noexcept {
  for (int i = 0; i < n_; ++i) P_(i, i) += q_per_second[i % 10] * dt;
}

bool InertialFilter::Evaluate(const Eigen::Ref<const Eigen::MatrixXd>& H_pi,
                              const Eigen::Ref<const Eigen::VectorXd>& z, Candidate& out) noexcept {
  const int m = static_cast<int>(H_pi.rows());
  if (m > H_.rows() || H_pi.cols() != n_) return false;
  auto H = H_.topRows(m);
  if (kind_ == FilterKind::kLogCholesky) {
    for (int j = 0; j < k_; ++j)
      H.middleCols<10>(10 * j).noalias() =
          H_pi.middleCols<10>(10 * j) * G_.block<10, 10>(0, 10 * j);
  } else {
    H = H_pi;
  }
  auto y = tmp_.col(0).head(m);
  y = z;
  y.noalias() -= H_pi * pi_;  // innovation ỹ = z − h(x⁻)
  // A = P⁻¹ + HᵀH.
  llt_.compute(P_);
  if (llt_.info() != Eigen::Success) return false;
  A_.setIdentity();
  llt_.solveInPlace(A_);
  A_.noalias() += H.transpose() * H;
  llt_.compute(A_);
  if (llt_.info() != Eigen::Success) return false;
  b_.noalias() = H.transpose() * y;
  dx_ = b_;
  llt_.solveInPlace(dx_);
  P_candidate_.setIdentity();
  llt_.solveInPlace(P_candidate_);
  x_candidate_ = x_ + dx_;
  out.nis = y.squaredNorm() - b_.dot(dx_);
  out.dof = m;
  out.step = dx_.cwiseAbs().maxCoeff();
  return std::isfinite(out.nis) && x_candidate_.allFinite() && P_candidate_.allFinite();
}

bool InertialFilter::Apply() noexcept {
  if (!x_candidate_.allFinite() || !P_candidate_.allFinite()) return false;
  x_previous_ = x_;
  P_previous_ = P_;
  x_.swap(x_candidate_);
  P_ = 0.5 * (P_candidate_ + P_candidate_.transpose());
  RefreshParameters();
  if (!pi_.allFinite()) {  // exp overflow in g(θ): undo
    x_.swap(x_candidate_);
    RefreshParameters();
    return false;
  }
  return true;
}

void InertialFilter::Revert() noexcept {
  x_ = x_previous_;
  P_ = P_previous_;
  RefreshParameters();
}

void InertialFilter::Inflate(double factor) noexcept {
  P_ *= factor;
  P_.diagonal() += p0_diagonal_;
}

void InertialFilter::BodyCovariance(int body,
                                    Eigen::Ref<Eigen::Matrix<double, 10, 10>> out) const noexcept {
  const auto P = P_.block<10, 10>(10 * body, 10 * body);
  if (kind_ == FilterKind::kKalman) {
    out = P;
    return;
  }
  const auto G = G_.block<10, 10>(0, 10 * body);
  out.noalias() = G * P * G.transpose();
}

void InertialFilter::ParameterCovariance(Eigen::Ref<Eigen::MatrixXd> out) noexcept {
  if (kind_ == FilterKind::kKalman) {
    out = P_;
    return;
  }
  for (int i = 0; i < k_; ++i)
    for (int j = 0; j < k_; ++j)
      out.block<10, 10>(10 * i, 10 * j).noalias() = G_.block<10, 10>(0, 10 * i) *
                                                    P_.block<10, 10>(10 * i, 10 * j) *
                                                    G_.block<10, 10>(0, 10 * j).transpose();
}

}  // namespace heft::est

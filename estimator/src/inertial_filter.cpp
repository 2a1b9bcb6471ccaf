#include "heft/estimator/inertial_filter.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <cmath>
#include <limits>

namespace heft::estimator {

InertialFilter::InertialFilter(FilterKind kind, int bodies, int rows, int consider)
    : kind_(kind),
      k_(bodies),
      n_(10 * bodies),
      nc_(consider),
      x_(Eigen::VectorXd::Zero(n_)),
      x0_(Eigen::VectorXd::Zero(n_)),
      pi_(Eigen::VectorXd::Zero(n_)),
      x_candidate_(Eigen::VectorXd::Zero(n_)),
      b_(Eigen::VectorXd::Zero(n_)),
      dx_(Eigen::VectorXd::Zero(n_)),
      x_previous_(Eigen::VectorXd::Zero(n_)),
      p0_diagonal_(Eigen::VectorXd::Zero(n_)),
      pull_w_(Eigen::VectorXd::Zero(n_)),
      P_(Eigen::MatrixXd::Identity(n_, n_)),
      P_candidate_(Eigen::MatrixXd::Identity(n_, n_)),
      P_previous_(Eigen::MatrixXd::Identity(n_, n_)),
      P_before_inflation_(Eigen::MatrixXd::Identity(n_, n_)),
      A_(Eigen::MatrixXd::Zero(n_, n_)),
      G_(Eigen::MatrixXd::Identity(10, n_)),
      Hc_(Eigen::MatrixXd::Zero(rows, n_)),
      U_(Eigen::MatrixXd::Zero(rows, n_)),
      S_(Eigen::MatrixXd::Zero(rows, rows)),
      yc_(Eigen::VectorXd::Zero(rows)),
      w_(Eigen::VectorXd::Zero(rows)),
      pi_trial_(Eigen::VectorXd::Zero(n_)),
      res_(Eigen::VectorXd::Zero(rows)),
      D_(Eigen::MatrixXd::Zero(n_, consider)),
      D_candidate_(Eigen::MatrixXd::Zero(n_, consider)),
      D_previous_(Eigen::MatrixXd::Zero(n_, consider)),
      Cc_(Eigen::MatrixXd::Zero(rows, consider)),
      X_(Eigen::MatrixXd::Zero(rows, consider)),
      T_(Eigen::MatrixXd::Zero(n_, consider)),
      HtH_(Eigen::MatrixXd::Zero(n_, n_)),
      Kt_(Eigen::MatrixXd::Zero(consider > 0 ? rows : 0, n_)),
      K_(Eigen::MatrixXd::Zero(n_, consider > 0 ? rows : 0)),
      KH_(Eigen::MatrixXd::Zero(n_, n_)),
      llt_(n_),
      HPHt_(Eigen::MatrixXd::Zero(rows, rows)),
      P_inverse_(Eigen::MatrixXd::Zero(n_, n_)),
      b_staged_(Eigen::VectorXd::Zero(n_)),
      gain_mask_(Eigen::VectorXd::Ones(consider)),
      Xg_(Eigen::MatrixXd::Zero(consider > 0 ? rows : 0, consider)),
      Tg_(Eigen::MatrixXd::Zero(n_, consider)),
      V_(Eigen::MatrixXd::Zero(consider > 0 ? rows : 0, n_)),
      hdx_(Eigen::VectorXd::Zero(consider > 0 ? rows : 0)) {
  frame_.setZero(10, n_);
  frame_inverse_.setZero(10, n_);
  framed_.assign(k_, 0);
  for (int j = 0; j < k_; ++j) {
    frame_.middleCols<10>(10 * j).setIdentity();
    frame_inverse_.middleCols<10>(10 * j).setIdentity();
  }
  prior_mask_ = Eigen::VectorXd::Ones(n_);
  if (kind_ == FilterKind::kLogCholesky)
    for (int j = 0; j < k_; ++j) prior_mask_[10 * j] = 0.0;
}

bool InertialFilter::SetBodyFrame(int body, const Eigen::Vector3d& offset) {
  if (kind_ != FilterKind::kLogCholesky || body < 0 || body >= k_ || !offset.allFinite())
    return false;
  frame_.middleCols<10>(10 * body) = dynamics::TranslationMatrix(offset);
  frame_inverse_.middleCols<10>(10 * body) = dynamics::TranslationMatrix(-offset);
  framed_[body] = 1;
  return true;
}

bool InertialFilter::Reset(const Eigen::Ref<const Eigen::VectorXd>& pi0,
                           const Eigen::Ref<const Eigen::VectorXd>& sigma0) {
  if (sigma0.size() != 10 && sigma0.size() != n_) return false;
  const int period = static_cast<int>(sigma0.size());
  for (int j = 0; j < k_; ++j) {
    const dynamics::Vector10 pi = pi0.segment<10>(10 * j);
    if (kind_ == FilterKind::kLogCholesky) {
      dynamics::Vector10 theta;
      const dynamics::Vector10 pi_frame = frame_inverse_.middleCols<10>(10 * j) * pi;
      if (!dynamics::ParametersToLogCholesky(pi_frame, theta)) return false;
      x_.segment<10>(10 * j) = theta;
    } else {
      x_.segment<10>(10 * j) = pi;
    }
  }
  P_.setZero();
  for (int i = 0; i < n_; ++i) P_(i, i) = p0_diagonal_[i] = sigma0[i % period] * sigma0[i % period];
  x0_ = x_;
  D_.setZero();
  prior_error_on_ = prior_error_.cols() > 0;
  if (prior_error_on_) D_.middleCols(prior_first_, prior_error_.cols()) = prior_error_;
  RefreshParameters();
  return true;
}

bool InertialFilter::SetPriorError(int first, const Eigen::Ref<const Eigen::MatrixXd>& cov_pi,
                                   const std::vector<int>& bodies) {
  const auto cols = 10 * static_cast<Eigen::Index>(bodies.size());
  if (first < 0 || first + cols > nc_ || cov_pi.rows() != 10 || cov_pi.cols() != n_) return false;
  for (const int j : bodies)
    if (j < 0 || j >= k_) return false;
  prior_error_.setZero(n_, cols);
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const int j = bodies[i];
    dynamics::Matrix10 S = cov_pi.middleCols<10>(10 * j);
    S = 0.5 * (S + S.transpose()).eval();
    if (kind_ == FilterKind::kLogCholesky) {
      const auto lu = G_.block<10, 10>(0, 10 * j).fullPivLu();
      if (!lu.isInvertible()) continue;
      const dynamics::Matrix10 Gi = lu.inverse();
      S = (Gi * S * Gi.transpose()).eval();
    }
    const dynamics::Vector10 mask = prior_mask_.segment<10>(10 * j);
    S = (mask.asDiagonal() * S * mask.asDiagonal()).eval();
    S.diagonal() -= mask.cwiseProduct(p0_diagonal_.segment<10>(10 * j));
    const Eigen::SelfAdjointEigenSolver<dynamics::Matrix10> eig(S);
    if (eig.info() != Eigen::Success) continue;
    const dynamics::Vector10 root = eig.eigenvalues().cwiseMax(0.0).cwiseSqrt();
    prior_error_.block<10, 10>(10 * j, 10 * static_cast<Eigen::Index>(i)) =
        eig.eigenvectors() * root.asDiagonal();
  }
  if (!prior_error_.allFinite()) prior_error_.setZero();
  prior_first_ = first;
  prior_error_on_ = true;
  D_.middleCols(first, cols) = prior_error_;
  ++generation_;  // D changed: rows staged with the last D are stale (the Schmidt path's)
  return true;
}

bool InertialFilter::Reset(const Eigen::Ref<const Eigen::VectorXd>& pi0,
                           const Eigen::Ref<const Eigen::VectorXd>& sigma0,
                           const Eigen::Ref<const Eigen::MatrixXd>& cov_pi, double inflation) {
  if ((sigma0.size() != 10 && sigma0.size() != n_) || pi0.size() != n_ || cov_pi.rows() != 10 ||
      cov_pi.cols() != n_ || !pi0.allFinite() || !cov_pi.allFinite() || !std::isfinite(inflation) ||
      inflation < 1.0)
    return false;
  // Every body's block in the filter's coordinates, checked before anything changes.
  Eigen::MatrixXd blocks(10, n_);
  for (int j = 0; j < k_; ++j) {
    const dynamics::Vector10 pi = pi0.segment<10>(10 * j);
    const Eigen::Matrix<double, 10, 10> S = cov_pi.middleCols<10>(10 * j);
    if (!S.isApprox(S.transpose(), 1e-9)) return false;
    Eigen::Matrix<double, 10, 10> B = inflation * 0.5 * (S + S.transpose());
    if (kind_ == FilterKind::kLogCholesky) {
      dynamics::Vector10 theta;
      const dynamics::Vector10 pi_frame = frame_inverse_.middleCols<10>(10 * j) * pi;
      if (!dynamics::ParametersToLogCholesky(pi_frame, theta)) return false;
      const Eigen::Matrix<double, 10, 10> G =
          frame_.middleCols<10>(10 * j) * dynamics::LogCholeskyJacobian(theta);
      const auto lu = G.fullPivLu();
      if (!lu.isInvertible()) return false;
      const Eigen::Matrix<double, 10, 10> Gi = lu.inverse();
      B = Gi * B * Gi.transpose();
      B = 0.5 * (B + B.transpose());
    }
    if (!B.allFinite() || B.llt().info() != Eigen::Success) return false;
    blocks.middleCols<10>(10 * j) = B;
  }
  if (!Reset(pi0, sigma0)) return false;
  // The persisted estimate is x₀ now, its covariance given: no prior error beyond it to renew.
  if (prior_error_on_) D_.middleCols(prior_first_, prior_error_.cols()).setZero();
  prior_error_on_ = false;
  P_.setZero();
  for (int j = 0; j < k_; ++j) P_.block<10, 10>(10 * j, 10 * j) = blocks.middleCols<10>(10 * j);
  // A persisted estimate knows no less than a fresh start: no state's variance above the prior's.
  // The first-order map back from π cannot undo the hand-off's nonlinear covariance
  // (BodyCovariance), and would otherwise widen a nearly degenerate body's θ at every restart.
  CapVariances(1.0);
  return true;
}

dynamics::Vector10 InertialFilter::InBodyFrame(int body,
                                               const dynamics::Vector10& pi_frame) const noexcept {
  if (!framed_[body]) return pi_frame;
  return frame_.middleCols<10>(10 * body) * pi_frame;
}

void InertialFilter::RefreshParameters() noexcept {
  ++generation_;  // x_ changed (and P_ with it, wherever this is called)
  for (int j = 0; j < k_; ++j) {
    if (kind_ == FilterKind::kLogCholesky) {
      const dynamics::Vector10 theta = x_.segment<10>(10 * j);
      pi_.segment<10>(10 * j) = InBodyFrame(j, dynamics::LogCholeskyToParameters(theta));
      if (framed_[j])
        G_.block<10, 10>(0, 10 * j).noalias() =
            frame_.middleCols<10>(10 * j) * dynamics::LogCholeskyJacobian(theta);
      else
        G_.block<10, 10>(0, 10 * j) = dynamics::LogCholeskyJacobian(theta);
    } else {
      pi_.segment<10>(10 * j) = x_.segment<10>(10 * j);
    }
  }
}

void InertialFilter::Predict(const Eigen::Ref<const Eigen::VectorXd>& q_per_second,
                             double dt) noexcept {
  const auto period = q_per_second.size();
  if (period != 10 && period != n_) return;
  for (int i = 0; i < n_; ++i) P_(i, i) += q_per_second[i % period] * dt;
  ++generation_;
}

bool InertialFilter::PullToPrior(double w) noexcept {
  if (!(w > 0.0)) return true;
  pull_w_.setConstant(w);
  return PullToPrior(pull_w_);
}

bool InertialFilter::PullToPrior(const Eigen::Ref<const Eigen::VectorXd>& w) noexcept {
  if (w.size() != n_ || !(w.array() >= 0.0).all() || !w.allFinite()) return false;
  if (!(w.array() > 0.0).any()) return true;
  // A = P⁻¹ + W; x⁺ = x + A⁻¹ W (x₀ − x); P⁺ = P.
  llt_.compute(P_);
  if (llt_.info() != Eigen::Success) return false;
  A_.setIdentity();
  llt_.solveInPlace(A_);
  // W = diag(w) P₀⁻¹, without the EKF's scale α: its pseudo-measurement holds the body's shape
  // (θ's d, s, t: the centre of mass and the inertia per unit mass), not its mass.
  A_.diagonal() += w.cwiseQuotient(p0_diagonal_).cwiseProduct(prior_mask_);
  llt_.compute(A_);
  if (llt_.info() != Eigen::Success) return false;
  b_ = w.cwiseProduct(x0_ - x_).cwiseQuotient(p0_diagonal_).cwiseProduct(prior_mask_);
  llt_.solveInPlace(b_);
  if (!b_.allFinite()) return false;
  // The pull's gain A⁻¹W acts on the estimate's consider sensitivity too: D ← (1 − A⁻¹W) D.
  // The prior's own error beyond P₀ (SetPriorError) is observed again: D ← D − A⁻¹W (D − F).
  if (nc_ > 0) {
    if (prior_error_on_) D_.middleCols(prior_first_, prior_error_.cols()) -= prior_error_;
    T_ = (w.cwiseQuotient(p0_diagonal_).cwiseProduct(prior_mask_)).asDiagonal() * D_;
    llt_.solveInPlace(T_);
    D_ -= T_;
    if (prior_error_on_) D_.middleCols(prior_first_, prior_error_.cols()) += prior_error_;
  }
  // The mean moves, the covariance stays: the prior seen again is not new information. Taking
  // P⁺ = A⁻¹ counted it anew on every pull and shrank P along every direction the data leave
  // free, far below the prior's (σ₀ / 2.7 with the rigid torso's random walk and τ = 2 s), while
  // the estimate there is only as good as the prior.
  x_ += b_;
  // And where it holds the estimate, the variance above the prior's relaxes towards it as the mean
  // does (the excess × 1/(1 + wᵢ)² per call: the square of the mean's step where P ≈ P₀). Without
  // it the random walk would grow those variances as t over a long run; a hard cap at P₀ instead
  // undid a gate release's inflation at once, though a load had just changed the shape.
  for (int i = 0; i < n_; ++i) {
    if (!(w[i] * prior_mask_[i] > 0.0) || !(P_(i, i) > p0_diagonal_[i])) continue;
    const double excess = (P_(i, i) - p0_diagonal_[i]) / ((1.0 + w[i]) * (1.0 + w[i]));
    const double d = std::sqrt((p0_diagonal_[i] + excess) / P_(i, i));
    P_.row(i) *= d;
    P_.col(i) *= d;
  }
  RefreshParameters();
  return true;
}

bool InertialFilter::Apply() noexcept {
  if (!x_candidate_.allFinite() || !P_candidate_.allFinite()) return false;
  // Swapped, not copied (the buffers keep their sizes; nothing allocates): the candidate's
  // buffers are written anew by the next Evaluate.
  x_previous_ = x_;
  P_previous_.swap(P_);
  D_previous_.swap(D_);
  D_.swap(D_candidate_);
  x_.swap(x_candidate_);
  P_ = 0.5 * (P_candidate_ + P_candidate_.transpose());
  RefreshParameters();
  if (!pi_.allFinite()) {  // exp overflow in g(θ): undo, covariance included
    x_.swap(x_candidate_);
    P_ = P_previous_;
    D_.swap(D_candidate_);
    D_ = D_previous_;
    RefreshParameters();
    return false;
  }
  return true;
}

void InertialFilter::Revert() noexcept {
  x_ = x_previous_;
  P_ = P_previous_;
  D_ = D_previous_;
  RefreshParameters();
}

void InertialFilter::Inflate(double factor, double cap) noexcept {
  P_before_inflation_ = P_;
  ++generation_;
  P_ *= factor;
  P_.diagonal() += p0_diagonal_;
  CapVariances(cap);
}

void InertialFilter::CapVariances(double cap) noexcept {
  ++generation_;
  for (int i = 0; i < n_; ++i) {
    const double limit = cap * p0_diagonal_[i];
    if (!(P_(i, i) > limit)) continue;
    const double d = std::sqrt(limit / P_(i, i));
    P_.row(i) *= d;
    P_.col(i) *= d;
  }
}

bool InertialFilter::RecoverCovariance() noexcept {
  if (P_.allFinite()) {
    llt_.compute(P_);
    if (llt_.info() == Eigen::Success) return false;
  }
  P_.setZero();
  P_.diagonal() = p0_diagonal_;
  ++covariance_resets_;
  ++generation_;
  return true;
}

void InertialFilter::BodyCovariance(int body, Eigen::Ref<Eigen::Matrix<double, 10, 10>> out,
                                    bool consider) const noexcept {
  // The error's covariance: the filter's own plus what the consider parameters leave, D Dᵀ.
  const dynamics::Matrix10 P = P_.block<10, 10>(10 * body, 10 * body);
  if (kind_ == FilterKind::kKalman)
    out = P;
  else
    NoiseCovariance(body, P, out);
  if (consider) AddConsiderCovariance(body, out);
}

void InertialFilter::AddConsiderCovariance(
    int body, Eigen::Ref<Eigen::Matrix<double, 10, 10>> out) const noexcept {
  // D is a first-order sensitivity, ∂θ̂/∂c, and the error it stands for in π is G D c to the same
  // order (ConsiderEkf.SensitivityFollowsTheEstimateThroughALoad checks G D against the EKF's own
  // finite difference): G D Dᵀ Gᵀ. Through the Gauss–Hermite rule with P, P + D Dᵀ would be read
  // as θ's own spread, and where D is wide along a direction g bends (e^α, e^d) the rule's nodes
  // invent an error the sensitivity does not claim: the deviated H1_2's torso, its mass within
  // 2.6 % of the truth, was handed a mass σ of 13.9 kg on 17.7 kg (its full job's mass and first
  // moment NEES ÷ 4 0.06; 0.98 at first order).
  if (nc_ == 0) return;
  const dynamics::Matrix10 DDt =
      D_.middleRows<10>(10 * body) * D_.middleRows<10>(10 * body).transpose();
  if (kind_ == FilterKind::kKalman) {
    out += DDt;
    return;
  }
  const auto G = G_.block<10, 10>(0, 10 * body);  // with the body's frame (RefreshParameters)
  const dynamics::Matrix10 GDDt = G * DDt;
  out.noalias() += GDDt * G.transpose();
}

void InertialFilter::NoiseCovariance(int body, const dynamics::Matrix10& P,
                                     Eigen::Ref<Eigen::Matrix<double, 10, 10>> out) const noexcept {
  // The second moment of π = g(θ) about the estimate g(x) (the value handed on), θ ~ N(x, P), by
  // the three-point Gauss–Hermite rule along each column Lᵢ of P's Cholesky factor: nodes x and
  // x ± √3 Lᵢ, weights ⅔ and ⅙, exact for the Gaussian's moments to the fifth along each axis
  // (the node at x adds nothing about x). g is exponential in the diagonal of the log-Cholesky
  // factor, so where a body is nearly degenerate (a small principal moment, e^d ≪ 1) the first
  // order, G P Gᵀ, shrinks that direction by e^{2d} while the θ spread behind it is wide: on the
  // simulated dumbbell curl it made the handed covariance 10⁶ times too confident there.
  const dynamics::Vector10 theta = x_.segment<10>(10 * body);
  const Eigen::LLT<dynamics::Matrix10> llt(P);
  if (llt.info() != Eigen::Success) {  // not reached with a positive definite P: first order
    const auto G = G_.block<10, 10>(0, 10 * body);
    out.noalias() = G * P * G.transpose();
    return;
  }
  // In θ's frame (π = X g(θ), X linear: the congruence once, at the end).
  // P's Cholesky factor is lower triangular, so only the first four directions move α and d: the
  // others reuse g's exponentials at x, and those four multiply them by e^{±δ}.
  const Eigen::Vector4d exps = theta.head<4>().array().exp();
  const dynamics::Vector10 centre = dynamics::LogCholeskyToParameters(theta, exps);
  const dynamics::Matrix10 L = llt.matrixL();
  const double spread = std::sqrt(3.0);
  Eigen::Matrix<double, 10, 20> D;  // each node's π minus the centre's
  for (int i = 0; i < 10; ++i) {
    const dynamics::Vector10 delta = spread * L.col(i);
    const Eigen::Vector4d grow =
        i < 4 ? Eigen::Vector4d(delta.head<4>().array().exp()) : Eigen::Vector4d::Ones();
    D.col(2 * i) =
        dynamics::LogCholeskyToParameters(theta + delta, exps.cwiseProduct(grow)) - centre;
    D.col(2 * i + 1) =
        dynamics::LogCholeskyToParameters(theta - delta, exps.cwiseQuotient(grow)) - centre;
  }
  out.noalias() = (1.0 / 6.0) * D * D.transpose();
  if (framed_[body]) {
    const dynamics::Matrix10 X = frame_.middleCols<10>(10 * body);
    const dynamics::Matrix10 XS = X * out;
    out.noalias() = XS * X.transpose();
  }
}

void InertialFilter::ParameterCovariance(Eigen::Ref<Eigen::MatrixXd> out) const noexcept {
  for (int i = 0; i < k_; ++i)
    for (int j = 0; j < k_; ++j) {
      dynamics::Matrix10 Pij = P_.block<10, 10>(10 * i, 10 * j);
      if (nc_ > 0)
        Pij.noalias() += D_.middleRows<10>(10 * i) * D_.middleRows<10>(10 * j).transpose();
      if (kind_ == FilterKind::kKalman)
        out.block<10, 10>(10 * i, 10 * j) = Pij;
      else
        out.block<10, 10>(10 * i, 10 * j).noalias() =
            G_.block<10, 10>(0, 10 * i) * Pij * G_.block<10, 10>(0, 10 * j).transpose();
    }
}

}  // namespace heft::estimator

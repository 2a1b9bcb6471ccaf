// InertialFilter's update (inertial_filter.hpp): the rows staged, the NIS, the two forms of the
// update, the damped step and the consider step. The rest of the filter is inertial_filter.cpp.
#include <cmath>
#include <limits>

#include "heft/estimator/inertial_filter.hpp"

namespace heft::estimator {

int InertialFilter::StageRows(const Eigen::Ref<const Eigen::MatrixXd>& H_pi,
                              const Eigen::Ref<const Eigen::VectorXd>& z, double& nis, double scale,
                              bool consider) noexcept {
  // Innovation ỹ = z − h(x⁻); rows with no information on x only add ỹᵢ² to the NIS.
  const int m = static_cast<int>(H_pi.rows());
  auto innovation = res_.head(m);
  innovation = z;
  innovation.noalias() -= H_pi.leftCols(n_) * pi_;
  innovation *= scale;
  nis = 0.0;
  int rows = 0;
  for (int i = 0; i < m; ++i) rows += !(H_pi.row(i).head(n_).array() == 0.0).all();
  if (rows == m) {  // every row carries information (the whitened full rows): whole columns
    yc_.head(m) = innovation;
    U_.topRows(m) = scale * H_pi.leftCols(n_);
    // The consider columns are read where they are (ConsiderStep's C), not staged.
  } else {
    rows = 0;
    for (int i = 0; i < m; ++i) {
      if ((H_pi.row(i).head(n_).array() == 0.0).all()) {
        nis += innovation[i] * innovation[i];
        continue;
      }
      yc_[rows] = innovation[i];
      U_.row(rows) = scale * H_pi.row(i).head(n_);
      if (consider && nc_ > 0) Cc_.row(rows) = H_pi.row(i).tail(nc_);
      ++rows;
    }
  }
  auto H = Hc_.topRows(rows);
  if (kind_ == FilterKind::kLogCholesky) {  // H = H_π G(θ), block by block
    for (int j = 0; j < k_; ++j)
      H.middleCols<10>(10 * j).noalias() =
          U_.topRows(rows).middleCols<10>(10 * j) * G_.block<10, 10>(0, 10 * j);
  } else {
    H = U_.topRows(rows);
  }
  return rows;
}

bool InertialFilter::StagedFrom(const Eigen::Ref<const Eigen::MatrixXd>& H_pi,
                                const Eigen::Ref<const Eigen::VectorXd>& z) const noexcept {
  return staged_.valid && staged_.H == H_pi.data() && staged_.z == z.data() &&
         staged_.rows == H_pi.rows() && staged_.stride == H_pi.outerStride() &&
         staged_.generation == generation_;
}

int InertialFilter::Stage(const Eigen::Ref<const Eigen::MatrixXd>& H_pi,
                          const Eigen::Ref<const Eigen::VectorXd>& z, double& other_nis,
                          bool consider, bool reuse) noexcept {
  const bool same = StagedFrom(H_pi, z);
  if (reuse && same && (staged_.consider || !consider || staged_.kept == H_pi.rows())) {
    other_nis = staged_.other_nis;
    return staged_.kept;
  }
  const int rows = StageRows(H_pi, z, other_nis, 1.0, consider);
  staged_ = Staged{H_pi.data(), z.data(), H_pi.rows(), H_pi.outerStride(),
                   generation_, rows,     other_nis,   true,
                   consider,    false,    false};
  return rows;
}

bool InertialFilter::Nis(const Eigen::Ref<const Eigen::MatrixXd>& H_pi,
                         const Eigen::Ref<const Eigen::VectorXd>& z, double& nis, double level,
                         double scale) noexcept {
  const int m = static_cast<int>(H_pi.rows());
  if (m > Hc_.rows() || H_pi.cols() != n_ + nc_ || z.size() != m || !P_.allFinite()) return false;
  // ỹᵀỹ bounds the NIS from above (S = H P Hᵀ + I ≥ I): m·n operations against the factorisation's
  // m·n² (a 35-row tick and 4 bodies: about 1.4·10³ against 10⁵).
  auto innovation = res_.head(m);
  innovation = z;
  innovation.noalias() -= H_pi.leftCols(n_) * pi_;
  nis = scale * scale * innovation.squaredNorm();
  if (!std::isfinite(nis)) return false;
  if (nis <= level) return true;
  if (consider_gain_) {  // every row, the consider parameters' share counted (Schmidt path)
    if (!StagedFrom(H_pi, z)) StageSchmidt(H_pi, z);
    return WhitenedNis(m, scale, nis) && std::isfinite(nis);
  }
  // The NIS needs no consider columns: they are not staged. The rows are staged unscaled, so that
  // an Evaluate on the same rows can reuse them and their products (Stage).
  double other_nis = 0.0;
  const int rows = Stage(H_pi, z, other_nis, false, false);
  nis = scale * scale * other_nis;
  // The first half of either form of the update, with Evaluate's choice between them.
  double nis_rows = 0.0;
  const bool ok = rows == 0 || (rows < n_ && CovarianceNis(rows, nis_rows, scale)) ||
                  InformationNis(rows, nis_rows, scale);
  nis += nis_rows;
  return ok && std::isfinite(nis);
}

bool InertialFilter::Evaluate(const Eigen::Ref<const Eigen::MatrixXd>& H_pi,
                              const Eigen::Ref<const Eigen::VectorXd>& z, Candidate& out,
                              bool reuse_nis) noexcept {
  const int m = static_cast<int>(H_pi.rows());
  if (m > Hc_.rows() || H_pi.cols() != n_ + nc_ || z.size() != m) return false;
  // An overflowed covariance would reject every later measurement as numeric: start it afresh
  // (this tick is still reported unusable, so the caller sees the failure).
  if (!P_.allFinite()) {
    RecoverCovariance();
    return false;
  }
  if (consider_gain_) return SchmidtEvaluate(H_pi, z, out, reuse_nis);
  double nis = 0.0;
  const int rows = Stage(H_pi, z, nis, true, reuse_nis);
  double nis_rows = 0.0;
  bool ok = true;
  out.covariance_form = false;
  if (rows == 0) {
    dx_.setZero();
    P_candidate_ = P_;
  } else if (rows < n_ && CovarianceUpdate(rows, nis_rows)) {
    out.covariance_form = true;
  } else {
    ok = InformationUpdate(rows, nis_rows);
  }
  staged_.valid = false;  // the covariance form made U_ L⁻¹ H P
  // Damping (EKF): backtrack along dx until the nonlinear MAP cost decreases.
  double fraction = 1.0;
  if (ok && rows > 0 && kind_ == FilterKind::kLogCholesky) {
    // At s = 0 the residual is the innovation itself, already at hand.
    const double cost0 = nis + yc_.head(rows).squaredNorm();
    int halvings = 0;
    while (halvings <= kMaxHalvings &&
           !(Residual(H_pi, z, fraction) + fraction * fraction * prior_cost_ < cost0)) {
      fraction *= 0.5;
      ++halvings;
    }
    if (halvings > kMaxHalvings) fraction = 0.0;  // no descent along dx: keep the mean
  }
  out.step_fraction = fraction;
  x_candidate_ = x_ + fraction * dx_;
  // The covariance of the step taken (Joseph form with the gain s·K, header).
  if (fraction < 1.0) {
    const double keep = (1.0 - fraction) * (1.0 - fraction), learn = fraction * (2.0 - fraction);
    P_candidate_ = keep * P_ + learn * P_candidate_;
  }
  if (nc_ > 0 && rows == m)  // the consider columns where they are (StageRows)
    ConsiderStep(ok ? rows : 0, out.covariance_form, fraction, H_pi.rightCols(nc_));
  else if (nc_ > 0)
    ConsiderStep(ok ? rows : 0, out.covariance_form, fraction, Cc_.topRows(rows));
  out.nis = nis + nis_rows;
  out.dof = m;
  out.rows_used = rows;
  out.step = fraction * dx_.cwiseAbs().maxCoeff();
  return ok && std::isfinite(out.nis) && x_candidate_.allFinite() && P_candidate_.allFinite();
}

void InertialFilter::ConsiderStep(int m, bool covariance_form, double fraction,
                                  const Eigen::Ref<const Eigen::MatrixXd>& C) noexcept {
  // The estimate's error e = x̂ − x moves as e⁺ = (1 − K_s H) e + K_s (C c + v) with the gain
  // K_s = s·K of the step taken, so its sensitivity to the consider parameters c as
  // D⁺ = D − s·K (H D − C).
  if (m == 0 || fraction == 0.0) {
    D_candidate_ = D_;
    return;
  }
  if (covariance_form) {     // K = Vᵀ L⁻¹ with V = L⁻¹ H P (U_) and S = L Lᵀ (S_)
    auto X = X_.topRows(m);  // H D − C
    X = -C;
    X.noalias() += Hc_.topRows(m) * D_;
    // Kᵀ = L⁻ᵀ V first: a triangular solve on the n state columns, not on X's many consider ones.
    auto kt = Kt_.topRows(m);
    kt = U_.topRows(m);
    S_.topLeftCorner(m, m).triangularView<Eigen::Lower>().transpose().solveInPlace(kt);
    T_.noalias() = kt.transpose() * X;
  } else {  // K = A⁻¹ Hᵀ, llt_ = chol(A): K (H D − C) = (A⁻¹ HᵀH) D − K C, HᵀH the staged one's
    // The solves on the n + m columns of A⁻¹ HᵀH and K, not on the many consider ones.
    KH_ = HtH_;
    llt_.solveInPlace(KH_);
    auto k = K_.leftCols(m);
    k = Hc_.topRows(m).transpose();
    llt_.solveInPlace(k);
    T_.noalias() = KH_ * D_;
    T_.noalias() -= k * C;
  }
  D_candidate_.noalias() = D_ - fraction * T_;
}

bool InertialFilter::InformationNis(int m, double& nis, double scale) noexcept {
  const auto H = Hc_.topRows(m);
  const auto y = yc_.head(m);
  if (!staged_.information) {  // P⁻¹, HᵀH and Hᵀỹ, once for the staged rows
    llt_.compute(P_);
    if (llt_.info() != Eigen::Success) return false;
    P_inverse_.setIdentity();
    llt_.solveInPlace(P_inverse_);
    HtH_.noalias() = H.transpose() * H;
    b_staged_.noalias() = H.transpose() * y;
    staged_.information = true;
  }
  // The rows times `scale`: A = P⁻¹ + s² HᵀH, b = s² Hᵀỹ, NIS = s² ỹᵀỹ − bᵀ A⁻¹ b.
  const double s2 = scale * scale;
  A_ = P_inverse_;
  A_.noalias() += s2 * HtH_;
  llt_.compute(A_);
  if (llt_.info() != Eigen::Success) return false;
  b_ = s2 * b_staged_;
  dx_ = b_;
  llt_.solveInPlace(dx_);
  nis = s2 * y.squaredNorm() - b_.dot(dx_);
  return true;
}

bool InertialFilter::InformationUpdate(int m, double& nis) noexcept {
  if (!InformationNis(m, nis, 1.0)) return false;
  const auto H = Hc_.topRows(m);
  P_candidate_.setIdentity();
  llt_.solveInPlace(P_candidate_);
  auto Hdx = res_.head(m);
  Hdx.noalias() = H * dx_;
  prior_cost_ = b_.dot(dx_) - Hdx.squaredNorm();  // A dx = b, A = P⁻¹ + HᵀH
  return true;
}

double InertialFilter::Residual(const Eigen::Ref<const Eigen::MatrixXd>& H_pi,
                                const Eigen::Ref<const Eigen::VectorXd>& z, double s) noexcept {
  for (int j = 0; j < k_; ++j) {
    const dynamics::Vector10 theta = x_.segment<10>(10 * j) + s * dx_.segment<10>(10 * j);
    pi_trial_.segment<10>(10 * j) = InBodyFrame(j, dynamics::LogCholeskyToParameters(theta));
  }
  auto residual = res_.head(z.size());
  residual = z;
  residual.noalias() -= H_pi.leftCols(n_) * pi_trial_;
  const double r = residual.squaredNorm();
  return std::isfinite(r) ? r : std::numeric_limits<double>::infinity();
}

bool InertialFilter::CovarianceNis(int m, double& nis, double scale) noexcept {
  const auto H = Hc_.topRows(m);
  if (!staged_.covariance) {           // H P and H P Hᵀ, once for the staged rows
    U_.topRows(m).noalias() = H * P_;  // made L⁻¹ H P by CovarianceUpdate
    HPHt_.topLeftCorner(m, m).triangularView<Eigen::Lower>() = U_.topRows(m) * H.transpose();
    staged_.covariance = true;
  }
  return WhitenedNis(m, scale, nis);
}

bool InertialFilter::WhitenedNis(int m, double scale, double& nis) noexcept {
  // The rows times `scale`: S = s² HPHt_ + 1 (H P Hᵀ, and X Xᵀ on the Schmidt path), NIS = |L⁻¹ s
  // ỹ|².
  Eigen::Ref<Eigen::MatrixXd> S(S_.topLeftCorner(m, m));
  S.triangularView<Eigen::Lower>() = (scale * scale) * HPHt_.topLeftCorner(m, m);
  S.diagonal().array() += 1.0;
  const Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(S);  // in place: no allocation
  if (llt.info() != Eigen::Success) return false;
  auto w = w_.head(m);
  w = scale * yc_.head(m);
  llt.matrixL().solveInPlace(w);
  nis = w.squaredNorm();
  return true;
}

bool InertialFilter::CovarianceUpdate(int m, double& nis) noexcept {
  if (!CovarianceNis(m, nis, 1.0)) return false;
  const auto H = Hc_.topRows(m);
  auto V = U_.topRows(m);
  auto w = w_.head(m);
  const auto L = S_.topLeftCorner(m, m).triangularView<Eigen::Lower>();  // S's factor
  L.solveInPlace(V);
  dx_.noalias() = V.transpose() * w;
  // dxᵀP⁻¹dx = (H dx)ᵀ S⁻¹ỹ, since dx = P Hᵀ S⁻¹ỹ.
  L.transpose().solveInPlace(w);  // w = S⁻¹ỹ now
  auto Hdx = res_.head(m);
  Hdx.noalias() = H * dx_;
  prior_cost_ = Hdx.dot(w);
  P_candidate_ = P_;
  P_candidate_.selfadjointView<Eigen::Lower>().rankUpdate(V.transpose(), -1.0);
  for (int j = 1; j < n_; ++j)
    for (int i = 0; i < j; ++i) P_candidate_(i, j) = P_candidate_(j, i);
  // Cancellation in P − VᵀV can cost definiteness when a measurement is very informative.
  llt_.compute(P_candidate_);
  return llt_.info() == Eigen::Success && P_candidate_.allFinite();
}

}  // namespace heft::estimator

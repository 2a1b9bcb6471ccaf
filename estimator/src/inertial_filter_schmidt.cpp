// InertialFilter's Schmidt path (inertial_filter.hpp, "Consider parameters": set_consider_gain):
// the NIS and the update whose gain counts the consider parameters. The estimate's error is
// x̂ − x = e + D c with e ~ N(0, P) and c ~ N(0, 1) independent, so the innovation
// ỹ = H (x − x̂) + C c + v has
//   S = H P Hᵀ + X Xᵀ + 1,  X = H D − C,   and   cov(x̂ − x, −ỹ) = P Hᵀ + D Xᵀ = (S Kᵀ)ᵀ,
// the gain K = (P Hᵀ + D Xᵀ) S⁻¹ (the augmented filter's gain on x, c left as it is). For any
// gain the error moves as e⁺ + D⁺ c with D⁺ = D − K X and, c apart, the Joseph form
//   P⁺ = (1 − K H) P (1 − K H)ᵀ + K Kᵀ = P − (K H P + (K H P)ᵀ) + K (H P Hᵀ + 1) Kᵀ,
// K (H P Hᵀ + 1) Kᵀ = K S Kᵀ − (K X)(K X)ᵀ. With the Bierman gain (X unseen) K H P = K S Kᵀ and
// this is the covariance form's P − K S Kᵀ; here it is not, so the damped step's s·K keeps the
// Joseph form's two terms: P⁺(s) = P − s (K H P + (K H P)ᵀ) + s² K (H P Hᵀ + 1) Kᵀ.
//
// Every row is staged: a row that sees no estimated link still carries consider columns, which
// the gain reads through its correlation with the rows that do (a neighbour's nominal error seen
// on its own joints is not learned as the link's). m×m is factorised whatever n is. Allocates
// nothing (every buffer sized at construction).
#include <algorithm>
#include <cmath>

#include "heft/estimator/inertial_filter.hpp"

namespace heft::estimator {

void InertialFilter::StageSchmidt(const Eigen::Ref<const Eigen::MatrixXd>& H_pi,
                                  const Eigen::Ref<const Eigen::VectorXd>& z) noexcept {
  const int m = static_cast<int>(H_pi.rows());
  auto y = yc_.head(m);
  y = z;
  y.noalias() -= H_pi.leftCols(n_) * pi_;
  auto H = Hc_.topRows(m);
  if (kind_ == FilterKind::kLogCholesky) {  // H = H_π G(θ), block by block
    for (int j = 0; j < k_; ++j)
      H.middleCols<10>(10 * j).noalias() =
          H_pi.middleCols<10>(10 * j) * G_.block<10, 10>(0, 10 * j);
  } else {
    H = H_pi.leftCols(n_);
  }
  auto X = X_.topRows(m);  // H D − C
  X = -H_pi.rightCols(nc_);
  X.noalias() += H * D_;
  auto A = U_.topRows(m);  // H P
  A.noalias() = H * P_;
  HPHt_.topLeftCorner(m, m).triangularView<Eigen::Lower>() = A * H.transpose();
  auto Xg = Xg_.topRows(m);  // the columns the gain counts
  Xg = X * gain_mask_.asDiagonal();
  HPHt_.topLeftCorner(m, m).selfadjointView<Eigen::Lower>().rankUpdate(Xg);  // + X Xᵀ
  auto M = V_.topRows(m);  // S Kᵀ = H P + X Dᵀ
  M = A;
  M.noalias() += Xg * D_.transpose();
  staged_ =
      Staged{H_pi.data(), z.data(), H_pi.rows(), H_pi.outerStride(), generation_, m, 0.0, true,
             true,        true,     false};
}

bool InertialFilter::SchmidtEvaluate(const Eigen::Ref<const Eigen::MatrixXd>& H_pi,
                                     const Eigen::Ref<const Eigen::VectorXd>& z, Candidate& out,
                                     bool reuse) noexcept {
  const int m = static_cast<int>(H_pi.rows());
  if (!(reuse && StagedFrom(H_pi, z))) StageSchmidt(H_pi, z);
  staged_.valid = false;  // V_ becomes L⁻¹ S Kᵀ below
  double nis = 0.0;
  if (!WhitenedNis(m, 1.0, nis) || !std::isfinite(nis)) return false;
  const auto L = S_.topLeftCorner(m, m).triangularView<Eigen::Lower>();
  auto V = V_.topRows(m);
  L.solveInPlace(V);                           // V = L⁻¹ S Kᵀ, so K S Kᵀ = VᵀV
  dx_.noalias() = V.transpose() * w_.head(m);  // K ỹ = Vᵀ L⁻¹ ỹ
  auto kt = Kt_.topRows(m);
  kt = V;
  L.transpose().solveInPlace(kt);                 // Kᵀ
  T_.noalias() = kt.transpose() * X_.topRows(m);  // K X
  A_.noalias() = kt.transpose() * U_.topRows(m);  // K H P
  KH_.noalias() = V.transpose() * V;              // K (H P Hᵀ + 1) Kᵀ
  Tg_ = T_ * gain_mask_.asDiagonal();
  KH_.noalias() -= Tg_ * Tg_.transpose();
  const double fraction = SchmidtDamping(H_pi, z, m);
  x_candidate_ = x_ + fraction * dx_;
  P_candidate_ = P_;
  P_candidate_ -= fraction * A_;
  P_candidate_ -= fraction * A_.transpose();
  P_candidate_ += (fraction * fraction) * KH_;
  D_candidate_ = D_;
  D_candidate_ -= fraction * T_;
  out.nis = nis;
  out.dof = m;
  out.rows_used = m;
  out.covariance_form = true;
  out.step_fraction = fraction;
  out.step = fraction * dx_.cwiseAbs().maxCoeff();
  return x_candidate_.allFinite() && P_candidate_.allFinite() && D_candidate_.allFinite();
}

double InertialFilter::SchmidtDamping(const Eigen::Ref<const Eigen::MatrixXd>& H_pi,
                                      const Eigen::Ref<const Eigen::VectorXd>& z, int m) noexcept {
  // The KF's model is linear: its step is never damped. The EKF's is halved until the nonlinear
  // residual |z − H_π g(θ⁻ + s·dx)|² is no more than the larger of the residual it starts from
  // and the linearisation's prediction |ỹ − s H dx|² plus |s H dx|²: the point g(θ⁻ + s·dx) may
  // miss the linear one by about the step's own size. (The Bierman path's test, the MAP cost's
  // decrease, does not hold here: a gain that gives part of ỹ to the consider parameters can
  // leave the residual larger, by design.)
  if (kind_ != FilterKind::kLogCholesky) return 1.0;
  const auto y = yc_.head(m);
  auto hdx = hdx_.head(m);
  hdx.noalias() = Hc_.topRows(m) * dx_;
  const double cost0 = y.squaredNorm();
  double fraction = 1.0;
  for (int halvings = 0; halvings <= kMaxHalvings; ++halvings) {
    const double linear = (y - fraction * hdx).squaredNorm();
    const double allowed = std::max(cost0, linear + fraction * fraction * hdx.squaredNorm());
    if (Residual(H_pi, z, fraction) <= allowed) return fraction;
    fraction *= 0.5;
  }
  return 0.0;  // no step the linearisation describes: keep the mean
}

bool InertialFilter::set_consider_gain(const Eigen::Ref<const Eigen::VectorXd>& in_gain) noexcept {
  if (in_gain.size() != nc_ || !((in_gain.array() == 0.0) || (in_gain.array() == 1.0)).all())
    return false;
  gain_mask_ = in_gain;
  consider_gain_ = nc_ > 0 && (gain_mask_.array() != 0.0).any();
  staged_.valid = false;
  return true;
}

}  // namespace heft::estimator

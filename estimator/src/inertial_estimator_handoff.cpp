// InertialEstimator's hand-off: the policy (nominal until the data show a change), the rate limit
// along consistent sets, and the covariance of what is handed. No allocation.
#include <Eigen/Cholesky>
#include <limits>

#include "heft/estimator/inertial_estimator.hpp"

namespace heft::estimator {

namespace {

// dᵀ S⁻¹ d for a symmetric positive definite S (infinite when it is not). No allocation.
template <int N>
double Mahalanobis(const Eigen::Matrix<double, N, N>& S,
                   const Eigen::Matrix<double, N, 1>& d) noexcept {
  const Eigen::LLT<Eigen::Matrix<double, N, N>> llt(S);
  if (llt.info() != Eigen::Success) return std::numeric_limits<double>::infinity();
  const Eigen::Matrix<double, N, 1> w = llt.matrixL().solve(d);
  return w.squaredNorm();
}

}  // namespace

void InertialEstimator::EstimateCovariance() noexcept {
  // The filter's P through the Gauss–Hermite rule once a body; the consider part added to it.
  for (int k = 0; k < selection_.size(); ++k) {
    filter_.BodyCovariance(k, cov_filter_.middleCols<10>(10 * k), false);
    cov_estimate_.middleCols<10>(10 * k) = cov_filter_.middleCols<10>(10 * k);
    filter_.AddConsiderCovariance(k, cov_estimate_.middleCols<10>(10 * k));
  }
}

void InertialEstimator::HandedCovariance() noexcept {
  // The handed π's error about the truth is the estimate's plus the known offset between them:
  // E[(π_h − π)(π_h − π)ᵀ] = Σ + δδᵀ with δ = π_h − π̂; while the policy holds the nominal, the
  // nominal's own error too; and the unknown shape of a load the estimate carries (load_shape).
  for (int k = 0; k < selection_.size(); ++k) {
    const dynamics::Vector10 d =
        handed_.segment<10>(10 * k) - filter_.parameters().segment<10>(10 * k);
    cov_pi_.middleCols<10>(10 * k) = cov_estimate_.middleCols<10>(10 * k);
    cov_pi_.middleCols<10>(10 * k).noalias() += d * d.transpose();
    // A link handed at its nominal (the policy holds it there) carries the nominal's own error.
    if (handoff_threshold_ > 0.0 && handed_.segment<10>(10 * k) == nominal_.segment<10>(10 * k))
      cov_pi_.middleCols<10>(10 * k) += nominal_cov_.middleCols<10>(10 * k);
    // A load the estimate carries, of a shape the data see only where the motion excites it.
    const double added = filter_.parameters()[10 * k] - nominal_[10 * k];
    if (config_.load_shape && added > 0.0)
      cov_pi_.middleCols<10>(10 * k) += (added * added) * load_shape_.middleCols<10>(10 * k);
    // The shape a change of mass left behind: θ holds the shape per unit mass, informed at m_s.
    // With the link m₀ and a load of its own shape j, the estimate (m̂ / m_s) J(m_s) is off the
    // truth J(m̂) by (m̂ − m_s) m₀ / m_s (j − J_link / m₀): f kilograms of a point load placed
    // anywhere in the link's box.
    if (shape_alpha_ > 0.0 && shape_mass_[k] > 0.0) {
      const double f =
          (filter_.parameters()[10 * k] - shape_mass_[k]) * nominal_[10 * k] / shape_mass_[k];
      cov_pi_.middleCols<10>(10 * k) += (f * f) * load_placement_.middleCols<10>(10 * k);
    }
  }
}

void InertialEstimator::RememberShapeMass() noexcept {
  if (!(shape_alpha_ > 0.0)) return;
  for (int k = 0; k < selection_.size(); ++k)
    shape_mass_[k] += shape_alpha_ * (filter_.parameters()[10 * k] - shape_mass_[k]);
}

void InertialEstimator::ResetShapeMemory() noexcept {
  for (int k = 0; k < selection_.size(); ++k) shape_mass_[k] = filter_.parameters()[10 * k];
}

TickResult InertialEstimator::HandOn() noexcept {
  TickResult res;
  res.status = TickStatus::kInvalidInput;
  HandOn(res);
  HandedCovariance();
  return res;
}

dynamics::Vector10 InertialEstimator::HandOnTarget(int k, const dynamics::Vector10& estimate,
                                                   bool released) noexcept {
  if (!(handoff_threshold_ > 0.0)) return estimate;  // the policy is off
  // Whether the data show the link changed: the estimate differs from the nominal by more than
  // both errors explain, the estimate's and the nominal's own (a body's systematic error the
  // filter absorbed is not a load). A link that departed stays so until the estimate is back
  // within the median of that distance on at least half of its recent ticks (their share over
  // handoff_return_after): hysteresis, no flipping at the threshold, and an estimate crossing its
  // nominal towards a load beyond it, inside for a few ticks, has not returned. Nor is a return
  // judged on a release's tick or in its window: the release is the data showing a change, and
  // the gate has just multiplied P (gating.inflation), so an estimate on its way through the
  // nominal to a load beyond it reads as within the median band until the data bring P back down.
  const dynamics::Vector10 nominal = nominal_.segment<10>(10 * k);
  // The estimate's own covariance here is the filter's P alone: what the consider analysis adds
  // is the nominal's error as the estimate carries it, which Σ_nominal already counts (once).
  const Eigen::Matrix<double, 10, 10> S =
      cov_filter_.middleCols<10>(10 * k) + nominal_cov_.middleCols<10>(10 * k);
  const dynamics::Vector10 d = estimate - nominal;
  if (!departed_[k]) {
    departed_[k] = Significant(S, d, handoff_threshold4_, handoff_threshold_);
    back_share_[k] = 0.0;
  } else if (released) {
    back_share_[k] = 0.0;
  } else {
    const double back = Significant(S, d, return_threshold4_, return_threshold_) ? 0.0 : 1.0;
    back_share_[k] += back_alpha_ * (back - back_share_[k]);
    if (back_share_[k] >= 0.5) departed_[k] = 0;
  }
  return departed_[k] ? estimate : nominal;
}

bool InertialEstimator::Significant(const Eigen::Matrix<double, 10, 10>& S,
                                    const dynamics::Vector10& d, double threshold4,
                                    double threshold10) const noexcept {
  // The whole π (10 dof), or its mass and first moment alone (4 dof: what a load changes most and
  // a whole-body controller's balance reads), each against its χ²: a load that moves only the mass
  // and the CoM is not diluted by the six inertia dof it leaves as they were.
  const Eigen::Matrix4d S4 = S.topLeftCorner<4, 4>();
  const Eigen::Vector4d d4 = d.head<4>();
  return Mahalanobis<4>(S4, d4) > threshold4 || Mahalanobis<10>(S, d) > threshold10;
}

void InertialEstimator::HandOn(TickResult& res) noexcept {
  // Rate-limited along the segment towards the estimate, only towards targets consistent with the
  // margin (dynamics::kConsistencyMargin). A target that is consistent but thinner (λ_min(J) > 0,
  // below the margin) is handed moved into it (dynamics::InflateToMargin: J + δ·1, δ ≤ 2e-6 λ_max;
  // counted in thin_targets); one that is not consistent at all (the baseline KF's) keeps the
  // link's last handed set, and target_consistent is false (inconsistent_targets). Both ends having
  // the margin, every set on the segment has it (λ_min − ε λ_max is concave in π).
  // Policy (EstimatorConfig::handoff_confidence): a link moves only when the data show a change.
  const Eigen::VectorXd& estimate = filter_.parameters();
  const bool released = res.status == TickStatus::kReleased;
  for (int k = 0; k < selection_.size(); ++k) {
    dynamics::Vector10 t = HandOnTarget(k, estimate.segment<10>(10 * k), released);
    if (!dynamics::HasConsistencyMargin(t)) {
      if (!dynamics::IsPhysicallyConsistent(t, 0.0)) {
        res.target_consistent = false;
        continue;
      }
      t = dynamics::InflateToMargin(t);
      res.target_thin = true;
    }
    const RateLimitResult step =
        RateLimitStep(handed_.segment<10>(10 * k), t, config_.rate_limits, config_.control_period);
    handed_.segment<10>(10 * k) = step.handed;
    res.rate_limited = res.rate_limited || step.fraction < 1.0;
  }
  if (!res.target_consistent) ++inconsistent_targets_;
  if (res.target_thin) ++thin_targets_;
  if (res.rate_limited) ++rate_limited_ticks_;
}

}  // namespace heft::estimator

// InertialEstimator's start-up calibration: the residual and the regressor averaged over the
// window, and the load the estimate does not hold separated from the bias (SeparateLoad).
#include <algorithm>
#include <cmath>

#include "heft/estimator/inertial_estimator.hpp"

namespace heft::estimator {
namespace {

// gᵀ A⁺ g for a positive semidefinite A (n × n, both triangles) and g in its range: a Cholesky
// factorisation with diagonal pivoting, stopped at A's numerical rank r (no remaining diagonal
// above `relative` × the largest), A = Pᵀ B Bᵀ P with B = [L₁; L₂] (L₁ r × r lower), so that for
// g = A x, P g = B z and gᵀ A⁺ g = |z|², z = L₁⁻¹ (P g)₁..ᵣ. `a` is overwritten with the factor,
// `y` (n) is scratch. Returns r (0 where A is zero); allocates nothing.
int PseudoInverseQuadratic(Eigen::Ref<Eigen::MatrixXd> a,
                           const Eigen::Ref<const Eigen::VectorXd>& g,
                           Eigen::Ref<Eigen::VectorXd> y, double relative, double& t) noexcept {
  const Eigen::Index n = a.rows();
  t = 0.0;
  y = g;
  const double largest = n > 0 ? a.diagonal().maxCoeff() : 0.0;
  if (!(largest > 0.0)) return 0;
  Eigen::Index r = 0;
  for (Eigen::Index k = 0; k < n; ++k, ++r) {
    Eigen::Index p = 0;
    if (!(a.diagonal().tail(n - k).maxCoeff(&p) > relative * largest)) break;
    p += k;
    a.row(k).swap(a.row(p));
    a.col(k).swap(a.col(p));
    std::swap(y[k], y[p]);
    a(k, k) = std::sqrt(a(k, k));
    const Eigen::Index rest = n - k - 1;
    a.col(k).tail(rest) /= a(k, k);
    a.bottomRightCorner(rest, rest).noalias() -=
        a.col(k).tail(rest) * a.col(k).tail(rest).transpose();
  }
  a.topLeftCorner(r, r).triangularView<Eigen::Lower>().solveInPlace(y.head(r));
  t = y.head(r).squaredNorm();
  return static_cast<int>(r);
}

}  // namespace

void InertialEstimator::StartCalibration() noexcept {
  calibrator_.Restart();
  calibrating_ = config_.calibration.enabled;
  gated_ticks_ = 0;  // the gate judges the new bias afresh
  // The filter keeps its estimate: the residual is averaged against it, so a payload the filter
  // has already found stays in the estimate and does not go into the bias.
}

void InertialEstimator::SkipCalibration() noexcept {
  calibrator_.Restart();
  calibrating_ = false;
  ResetFilter();
}

void InertialEstimator::Calibrate(const TickInput& in, TickResult& res) noexcept {
  res.status = TickStatus::kCalibrating;
  HandOn(res);  // a reset estimate reaches the controller at the limited rate meanwhile
  HandedCovariance();
  if (!BuildMeasurement(in, res.model)) return;
  // Without the foot wrenches (the null-space measurement) the residual, the regressor and the
  // consider columns are averaged as projected onto the contacts' null space: the part a contact
  // wrench could carry is unknown, and the null-space rows never see it.
  const bool project = res.model != hal::MeasurementModel::kFullWrench;
  Eigen::VectorXd& r = measurement_.residual();
  r.noalias() -= measurement_.regressor() * filter_.parameters();  // against the current estimate
  if (project) measurement_.ProjectOntoNullSpace(r);
  const double speed = in.v.cwiseAbs().maxCoeff();
  res.calibration = calibrator_.Add(r, speed, in.time);
  // The regressor averaged over the same ticks as the residual (the window restarts with it).
  if (res.calibration == CalibrationStatus::kCollecting ||
      res.calibration == CalibrationStatus::kDone)
    AccumulateCalibrationRows(project);
  // The nominal's error at the calibration pose went into the bias with the residual: the
  // consider columns lose the same average (Measurement::SetConsiderBias).
  if (res.calibration == CalibrationStatus::kDone && calibrator_.samples() > 0) {
    calibration_c_ /= calibrator_.samples();
    measurement_.SetConsiderBias(calibration_c_);
  }
  if (res.calibration == CalibrationStatus::kDone) {
    SeparateLoad();
    CountHeldJoints();
  }
  if (res.calibration == CalibrationStatus::kDone ||
      res.calibration == CalibrationStatus::kTimedOut)
    calibrating_ = false;
}

void InertialEstimator::AccumulateCalibrationRows(bool project) noexcept {
  if (calibrator_.samples() == 1) {
    calibration_y_.setZero();
    calibration_c_.setZero();
    calibration_held_sum_.setZero();
  }
  for (int j = 0; j < measurement_.friction_joints(); ++j)
    calibration_held_sum_[j] += measurement_.held_fraction(j);
  if (!project) {
    calibration_y_ += measurement_.regressor();
    measurement_.AccumulateConsider(calibration_c_);
    return;
  }
  calibration_h_ = measurement_.regressor();  // scratch here: SeparateLoad sets it anew
  measurement_.ProjectOntoNullSpace(calibration_h_);
  calibration_y_ += calibration_h_;
  calibration_c_tick_.setZero();
  measurement_.AccumulateConsider(calibration_c_tick_);
  measurement_.ProjectOntoNullSpace(calibration_c_tick_);
  calibration_c_ += calibration_c_tick_;
}

void InertialEstimator::CountHeldJoints() noexcept {
  calibration_held_ = 0;
  if (calibrator_.samples() < 1) return;
  const double half = 0.5 * calibrator_.samples();
  for (Eigen::Index j = 0; j < calibration_held_sum_.size(); ++j)
    calibration_held_ += calibration_held_sum_[j] >= half;
}

bool InertialEstimator::ShowsALoad(const Eigen::MatrixXd& H, const Eigen::VectorXd& u) noexcept {
  // Without a load w ~ N(0, S): its part in range(S^-½ H), the directions a change of the links
  // would take, is χ² with rank(H) dof, T = gᵀ A⁺ g with g = Hᵀ S⁻¹ w and A = Hᵀ S⁻¹ H (the
  // generalised likelihood ratio of a change δ left free against δ ~ N(0, Σ_n)). The posterior
  // mean's distance δᵀ Σ_n⁻¹ δ is no test: it shrinks a load by the prior's weight (HΣ_nHᵀ)² and
  // missed a 5.4 kg dumbbell on the simulated fixed arm, whose few rows see a link's change at
  // HΣ_nHᵀ ≈ 0.01 (docs/handoff.md, "A calibration that never absorbs a load").
  load_g_ = H;
  load_llt_.solveInPlace(load_g_);  // S⁻¹ H
  load_a_.noalias() = H.transpose() * load_g_;
  load_grad_.noalias() = H.transpose() * u;
  double t = 0.0;
  const int dof = PseudoInverseQuadratic(load_a_, load_grad_, load_y_, 1e-9, t);
  return dof > 0 && std::isfinite(t) && t > load_thresholds_[static_cast<std::size_t>(dof)];
}

void InertialEstimator::SeparateLoad() noexcept {
  // The averaged residual b against the estimate π̂ and the regressor Ȳ averaged over the same
  // ticks, whitened with the last tick's rows (w = W b, H = W Ȳ; a tick's R, not R / N: the average
  // holds the nominal model's systematic error, which averaging does not shrink). Where b holds a
  // change of the estimated links beyond their nominal uncertainty Σ_n (ShowsALoad, at 0.999), it
  // is a load the estimate does not hold (attached while heft was down, or gone since a persisted
  // estimate): the part Ȳ δ the links explain (δ by least squares in Σ_n's metric) leaves the bias
  // and the filter finds the load, if the links can carry it (Plausible).
  calibration_load_.setZero();
  if (calibrator_.samples() < 1) return;
  calibration_y_ /= calibrator_.samples();  // Ȳ
  calibration_h_ = calibration_y_;
  measurement_.Whiten(calibration_h_);
  load_w_ = calibrator_.bias();
  measurement_.Whiten(load_w_);
  const Eigen::MatrixXd& H = calibration_h_;
  for (int k = 0; k < selection_.size(); ++k)
    load_hs_.middleCols<10>(10 * k).noalias() =
        H.middleCols<10>(10 * k) * nominal_cov_.middleCols<10>(10 * k);
  load_s_.noalias() = load_hs_ * H.transpose();
  load_s_.diagonal().array() += 1.0;
  load_llt_.compute(load_s_);
  if (load_llt_.info() != Eigen::Success) return;
  load_u_ = load_w_;
  load_llt_.solveInPlace(load_u_);
  if (!ShowsALoad(H, load_u_)) return;
  // The whole part of b that Y explains leaves the bias (the prior scaled by kLoadPriorScale: the
  // least-squares δ in the Σ_n metric), not a prior-shrunk δ.
  load_hs_ *= kLoadPriorScale;
  load_s_.noalias() = load_hs_ * H.transpose();
  load_s_.diagonal().array() += 1.0;
  load_llt_.compute(load_s_);
  if (load_llt_.info() != Eigen::Success) return;
  load_u_ = load_w_;  // still W b
  load_llt_.solveInPlace(load_u_);
  calibration_load_.noalias() = load_hs_.transpose() * load_u_;
  // A change no link could make (a mass below the plausible, the CoM beyond its bound: the
  // residual of a robot the nominal model does not describe, not a load) stays in the bias.
  load_trial_ = filter_.parameters() + calibration_load_;
  if (!Plausible(load_trial_)) {
    calibration_load_.setZero();
    return;
  }
  load_w_.noalias() = calibration_y_ * calibration_load_;  // Ȳ δ, out of the bias
  calibrator_.RemoveFromBias(load_w_);
}

}  // namespace heft::estimator

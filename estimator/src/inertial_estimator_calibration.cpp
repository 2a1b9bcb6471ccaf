// InertialEstimator's start-up calibration: the residual and the regressor averaged over the
// window, and the load the estimate does not hold separated from the bias (SeparateLoad).
#include "heft/estimator/inertial_estimator.hpp"

namespace heft::estimator {

void InertialEstimator::StartCalibration() noexcept {
  calibrator_.Restart();
  calibrating_ = config_.calibration.enabled;
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
  if (res.calibration == CalibrationStatus::kDone) SeparateLoad();
  if (res.calibration == CalibrationStatus::kDone ||
      res.calibration == CalibrationStatus::kTimedOut)
    calibrating_ = false;
}

void InertialEstimator::AccumulateCalibrationRows(bool project) noexcept {
  if (calibrator_.samples() == 1) {
    calibration_y_.setZero();
    calibration_c_.setZero();
  }
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

void InertialEstimator::SeparateLoad() noexcept {
  // The averaged residual b against the estimate π̂ and the regressor Ȳ averaged over the same
  // ticks, whitened with the last tick's rows (w = W b, H = W Ȳ; a tick's R, not R / N: the average
  // holds the nominal model's systematic error, which averaging does not shrink). The change δ of
  // the estimated links that explains it, with the nominal's uncertainty Σ_n as its prior, and how
  // far it is beyond that uncertainty:
  //   δ = Σ_n Hᵀ u,  u = (H Σ_n Hᵀ + 1)⁻¹ w,  d² = δᵀ Σ_n⁻¹ δ = uᵀ H Σ_n Hᵀ u.
  // Beyond χ²₁₀(0.999) it is a load the estimate does not hold (attached while heft was down, or
  // gone since a persisted estimate): Y δ leaves the bias and the filter finds the load.
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
  calibration_load_.noalias() = load_hs_.transpose() * load_u_;  // δ
  load_w_.noalias() = H * calibration_load_;                     // H Σ_n Hᵀ u
  const double d2 = load_u_.dot(load_w_);
  load_w_ = calibrator_.bias();
  measurement_.Whiten(load_w_);
  if (!std::isfinite(d2) || !(d2 > load_threshold_)) {
    calibration_load_.setZero();
    return;
  }
  // Significant: the whole part of b that Y explains leaves the bias (the prior scaled by
  // kLoadPriorScale: the least-squares δ in the Σ_n metric), not the prior-shrunk δ above.
  load_hs_ *= kLoadPriorScale;
  load_s_.noalias() = load_hs_ * H.transpose();
  load_s_.diagonal().array() += 1.0;
  load_llt_.compute(load_s_);
  if (load_llt_.info() != Eigen::Success) {
    calibration_load_.setZero();
    return;
  }
  load_u_ = load_w_;  // still W b
  load_llt_.solveInPlace(load_u_);
  calibration_load_.noalias() = load_hs_.transpose() * load_u_;
  load_w_.noalias() = calibration_y_ * calibration_load_;  // Ȳ δ, out of the bias
  calibrator_.RemoveFromBias(load_w_);
}

}  // namespace heft::estimator

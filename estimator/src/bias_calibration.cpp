#include "heft/estimator/bias_calibration.hpp"

#include <algorithm>
#include <cmath>

namespace heft::estimator {

BiasCalibrator::BiasCalibrator(int rows, const CalibrationConfig& config)
    : config_(config),
      sum_(Eigen::VectorXd::Zero(rows)),
      bias_(Eigen::VectorXd::Zero(rows)),
      last_good_(Eigen::VectorXd::Zero(rows)) {}

void BiasCalibrator::Restart() noexcept {
  sum_.setZero();
  bias_.setZero();
  count_ = 0;
  start_ = began_ = moving_since_ = -1.0;
  done_ = timed_out_ = false;
}

bool BiasCalibrator::TimedOut(double time) noexcept {
  if (began_ < 0.0) began_ = time;
  if (!(time - began_ >= config_.timeout)) return false;
  bias_ = last_good_;
  done_ = timed_out_ = true;
  ++timeouts_;
  return true;
}

CalibrationStatus BiasCalibrator::Refuse(double time) noexcept {
  if (done_) return timed_out_ ? CalibrationStatus::kTimedOut : CalibrationStatus::kDone;
  if (TimedOut(time)) return CalibrationStatus::kTimedOut;
  ++refusals_;
  return CalibrationStatus::kRefusedInvalid;
}

CalibrationStatus BiasCalibrator::Add(const Eigen::Ref<const Eigen::VectorXd>& residual,
                                      double speed, double time) noexcept {
  if (done_) return timed_out_ ? CalibrationStatus::kTimedOut : CalibrationStatus::kDone;
  if (TimedOut(time)) return CalibrationStatus::kTimedOut;
  if (!residual.allFinite()) {
    ++refusals_;
    return CalibrationStatus::kRefusedInvalid;
  }
  if (!(speed <= config_.max_speed)) {
    // Not averaged. A lasting motion may have started before the threshold was crossed (what is
    // averaged just before it may hold dynamics): past max_motion, the window starts again.
    ++refusals_;
    if (moving_since_ < 0.0) moving_since_ = time;
    if (time - moving_since_ > config_.max_motion) {
      sum_.setZero();
      count_ = 0;
      start_ = -1.0;
    }
    return CalibrationStatus::kRefusedMoving;
  }
  moving_since_ = -1.0;
  if (start_ < 0.0) start_ = time;
  sum_ += residual;
  ++count_;
  if (time - start_ >= config_.window && count_ > 0) {
    bias_ = sum_ / count_;
    last_good_ = bias_;
    done_ = true;
    return CalibrationStatus::kDone;
  }
  return CalibrationStatus::kCollecting;
}

void BiasCalibrator::RemoveFromBias(const Eigen::Ref<const Eigen::VectorXd>& part) noexcept {
  if (part.size() != bias_.size() || !part.allFinite()) return;
  bias_ -= part;
  last_good_ = bias_;
}

double BiasCalibrator::progress(double time) const {
  if (done_) return 1.0;
  if (start_ < 0.0 || config_.window <= 0.0) return 0.0;
  return std::clamp((time - start_) / config_.window, 0.0, 1.0);
}

}  // namespace heft::estimator

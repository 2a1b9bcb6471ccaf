#include "heft/estimator/bias_calibration.hpp"

#include <algorithm>
#include <cmath>

namespace heft::est {

BiasCalibrator::BiasCalibrator(int rows, const CalibrationConfig& config)
    : config_(config), sum_(Eigen::VectorXd::Zero(rows)), bias_(Eigen::VectorXd::Zero(rows)) {}

void BiasCalibrator::Restart() noexcept {
  sum_.setZero();
  bias_.setZero();
  count_ = 0;
  start_ = -1.0;
  done_ = false;
}

CalibrationStatus BiasCalibrator::Add(const Eigen::Ref<const Eigen::VectorXd>& residual,
                                      double speed, double time) noexcept {
  if (done_) return CalibrationStatus::kDone;
  if (!residual.allFinite()) {
    ++refusals_;
    return CalibrationStatus::kRefusedInvalid;
  }
  if (!(speed <= config_.max_speed)) {
    // Moving: what is averaged so far may be dynamics; start the window again.
    sum_.setZero();
    count_ = 0;
    start_ = -1.0;
    ++refusals_;
    return CalibrationStatus::kRefusedMoving;
  }
  if (start_ < 0.0) start_ = time;
  sum_ += residual;
  ++count_;
  if (time - start_ >= config_.window && count_ > 0) {
    bias_ = sum_ / count_;
    done_ = true;
    return CalibrationStatus::kDone;
  }
  return CalibrationStatus::kCollecting;
}

double BiasCalibrator::progress(double time) const {
  if (done_) return 1.0;
  if (start_ < 0.0 || config_.window <= 0.0) return 0.0;
  return std::clamp((time - start_) / config_.window, 0.0, 1.0);
}

}  // namespace heft::est

// Start-up bias calibration (Foster et al. §IV-B): with the parameters held (at nominal at
// start-up), the residual Δτ − Y_est π̂ is averaged over a window and then subtracted from every
// later Δτ as a constant term, absorbing what the nominal model misses (cables, hoist, CAD errors).
//
// Samples taken while the robot moves faster than `max_speed` are not averaged (the residual then
// holds unmodelled dynamics, not a bias) and are counted as refusals; a brief motion (up to
// `max_motion` seconds) only pauses the window, a longer one restarts it. Calibration never waits
// for ever: `timeout` seconds after it started it ends with the last good bias (zero if there was
// none) and says so (kTimedOut).
#pragma once

#include <Eigen/Core>
#include <cstdint>

namespace heft::estimator {

struct CalibrationConfig {
  bool enabled = true;
  double window = 1.0;      // s of averaging
  double max_speed = 0.2;   // rad/s (or m/s): largest joint or base speed allowed while averaging
  double max_motion = 0.1;  // s: a motion this long only pauses the window; longer restarts it
  double timeout = 10.0;    // s after the start: give up, keep the last good bias
};

enum class CalibrationStatus {
  kCollecting,
  kDone,
  kRefusedMoving,   // sample not averaged: moving
  kRefusedInvalid,  // sample not averaged: non-finite, or the measurement it needs is missing
  kTimedOut,        // no full window within the timeout: the last good bias (or zero) is kept
};

class BiasCalibrator {
 public:
  BiasCalibrator(int rows, const CalibrationConfig& config);
  void Restart() noexcept;
  // Adds one residual taken at `time`; `speed` is the largest |v| of the sample.
  CalibrationStatus Add(const Eigen::Ref<const Eigen::VectorXd>& residual, double speed,
                        double time) noexcept;
  // A tick with no usable residual (e.g. the foot wrenches are invalid): counted, timeout checked.
  CalibrationStatus Refuse(double time) noexcept;
  bool done() const { return done_; }
  bool timed_out() const { return timed_out_; }
  const Eigen::VectorXd& bias() const { return bias_; }
  // Takes `part` out of a finished calibration's bias (a load the residual showed: the estimator's
  // SeparateLoad); the last good bias with it.
  void RemoveFromBias(const Eigen::Ref<const Eigen::VectorXd>& part) noexcept;
  std::uint64_t refusals() const { return refusals_; }
  std::uint64_t timeouts() const { return timeouts_; }
  int samples() const { return count_; }
  double progress(double time) const;  // 0..1 of the window

 private:
  bool TimedOut(double time) noexcept;  // starts the clock; ends the calibration on timeout

  CalibrationConfig config_;
  Eigen::VectorXd sum_, bias_, last_good_;
  int count_ = 0;
  double start_ = -1.0;         // first averaged sample of the window
  double began_ = -1.0;         // first tick of this calibration (the timeout's clock)
  double moving_since_ = -1.0;  // start of the current motion
  bool done_ = false, timed_out_ = false;
  std::uint64_t refusals_ = 0, timeouts_ = 0;
};

}  // namespace heft::estimator

// Start-up bias calibration (Foster et al. §IV-B): with the parameters held at nominal, the
// residual Δτ − Y_est π_nom is averaged over a window and then subtracted from every later Δτ as a
// constant term, absorbing what the nominal model misses (cables, hoist, CAD errors).
// Calibration refuses to average while the robot moves faster than a threshold (the residual then
// holds unmodelled dynamics, not a bias): it restarts the window and says why.
#pragma once

#include <Eigen/Core>
#include <cstdint>

namespace heft::est {

struct CalibrationConfig {
  bool enabled = true;
  double window = 1.0;     // s of averaging
  double max_speed = 0.2;  // rad/s (or m/s): largest joint or base speed allowed while averaging
};

enum class CalibrationStatus { kCollecting, kDone, kRefusedMoving, kRefusedInvalid };

class BiasCalibrator {
 public:
  BiasCalibrator(int rows, const CalibrationConfig& config);
  void Restart() noexcept;
  // Adds one residual taken at `time`; `speed` is the largest |v| of the sample.
  CalibrationStatus Add(const Eigen::Ref<const Eigen::VectorXd>& residual, double speed,
                        double time) noexcept;
  bool done() const { return done_; }
  const Eigen::VectorXd& bias() const { return bias_; }
  std::uint64_t refusals() const { return refusals_; }
  int samples() const { return count_; }
  double progress(double time) const;  // 0..1 of the window

 private:
  CalibrationConfig config_;
  Eigen::VectorXd sum_, bias_;
  int count_ = 0;
  double start_ = -1.0;
  bool done_ = false;
  std::uint64_t refusals_ = 0;
};

}  // namespace heft::est

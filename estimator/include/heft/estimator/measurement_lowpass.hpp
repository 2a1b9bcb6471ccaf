// The measurement's low-pass (EstimatorConfig::measurement_lowpass): the whitened rows
// H and residual z through one first-order filter, x_f ← x_f + α (x − x_f), α = 1 − exp(−2π f_c
// dt), both sides alike so that H_f π = z_f holds exactly for constant parameters.
//
// It keeps two copies. The gate's (HGate, zGate) takes every tick: it is the world as the sensors
// see it, and a lasting residual (a load step) builds up in it whole, is gated, then released. The
// update's (HUse, zUse) is this tick blended into the state the last used tick left (Keep), so it
// holds only the ticks the filter used: a spike the gate rejected (a touchdown's) leaves no tail
// α (1 − α)ᵏ in the ticks after it. A release takes the gate's copy (Sync: the world changed);
// after rejections the two copies differ ("split") until the difference has decayed below 10⁻³
// over used ticks, when they are made one again.
//
// The gate copy's noise variance per whitened row, v ← (1 − α)² v + α² from 1 at a restart, is
// what its rows are whitened for before the gate reads their NIS (HGateNis), so that the gate's
// χ² thresholds keep their meaning; the update keeps R = 1 (a low-pass of white noise carries the
// same information per second: EstimatorConfig::measurement_lowpass).
// The null-space rows too: their basis moves with the contacts, but a weighted sum of valid,
// whitened rows is a valid row of the same variance. Blend restarts on a gap in time longer than
// the filter's own time constant 1/(2π f_c) (32 ms at 5 Hz) or a change of the rows' count (a
// contact made or lost); a shorter gap of k periods (ticks the estimator did not blend: a lost
// sample, a tick on the other measurement) blends with α_k = 1 − (1 − α)ᵏ, as k ticks of no news
// would have decayed the state. Restart() on calibration and reset.
//
// Set-up allocates; everything else allocates nothing and never throws.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <limits>

namespace heft::estimator {

class MeasurementLowPass {
 public:
  // cutoff_hz 0: off (nothing but enabled() and Restart() is then called). rows × states: the
  // largest measurement.
  MeasurementLowPass(double cutoff_hz, double control_period, int rows, int states);

  bool enabled() const { return alpha_ > 0.0; }
  void Restart() noexcept { last_ = std::numeric_limits<double>::quiet_NaN(); }

  // Blends this tick's rows (the first `rows` of H and z) into both copies at `time`. The previous
  // tick continues the chain when it came at most the time constant before (and within 1.5
  // periods for a filter faster than that), with α for the periods between them; otherwise both
  // restart.
  void Blend(double time, const Eigen::Ref<const Eigen::MatrixXd>& H,
             const Eigen::Ref<const Eigen::VectorXd>& z, int rows) noexcept;
  // After the gate's decision on this tick: an update keeps the tick in the update's copy, a
  // release takes the gate's copy, a tick not used leaves the copies split.
  void After(bool updated, bool released) noexcept;

  // The gate copy's noise variance per whitened row.
  double gate_variance() const { return gate_variance_; }
  auto HGate() const { return H_gate_[gate_].topRows(rows_); }
  auto zGate() const { return z_gate_[gate_].head(rows_); }
  // The gate copy whitened for its own noise (÷ √v): the innovation's covariance of the low-passed
  // rows is H P Hᵀ + v·1, so these rows' NIS (R = 1) is the low-passed one's, χ²(m) per tick.
  // GateNisScale() is that 1/√v, for InertialFilter::Nis to apply to HGate and zGate (the scaled
  // rows are an expression, not a copy: a real-time caller passes the scale).
  double GateNisScale() const { return 1.0 / std::sqrt(gate_variance_); }
  auto HGateNis() const { return GateNisScale() * HGate(); }
  auto zGateNis() const { return GateNisScale() * zGate(); }
  auto HUse() const { return (use_is_gate_ ? H_gate_[gate_] : H_use_).topRows(rows_); }
  auto zUse() const { return (use_is_gate_ ? z_gate_[gate_] : z_use_).head(rows_); }

 private:
  void Keep() noexcept;  // the update's copy becomes the kept state
  void Sync() noexcept;  // the update's copy (and the kept state) become the gate's
  // Where the kept state is: the gate copy itself (the copies agree), the gate's other buffer
  // (the gate copy before this tick's blend, when they agreed until then), or its own buffer.
  enum class Kept { kGate, kOther, kOwn };
  const Eigen::MatrixXd& HKept() const;
  const Eigen::VectorXd& zKept() const;

  double alpha_ = 0.0;
  double max_gap_ = 0.0;  // s: the longest gap that continues the chain
  int rejoin_ticks_ = 0;  // used ticks after which split copies differ by below 10⁻³
  double last_ = std::numeric_limits<double>::quiet_NaN();
  double period_ = 0.0;
  bool kept_ = false;       // the kept state holds a used tick
  bool split_ = false;      // the copies differ (carried between ticks)
  bool split_now_ = false;  // this tick's update rows differ from the gate's
  int ticks_split_ = 0;
  double gate_variance_ = 1.0;
  int rows_ = 0;
  // The copies without copying while they agree (the common case: every tick used): the gate copy
  // blends into the other of its two buffers, so the one it leaves is the kept state as it was
  // before this tick; the update's copy is then the gate's, bit for bit (the same arithmetic on
  // the same operands), and is not formed.
  int gate_ = 0;  // which of H_gate_ / z_gate_ is the gate copy
  Kept kept_at_ = Kept::kOwn;
  bool use_is_gate_ = true;
  Eigen::MatrixXd H_gate_[2], H_kept_, H_use_;
  Eigen::VectorXd z_gate_[2], z_kept_, z_use_;
};

}  // namespace heft::estimator

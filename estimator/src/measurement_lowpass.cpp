#include "heft/estimator/measurement_lowpass.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace heft::estimator {

MeasurementLowPass::MeasurementLowPass(double cutoff_hz, double control_period, int rows,
                                       int states)
    : period_(control_period) {
  if (cutoff_hz > 0.0) {
    alpha_ = 1.0 - std::exp(-2.0 * std::numbers::pi * cutoff_hz * control_period);
    rejoin_ticks_ = static_cast<int>(std::ceil(std::log(1e-3) / std::log(1.0 - alpha_)));
    max_gap_ = std::max(1.5 * control_period, 1.0 / (2.0 * std::numbers::pi * cutoff_hz));
  }
  for (int i = 0; i < 2; ++i) {
    H_gate_[i].setZero(rows, states);
    z_gate_[i].setZero(rows);
  }
  H_kept_.setZero(rows, states);
  H_use_.setZero(rows, states);
  z_kept_.setZero(rows);
  z_use_.setZero(rows);
}

const Eigen::MatrixXd& MeasurementLowPass::HKept() const {
  return kept_at_ == Kept::kOwn ? H_kept_ : H_gate_[kept_at_ == Kept::kGate ? gate_ : 1 - gate_];
}

const Eigen::VectorXd& MeasurementLowPass::zKept() const {
  return kept_at_ == Kept::kOwn ? z_kept_ : z_gate_[kept_at_ == Kept::kGate ? gate_ : 1 - gate_];
}

void MeasurementLowPass::Blend(double time, const Eigen::Ref<const Eigen::MatrixXd>& H,
                               const Eigen::Ref<const Eigen::VectorXd>& z, int rows) noexcept {
  const bool chain = time - last_ <= max_gap_ && time > last_;
  // α for the periods since the last blended tick (1 on every tick without a gap).
  const double periods = chain ? std::max(1.0, std::round((time - last_) / period_)) : 1.0;
  const double a = periods == 1.0 ? alpha_ : 1.0 - std::pow(1.0 - alpha_, periods);
  if (!chain || rows != rows_) {
    kept_ = false;
    split_ = false;
  }
  const bool restart = !chain || rows != rows_;
  rows_ = rows;
  if (restart) {
    H_gate_[gate_].topRows(rows) = H.topRows(rows);
    z_gate_[gate_].head(rows) = z.head(rows);
    use_is_gate_ = true;  // the update's copy: this tick alone, the gate's too
  } else if (kept_ && kept_at_ == Kept::kGate) {
    // The copies agree: the gate copy blends into its other buffer, the one it leaves is the kept
    // state, and the update's copy (this tick blended into the kept state) is the gate's.
    const int next = 1 - gate_;
    H_gate_[next].topRows(rows) = a * H.topRows(rows) + (1.0 - a) * HGate();
    z_gate_[next].head(rows) = a * z.head(rows) + (1.0 - a) * zGate();
    gate_ = next;
    kept_at_ = Kept::kOther;
    use_is_gate_ = true;
  } else {
    auto hg = H_gate_[gate_].topRows(rows);
    auto zg = z_gate_[gate_].head(rows);
    hg = a * H.topRows(rows) + (1.0 - a) * hg;
    zg = a * z.head(rows) + (1.0 - a) * zg;
    // The update's copy: this tick alone until a used tick is kept, then blended into that.
    if (!kept_) {
      H_use_.topRows(rows) = H.topRows(rows);
      z_use_.head(rows) = z.head(rows);
    } else {
      H_use_.topRows(rows) = a * H.topRows(rows) + (1.0 - a) * HKept().topRows(rows);
      z_use_.head(rows) = a * z.head(rows) + (1.0 - a) * zKept().head(rows);
    }
    use_is_gate_ = false;
  }
  const double fresh = 1.0 - a;
  gate_variance_ = restart ? 1.0 : fresh * fresh * gate_variance_ + a * a;
  last_ = time;
  split_now_ = split_ || (!kept_ && !restart);
}

void MeasurementLowPass::After(bool updated, bool released) noexcept {
  if (released) {  // the gate found the world changed: take its rows
    Sync();
    split_ = false;
    ticks_split_ = 0;
  } else if (updated) {
    Keep();
    split_ = split_now_;
    // What the two copies differ by decays as (1 − α)ᵏ over used ticks: rejoined below 10⁻³.
    if (split_ && ++ticks_split_ >= rejoin_ticks_) {
      Sync();
      split_ = false;
      ticks_split_ = 0;
    }
  } else {
    split_ = true;  // the gate's copy took this tick, the update's did not
    ticks_split_ = 0;
  }
}

void MeasurementLowPass::Keep() noexcept {
  if (use_is_gate_) {
    kept_at_ = Kept::kGate;
  } else {
    H_kept_.topRows(rows_) = H_use_.topRows(rows_);
    z_kept_.head(rows_) = z_use_.head(rows_);
    kept_at_ = Kept::kOwn;
  }
  kept_ = true;
}

void MeasurementLowPass::Sync() noexcept {
  use_is_gate_ = true;
  Keep();
}

}  // namespace heft::estimator

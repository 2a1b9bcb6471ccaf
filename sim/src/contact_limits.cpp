// The balance controller's limits (BalanceConfig): each stance foot's planned wrench kept
// physically possible and every joint's torque within its drive's, by an active set over the KKT
// solve that ComputeGeneralizedForce set up.
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>

#include "heft/sim/controller.hpp"

namespace heft::sim {

// A limit row r·x ≤ bound on x = [v̇; f_left; f_right]; `opposite` (relative to this row, 0: none)
// names the row that bounds the same quantity from the other side.
void BalanceController::AddLimit(const Eigen::Ref<const Eigen::RowVectorXd>& row, double bound,
                                 int opposite) noexcept {
  limit_rows_.row(num_limits_) = row;
  limit_rhs_[num_limits_] = bound;
  limit_norm_[num_limits_] = row.norm();
  limit_opposite_[num_limits_] = opposite == 0 ? -1 : num_limits_ + opposite;
  limit_slot_[num_limits_] = -1;
  ++num_limits_;
}

// A stance foot's rows: the centre of pressure and the normal force in its sole's frame (F_z =
// e_z·F, M_x = e_x·M, M_y = e_y·M; the centre of pressure is (−M_y, M_x) / F_z), the friction
// pyramid in the floor's (world) frame.
void BalanceController::AddFootLimits(double t, int foot) noexcept {
  const int nv = model_.nv(), f0 = nv + 6 * foot;
  const double weight = model_.total_mass() * 9.81;
  const Eigen::Matrix3d R = model_.BodyPose(foot_body_[foot]).R;
  const Eigen::Vector3d ex = R.col(0), ey = R.col(1), ez = R.col(2);
  auto wrench_row = [&](const Eigen::Vector3d& on_force,
                        const Eigen::Vector3d& on_moment) -> const Eigen::RowVectorXd& {
    row_.setZero();
    row_.segment<3>(f0) = on_force.transpose();
    row_.segment<3>(f0 + 3) = on_moment.transpose();
    return row_;
  };
  const Eigen::Vector3d zero = Eigen::Vector3d::Zero();
  const double aL = config_.cop_limit * config_.sole_half_length;
  const double aW = config_.cop_limit * config_.sole_half_width;
  const double landed = t - touchdown_time_[foot];
  const bool landing = landed >= 0.0 && landed < config_.land_time;
  AddLimit(wrench_row(-aL * ez, ey), 0.0, 1);    // CoP x ≥ −aL
  AddLimit(wrench_row(-aL * ez, -ey), 0.0, -1);  // CoP x ≤ aL
  AddLimit(wrench_row(-aW * ez, ex), 0.0, 1);    // CoP y ≤ aW
  AddLimit(wrench_row(-aW * ez, -ex), 0.0, -1);  // CoP y ≥ −aW
  // The foot the weight shift is unloading may leave the floor: its minimum fades out.
  const double unloading = phase_ == Phase::kShift && foot == swing_
                               ? std::clamp((t - phase_start_) / config_.shift_time, 0.0, 1.0)
                               : 0.0;
  AddLimit(wrench_row(-ez, zero), -(1.0 - unloading) * config_.min_normal_force, landing ? 1 : 0);
  if (landing) {
    AddLimit(wrench_row(ez, zero), std::max(landed / config_.land_time, 0.02) * weight, -1);
  }
  const Eigen::Vector3d up = Eigen::Vector3d::UnitZ();
  for (int k = 0; k < 2; ++k) {
    const Eigen::Vector3d along = Eigen::Vector3d::Unit(k);
    AddLimit(wrench_row(along - config_.friction * up, zero), 0.0, 1);
    AddLimit(wrench_row(-along - config_.friction * up, zero), 0.0, -1);
  }
}

// Each joint's torque τ_v = M_v v̇ + h_v − Σ J_c,vᵀ f + its friction feed-forward within ± its
// drive's effort limit.
void BalanceController::AddEffortLimits() noexcept {
  const int nv = model_.nv();
  const Eigen::MatrixXd& M = model_.M();
  const Eigen::VectorXd& h = model_.h();
  for (int v = 6; v < nv; ++v) {
    if (!std::isfinite(effort_[v])) continue;
    row_.head(nv) = M.row(v);
    for (int foot = 0; foot < 2; ++foot)
      row_.segment<6>(nv + 6 * foot) = -Jc_[foot].col(v).transpose();
    const double offset = h[v] + friction_ff_[v];
    AddLimit(row_, effort_[v] - offset, 1);
    row_ = -row_;
    AddLimit(row_, effort_[v] + offset, -1);
  }
}

// Holds limit `j` as an equality in the next free KKT slot.
void BalanceController::Activate(int j, int n) noexcept {
  const int slot = active_limits_++, k = n + 18 + slot;
  slot_limit_[slot] = j;
  limit_slot_[j] = slot;
  K_.block(k, 0, 1, n) = limit_rows_.row(j);
  K_.block(0, k, n, 1) = limit_rows_.row(j).transpose();
  K_(k, k) = 0.0;
  rhs_[k] = limit_rhs_[j];
}

// Releases the limit in `slot`; the last held slot moves into it, the last slot is left unused
// (its multiplier zero).
void BalanceController::Deactivate(int slot, int n) noexcept {
  limit_slot_[slot_limit_[slot]] = -1;
  const int last = --active_limits_;
  if (slot != last) {
    const int moved = slot_limit_[last];
    active_limits_ = slot;
    Activate(moved, n);
    active_limits_ = last;
  }
  const int k = n + 18 + last;
  K_.block(k, 0, 1, n).setZero();
  K_.block(0, k, n, 1).setZero();
  K_(k, k) = 1.0;
  rhs_[k] = 0.0;
}

bool BalanceController::SolveWithLimits(double t, int n) noexcept {
  const double weight = model_.total_mass() * 9.81;
  num_limits_ = 0;
  if (config_.active_set_passes > 0) {
    for (int foot = 0; foot < 2; ++foot)
      if (stance_[foot]) AddFootLimits(t, foot);
    AddEffortLimits();
  }
  const int base = n + 18;
  for (int s = 0; s < kMaxActive; ++s) K_(base + s, base + s) = 1.0;
  active_limits_ = 0;
  for (int pass = 0;; ++pass) {
    lu_.compute(K_);
    sol_ = lu_.solve(rhs_);
    // Limits that contradict each other (no solution, or wrenches of many times the weight): the
    // last iterate.
    const bool sane =
        sol_.allFinite() && sol_.segment(n - 12, 12).cwiseAbs().maxCoeff() < 2.0 * weight;
    if (!sane) {
      if (pass == 0) return sol_.allFinite();
      sol_ = sol_previous_;
      return true;
    }
    if (pass + 1 >= config_.active_set_passes) return true;
    sol_previous_ = sol_;
    // A held limit pulling the wrong way (a negative multiplier) is released first, the most
    // negative one; otherwise the most violated limit (by its distance in x) is held.
    int release = -1;
    double most_negative = -1e-9;
    for (int s = 0; s < active_limits_; ++s) {
      if (sol_[base + s] < most_negative) {
        most_negative = sol_[base + s];
        release = s;
      }
    }
    if (release >= 0) {
      Deactivate(release, n);
      continue;
    }
    int hold = -1;
    double worst = 1e-6;
    for (int j = 0; j < num_limits_; ++j) {
      // A bound whose opposite is held cannot be reached too (the two would contradict).
      const int o = limit_opposite_[j];
      if (limit_slot_[j] >= 0 || (o >= 0 && limit_slot_[o] >= 0)) continue;
      const double excess = (limit_rows_.row(j).dot(sol_.head(n)) - limit_rhs_[j]) / limit_norm_[j];
      if (excess > worst) {
        worst = excess;
        hold = j;
      }
    }
    if (hold < 0 || active_limits_ == kMaxActive) return true;
    Activate(hold, n);
  }
}

}  // namespace heft::sim

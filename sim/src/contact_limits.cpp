// The balance controller's contact limits (BalanceConfig): each stance foot's planned wrench kept
// physically possible by a primal active set over the KKT solve that ComputeGeneralizedForce set
// up.
#include <Eigen/Geometry>
#include <algorithm>

#include "heft/sim/controller.hpp"

namespace heft::sim {

bool BalanceController::SolveWithContactLimits(double t, int n) noexcept {
  // The limits of this tick, rows r·x ≤ b on the wrenches (sole frame: F_z = e_z·F, M_x = e_x·M,
  // M_y = e_y·M; the centre of pressure is (−M_y, M_x) / F_z).
  const int nv = model_.nv();
  const double weight = model_.total_mass() * 9.81;
  num_limits_ = 0;
  auto add = [&](int foot, const Eigen::Vector3d& on_force, const Eigen::Vector3d& on_moment,
                 double bound, int opposite) {
    limit_opposite_[num_limits_] = opposite < 0 ? -1 : num_limits_ + opposite;
    limit_rows_.row(num_limits_).setZero();
    limit_rows_.block<1, 3>(num_limits_, nv + 6 * foot) = on_force.transpose();
    limit_rows_.block<1, 3>(num_limits_, nv + 6 * foot + 3) = on_moment.transpose();
    limit_rhs_[num_limits_] = bound;
    ++num_limits_;
  };
  for (int foot = 0; foot < 2 && config_.active_set_passes > 0; ++foot) {
    if (!stance_[foot]) continue;
    const Eigen::Matrix3d R = model_.BodyPose(foot_body_[foot]).R;
    const Eigen::Vector3d ex = R.col(0), ey = R.col(1), ez = R.col(2);
    const Eigen::Vector3d zero = Eigen::Vector3d::Zero();
    const double aL = config_.cop_limit * config_.sole_half_length;
    const double aW = config_.cop_limit * config_.sole_half_width;
    const double landed = t - touchdown_time_[foot];
    const bool landing = landed >= 0.0 && landed < config_.land_time;
    add(foot, -aL * ez, ey, 0.0, 1);    // CoP x ≥ −aL
    add(foot, -aL * ez, -ey, 0.0, -1);  // CoP x ≤ aL
    add(foot, -aW * ez, ex, 0.0, 1);    // CoP y ≤ aW
    add(foot, -aW * ez, -ex, 0.0, -1);  // CoP y ≥ −aW
    // The foot the weight shift is unloading may leave the floor: its minimum fades out.
    const double unloading = phase_ == Phase::kShift && foot == swing_
                                 ? std::clamp((t - phase_start_) / config_.shift_time, 0.0, 1.0)
                                 : 0.0;
    add(foot, -ez, zero, -(1.0 - unloading) * config_.min_normal_force, landing ? 1 : -1);
    if (landing) {
      add(foot, ez, zero, std::max(landed / config_.land_time, 0.02) * weight, -1);
    }
  }
  // A slot not in use: its multiplier is zero.
  const int base = n + 18;
  for (int j = 0; j < kMaxLimits; ++j) K_(base + j, base + j) = 1.0;
  for (int j = 0; j < num_limits_; ++j) {
    const int o = limit_opposite_[j];
    if (o >= 0) limit_opposite_[o] = j;
  }
  limit_active_.fill(false);
  active_limits_ = 0;
  for (int pass = 0;; ++pass) {
    lu_.compute(K_);
    sol_ = lu_.solve(rhs_);
    // Limits the tasks cannot meet together (an ill-posed system: no solution, or wrenches of
    // many times the weight): the last pass's solution.
    const bool sane = sol_.allFinite() && sol_.segment(nv, 12).cwiseAbs().maxCoeff() < 2.0 * weight;
    if (!sane) {
      if (pass == 0) return sol_.allFinite();
      sol_ = sol_previous_;
      return true;
    }
    if (pass + 1 >= config_.active_set_passes) return true;
    // Each violated limit becomes an equality (a primal active set that only adds: a few passes).
    bool added = false;
    for (int j = 0; j < num_limits_; ++j) {
      // A bound whose opposite is held cannot be reached too (the two would contradict).
      const int o = limit_opposite_[j];
      if (limit_active_[j] || (o >= 0 && limit_active_[o]) ||
          limit_rows_.row(j).dot(sol_.head(n)) <= limit_rhs_[j] + 1e-6)
        continue;
      limit_active_[j] = true;
      ++active_limits_;
      added = true;
      K_.block(base + j, 0, 1, n) = limit_rows_.row(j);
      K_.block(0, base + j, n, 1) = limit_rows_.row(j).transpose();
      K_(base + j, base + j) = 0.0;
      rhs_[base + j] = limit_rhs_[j];
    }
    if (!added) return true;
    sol_previous_ = sol_;
  }
}

}  // namespace heft::sim

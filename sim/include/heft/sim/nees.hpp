// The normalised estimation error squared (NEES) of a handed parameter set against the simulator's
// truth: how many of its own standard deviations the hand-off is off. Over all ten parameters it is
// χ²(10) when the handed covariance is honest; over the mass and the first moment alone (the
// marginal: the block of Σ, not of Σ⁻¹) χ²(4). The two part what a controller reads most (the
// weight and where it acts) from the inertia, which a motion often leaves unexcited and a
// log-Cholesky covariance (relative in θ) then describes about an estimate that may be far off.
#pragma once

#include <Eigen/Core>

namespace heft::sim {

struct HandedNees {
  double all = 0.0;                // eᵀ Σ⁻¹ e over π's ten entries
  double mass_first_moment = 0.0;  // e₄ᵀ Σ₄₄⁻¹ e₄ over m, h (π's first four)
};

// e = handed − true. NaN in a field whose covariance (block) is not positive definite or finite.
// No allocation (the stepper thread calls it at every hand-off).
HandedNees NeesOf(const Eigen::Matrix<double, 10, 10>& covariance,
                  const Eigen::Matrix<double, 10, 1>& e) noexcept;

}  // namespace heft::sim

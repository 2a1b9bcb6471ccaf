// Rate limiting of the parameters handed to the controller (Foster et al. §IV-B caps mass at 3
// kg/s).
//
// Per-element clipping of π would leave the physically consistent set; instead each tick moves the
// handed parameters along the segment from the last handed π to the new target by the largest
// fraction s ∈ [0, 1] that respects every limit. The consistent set is convex (the pseudo-inertia
// is linear in π and the positive-definite cone is convex), so the result is consistent whenever
// both ends are.
#pragma once

#include "heft/dynamics/inertia.hpp"

namespace heft::estimator {

struct RateLimits {
  double mass = 3.0;          // kg/s
  double first_moment = 0.5;  // kg·m/s, per component of h
  double inertia = 0.2;       // kg·m²/s, per entry of I
};

struct RateLimitResult {
  dynamics::Vector10 handed;
  double fraction = 1.0;  // s: 1 when the target was reached
};

RateLimitResult RateLimitStep(const dynamics::Vector10& from, const dynamics::Vector10& target,
                              const RateLimits& limits, double dt) noexcept;

}  // namespace heft::estimator

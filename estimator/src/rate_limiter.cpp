#include "heft/estimator/rate_limiter.hpp"

#include <algorithm>
#include <cmath>

namespace heft::estimator {

RateLimitResult RateLimitStep(const dynamics::Vector10& from, const dynamics::Vector10& target,
                              const RateLimits& limits, double dt) noexcept {
  const dynamics::Vector10 delta = target - from;
  double s = 1.0;
  auto cap = [&](double change, double rate) {
    const double allowed = rate * dt;
    if (std::abs(change) > allowed) s = std::min(s, allowed / std::abs(change));
  };
  cap(delta[0], limits.mass);
  for (int i = 1; i < 4; ++i) cap(delta[i], limits.first_moment);
  for (int i = 4; i < 10; ++i) cap(delta[i], limits.inertia);
  // Reached: the target itself, bit for bit (from + 1·(target − from) may round off it), so that
  // a hand-off that arrived at the nominal is the nominal (the policy's hold, its covariance, a
  // controller comparing the hand-off with the nominal).
  if (s >= 1.0) return {target, 1.0};
  return {from + s * delta, s};
}

}  // namespace heft::estimator

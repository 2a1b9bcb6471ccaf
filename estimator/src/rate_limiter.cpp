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
  return {from + s * delta, s};
}

}  // namespace heft::estimator

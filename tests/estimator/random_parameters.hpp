// Random inertial parameters that are physically consistent: log-Cholesky coordinates drawn from
// N(0, 0.5²) each, mapped to π. Shared by test_estimator_units.cpp and test_gating_calibration.cpp.
#pragma once

#include <random>

#include "heft/dynamics/log_cholesky.hpp"

namespace heft::estimator::test {

inline dynamics::Vector10 Consistent(std::mt19937_64& rng) {
  std::normal_distribution<double> n(0.0, 0.5);
  dynamics::Vector10 th;
  for (int i = 0; i < 10; ++i) th[i] = n(rng);
  return dynamics::LogCholeskyToParameters(th);
}

}  // namespace heft::estimator::test

#include "heft/sim/nees.hpp"

#include <Eigen/Cholesky>
#include <limits>

namespace heft::sim {

namespace {

template <int N>
double Normalised(const Eigen::Matrix<double, N, N>& covariance,
                  const Eigen::Matrix<double, N, 1>& e) noexcept {
  if (!covariance.allFinite() || !e.allFinite()) return std::numeric_limits<double>::quiet_NaN();
  const Eigen::LLT<Eigen::Matrix<double, N, N>> llt(covariance);
  if (llt.info() != Eigen::Success) return std::numeric_limits<double>::quiet_NaN();
  return e.dot(llt.solve(e));
}

}  // namespace

HandedNees NeesOf(const Eigen::Matrix<double, 10, 10>& covariance,
                  const Eigen::Matrix<double, 10, 1>& e) noexcept {
  HandedNees out;
  out.all = Normalised<10>(covariance, e);
  const Eigen::Matrix<double, 4, 4> block = covariance.topLeftCorner<4, 4>();
  const Eigen::Matrix<double, 4, 1> head = e.head<4>();
  out.mass_first_moment = Normalised<4>(block, head);
  return out;
}

}  // namespace heft::sim

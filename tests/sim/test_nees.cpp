// heft::sim::NeesOf, the simulator's measure of the handed covariance against the truth. What would
// make these fail: the marginal taken from Σ⁻¹'s block (the conditional) instead of Σ's, a NEES
// that is not χ²-distributed for errors drawn from the covariance itself, or a covariance that is
// not positive definite giving a number instead of NaN.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <cmath>
#include <random>

#include "heft/sim/nees.hpp"

namespace {

using Matrix10 = Eigen::Matrix<double, 10, 10>;
using Vector10 = Eigen::Matrix<double, 10, 1>;

// A covariance whose mass is correlated with the inertia (as a log-Cholesky α is with every π).
Matrix10 Correlated() {
  Matrix10 a;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 10; ++j) a(i, j) = u(rng);
  return a * a.transpose() + 0.1 * Matrix10::Identity();
}

TEST(Nees, TheMarginalOfMassAndFirstMomentUsesTheCovariancesBlock) {
  const Matrix10 s = Correlated();
  Vector10 e = Vector10::Zero();
  e.head<4>() << 0.3, -0.2, 0.1, 0.4;
  const heft::sim::HandedNees n = heft::sim::NeesOf(s, e);
  const Eigen::Matrix<double, 4, 4> block = s.topLeftCorner<4, 4>();
  const Eigen::Matrix<double, 4, 1> h = e.head<4>();
  EXPECT_NEAR(n.mass_first_moment, h.dot(block.inverse() * h), 1e-9);
  // The conditional (Σ⁻¹'s block) is larger here; the two must not agree.
  const Matrix10 inv = s.inverse();
  const double conditional = h.dot(inv.topLeftCorner<4, 4>() * h);
  EXPECT_GT(std::abs(conditional - n.mass_first_moment), 0.1 * n.mass_first_moment);
  EXPECT_NEAR(n.all, e.dot(inv * e), 1e-9 * n.all);
}

TEST(Nees, ErrorsDrawnFromTheCovarianceAverageTheirDegreesOfFreedom) {
  // e = L z, z standard normal: the mean of N NEES is 10 (and 4) within 4 of its standard
  // deviations, sqrt(2k / N).
  const Matrix10 s = Correlated();
  const Matrix10 l = s.llt().matrixL();
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  const int draws = 20000;
  double all = 0.0, mh = 0.0;
  for (int d = 0; d < draws; ++d) {
    Vector10 z;
    for (int i = 0; i < 10; ++i) z[i] = normal(rng);
    const heft::sim::HandedNees n = heft::sim::NeesOf(s, l * z);
    all += n.all, mh += n.mass_first_moment;
  }
  EXPECT_NEAR(all / draws, 10.0, 4.0 * std::sqrt(2.0 * 10.0 / draws));
  EXPECT_NEAR(mh / draws, 4.0, 4.0 * std::sqrt(2.0 * 4.0 / draws));
}

TEST(Nees, ACovarianceThatIsNotDefiniteGivesNaN) {
  Matrix10 s = Matrix10::Identity();
  s(0, 0) = -1.0;  // the mass's variance negative: neither NEES is a number
  const heft::sim::HandedNees n = heft::sim::NeesOf(s, Vector10::Ones());
  EXPECT_TRUE(std::isnan(n.all));
  EXPECT_TRUE(std::isnan(n.mass_first_moment));
  s = Matrix10::Identity();
  s(9, 9) = std::nan("");  // only the inertia's block broken: the marginal still stands
  const heft::sim::HandedNees m = heft::sim::NeesOf(s, Vector10::Ones());
  EXPECT_TRUE(std::isnan(m.all));
  EXPECT_NEAR(m.mass_first_moment, 4.0, 1e-12);
}

}  // namespace

// The filter's consider analysis (InertialFilter, "Consider parameters"): parameters c the filter
// does not estimate, z = H x + C c + v, whose error its reported covariance owns up to.
#include <gtest/gtest.h>

#include <random>

#include "heft/estimator/inertial_filter.hpp"
#include "heft/test/alloc_counter.hpp"

namespace heft::estimator {
namespace {

constexpr int kConsider = 3;

// One run of the linear filter from the prior x0 over `ticks` measurements: H random, C = H B + a
// random part (so that c biases the estimate along directions H sees), v ~ N(0, 1). The noise comes
// from `noise_seed` alone, so that two runs with the same seed differ only by c.
struct FilterRun {
  Eigen::VectorXd estimate;
  Eigen::MatrixXd covariance, sensitivity;
  double nees_with = 0.0, nees_without = 0.0;
};
FilterRun RunFilter(int rows, const Eigen::VectorXd& truth, const Eigen::VectorXd& x0,
                    const Eigen::VectorXd& c, const Eigen::MatrixXd& B, std::uint64_t noise_seed,
                    bool count_allocations) {
  std::mt19937_64 rng(noise_seed);
  std::normal_distribution<double> n(0.0, 1.0);
  InertialFilter f(FilterKind::kKalman, 1, rows, kConsider);
  EXPECT_TRUE(f.Reset(x0, Eigen::VectorXd::Constant(10, 1.0)));
  Eigen::MatrixXd H(rows, 10 + kConsider);
  Eigen::VectorXd z(rows);
  for (int t = 0; t < 200; ++t) {
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < 10; ++j) H(i, j) = n(rng);
    H.rightCols(kConsider) = H.leftCols(10) * B;
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < kConsider; ++j) H(i, 10 + j) += 0.3 * n(rng);
    for (int i = 0; i < rows; ++i) z[i] = n(rng);
    z.noalias() += H.leftCols(10) * truth;
    z.noalias() += H.rightCols(kConsider) * c;
    InertialFilter::Candidate cand;
    if (count_allocations && t == 100) {
      test::AllocationScope scope;
      EXPECT_TRUE(f.Evaluate(H, z, cand));
      EXPECT_TRUE(f.Apply());
      EXPECT_EQ(scope.count(), 0u) << "Evaluate and Apply with consider columns allocate";
      continue;
    }
    EXPECT_TRUE(f.Evaluate(H, z, cand));
    EXPECT_TRUE(f.Apply());
  }
  FilterRun r;
  r.estimate = f.parameters();
  r.covariance.resize(10, 10);
  f.ParameterCovariance(r.covariance);
  r.sensitivity = f.consider_sensitivity();
  const Eigen::VectorXd e = r.estimate - truth;
  r.nees_with = e.dot(r.covariance.ldlt().solve(e));
  r.nees_without = e.dot(f.covariance().ldlt().solve(e));
  return r;
}

class Consider : public ::testing::TestWithParam<int> {};  // rows: both forms of the update

// The filter is linear in c (the KF's gain does not depend on z): the estimate with c minus the
// estimate with c = 0, on the same noise, is D c exactly. Fails if D follows another recursion
// (a wrong sign, a missed step) in either form of the update.
TEST_P(Consider, SensitivityIsTheEstimatesDerivativeInC) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> n(0.0, 1.0);
  Eigen::VectorXd truth(10), c(kConsider);
  for (int i = 0; i < 10; ++i) truth[i] = n(rng);
  for (int i = 0; i < kConsider; ++i) c[i] = n(rng);
  Eigen::MatrixXd B(10, kConsider);
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < kConsider; ++j) B(i, j) = 0.5 * n(rng);
  const FilterRun with = RunFilter(GetParam(), truth, truth, c, B, 11, true);
  const FilterRun without =
      RunFilter(GetParam(), truth, truth, Eigen::VectorXd::Zero(kConsider), B, 11, false);
  const Eigen::VectorXd moved = with.estimate - without.estimate;
  EXPECT_GT(moved.norm(), 0.1);  // c biases the estimate: the test has something to check
  EXPECT_LT((moved - with.sensitivity * c).norm(), 1e-9 * (1.0 + moved.norm()));
}

// Monte Carlo over the prior's error, the noise and c ~ N(0, 1): the mean NEES with the reported
// P + D Dᵀ is χ²₁₀'s mean, 10, within five standard errors of the mean of 400 draws (√(20/400)·5 ≈
// 1.1); with P alone it is far above (the bias c leaves is not averaged away). Fails if the
// reported covariance leaves the consider part out or counts it wrongly.
TEST_P(Consider, ReportedCovarianceIsHonestAboutTheConsiderError) {
  std::mt19937_64 rng(17);
  std::normal_distribution<double> n(0.0, 1.0);
  Eigen::MatrixXd B(10, kConsider);
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < kConsider; ++j) B(i, j) = 0.5 * n(rng);
  constexpr int kDraws = 400;
  double with = 0.0, without = 0.0;
  for (int d = 0; d < kDraws; ++d) {
    Eigen::VectorXd truth(10), x0(10), c(kConsider);
    for (int i = 0; i < 10; ++i) truth[i] = n(rng), x0[i] = truth[i] + n(rng);  // P₀ = 1
    for (int i = 0; i < kConsider; ++i) c[i] = n(rng);
    const FilterRun r = RunFilter(GetParam(), truth, x0, c, B, 1000 + d, false);
    with += r.nees_with / kDraws;
    without += r.nees_without / kDraws;
  }
  EXPECT_NEAR(with, 10.0, 1.1);
  EXPECT_GT(without, 20.0);
}

INSTANTIATE_TEST_SUITE_P(Forms, Consider, ::testing::Values(4, 20));

}  // namespace
}  // namespace heft::estimator

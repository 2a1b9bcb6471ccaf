// The whitening of mostly zero columns by an explicit L⁻¹ (estimator/src/sparse_whitening.hpp)
// against the triangular solve it replaces, on random factors and random zero patterns.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <random>

#include "heft/test/alloc_counter.hpp"
#include "sparse_whitening.hpp"

namespace heft::estimator {
namespace {

// A covariance like a full-wrench tick's: a diagonal, a dense low-rank part (the cells' and the
// accelerations' noise), and optionally one row decoupled by a huge variance (a dropped row).
Eigen::MatrixXd RandomCovariance(std::mt19937_64& rng, int m, bool dropped_row) {
  std::normal_distribution<double> n(0.0, 1.0);
  std::uniform_real_distribution<double> u(0.5, 4.0);
  Eigen::MatrixXd a(m, m);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) a(i, j) = n(rng);
  Eigen::MatrixXd r = a * a.transpose();
  for (int i = 0; i < m; ++i) r(i, i) += u(rng);
  if (dropped_row) r(m / 2, m / 2) += 1e12;
  return r;
}

// Columns with the base's rows non-zero and each other entry non-zero with probability `fill`.
Eigen::MatrixXd RandomSparseColumns(std::mt19937_64& rng, int m, int cols, int dense_rows,
                                    double fill) {
  std::normal_distribution<double> n(0.0, 1.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Eigen::MatrixXd v = Eigen::MatrixXd::Zero(m, cols);
  for (int c = 0; c < cols; ++c)
    for (int r = 0; r < m; ++r)
      if (r < dense_rows || u(rng) < fill) v(r, c) = n(rng);
  return v;
}

TEST(SparseWhitening, EqualsTheTriangularSolve) {
  std::mt19937_64 rng(7);
  for (const int dense_rows : {0, 6}) {
    for (const bool dropped : {false, true}) {
      for (int trial = 0; trial < 20; ++trial) {
        const int m = 35, cols = 60;
        const Eigen::LLT<Eigen::MatrixXd> llt(RandomCovariance(rng, m, dropped));
        ASSERT_EQ(llt.info(), Eigen::Success);
        const Eigen::MatrixXd v = RandomSparseColumns(rng, m, cols, dense_rows, 0.2);
        const Eigen::MatrixXd expected = llt.matrixL().solve(v);
        Eigen::MatrixXd inverse(m, m), top(6, cols), got = v;
        Eigen::VectorXd column(m);
        {
          test::AllocationScope scope;
          detail::LowerTriangularInverse(llt.matrixLLT(), inverse);
          detail::ApplyLowerInverse(inverse, dense_rows, got, top, column);
          EXPECT_EQ(scope.count(), 0u) << "the whitening allocated";
        }
        // L⁻¹ itself: lower triangular, and L L⁻¹ = 1.
        const Eigen::MatrixXd L = llt.matrixL();
        EXPECT_TRUE(inverse.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().isZero(0.0));
        EXPECT_LT((L * inverse - Eigen::MatrixXd::Identity(m, m)).cwiseAbs().maxCoeff(), 1e-12);
        // Each entry to rounding: both are backward stable, so they differ by a few ulps of
        // |L⁻¹| (|L| |x| + |v|) (m ε ≈ 1e-14 of it), far below a term left out or added twice.
        const Eigen::MatrixXd scale =
            inverse.cwiseAbs() * (L.cwiseAbs() * expected.cwiseAbs() + v.cwiseAbs());
        for (int c = 0; c < cols; ++c)
          for (int r = 0; r < m; ++r)
            ASSERT_LE(std::abs(got(r, c) - expected(r, c)), 1e-14 * scale(r, c))
                << "row " << r << " column " << c << " dense_rows " << dense_rows;
      }
    }
  }
}

}  // namespace
}  // namespace heft::estimator

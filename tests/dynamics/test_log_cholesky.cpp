// The log-Cholesky map g(θ) (eq. 17): consistency, round trip and the closed-form Jacobian.
#include <gtest/gtest.h>

#include <random>

#include "heft/dynamics/log_cholesky.hpp"

namespace heft::dynamics {
namespace {

Vector10 RandomTheta(std::mt19937_64& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  Vector10 th;
  for (int i = 0; i < 10; ++i) th[i] = n(rng);
  return th;
}

TEST(LogCholesky, MatchesEquation17Explicitly) {
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 50; ++trial) {
    const Vector10 th = RandomTheta(rng);
    const double a = th[0], d1 = th[1], d2 = th[2], d3 = th[3], s12 = th[4], s13 = th[5],
                 s23 = th[6], t1 = th[7], t2 = th[8], t3 = th[9];
    const double e1 = std::exp(d1), e2 = std::exp(d2), e3 = std::exp(d3);
    Vector10 expected;
    expected << t1 * t1 + t2 * t2 + t3 * t3 + 1, t1 * e1, t1 * s12 + t2 * e2,
        t1 * s13 + t2 * s23 + t3 * e3, s12 * s12 + s13 * s13 + s23 * s23 + e2 * e2 + e3 * e3,
        -s12 * e1, -s13 * e1, s13 * s13 + s23 * s23 + e1 * e1 + e3 * e3, -s12 * s13 - s23 * e2,
        s12 * s12 + e1 * e1 + e2 * e2;
    expected *= std::exp(2 * a);
    EXPECT_LT((LogCholeskyToParameters(th) - expected).norm(), 1e-12 * expected.norm());
  }
}

// Fails if g with its exponentials given (what the hand-off's covariance evaluates) is not g.
TEST(LogCholesky, WithItsExponentialsGivenIsTheSameMap) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 50; ++trial) {
    const Vector10 th = RandomTheta(rng);
    const Eigen::Vector4d exps = th.head<4>().array().exp();
    const Vector10 pi = LogCholeskyToParameters(th);
    EXPECT_LT((LogCholeskyToParameters(th, exps) - pi).norm(), 1e-12 * pi.norm()) << trial;
  }
}

TEST(LogCholesky, EveryThetaIsConsistentAndRoundTrips) {
  std::mt19937_64 rng(2);
  for (int trial = 0; trial < 1000; ++trial) {
    const Vector10 th = RandomTheta(rng);
    const Vector10 pi = LogCholeskyToParameters(th);
    ASSERT_TRUE(IsPhysicallyConsistent(pi, 0.0)) << th.transpose();
    Vector10 back;
    ASSERT_TRUE(ParametersToLogCholesky(pi, back));
    EXPECT_LT((back - th).norm(), 1e-8 * (1 + th.norm())) << trial;
  }
}

TEST(LogCholesky, RefusesInconsistentParameters) {
  Vector10 pi;
  pi << 1, 0, 0, 0, 0.01, 0, 0, 0.01, 0, 0.05;  // breaks the triangle inequality
  Vector10 th = Vector10::Constant(7.0);
  EXPECT_FALSE(ParametersToLogCholesky(pi, th));
  EXPECT_EQ(th, Vector10::Constant(7.0));
}

TEST(LogCholesky, JacobianMatchesCentralDifferences) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 100; ++trial) {
    const Vector10 th = 0.5 * RandomTheta(rng);
    const Matrix10 G = LogCholeskyJacobian(th);
    Matrix10 fd;
    const double h = 1e-6;
    for (int k = 0; k < 10; ++k) {
      Vector10 p = th, m = th;
      p[k] += h;
      m[k] -= h;
      fd.col(k) = (LogCholeskyToParameters(p) - LogCholeskyToParameters(m)) / (2 * h);
    }
    EXPECT_LT((G - fd).norm(), 1e-6 * (1 + G.norm())) << trial;
  }
}

}  // namespace
}  // namespace heft::dynamics

// The hand-off's covariance of an EKF body (InertialFilter::BodyCovariance) against the spread it
// stands for: θ ~ N(x, P) sampled, each sample mapped to π = g(θ), and the normalised error
// squared of those π about the estimate g(x) averaged. When the covariance is the samples' true
// second moment that mean is 10 (the trace of the identity), whatever their distribution.
#include <gtest/gtest.h>

#include <random>

#include "heft/dynamics/log_cholesky.hpp"
#include "heft/estimator/inertial_filter.hpp"
#include "heft/test/alloc_counter.hpp"

namespace heft::estimator {
namespace {

using dynamics::Vector10;

// A forearm holding a dumbbell: 6.9 kg, its CoM 0.25 m down the forearm, and about its CoM a rod's
// inertia: one principal moment 15 times smaller than the others, the body thin across it.
Vector10 ForearmWithDumbbell() {
  dynamics::RigidBodyInertia body;
  body.mass = 6.9;
  body.com = Eigen::Vector3d(0.01, 0.005, -0.25);
  body.inertia_com = Eigen::Vector3d(0.03, 0.031, 0.002).asDiagonal();
  return dynamics::ParametersFromInertia(body);
}

// The mean of eᵀ Σ⁻¹ e over n samples of π = g(θ), θ ~ N(θ0, diag(σ²)), e = π − g(θ0).
double MeanNees(const Vector10& theta0, const Vector10& sigma,
                const Eigen::Matrix<double, 10, 10>& cov, int n) {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  const Vector10 centre = dynamics::LogCholeskyToParameters(theta0);
  const Eigen::LLT<Eigen::Matrix<double, 10, 10>> llt(cov);
  double sum = 0.0;
  for (int k = 0; k < n; ++k) {
    Vector10 theta = theta0;
    for (int i = 0; i < 10; ++i) theta[i] += sigma[i] * normal(rng);
    const Vector10 e = dynamics::LogCholeskyToParameters(theta) - centre;
    sum += e.dot(llt.solve(e));
  }
  return sum / n;
}

// Fails if the hand-off's covariance is not far closer to the spread of π its θ spread implies
// than the first-order G P Gᵀ it replaced: at θ's spreads of 0.05 to 0.3 the mean NEES must be at
// least 100 times smaller than the first order's (which is 340-26 500 times too large there:
// e^d of the rod's small moments makes g steep in θ), and within a factor 2 of 10 at 0.05. The
// rule along P's Cholesky columns leaves out the curvature across two θ states (products of two
// of U's entries in J = UᵀU): the measured means are 18, 39 and 490 at 0.05, 0.1 and 0.3
// (docs/handoff.md, "The handed covariance"). Deterministic: a fixed seed, 20 000 samples.
TEST(HandedCovariance, IsCloseToTheSpreadItStandsForOnANearlyDegenerateBody) {
  const Vector10 pi0 = ForearmWithDumbbell();
  Vector10 theta0;
  ASSERT_TRUE(dynamics::ParametersToLogCholesky(pi0, theta0));
  for (const double s : {0.05, 0.1, 0.3}) {
    InertialFilter f(FilterKind::kLogCholesky, 1, 1);
    const Vector10 sigma = Vector10::Constant(s);
    ASSERT_TRUE(f.Reset(pi0, sigma));
    Eigen::Matrix<double, 10, 10> handed;
    f.BodyCovariance(0, handed);
    Eigen::MatrixXd first_order(10, 10);
    f.ParameterCovariance(first_order);
    const double nees = MeanNees(theta0, sigma, handed, 20000);
    const double nees_first_order = MeanNees(theta0, sigma, first_order, 20000);
    EXPECT_LT(nees / 10.0, 0.01 * nees_first_order / 10.0) << "σ " << s;
    EXPECT_GT(nees, 10.0 / 2.0) << "σ " << s;  // never overcautious by more than 2
    if (s == 0.05) {
      EXPECT_LT(nees, 10.0 * 2.0) << "σ " << s;
    }
  }
}

// Fails if the hand-off's covariance allocates (it runs on every tick, in the control thread),
// in the link's frame or at the CoM.
TEST(HandedCovariance, AllocatesNothing) {
  InertialFilter f(FilterKind::kLogCholesky, 2, 1);
  Eigen::VectorXd pi0(20);
  pi0 << ForearmWithDumbbell(), ForearmWithDumbbell();
  ASSERT_TRUE(f.SetBodyFrame(1, Eigen::Vector3d(0.01, 0.005, -0.25)));
  ASSERT_TRUE(f.Reset(pi0, Vector10::Constant(0.3)));
  Eigen::Matrix<double, 10, 10> a, b;
  test::AllocationScope scope;
  f.BodyCovariance(0, a);
  f.BodyCovariance(1, b);
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_TRUE(a.allFinite() && b.allFinite());
}

}  // namespace
}  // namespace heft::estimator

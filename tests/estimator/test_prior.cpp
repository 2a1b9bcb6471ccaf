// Where the data say nothing, the prior stands: the prior pseudo-measurement (PullToPrior).
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <random>
#include <vector>

#include "heft/estimator/inertial_filter.hpp"
#include "heft/test/alloc_counter.hpp"

namespace heft::estimator {
namespace {

using dynamics::Vector10;

// A KF (linear in π, so the algebra is exact) whose measurement sees only the first 3 states.
// Rows: 3 × the identity on states 0..2, unit noise, repeated so each tick is informative.
struct ThreeObserved {
  InertialFilter f{FilterKind::kKalman, 1, 3};
  Eigen::MatrixXd H = Eigen::MatrixXd::Zero(3, 10);
  Vector10 pi0;
  ThreeObserved() {
    pi0 << 2.0, 0.1, 0.0, 0.05, 0.05, 0.0, 0.0, 0.06, 0.0, 0.04;
    for (int i = 0; i < 3; ++i) H(i, i) = 10.0;
    EXPECT_TRUE(f.Reset(pi0, Vector10::Constant(0.5)));
  }
};

// Fails if the pull moves what the data determine, or leaves an unobserved state away from the
// prior: the state observed every tick stays at what the data say (the prior's weight per tick is
// w = 0.003, the data's 100 per row), the unobserved one returns to x₀ at the rate w.
TEST(PriorPull, AnchorsOnlyTheDirectionsTheDataLeaveFree) {
  ThreeObserved s;
  Eigen::VectorXd truth = s.pi0;
  truth[0] += 0.4;  // the data say the first state moved by 0.4
  InertialFilter& f = s.f;
  const double w = 0.003;
  for (int k = 0; k < 2000; ++k) {
    const Eigen::VectorXd z = s.H * truth;
    InertialFilter::Candidate c;
    ASSERT_TRUE(f.Evaluate(s.H, z, c));
    ASSERT_TRUE(f.Apply());
    ASSERT_TRUE(f.PullToPrior(w));
  }
  // Observed: within the data's σ (1/(10·√2000) ≈ 0.002) of the truth, not dragged back to pi0.
  EXPECT_NEAR(f.parameters()[0], truth[0], 0.01);
  // Unobserved: its variance stays the prior's σ0² = 0.25. The pull is the prior seen again, not
  // new information; counting it anew on every call (the pull's first version) shrank it to σ0²/(1
  // + N w) = 0.036, 7× more confident than the prior the estimate rests on there.
  EXPECT_DOUBLE_EQ(f.covariance()(5, 5), 0.25);
}

// Fails if the pull lets a variance it holds grow without bound, or cuts a gate release's
// inflation at once, or bounds a variance it does not hold: 10 000 ticks (30 s at 333 Hz) of a
// random walk of 0.01 per second on every state, after an inflation ×10 (a release), the first
// three states observed every tick, the pull (w = 0.003 per tick) on all but state 9.
TEST(PriorPull, BoundsTheVariancesItHolds) {
  ThreeObserved s;
  InertialFilter& f = s.f;
  const Eigen::VectorXd q = Eigen::VectorXd::Constant(10, 0.01);
  Eigen::VectorXd w = Eigen::VectorXd::Constant(10, 0.003);
  w[9] = 0.0;
  f.Inflate(10.0, 100.0);  // P = 10 P + P₀ = 2.75 on every state
  std::vector<double> p5;
  for (int k = 0; k < 10000; ++k) {
    f.Predict(q, 0.003);
    const Eigen::VectorXd z = s.H * s.pi0;
    InertialFilter::Candidate c;
    ASSERT_TRUE(f.Evaluate(s.H, z, c));
    ASSERT_TRUE(f.Apply());
    ASSERT_TRUE(f.PullToPrior(w));
    p5.push_back(f.covariance()(5, 5));
  }
  // The held, unobserved state 5: the excess over 0.25 decays by (1 + w)⁻² per tick (a time
  // constant of 0.5 s) to the walk's steady state, q dt / (2 w) = 0.005 above the prior's.
  EXPECT_NEAR(p5[0], 0.25 + 2.5 / (1.003 * 1.003) + 0.01 * 0.003, 1e-3);
  EXPECT_GT(p5[100], 0.25 + 2.5 * 0.5 * 0.5);  // 100 ticks (0.3 s) in: still more than ¼ of it
  EXPECT_LT(p5[2000], 0.26);                   // 6 s in: back at the prior's
  EXPECT_NEAR(p5.back(), 0.255, 1e-3);
  EXPECT_LT(f.covariance()(0, 0), 1e-3);  // the observed state 0: the data's
  // Not held: the inflation and the walk stand (2.75 + 0.01 × 30 s).
  EXPECT_NEAR(f.covariance()(9, 9), 2.75 + 0.01 * 30.0, 1e-9);
}

// Fails if an unobserved state that drifted away from the prior stays there: after a drift of 0.3
// (made by an update whose rows did see that state once), the pull brings it back towards x₀ by
// the same factor every call, and leaves its variance (the posterior's) as it was.
TEST(PriorPull, ReturnsADriftedUnobservedStateToThePrior) {
  ThreeObserved s;
  InertialFilter& f = s.f;
  // One measurement that also sees state 5 says it is 0.3 higher; then only states 0..2 are seen.
  Eigen::MatrixXd H5 = Eigen::MatrixXd::Zero(1, 10);
  H5(0, 5) = 2.0;  // weak: σ = 0.5 on state 5, the prior's own σ
  Eigen::VectorXd z5(1);
  z5[0] = H5.row(0).dot(s.pi0) + 2.0 * 0.6;  // says +0.6; the posterior mean moves +0.3
  InertialFilter::Candidate c;
  ASSERT_TRUE(f.Evaluate(H5, z5, c));
  ASSERT_TRUE(f.Apply());
  const double drift = f.parameters()[5] - s.pi0[5];
  ASSERT_NEAR(drift, 0.3, 1e-9);
  const double w = 0.01;
  for (int k = 0; k < 300; ++k) ASSERT_TRUE(f.PullToPrior(w));
  // On one state, with Λ₀ = 2/σ0² the posterior's information (prior + that one measurement), each
  // pull multiplies the drift by Λ₀/(Λ₀ + w/σ0²): an exponential return to the prior.
  const double lambda0 = 2.0 / 0.25, per_pull = lambda0 / (lambda0 + w / 0.25);
  EXPECT_NEAR(f.parameters()[5] - s.pi0[5], drift * std::pow(per_pull, 300), 1e-9);
  EXPECT_LT(std::abs(f.parameters()[5] - s.pi0[5]), 0.25 * drift);
  EXPECT_NEAR(f.covariance()(5, 5), 0.25 / 2.0, 1e-12);
}

// Fails if the EKF's pull holds the mass instead of the body's shape: a measurement that sees only
// the mass (a load at the CoM, with the pose showing nothing else) says the link is 1.5× heavier;
// the mass must follow it and the CoM (h/m) stay where the prior put it. Pulling all of θ (α
// included) to θ₀ leaves m = e^{2α}(1 + |t|²) to be met partly through t, which moves the CoM:
// 3.5 mm here with α pulled, 0.9 mm without (the EKF's own linearised steps through t).
TEST(PriorPull, HoldsTheShapeAndLetsTheMassFollowTheData) {
  InertialFilter f(FilterKind::kLogCholesky, 1, 1);
  Vector10 pi0;
  pi0 << 2.0, 0.1, 0.0, 0.05, 0.05, 0.0, 0.0, 0.06, 0.0, 0.04;
  ASSERT_TRUE(f.Reset(pi0, Vector10::Constant(0.3)));
  Eigen::MatrixXd H = Eigen::MatrixXd::Zero(1, 10);
  H(0, 0) = 2.0;  // the mass, σ = 0.5 kg per tick: weak, so that the pull competes
  Eigen::VectorXd z(1);
  z[0] = H(0, 0) * 1.5 * pi0[0];
  for (int k = 0; k < 3000; ++k) {
    InertialFilter::Candidate c;
    ASSERT_TRUE(f.Evaluate(H, z, c));
    ASSERT_TRUE(f.Apply());
    if (k % 10 == 9) {
      ASSERT_TRUE(f.PullToPrior(0.015));
    }
  }
  const Eigen::VectorXd& pi = f.parameters();
  const Eigen::Vector3d com = pi.segment<3>(1) / pi[0], com0 = pi0.segment<3>(1) / pi0[0];
  EXPECT_NEAR(pi[0], 1.5 * pi0[0], 0.01);
  EXPECT_LT((com - com0).norm(), 2e-3) << "CoM moved by " << 1e3 * (com - com0).norm() << " mm";
}

// Fails if a body's prior leaks into another's (estimator.link_priors): two bodies, each its own
// σ₀ (the filter's P₀ per state) and its own pull weight; both have drifted the same way on an
// unobserved state, and only the pulled body returns (at the rate the one-body test derives), the
// other keeps its drift.
TEST(PriorPull, EachBodyKeepsItsOwnPriorAndPull) {
  InertialFilter f(FilterKind::kKalman, 2, 2);
  Eigen::VectorXd pi0(20);
  Vector10 one;
  one << 2.0, 0.1, 0.0, 0.05, 0.05, 0.0, 0.0, 0.06, 0.0, 0.04;
  pi0 << one, one;
  Eigen::VectorXd sigma0(20);
  sigma0 << Vector10::Constant(0.5), Vector10::Constant(0.2);
  ASSERT_TRUE(f.Reset(pi0, sigma0));
  EXPECT_DOUBLE_EQ(f.covariance()(5, 5), 0.25);
  EXPECT_DOUBLE_EQ(f.covariance()(15, 15), 0.04);
  // One measurement per body on its state 5, each as strong as that body's prior: both posterior
  // means move by half of what is measured (+0.6 → +0.3).
  Eigen::MatrixXd H = Eigen::MatrixXd::Zero(2, 20);
  H(0, 5) = 1.0 / 0.5;
  H(1, 15) = 1.0 / 0.2;
  Eigen::VectorXd z = H * pi0;
  z[0] += H(0, 5) * 0.6;
  z[1] += H(1, 15) * 0.6;
  InertialFilter::Candidate c;
  ASSERT_TRUE(f.Evaluate(H, z, c));
  ASSERT_TRUE(f.Apply());
  ASSERT_NEAR(f.parameters()[5] - pi0[5], 0.3, 1e-9);
  ASSERT_NEAR(f.parameters()[15] - pi0[15], 0.3, 1e-9);
  Eigen::VectorXd w = Eigen::VectorXd::Zero(20);
  w.head(10).setConstant(0.01);  // the first body pulled, the second not
  for (int k = 0; k < 300; ++k) ASSERT_TRUE(f.PullToPrior(w));
  const double lambda0 = 2.0, per_pull = lambda0 / (lambda0 + 0.01);  // in units of 1/σ0²
  EXPECT_NEAR(f.parameters()[5] - pi0[5], 0.3 * std::pow(per_pull, 300), 1e-9);
  EXPECT_NEAR(f.covariance()(5, 5), 0.25 / 2.0, 1e-12);
  EXPECT_NEAR(f.parameters()[15] - pi0[15], 0.3, 1e-9);
  EXPECT_NEAR(f.covariance()(15, 15), 0.02, 1e-12);  // 0.04 / 2: the update's, untouched since
  // A weight vector of the wrong size or with a negative entry changes nothing.
  const Eigen::VectorXd before = f.parameters();
  EXPECT_FALSE(f.PullToPrior(Eigen::VectorXd::Constant(10, 0.01)));
  EXPECT_FALSE(f.PullToPrior(-w));
  EXPECT_EQ(f.parameters(), before);
}

// Fails if the pull allocates (it runs in the control tick).
TEST(PriorPull, AllocatesNothing) {
  InertialFilter f(FilterKind::kLogCholesky, 4, 35);
  Eigen::VectorXd pi0(40);
  Vector10 one;
  one << 2.0, 0.1, 0.0, 0.05, 0.05, 0.0, 0.0, 0.06, 0.0, 0.04;
  for (int k = 0; k < 4; ++k) pi0.segment<10>(10 * k) = one;
  ASSERT_TRUE(f.Reset(pi0, Vector10::Constant(0.3)));
  std::mt19937_64 rng(3);
  std::normal_distribution<double> n(0.0, 1.0);
  Eigen::MatrixXd H(35, 40);
  for (int i = 0; i < H.size(); ++i) H.data()[i] = n(rng);
  const Eigen::VectorXd z = H * pi0;
  InertialFilter::Candidate c;
  ASSERT_TRUE(f.Evaluate(H, z, c));
  test::AllocationScope scope;
  const bool pulled = f.PullToPrior(0.01);
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_TRUE(pulled);
}

}  // namespace
}  // namespace heft::estimator

// Filter updates against the textbook covariance form: both forms of the linear update, the
// extended update and its damped step, the NIS evaluation, and no allocation in any update branch.
// Gating, rate limiting and calibration are in test_gating_calibration.cpp.
#include <gtest/gtest.h>

#include <Eigen/LU>
#include <algorithm>
#include <numeric>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "heft/estimator/bias_calibration.hpp"
#include "heft/estimator/gating.hpp"
#include "heft/estimator/inertial_filter.hpp"
#include "heft/estimator/rate_limiter.hpp"
#include "heft/test/alloc_counter.hpp"
#include "random_parameters.hpp"

namespace heft::estimator {
namespace {

using dynamics::Vector10;
using test::Consistent;

// The covariance-form update: K = P Hᵀ (H P Hᵀ + 1)⁻¹, x⁺ = x + K ỹ, P⁺ = (1 − K H) P.
struct Textbook {
  Eigen::VectorXd x;
  Eigen::MatrixXd P;
  double nis;
};
Textbook TextbookUpdate(const Eigen::VectorXd& x, const Eigen::MatrixXd& P,
                        const Eigen::MatrixXd& H, const Eigen::VectorXd& innovation) {
  const Eigen::MatrixXd S = H * P * H.transpose() + Eigen::MatrixXd::Identity(H.rows(), H.rows());
  const Eigen::MatrixXd K = P * H.transpose() * S.inverse();
  return {x + K * innovation, (Eigen::MatrixXd::Identity(x.size(), x.size()) - K * H) * P,
          innovation.dot(S.inverse() * innovation)};
}

// Both forms of the update (information form for m' ≥ n, covariance form for m' < n), with and
// without rows that carry no information, against the textbook update.
struct UpdateCase {
  int bodies, rows, zero_rows;
};
class KalmanUpdate : public ::testing::TestWithParam<UpdateCase> {};

TEST_P(KalmanUpdate, EqualsTheTextbookCovarianceForm) {
  const UpdateCase uc = GetParam();
  std::mt19937_64 rng(4 + uc.rows);
  std::normal_distribution<double> n(0.0, 1.0);
  const int states = 10 * uc.bodies;
  InertialFilter f(FilterKind::kKalman, uc.bodies, uc.rows);
  Eigen::VectorXd pi0(states);
  for (int k = 0; k < uc.bodies; ++k) pi0.segment<10>(10 * k) = Consistent(rng);
  ASSERT_TRUE(f.Reset(pi0, Vector10::Constant(0.5)));
  f.Predict(Vector10::Constant(0.1), 0.01);
  const Eigen::MatrixXd P = f.covariance();
  Eigen::MatrixXd H(uc.rows, states);
  Eigen::VectorXd z(uc.rows);
  for (int i = 0; i < H.size(); ++i) H.data()[i] = n(rng);
  for (int i = 0; i < uc.rows; ++i) z[i] = n(rng);
  std::vector<int> order(uc.rows);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  for (int i = 0; i < uc.zero_rows; ++i) H.row(order[i]).setZero();
  const Textbook ref = TextbookUpdate(pi0, P, H, z - H * pi0);
  InertialFilter::Candidate c;
  ASSERT_TRUE(f.Evaluate(H, z, c));
  EXPECT_NEAR(c.nis, ref.nis, 1e-9 * ref.nis);
  EXPECT_EQ(c.dof, uc.rows);
  EXPECT_EQ(c.rows_used, uc.rows - uc.zero_rows);
  EXPECT_EQ(c.covariance_form, c.rows_used > 0 && c.rows_used < states);
  ASSERT_TRUE(f.Apply());
  EXPECT_LT((f.parameters() - ref.x).norm(), 1e-10 * ref.x.norm());
  EXPECT_LT((f.covariance() - ref.P).norm(), 1e-10 * ref.P.norm());
  EXPECT_EQ((f.covariance() - f.covariance().transpose()).norm(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Forms, KalmanUpdate,
                         ::testing::Values(UpdateCase{2, 12, 0},   // covariance form
                                           UpdateCase{2, 30, 0},   // information form
                                           UpdateCase{2, 30, 12},  // 18 rows left: covariance
                                           UpdateCase{1, 35, 20},  // 15 rows left: information
                                           UpdateCase{4, 35, 35},  // nothing to learn
                                           UpdateCase{4, 35, 15}));

TEST(InertialFilter, ExtendedUpdateEqualsTheCovarianceFormWithH_equals_YG) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> n(0.0, 1.0);
  InertialFilter f(FilterKind::kLogCholesky, 1, 8);
  const Vector10 pi0 = Consistent(rng);
  ASSERT_TRUE(f.Reset(pi0, Vector10::Constant(0.2)));
  const Eigen::VectorXd theta = f.state();
  const Eigen::MatrixXd P = f.covariance();
  Eigen::MatrixXd Y(8, 10);
  Eigen::VectorXd z(8);
  for (int i = 0; i < Y.size(); ++i) Y.data()[i] = n(rng);
  for (int i = 0; i < 8; ++i) z[i] = n(rng);
  const Eigen::MatrixXd H = Y * dynamics::LogCholeskyJacobian(theta);
  const Textbook ref = TextbookUpdate(theta, P, H, z - Y * pi0);
  InertialFilter::Candidate c;
  ASSERT_TRUE(f.Evaluate(Y, z, c));
  EXPECT_NEAR(c.nis, ref.nis, 1e-9 * ref.nis);
  ASSERT_TRUE(f.Apply());
  EXPECT_LT((f.state() - ref.x).norm(), 1e-10 * (1 + ref.x.norm()));
  EXPECT_LT((f.covariance() - ref.P).norm(), 1e-10 * ref.P.norm());
  EXPECT_TRUE(dynamics::IsPhysicallyConsistent(f.parameters().head<10>(), 0.0));
}

// A forearm of 1.5 kg suddenly carrying 7 kg: the full linearised step in θ overshoots (g is
// exponential in α); the damped step lowers the nonlinear cost, the KF's is never damped.
TEST(InertialFilter, ExtendedStepIsDampedWhenTheLinearisationOvershoots) {
  std::mt19937_64 rng(9);
  std::normal_distribution<double> n(0.0, 1.0);
  Vector10 nominal;
  nominal << 1.5, 0.0, 0.0, -0.2, 0.09, 0.0, 0.0, 0.09, 0.0, 0.002;
  Vector10 truth = nominal;
  truth[0] = 7.0;
  truth.segment<3>(1) *= 7.0 / 1.5;
  truth.tail<6>() *= 7.0 / 1.5;
  Eigen::MatrixXd H(29, 10);
  for (int i = 0; i < H.size(); ++i) H.data()[i] = 20.0 * n(rng);
  const Eigen::VectorXd z = H * truth;
  for (const FilterKind kind : {FilterKind::kLogCholesky, FilterKind::kKalman}) {
    InertialFilter f(kind, 1, 29);
    ASSERT_TRUE(f.Reset(nominal, Vector10::Constant(0.5)));
    InertialFilter::Candidate c;
    ASSERT_TRUE(f.Evaluate(H, z, c));
    const double before = (z - H * nominal).squaredNorm();
    ASSERT_TRUE(f.Apply());
    const double after = (z - H * f.parameters()).squaredNorm();
    if (kind == FilterKind::kKalman) {
      EXPECT_EQ(c.step_fraction, 1.0);
      continue;
    }
    EXPECT_LT(c.step_fraction, 1.0);
    EXPECT_GT(c.step_fraction, 0.0);
    EXPECT_LT(after, before);
    EXPECT_NEAR(f.parameters()[0], 7.0, 3.5) << "one damped step lands near the new mass";
  }
}

// The damped EKF step against a direct evaluation of the MAP cost of the update,
//   J(s) = |z − H_π g(θ⁻ + s·dx)|² + s²·dxᵀP⁻¹dx,  dx the full EKF step (textbook covariance form),
// with dxᵀP⁻¹dx from a factorisation of P: the filter takes the first s of 1, ½, ¼, … that lowers
// J below J(0) (0 if none does), in both forms of the update and with rows carrying no information;
// its covariance is the Joseph form of the gain s·K (inertial_filter.hpp), from dense matrices.
TEST(InertialFilter, DampedStepFollowsTheMapCostInBothForms) {
  Vector10 nominal;
  nominal << 1.5, 0.0, 0.0, -0.2, 0.09, 0.0, 0.0, 0.09, 0.0, 0.002;
  int damped = 0;
  for (const int bodies : {1, 4}) {
    for (const double load : {1.0, 2.0, 4.7, 10.0}) {
      for (int trial = 0; trial < 8; ++trial) {
        // Half the cases with weak rows and a wide prior, where the prior term weighs in J.
        const double scale = trial < 4 ? 10.0 : 0.5, sigma = trial < 4 ? 0.3 : 1.0;
        std::mt19937_64 rng(100 * bodies + 10 * trial + static_cast<int>(load));
        std::normal_distribution<double> n(0.0, 1.0);
        const int states = 10 * bodies, rows = 29;
        InertialFilter f(FilterKind::kLogCholesky, bodies, rows);
        Eigen::VectorXd pi0(states), truth(states);
        for (int k = 0; k < bodies; ++k) {
          pi0.segment<10>(10 * k) = nominal;
          truth.segment<10>(10 * k) = nominal * load;
          truth[10 * k + 3] -= 0.05 * n(rng);
        }
        Eigen::MatrixXd Hpi(rows, states);
        for (int i = 0; i < Hpi.size(); ++i) Hpi.data()[i] = scale * n(rng);
        Hpi.middleRows(3, 4).setZero();
        Eigen::VectorXd z = Hpi * truth;
        for (int i = 0; i < rows; ++i) z[i] += n(rng);
        ASSERT_TRUE(f.Reset(pi0, Vector10::Constant(sigma)));
        f.Predict(Vector10::Constant(0.1), 0.01);
        const Eigen::VectorXd theta = f.state();
        const Eigen::MatrixXd P = f.covariance();
        Eigen::MatrixXd G = Eigen::MatrixXd::Zero(states, states);
        for (int k = 0; k < bodies; ++k)
          G.block<10, 10>(10 * k, 10 * k) =
              dynamics::LogCholeskyJacobian(theta.segment<10>(10 * k));
        const Textbook ref = TextbookUpdate(theta, P, Hpi * G, z - Hpi * f.parameters());
        const Eigen::VectorXd dx = ref.x - theta;
        const double prior = dx.dot(P.llt().solve(dx));
        const auto cost = [&](double s) {
          Eigen::VectorXd pi(states);
          for (int k = 0; k < bodies; ++k)
            pi.segment<10>(10 * k) = dynamics::LogCholeskyToParameters(theta.segment<10>(10 * k) +
                                                                       s * dx.segment<10>(10 * k));
          return (z - Hpi * pi).squaredNorm() + s * s * prior;
        };
        double expected = 1.0;
        while (expected > 0.0 && !(cost(expected) < cost(0.0)))
          expected = expected > 1.0 / (1 << InertialFilter::kMaxHalvings) ? 0.5 * expected : 0.0;
        InertialFilter::Candidate c;
        ASSERT_TRUE(f.Evaluate(Hpi, z, c));
        EXPECT_EQ(c.covariance_form, bodies == 4);
        EXPECT_EQ(c.step_fraction, expected)
            << bodies << " bodies, load ×" << load << ", " << trial;
        EXPECT_NEAR(c.nis, ref.nis, 1e-9 * ref.nis);  // the gate sees the undamped linearisation
        damped += c.step_fraction < 1.0;
        ASSERT_TRUE(f.Apply());
        EXPECT_LT((f.state() - theta - c.step_fraction * dx).norm(), 1e-8 * (1.0 + dx.norm()));
        // P⁺ is the covariance of the step taken: the Joseph form with the gain s·K, computed
        // densely (fails if the full step's covariance is kept after a damped step).
        const Eigen::MatrixXd Hx = Hpi * G;
        const Eigen::MatrixXd S = Hx * P * Hx.transpose() + Eigen::MatrixXd::Identity(rows, rows);
        const Eigen::MatrixXd Ks = c.step_fraction * P * Hx.transpose() * S.inverse();
        const Eigen::MatrixXd IKH = Eigen::MatrixXd::Identity(states, states) - Ks * Hx;
        const Eigen::MatrixXd joseph = IKH * P * IKH.transpose() + Ks * Ks.transpose();
        EXPECT_LT((f.covariance() - joseph).norm(), 1e-9 * joseph.norm())
            << bodies << " bodies, load ×" << load << ", " << trial << ", s " << c.step_fraction;
        if (c.step_fraction == 1.0) {
          EXPECT_LT((f.covariance() - ref.P).norm(), 1e-9 * ref.P.norm());
        }
        if (c.step_fraction > 0.0) {
          EXPECT_LT(cost(c.step_fraction), cost(0.0));
        }
      }
    }
  }
  EXPECT_GT(damped, 4) << "the cases exercise the backtracking";
}

// Nis (the gate's screen of a tick's own rows, InertialEstimator::Step) reports the NIS Evaluate
// would, in both forms and with rows that carry no information, or below a level its bound ỹᵀỹ;
// it leaves the candidate Evaluate formed (Apply after it lands where it would without it), and
// allocates nothing. Fails if Nis drops the zero rows' ỹᵢ², uses another H (θ's Jacobian left
// out), returns the bound above the level, or overwrites the candidate.
TEST(InertialFilter, NisIsEvaluatesAndLeavesTheCandidate) {
  for (const FilterKind kind : {FilterKind::kLogCholesky, FilterKind::kKalman}) {
    for (const int bodies : {1, 4}) {  // 35 rows: information form for 10 states, covariance for 40
      std::mt19937_64 rng(40 + bodies);
      std::normal_distribution<double> n(0.0, 1.0);
      const int states = 10 * bodies, rows = 35;
      InertialFilter f(kind, bodies, rows), g(kind, bodies, rows);
      Eigen::VectorXd pi0(states);
      for (int k = 0; k < bodies; ++k) pi0.segment<10>(10 * k) = Consistent(rng);
      ASSERT_TRUE(f.Reset(pi0, Vector10::Constant(0.3)));
      ASSERT_TRUE(g.Reset(pi0, Vector10::Constant(0.3)));
      Eigen::MatrixXd H(rows, states), H2(rows, states);
      Eigen::VectorXd z(rows), z2(rows);
      for (int i = 0; i < H.size(); ++i) H.data()[i] = n(rng), H2.data()[i] = 3.0 * n(rng);
      for (int i = 0; i < rows; ++i) z[i] = n(rng), z2[i] = 5.0 * n(rng);
      H2.middleRows(4, 3).setZero();
      InertialFilter::Candidate c2;
      ASSERT_TRUE(f.Evaluate(H2, z2, c2));
      double nis = -1.0;
      ASSERT_TRUE(f.Nis(H2, z2, nis));
      EXPECT_NEAR(nis, c2.nis, 1e-9 * c2.nis) << static_cast<int>(kind) << " " << bodies;
      // Below a level the bound ỹᵀỹ is returned without factorising; above it, the NIS itself.
      const double bound = (z2 - H2 * f.parameters()).squaredNorm();
      ASSERT_GT(bound, c2.nis);
      double screened = -1.0;
      ASSERT_TRUE(f.Nis(H2, z2, screened, bound));
      EXPECT_NEAR(screened, bound, 1e-12 * bound);
      ASSERT_TRUE(f.Nis(H2, z2, screened, 0.99 * bound));
      EXPECT_NEAR(screened, c2.nis, 1e-9 * c2.nis);
      InertialFilter::Candidate c, d;
      ASSERT_TRUE(f.Evaluate(H, z, c));
      ASSERT_TRUE(g.Evaluate(H, z, d));
      {
        heft::test::AllocationScope scope;
        ASSERT_TRUE(f.Nis(H2, z2, nis));
        EXPECT_EQ(scope.count(), 0u);
      }
      ASSERT_TRUE(f.Apply());
      ASSERT_TRUE(g.Apply());
      EXPECT_EQ(f.state(), g.state());
      EXPECT_EQ(f.covariance(), g.covariance());
    }
  }
}

TEST(InertialFilter, UpdatesAllocateNothing) {
  std::mt19937_64 rng(6);
  for (const int bodies : {1, 4}) {  // information and covariance forms
    InertialFilter f(FilterKind::kLogCholesky, bodies, 35);
    Eigen::VectorXd pi0(10 * bodies);
    for (int k = 0; k < bodies; ++k) pi0.segment<10>(10 * k) = Consistent(rng);
    ASSERT_TRUE(f.Reset(pi0, Vector10::Constant(0.2)));
    Eigen::MatrixXd H = Eigen::MatrixXd::Random(35, 10 * bodies);
    H.middleRows(10, 8).setZero();
    const Eigen::VectorXd z = Eigen::VectorXd::Random(35);
    Eigen::MatrixXd cov(10 * bodies, 10 * bodies);
    InertialFilter::Candidate c;
    f.Evaluate(H, z, c);                          // warm-up
    const Vector10 q = Vector10::Constant(1e-3);  // a vector: an expression would be a temporary
    heft::test::AllocationScope scope;
    for (int i = 0; i < 3; ++i) {
      f.Predict(q, 0.003);
      f.Evaluate(H, z, c);
      (void)f.Apply();
      f.ParameterCovariance(cov);
    }
    EXPECT_EQ(scope.count(), 0u) << bodies << " bodies";
    EXPECT_EQ(c.covariance_form, bodies == 4);
  }
}

// Every branch of Evaluate on the real-time path — both forms, the covariance form's fall-back to
// the information form, the damped EKF step's backtracking, rows with no information, both filters
// — allocates nothing; each case checks that it took the branch it is meant to cover.
TEST(InertialFilter, EveryUpdateBranchAllocatesNothing) {
  enum Case { kRandom, kOvershoot, kFallBack, kNoInformation };
  Vector10 nominal;
  nominal << 1.5, 0.0, 0.0, -0.2, 0.09, 0.0, 0.0, 0.09, 0.0, 0.002;
  for (const FilterKind kind : {FilterKind::kLogCholesky, FilterKind::kKalman}) {
    for (const int bodies : {1, 4}) {
      for (const Case which : {kRandom, kOvershoot, kFallBack, kNoInformation}) {
        if (which == kFallBack && bodies == 1) continue;  // 35 rows ≥ 10 states: information form
        std::mt19937_64 rng(10 + bodies + 4 * which);
        std::normal_distribution<double> n(0.0, 1.0);
        const int states = 10 * bodies, rows = 35;
        InertialFilter f(kind, bodies, rows);
        Eigen::VectorXd pi0(states), truth(states);
        Vector10 sigma0 = Vector10::Constant(0.5);
        Eigen::MatrixXd H(rows, states);
        for (int i = 0; i < H.size(); ++i) H.data()[i] = 20.0 * n(rng);
        for (int k = 0; k < bodies; ++k) {
          pi0.segment<10>(10 * k) = nominal;
          truth.segment<10>(10 * k) = nominal * (which == kOvershoot ? 7.0 / 1.5 : 1.0);
        }
        if (which == kOvershoot) H.bottomRows(rows - 29).setZero();  // 29 < 40: covariance form
        if (which == kFallBack) {
          // Very precise rows on states with a wide prior: P − VᵀV cancels below definiteness.
          sigma0 << 1e3, 1e3, 1e3, 1e3, 1e3, 1e3, 1e3, 0.1, 0.1, 0.1;
          H *= 5e3;
          for (int k = 0; k < bodies; ++k) H.middleCols<3>(10 * k + 7).setZero();
        }
        if (which == kNoInformation) H.setZero();
        Eigen::VectorXd z = H * truth;
        for (int i = 0; i < rows; ++i) z[i] += n(rng);
        ASSERT_TRUE(f.Reset(pi0, sigma0));
        InertialFilter::Candidate c;
        ASSERT_TRUE(f.Evaluate(H, z, c));  // warm-up
        const Vector10 q = Vector10::Constant(1e-3);
        {
          heft::test::AllocationScope scope;
          f.Predict(q, 0.003);
          ASSERT_TRUE(f.Evaluate(H, z, c));
          ASSERT_TRUE(f.Apply());
          f.Revert();
          ASSERT_TRUE(f.Evaluate(H, z, c));
          ASSERT_TRUE(f.Apply());
          EXPECT_EQ(scope.count(), 0u) << static_cast<int>(kind) << " " << bodies << " " << which;
        }
        const bool ekf = kind == FilterKind::kLogCholesky;
        switch (which) {
          case kRandom:
            EXPECT_EQ(c.covariance_form, bodies == 4);
            break;
          case kOvershoot:
            EXPECT_EQ(c.covariance_form, bodies == 4);
            if (ekf) {
              EXPECT_LT(c.step_fraction, 1.0);
            }
            break;
          case kFallBack:
            EXPECT_LT(c.rows_used, states);
            EXPECT_FALSE(c.covariance_form) << "the information form ran instead";
            break;
          case kNoInformation:
            EXPECT_EQ(c.rows_used, 0);
            break;
        }
        if (!ekf) {
          EXPECT_EQ(c.step_fraction, 1.0);
        }
      }
    }
  }
}

}  // namespace
}  // namespace heft::estimator

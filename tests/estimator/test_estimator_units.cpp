// Filter updates against the textbook covariance form, gating, rate limiting and calibration.
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

namespace heft::estimator {
namespace {

using dynamics::Vector10;

Vector10 Consistent(std::mt19937_64& rng) {
  std::normal_distribution<double> n(0.0, 0.5);
  Vector10 th;
  for (int i = 0; i < 10; ++i) th[i] = n(rng);
  return dynamics::LogCholeskyToParameters(th);
}

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

TEST(Gating, ChiSquareQuantilesMatchTables) {
  EXPECT_NEAR(ChiSquareQuantile(0.95, 1), 3.841459, 1e-5);
  EXPECT_NEAR(ChiSquareQuantile(0.99, 10), 23.209251, 1e-5);
  EXPECT_NEAR(ChiSquareQuantile(0.999, 35), 66.619, 1e-3);
  EXPECT_NEAR(ChiSquareCdf(ChiSquareQuantile(0.3, 7), 7), 0.3, 1e-10);
  EXPECT_THROW(ChiSquareQuantile(1.0, 3), std::invalid_argument);
}

TEST(Gating, RejectsOutliersAndReleasesALastingChange) {
  GatingConfig cfg;
  cfg.confidence = 0.99;
  cfg.release_after = 0.1;
  InnovationGate gate(cfg, 10);
  EXPECT_EQ(gate.Decide(5.0, 10, 0.0), GateDecision::kAccept);
  EXPECT_EQ(gate.Decide(100.0, 10, 0.003), GateDecision::kReject);  // an impulse
  EXPECT_EQ(gate.Decide(5.0, 10, 0.006), GateDecision::kAccept);    // over: the run restarts
  double t = 1.0;
  int rejected = 0;
  GateDecision d = GateDecision::kReject;
  while ((d = gate.Decide(100.0, 10, t)) == GateDecision::kReject) {  // a lasting change
    ++rejected;
    t += 0.003;
  }
  EXPECT_EQ(d, GateDecision::kRelease);
  EXPECT_NEAR(rejected * 0.003, 0.1, 0.0031);
  EXPECT_EQ(gate.releases(), 1u);
  EXPECT_EQ(gate.rejected(), static_cast<std::uint64_t>(rejected + 1));
  GatingConfig off;
  off.enabled = false;
  InnovationGate open(off, 10);
  EXPECT_EQ(open.Decide(1e12, 10, 0.0), GateDecision::kAccept);
}

// Where no contact struck, a lasting run is checked after quick_release_after (0.015 s) instead
// of release_after (0.1 s); a contact event within release_after before the run or during it, a
// run whose NIS decays (a spike's tail in a low-passed copy), a refused check of the run, or
// quick_release_after 0 each bring back release_after. Fails if any of them releases early, or a
// run with none of them waits the long way.
TEST(Gating, ReleasesQuicklyWhereNoContactStruck) {
  GatingConfig cfg;
  cfg.confidence = 0.99;
  cfg.release_after = 0.1;
  cfg.quick_release_after = 0.015;
  cfg.open_for = 0.0;  // the gate is plain again at the next tick
  // Seconds a lasting run takes to be released from `t`, and whether it was quick: NIS 100, or
  // when `decaying` a tail falling from 1000 by 0.83 a tick (a 5 Hz low-pass's (1 − α)²) to 60.
  auto run = [](InnovationGate& gate, double t, bool decaying = false) {
    const double start = t;
    double nis = decaying ? 1000.0 : 100.0;
    while (gate.Decide(nis, 10, t) == GateDecision::kReject) {
      if (decaying) nis = std::max(0.83 * nis, 60.0);
      t += 0.003;
    }
    return std::pair{t - start, gate.released_quick()};
  };
  InnovationGate gate(cfg, 10);
  auto [wait, quick] = run(gate, 1.0);  // no contact event ever
  EXPECT_NEAR(wait, 0.015, 0.0031);
  EXPECT_TRUE(quick);
  gate.ContactEvent(1.95);  // a touchdown 0.05 s before the next run
  std::tie(wait, quick) = run(gate, 2.0);
  EXPECT_NEAR(wait, 0.1, 0.0031);
  EXPECT_FALSE(quick);
  std::tie(wait, quick) = run(gate, 3.0);  // 1.05 s after it: quick again
  EXPECT_NEAR(wait, 0.015, 0.0031);
  std::tie(wait, quick) = run(gate, 4.0, true);
  EXPECT_NEAR(wait, 0.1, 0.0031) << "a decaying run is a low-pass's tail";
  EXPECT_EQ(gate.Decide(100.0, 10, 5.0), GateDecision::kReject);
  gate.ContactEvent(5.006);  // struck during the run
  std::tie(wait, quick) = run(gate, 5.003);
  EXPECT_NEAR(wait + 0.003, 0.1, 0.0031);
  // A refused quick check: the next check of the run waits release_after.
  EXPECT_EQ(gate.Decide(5.0, 10, 6.0), GateDecision::kAccept);
  double t = 7.0;
  while (gate.Decide(100.0, 10, t) == GateDecision::kReject) t += 0.003;
  gate.RefuseRelease(t);
  std::tie(wait, quick) = run(gate, t + 0.003);
  EXPECT_NEAR(wait + 0.003, 0.1, 0.0031);
  EXPECT_FALSE(quick);
  cfg.quick_release_after = 0.0;
  InnovationGate plain(cfg, 10);
  std::tie(wait, quick) = run(plain, 1.0);
  EXPECT_NEAR(wait, 0.1, 0.0031);
  EXPECT_FALSE(quick);
}

// The window after a release is for the residual the release confirmed (NIS 100 on 10 rows): that
// residual's NIS spreads by √(2 (2·100 − 10)) = 19.5, so up to 100 + 3.09 · 19.5 = 160 at the
// gate's 0.999 is the same residual and used (60, 100, 155), while 500 (a touchdown on a walking
// robot) is rejected and the window goes on; after open_for the gate is the plain one again. Fails
// if the window takes the larger residual, refuses the released one's own spread, ends at a
// refusal, or keeps refusing after it closed.
TEST(Gating, TheOpenWindowRefusesAResidualLargerThanTheReleasedOne) {
  GatingConfig cfg;
  cfg.confidence = 0.999;
  cfg.release_after = 0.1;
  cfg.open_for = 0.3;
  InnovationGate gate(cfg, 10);
  double t = 1.0;
  while (gate.Decide(100.0, 10, t) == GateDecision::kReject) t += 0.003;
  ASSERT_TRUE(gate.open());
  EXPECT_EQ(gate.Decide(60.0, 10, t + 0.003), GateDecision::kOpen);
  EXPECT_EQ(gate.Decide(500.0, 10, t + 0.006), GateDecision::kReject);
  EXPECT_EQ(gate.Decide(100.0, 10, t + 0.009), GateDecision::kOpen);  // the release's own level
  EXPECT_EQ(gate.Decide(155.0, 10, t + 0.012), GateDecision::kOpen);  // and its spread
  EXPECT_EQ(gate.Decide(170.0, 10, t + 0.015), GateDecision::kReject);
  EXPECT_EQ(gate.refused_in_window(), 2u);
  EXPECT_TRUE(gate.open());
  EXPECT_EQ(gate.Decide(50.0, 10, t + 0.31), GateDecision::kReject);  // plain gating: 50 > γ
  EXPECT_FALSE(gate.open());
  EXPECT_EQ(gate.Decide(5.0, 10, t + 0.313), GateDecision::kAccept);
}

TEST(RateLimiter, StaysConsistentOnAdversarialTargetsAndRespectsLimits) {
  std::mt19937_64 rng(7);
  const RateLimits limits{3.0, 0.5, 0.2};
  const double dt = 0.003;
  for (int trial = 0; trial < 40; ++trial) {
    Vector10 from = Consistent(rng);
    Vector10 to = Consistent(rng);
    // Adversarial: a thin rod to a flat disc with the mass moved far away.
    if (trial % 2) {
      dynamics::RigidBodyInertia rod{
          5.0, {0.5, -0.3, 0.2}, Eigen::Vector3d(1e-4, 0.5, 0.5).asDiagonal()};
      to = dynamics::ParametersFromInertia(rod);
    }
    for (int step = 0; step < 200000; ++step) {
      const RateLimitResult r = RateLimitStep(from, to, limits, dt);
      ASSERT_TRUE(dynamics::IsPhysicallyConsistent(r.handed, 0.0)) << trial << " " << step;
      const Vector10 d = (r.handed - from).cwiseAbs();
      ASSERT_LE(d[0], limits.mass * dt * (1 + 1e-9));
      ASSERT_LE(d.segment<3>(1).maxCoeff(), limits.first_moment * dt * (1 + 1e-9));
      ASSERT_LE(d.tail<6>().maxCoeff(), limits.inertia * dt * (1 + 1e-9));
      from = r.handed;
      if (r.fraction == 1.0) break;
    }
    EXPECT_LT((from - to).norm(), 1e-12 * (1 + to.norm())) << "target reached";
  }
}

TEST(BiasCalibration, AveragesAtRestAndRefusesWhileMoving) {
  CalibrationConfig cfg;
  cfg.window = 0.1;
  cfg.max_speed = 0.1;
  BiasCalibrator cal(3, cfg);
  const Eigen::Vector3d bias(1.0, -2.0, 0.5);
  std::mt19937_64 rng(8);
  std::normal_distribution<double> n(0.0, 0.1);
  double t = 0.0;
  EXPECT_EQ(cal.Add(bias, 0.0, t), CalibrationStatus::kCollecting);
  t += 0.003;
  EXPECT_EQ(cal.Add(bias * 10, 0.5, t),
            CalibrationStatus::kRefusedMoving);  // moving: not averaged, the window paused
  EXPECT_EQ(cal.samples(), 1);
  CalibrationStatus s = CalibrationStatus::kCollecting;
  while ((s = cal.Add(bias + Eigen::Vector3d(n(rng), n(rng), n(rng)), 0.01, t)) ==
         CalibrationStatus::kCollecting)
    t += 0.003;
  EXPECT_EQ(s, CalibrationStatus::kDone);
  EXPECT_LT((cal.bias() - bias).norm(), 0.1);
  EXPECT_EQ(cal.refusals(), 1u);
}

// A brief motion (30 ms, under max_motion) pauses the window instead of restarting it: the
// calibration ends one window after it began, the moving samples not averaged. A long motion
// (250 ms) restarts it. Fails if any fast sample restarts the window (done 30 ms late) or if a
// long motion does not.
TEST(BiasCalibration, BriefMotionPausesTheWindowALongOneRestartsIt) {
  CalibrationConfig cfg;
  cfg.window = 0.1;
  cfg.max_speed = 0.1;
  const Eigen::Vector3d bias(1.0, -2.0, 0.5);
  for (const double motion : {0.03, 0.25}) {
    BiasCalibrator cal(3, cfg);
    double t = 0.0, done_at = -1.0;
    for (int i = 0; i < 1000 && done_at < 0.0; ++i, t += 0.003) {
      const bool moving = t >= 0.05 && t < 0.05 + motion;
      const CalibrationStatus s =
          cal.Add(moving ? Eigen::Vector3d(bias * 10) : bias, moving ? 0.5 : 0.0, t);
      if (s == CalibrationStatus::kDone) done_at = t;
    }
    EXPECT_LT((cal.bias() - bias).norm(), 1e-12) << "moving samples are never averaged";
    if (motion < cfg.max_motion) {
      EXPECT_NEAR(done_at, cfg.window, 0.0031) << "paused, not restarted";
    } else {
      EXPECT_GE(done_at, 0.05 + motion + cfg.window - 0.0031) << "restarted after the motion";
    }
  }
}

// A robot that never stands still: the calibration gives up after `timeout` with the last good bias
// (zero for the first one), says so, and counts it; a refused tick (no usable measurement) runs the
// same clock. Fails if calibration waits for ever.
TEST(BiasCalibration, TimesOutWithTheLastGoodBias) {
  CalibrationConfig cfg;
  cfg.window = 0.1;
  cfg.max_speed = 0.1;
  cfg.timeout = 0.5;
  BiasCalibrator cal(3, cfg);
  const Eigen::Vector3d bias(1.0, -2.0, 0.5);
  double t = 0.0;
  CalibrationStatus s = CalibrationStatus::kCollecting;
  while ((s = cal.Add(bias, 0.0, t)) == CalibrationStatus::kCollecting) t += 0.003;
  ASSERT_EQ(s, CalibrationStatus::kDone);
  for (const bool refused : {false, true}) {
    cal.Restart();
    const double began = t;
    while ((s = refused ? cal.Refuse(t) : cal.Add(bias * 5, 1.0, t)) !=
           CalibrationStatus::kTimedOut) {
      ASSERT_LT(t - began, 1.0);
      t += 0.003;
    }
    EXPECT_NEAR(t - began, cfg.timeout, 0.0031);
    EXPECT_TRUE(cal.done());
    EXPECT_TRUE(cal.timed_out());
    EXPECT_LT((cal.bias() - bias).norm(), 1e-12) << "the last good bias";
  }
  EXPECT_EQ(cal.timeouts(), 2u);
  BiasCalibrator fresh(3, cfg);
  t = 0.0;
  while ((s = fresh.Add(bias, 1.0, t)) != CalibrationStatus::kTimedOut && t < 1.0) t += 0.003;
  EXPECT_EQ(s, CalibrationStatus::kTimedOut);
  EXPECT_EQ(fresh.bias().norm(), 0.0) << "no good bias yet: zero";
}

}  // namespace
}  // namespace heft::estimator

// InertialFilter::Evaluate's reuse_nis: the update on the rows the last Nis read reuses their
// staging and products, and must give what a fresh Evaluate gives — also when the state changed
// in between or the rows are another buffer (then nothing may be reused).
#include <gtest/gtest.h>

#include <ostream>
#include <random>

#include "heft/estimator/inertial_filter.hpp"

namespace heft::estimator {
namespace {

struct Case {
  int bodies, rows;            // rows < 10·bodies: the covariance form; else the information form
  bool consider_gain = false;  // the Schmidt path: every row, the m×m form
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.bodies << " bodies, " << c.rows << " rows" << (c.consider_gain ? ", Schmidt" : "");
}
class NisReuse : public ::testing::TestWithParam<Case> {};

TEST_P(NisReuse, EqualsAFreshEvaluate) {
  const auto [bodies, rows, consider_gain] = GetParam();
  const int n = 10 * bodies, nc = 7;
  dynamics::Vector10 body;
  body << 1.0, 0.02, -0.01, 0.03, 0.1, 0.0, 0.0, 0.12, 0.0, 0.08;
  const Eigen::VectorXd pi0 = body.replicate(bodies, 1);
  const Eigen::VectorXd q = Eigen::VectorXd::Constant(10, 1e-3);
  InertialFilter reused(FilterKind::kLogCholesky, bodies, rows, nc);
  InertialFilter fresh(FilterKind::kLogCholesky, bodies, rows, nc);
  ASSERT_TRUE(reused.Reset(pi0, Eigen::VectorXd::Constant(10, 0.3)));
  ASSERT_TRUE(fresh.Reset(pi0, Eigen::VectorXd::Constant(10, 0.3)));
  reused.set_consider_gain(consider_gain);
  fresh.set_consider_gain(consider_gain);
  std::mt19937_64 rng(3);
  std::normal_distribution<double> g(0.0, 1.0);
  Eigen::MatrixXd H(rows, n + nc), other(rows, n + nc);
  Eigen::VectorXd z(rows), z_other(rows);
  for (int t = 0; t < 60; ++t) {
    for (int i = 0; i < rows; ++i) {
      for (int j = 0; j < n + nc; ++j) H(i, j) = 0.5 * g(rng);
      z[i] = H.row(i).head(n).dot(pi0) + 0.3 * g(rng);
    }
    if (t % 7 == 3) H.row(rows / 2).head(n).setZero();  // a row without information
    other = H + 0.1 * Eigen::MatrixXd::Ones(rows, n + nc);
    z_other = z;
    for (InertialFilter* f : {&reused, &fresh}) f->Predict(q, 0.003);
    double nis_reused = 0.0, nis_fresh = 0.0;
    ASSERT_TRUE(reused.Nis(H, z, nis_reused, -1.0, 0.7));
    ASSERT_TRUE(fresh.Nis(H, z, nis_fresh, -1.0, 0.7));
    EXPECT_NEAR(nis_reused, nis_fresh, 1e-12 * nis_fresh);
    // Every third tick the state changes between the NIS and the update, every fifth the update
    // reads another buffer: neither may reuse what the NIS staged.
    if (t % 3 == 1)
      for (InertialFilter* f : {&reused, &fresh}) f->Predict(q, 0.03);
    const bool moved = t % 5 == 2;
    InertialFilter::Candidate a, b;
    ASSERT_TRUE(reused.Evaluate(moved ? other : H, moved ? z_other : z, a, true));
    ASSERT_TRUE(fresh.Evaluate(moved ? other : H, moved ? z_other : z, b, false));
    EXPECT_EQ(a.covariance_form, b.covariance_form);
    EXPECT_EQ(a.rows_used, b.rows_used);
    EXPECT_NEAR(a.nis, b.nis, 1e-9 * b.nis) << "tick " << t;
    ASSERT_TRUE(reused.Apply());
    ASSERT_TRUE(fresh.Apply());
    const double scale = fresh.covariance().cwiseAbs().maxCoeff();
    EXPECT_LT((reused.state() - fresh.state()).cwiseAbs().maxCoeff(), 1e-9) << "tick " << t;
    EXPECT_LT((reused.covariance() - fresh.covariance()).cwiseAbs().maxCoeff(), 1e-9 * scale);
    EXPECT_LT((reused.consider_sensitivity() - fresh.consider_sensitivity()).cwiseAbs().maxCoeff(),
              1e-9 * (1.0 + fresh.consider_sensitivity().cwiseAbs().maxCoeff()));
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, NisReuse,
                         ::testing::Values(Case{1, 20}, Case{3, 12}, Case{1, 20, true},
                                           Case{3, 12, true}));

}  // namespace
}  // namespace heft::estimator

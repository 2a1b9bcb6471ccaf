// The EKF's coordinates taken at a link's nominal centre of mass (InertialFilter::SetBodyFrame,
// estimator.parameter_frame: com).
#include <gtest/gtest.h>

#include <random>

#include "heft/estimator/inertial_filter.hpp"
#include "heft/test/alloc_counter.hpp"

namespace heft::estimator {
namespace {

using dynamics::Vector10;

// A torso-like body: 30 kg, its CoM 0.29 m above the link's origin (the waist joint).
Vector10 Torso() {
  dynamics::RigidBodyInertia body;
  body.mass = 30.0;
  body.com = Eigen::Vector3d(0.01, 0.0, 0.29);
  body.inertia_com = Eigen::Vector3d(0.9, 0.7, 0.4).asDiagonal();
  return dynamics::ParametersFromInertia(body);
}

// The π-covariance of a filter whose prior spreads only θ-state `state` (σ 0.1; the others 1e-9):
// the direction that state moves π in, G e_s, times 0.1.
Vector10 Direction(bool com_frame, int state) {
  InertialFilter f(FilterKind::kLogCholesky, 1, 1);
  const Vector10 pi0 = Torso();
  if (com_frame) {
    EXPECT_TRUE(f.SetBodyFrame(0, pi0.segment<3>(1) / pi0[0]));
  }
  Vector10 sigma = Vector10::Constant(1e-9);
  sigma[state] = 0.1;
  EXPECT_TRUE(f.Reset(pi0, sigma));
  // The first-order covariance, G P Gᵀ (the hand-off's, BodyCovariance, adds the map's curvature).
  Eigen::MatrixXd cov(10, 10);
  f.ParameterCovariance(cov);
  // Rank one: cov = v vᵀ, v = 0.1 G e_s; recover v from its largest diagonal entry's column.
  int k = 0;
  cov.diagonal().maxCoeff(&k);
  return cov.col(k) / std::sqrt(cov(k, k));
}

// The CoM's displacement per unit π direction v at π0: dc = (dh − c dm) / m.
Eigen::Vector3d ComChange(const Vector10& v) {
  const Vector10 pi0 = Torso();
  const Eigen::Vector3d c = pi0.segment<3>(1) / pi0[0];
  return (v.segment<3>(1) - c * v[0]) / pi0[0];
}

// Fails if the frame changes the starting point or what the filter hands: π, in the link's frame,
// is the nominal after Reset, whichever frame θ is taken in.
TEST(BodyFrame, StartsAtTheNominalAndHandsPiInTheLinksFrame) {
  const Vector10 pi0 = Torso();
  InertialFilter f(FilterKind::kLogCholesky, 1, 1);
  ASSERT_TRUE(f.SetBodyFrame(0, pi0.segment<3>(1) / pi0[0]));
  ASSERT_TRUE(f.Reset(pi0, Vector10::Constant(0.03)));
  EXPECT_LT((f.parameters() - pi0).norm(), 1e-12 * pi0.norm());
  // At the CoM the body's first moment is zero: θ's t starts at 0.
  EXPECT_LT(f.state().tail<3>().norm(), 1e-12);
  // The KF's state is π: no frame applies.
  InertialFilter kf(FilterKind::kKalman, 1, 1);
  EXPECT_FALSE(kf.SetBodyFrame(0, Eigen::Vector3d(0, 0, 0.29)));
  EXPECT_FALSE(f.SetBodyFrame(1, Eigen::Vector3d::Zero()));
  EXPECT_FALSE(f.SetBodyFrame(0, Eigen::Vector3d(0, 0, std::nan(""))));
}

// Fails if θ's inertia states (d, s) move the centre of mass when taken at it. In the link's frame
// they do: the CoM 0.29 m from the origin makes d₃ (σ 0.1) a CoM shift of centimetres, and so
// a tight prior on the inertia there is also one on the CoM height and the other way round.
TEST(BodyFrame, AtTheCentreOfMassTheInertiaStatesLeaveTheCentreOfMassAlone) {
  for (int state = 1; state <= 6; ++state) {
    const double at_com = ComChange(Direction(true, state)).norm();
    EXPECT_LT(at_com, 1e-9) << "θ state " << state;
  }
  // d₃ in the link's frame: the CoM moves with it (‖dc‖ per unit σ, here centimetres).
  EXPECT_GT(ComChange(Direction(false, 3)).norm(), 0.01);
  // And t moves the CoM in both frames (the CoM states).
  for (int state = 7; state <= 9; ++state) {
    EXPECT_GT(ComChange(Direction(true, state)).norm(), 1e-3);
  }
}

// Fails if the frame breaks the update: the same exact measurement of the full π drives the
// estimate from a wrong start to the truth in either frame.
TEST(BodyFrame, TheUpdateConvergesToWhatTheDataSay) {
  const Vector10 truth = Torso();
  dynamics::RigidBodyInertia start = dynamics::InertiaFromParameters10(truth);
  start.mass *= 0.8;
  start.com += Eigen::Vector3d(0.02, -0.01, 0.03);
  start.inertia_com *= 1.3;
  const Vector10 pi0 = dynamics::ParametersFromInertia(start);
  for (bool frame : {false, true}) {
    InertialFilter f(FilterKind::kLogCholesky, 1, 10);
    if (frame) {
      ASSERT_TRUE(f.SetBodyFrame(0, pi0.segment<3>(1) / pi0[0]));
    }
    ASSERT_TRUE(f.Reset(pi0, Vector10::Constant(0.3)));
    const Eigen::MatrixXd H = 100.0 * Eigen::MatrixXd::Identity(10, 10);
    const Eigen::VectorXd z = H * truth;
    const Vector10 q = Vector10::Constant(1e-4);  // the random walk keeps P open, as in the service
    for (int k = 0; k < 500; ++k) {
      f.Predict(q, 1.0);
      InertialFilter::Candidate c;
      ASSERT_TRUE(f.Evaluate(H, z, c));
      ASSERT_TRUE(f.Apply());
    }
    EXPECT_LT((f.parameters() - truth).norm(), 1e-6 * truth.norm()) << "frame " << frame;
  }
}

// Fails if the update allocates with a frame set (it runs in the control tick).
TEST(BodyFrame, AllocatesNothing) {
  InertialFilter f(FilterKind::kLogCholesky, 4, 35);
  Eigen::VectorXd pi0(40);
  for (int k = 0; k < 4; ++k) pi0.segment<10>(10 * k) = Torso();
  for (int k = 0; k < 4; ++k) ASSERT_TRUE(f.SetBodyFrame(k, Eigen::Vector3d(0.01, 0.0, 0.29)));
  ASSERT_TRUE(f.Reset(pi0, Vector10::Constant(0.3)));
  std::mt19937_64 rng(5);
  std::normal_distribution<double> n(0.0, 1.0);
  Eigen::MatrixXd H(35, 40);
  for (int i = 0; i < H.size(); ++i) H.data()[i] = n(rng);
  const Eigen::VectorXd z = H * pi0 + Eigen::VectorXd::Constant(35, 0.5);
  InertialFilter::Candidate c;
  test::AllocationScope scope;
  const bool evaluated = f.Evaluate(H, z, c);
  const bool applied = evaluated && f.Apply();
  const bool pulled = f.PullToPrior(0.01);
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_TRUE(evaluated);
  EXPECT_TRUE(applied);
  EXPECT_TRUE(pulled);
}

}  // namespace
}  // namespace heft::estimator

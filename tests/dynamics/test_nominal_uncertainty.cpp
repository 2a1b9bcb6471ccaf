// The stated nominal uncertainty's factor (dynamics::NominalFactor): the principal axes' turn
// columns against the rotation's derivative, and what a turn cannot change.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

#include "heft/dynamics/nominal_uncertainty.hpp"

namespace heft::dynamics {
namespace {

// A forearm-like body: 2 kg, CoM off the origin, principal moments 0.002 / 0.018 / 0.019 kg·m²
// along axes turned away from the link's.
Vector10 Forearm() {
  RigidBodyInertia b;
  b.mass = 2.0;
  b.com = Eigen::Vector3d(0.02, -0.01, -0.12);
  const Eigen::Matrix3d r =
      Eigen::AngleAxisd(0.4, Eigen::Vector3d(1.0, 2.0, -0.5).normalized()).toRotationMatrix();
  b.inertia_com = r * Eigen::Vector3d(0.002, 0.018, 0.019).asDiagonal() * r.transpose();
  return ParametersFromInertia(b);
}

TEST(NominalFactor, TurnColumnsAreTheAxesRotationDerivative) {
  // Column 7 + k is π's change for a turn σ_θ of the principal axes about principal axis k:
  // δI_c = σ_θ (ω̂ I_c − I_c ω̂), ω the axis; mass and first moment do not move. Fails if the turn
  // is taken about the link's axes instead of the principal ones, or moves m or h.
  const Vector10 pi = Forearm();
  const NominalSigmas s{0.03, 0.01, 0.1, 0.1};
  const Eigen::Matrix<double, 10, 10> f = NominalFactor(pi, s);
  const RigidBodyInertia body = InertiaFromParameters10(pi);
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(body.inertia_com);
  for (int k = 0; k < 3; ++k) {
    const Eigen::Vector3d w = eig.eigenvectors().col(k);
    Eigen::Matrix3d hat;
    hat << 0, -w.z(), w.y(), w.z(), 0, -w.x(), -w.y(), w.x(), 0;
    RigidBodyInertia turned = body;
    turned.inertia_com += s.turn * (hat * body.inertia_com - body.inertia_com * hat);
    const Vector10 expected = ParametersFromInertia(turned) - pi;
    // Central differences of a rotation: the turn acts on I_c with frequencies 1 and 2 (ω̂'s
    // commutator), so the difference is exact but for a relative (2σ_θ)²/24 at most.
    const double bound = 4.0 * s.turn * s.turn / 24.0;
    EXPECT_LT((f.col(7 + k) - expected).norm(), 1.05 * bound * expected.norm()) << "axis " << k;
    EXPECT_LT(f.col(7 + k).head<4>().norm(), 1e-15) << "axis " << k;
  }
  // Every error the statement names is a direction of its own: rank 10.
  const Eigen::JacobiSVD<Eigen::Matrix<double, 10, 10>> svd(f);
  EXPECT_GT(svd.singularValues()[9], 1e-8 * svd.singularValues()[0]);
}

TEST(NominalFactor, ATurnOfEqualMomentsIsNoError) {
  // A body whose moments are equal has no principal axes to turn: its turn columns vanish, and
  // with turn 0 the factor keeps the other seven columns unchanged. Fails if a turn adds variance
  // a sphere's inertia cannot have, or the turn leaks into the other columns.
  RigidBodyInertia ball;
  ball.mass = 3.0;
  ball.com = Eigen::Vector3d(0.1, 0.0, 0.05);
  ball.inertia_com = 0.01 * Eigen::Matrix3d::Identity();
  const Vector10 pi = ParametersFromInertia(ball);
  const Eigen::Matrix<double, 10, 10> f = NominalFactor(pi, {0.03, 0.01, 0.1, 0.1});
  EXPECT_LT(f.rightCols<3>().norm(), 1e-14);
  const Eigen::Matrix<double, 10, 10> no_turn = NominalFactor(Forearm(), {0.03, 0.01, 0.1, 0.0});
  EXPECT_EQ(no_turn.rightCols<3>().norm(), 0.0);
  EXPECT_EQ((no_turn.leftCols<7>() - NominalFactor(Forearm(), {}).leftCols<7>()).norm(), 0.0);
}

}  // namespace
}  // namespace heft::dynamics

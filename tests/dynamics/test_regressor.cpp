// The condensed regressor (eq. 6-7), the body regressor, CRBA and the contact term, checked
// against independent formulations; and zero allocations after warm-up.
#include <gtest/gtest.h>

#include <random>

#include "heft/dynamics/dynamics.hpp"
#include "heft/dynamics/regressor.hpp"
#include "heft/test/alloc_counter.hpp"
#include "random_state.hpp"

namespace heft::dynamics {
namespace {

Model Reference(bool floating) {
  return LoadModelFromUrdfFile(std::string(HEFT_ROBOTS_DIR) +
                                   (floating ? "/heft_humanoid.urdf" : "/heft_humanoid_fixed.urdf"),
                               ModelOptions{});
}

Eigen::Matrix3d Sk(const Eigen::Vector3d& v) {
  Eigen::Matrix3d s;
  s << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  return s;
}

TEST(BodyRegressor, MatchesTheSpatialInertiaFormula) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> n(0.0, 1.0);
  for (int trial = 0; trial < 100; ++trial) {
    Vector6 a, v;
    for (int i = 0; i < 6; ++i) a[i] = n(rng), v[i] = n(rng);
    RigidBodyInertia body;
    body.mass = 0.5 + std::abs(n(rng));
    body.com = Eigen::Vector3d(n(rng), n(rng), n(rng)) * 0.1;
    body.inertia_com = Eigen::Vector3d(0.02, 0.03, 0.04).asDiagonal();
    const Vector10 pi = ParametersFromInertia(body);
    // Independent: 6×6 spatial inertia and the spatial force cross product.
    const Eigen::Matrix3d h = Sk(pi.segment<3>(1));
    Eigen::Matrix<double, 6, 6> I;
    I << pi[0] * Eigen::Matrix3d::Identity(), -h, h, InertiaFromParameters(pi);
    const Vector6 Iv = I * v;
    Vector6 cross;
    cross << v.tail<3>().cross(Iv.head<3>()),
        v.tail<3>().cross(Iv.tail<3>()) + v.head<3>().cross(Iv.head<3>());
    const Vector6 expected = I * a + cross;
    EXPECT_LT((BodyRegressor(a, v) * pi - expected).norm(), 1e-12 * (1.0 + expected.norm()));
  }
}

class Regressor : public ::testing::TestWithParam<bool> {};

TEST_P(Regressor, CondensedRegressorReproducesRnea) {
  const Model model = Reference(GetParam());
  Workspace ws(model);
  std::mt19937_64 rng(11);
  const std::vector<std::vector<std::string>> selections = {
      {"left_forearm"},
      {"torso", "right_hand"},
      {"torso", "left_forearm", "right_forearm", "pelvis"}};
  for (auto names : selections) {
    if (!model.floating_base && names.back() == "pelvis")
      names.back() = "left_thigh";  // pelvis is welded
    const RegressorSelection sel(model, names);
    Eigen::MatrixXd Y(model.nv, 10 * sel.size());
    Eigen::VectorXd tau_nom(model.nv), tau(model.nv);
    const Eigen::VectorXd pi = sel.Gather(model);
    for (int trial = 0; trial < 50; ++trial) {
      const test::State s = test::RandomState(model, rng);
      Rnea(model, ws, s.q, s.v, s.a, tau);
      CondensedRegressor(model, ws, sel, s.q, s.v, s.a, Y, tau_nom);
      const double err = (Y * pi + tau_nom - tau).norm() / tau.norm();
      EXPECT_LT(err, 1e-10) << names.size() << " bodies, trial " << trial;
    }
  }
}

// Fails if a column is not the torque one standard deviation of that body's mass or first moment
// moves (RNEA is linear in π: the difference of two RNEAs is exact), or if it allocates.
TEST_P(Regressor, MassFirstMomentColumnsAreRneaDifferences) {
  Model model = Reference(GetParam());
  Workspace ws(model);
  std::mt19937_64 rng(5);
  std::normal_distribution<double> n(0.0, 1.0);
  std::vector<int> bodies;
  std::vector<Eigen::Matrix4d> factors;
  for (int b = 0; b < model.num_bodies(); b += 3) {
    if (!(model.bodies[b].parameters[0] > 0.0)) continue;
    bodies.push_back(b);
    Eigen::Matrix4d f = Eigen::Matrix4d::Zero();
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j <= i; ++j) f(i, j) = n(rng);
    factors.push_back(f);
  }
  Eigen::MatrixXd C(model.nv, 4 * static_cast<Eigen::Index>(bodies.size()));
  Eigen::VectorXd tau0(model.nv), tau1(model.nv);
  for (int trial = 0; trial < 10; ++trial) {
    const test::State s = test::RandomState(model, rng);
    Rnea(model, ws, s.q, s.v, s.a, tau0);
    {
      heft::test::AllocationScope scope;
      MassFirstMomentColumns(model, ws, bodies, factors, C);
      EXPECT_EQ(scope.count(), 0u);
    }
    for (std::size_t k = 0; k < bodies.size(); ++k)
      for (int c = 0; c < 4; ++c) {
        Model moved = model;
        moved.bodies[bodies[k]].parameters.head<4>() += factors[k].col(c);
        Rnea(moved, ws, s.q, s.v, s.a, tau1);
        const Eigen::VectorXd expected = tau1 - tau0;
        EXPECT_LT((C.col(4 * static_cast<Eigen::Index>(k) + c) - expected).norm(),
                  1e-9 * (1.0 + expected.norm()))
            << "body " << bodies[k] << " column " << c << " trial " << trial;
      }
    Rnea(model, ws, s.q, s.v, s.a, tau0);  // the workspace of this state again
  }
}

TEST_P(Regressor, MassMatrixMatchesRneaColumns) {
  const Model model = Reference(GetParam());
  Workspace ws(model);
  std::mt19937_64 rng(12);
  const test::State s = test::RandomState(model, rng);
  Eigen::MatrixXd M(model.nv, model.nv);
  Crba(model, ws, s.q, M);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model.nv);
  Eigen::VectorXd g(model.nv), col(model.nv);
  Rnea(model, ws, s.q, zero, zero, g);
  for (int i = 0; i < model.nv; ++i) {
    Rnea(model, ws, s.q, zero, Eigen::VectorXd::Unit(model.nv, i), col);
    EXPECT_LT((col - g - M.col(i)).norm(), 1e-10 * M.norm()) << "column " << i;
  }
  EXPECT_LT((M - M.transpose()).norm(), 1e-12 * M.norm());
}

TEST_P(Regressor, ContactTermIsJacobianTransposeTimesWrench) {
  const Model model = Reference(GetParam());
  Workspace ws(model);
  std::mt19937_64 rng(13);
  std::normal_distribution<double> n(0.0, 50.0);
  const std::vector<int> frames = {model.frame_index("left_foot_ft"),
                                   model.frame_index("right_foot_ft"),
                                   model.frame_index("left_wrist_mount")};
  std::vector<Vector6> wrenches(frames.size());
  for (int trial = 0; trial < 20; ++trial) {
    const test::State s = test::RandomState(model, rng);
    for (auto& w : wrenches)
      for (int i = 0; i < 6; ++i) w[i] = n(rng);
    ForwardKinematics(model, ws, s.q);
    Eigen::VectorXd expected = Eigen::VectorXd::Zero(model.nv);
    Matrix6X J(6, model.nv);
    for (std::size_t k = 0; k < frames.size(); ++k) {
      FrameJacobian(model, ws, frames[k], J);
      const Pose pose = FramePose(model, ws, frames[k]);
      Vector6 world;
      world << pose.R * wrenches[k].head<3>(), pose.R * wrenches[k].tail<3>();
      expected += J.transpose() * world;
    }
    Eigen::VectorXd out(model.nv);
    ContactTerm(model, ws, frames, wrenches, out);
    EXPECT_LT((out - expected).norm(), 1e-10 * expected.norm());
  }
}

TEST_P(Regressor, FrameJacobianMatchesFiniteDifferenceOfPoses) {
  const Model model = Reference(GetParam());
  Workspace ws(model);
  std::mt19937_64 rng(14);
  const test::State s = test::RandomState(model, rng);
  const int frame = model.frame_index("left_wrist_mount");
  ForwardKinematics(model, ws, s.q);
  Matrix6X J(6, model.nv);
  FrameJacobian(model, ws, frame, J);
  const Pose p0 = FramePose(model, ws, frame);
  // Integrate q along v for a small step (quaternion for the base) and compare the frame's motion.
  const double dt = 1e-7;
  Eigen::VectorXd q1 = s.q;
  int first = 0;
  if (model.floating_base) {
    q1.head<3>() += dt * s.v.head<3>();
    Eigen::Quaterniond quat(s.q[3], s.q[4], s.q[5], s.q[6]);
    const Eigen::Vector3d w = s.v.segment<3>(3) * dt;
    quat = quat * Eigen::Quaterniond(Eigen::AngleAxisd(w.norm(), w.normalized()));
    q1.segment<4>(3) << quat.w(), quat.x(), quat.y(), quat.z();
    first = 1;
  }
  for (int i = first; i < model.num_bodies(); ++i)
    q1[model.bodies[i].q_index] += dt * s.v[model.bodies[i].v_index];
  ForwardKinematics(model, ws, q1);
  const Pose p1 = FramePose(model, ws, frame);
  const Eigen::AngleAxisd dR(p1.R * p0.R.transpose());
  Vector6 fd;
  fd << (p1.p - p0.p) / dt, dR.axis() * dR.angle() / dt;
  const Vector6 jv = J * s.v;
  EXPECT_LT((fd - jv).norm(), 1e-5 * (1.0 + jv.norm()));
}

TEST_P(Regressor, NoAllocationAfterWarmUp) {
  const Model model = Reference(GetParam());
  Workspace ws(model);
  std::mt19937_64 rng(15);
  const test::State s = test::RandomState(model, rng);
  const RegressorSelection sel(model, {"torso", "left_forearm"});
  Eigen::MatrixXd Y(model.nv, 20), M(model.nv, model.nv);
  Eigen::VectorXd tau(model.nv), out(model.nv);
  const std::vector<int> frames = {model.frame_index("left_foot_ft")};
  const std::vector<Vector6> wrenches = {Vector6::Constant(10.0)};
  Rnea(model, ws, s.q, s.v, s.a, tau);  // warm-up
  heft::test::AllocationScope scope;
  for (int k = 0; k < 3; ++k) {
    Rnea(model, ws, s.q, s.v, s.a, tau);
    CondensedRegressor(model, ws, sel, s.q, s.v, s.a, Y, tau);
    ContactTerm(model, ws, frames, wrenches, out);
    Crba(model, ws, s.q, M);
    ForwardKinematics(model, ws, s.q);
  }
  EXPECT_EQ(scope.count(), 0u);
}

// Inverse dynamics of the floating humanoid with classical accelerations (a = dv/dt, model.hpp):
// (1) Galilean invariance: the base's linear velocity replaced by 0, the same a, gives the same τ;
// (2) nothing depends on yaw or position: the world turned about z (R_WB ← Rz R_WB, p_WB ← Rz p_WB
// + d, and the world-frame base velocity and acceleration turned with it) gives the same joint and
// base-torque rows, and the base force (world frame) turned by Rz. Both for RNEA and for the
// condensed regressor (Y_est, τ_nom). This is what lets SampleMapping use an IMU without the base's
// velocity or a yaw reference; it fails if the free joint's acceleration is treated as spatial
// (the ω × v term) or gravity is not taken along world z.
TEST(FloatingBase, InverseDynamicsIgnoresBaseVelocityYawAndPosition) {
  const Model model = Reference(true);
  Workspace ws(model);
  const RegressorSelection sel(model, {"torso", "left_forearm", "pelvis"});
  const int nv = model.nv, np = 10 * sel.size();
  Eigen::VectorXd tau(nv), tau2(nv), nom(nv), nom2(nv);
  Eigen::MatrixXd Y(nv, np), Y2(nv, np);
  std::mt19937_64 rng(16);
  std::uniform_real_distribution<double> u(-M_PI, M_PI);
  auto rel = [](const Eigen::VectorXd& x, const Eigen::VectorXd& ref) {
    return (x - ref).norm() / ref.norm();
  };
  for (int trial = 0; trial < 20; ++trial) {
    const test::State s = test::RandomState(model, rng);
    Rnea(model, ws, s.q, s.v, s.a, tau);
    CondensedRegressor(model, ws, sel, s.q, s.v, s.a, Y, nom);

    Eigen::VectorXd v0 = s.v;
    v0.head<3>().setZero();
    Rnea(model, ws, s.q, v0, s.a, tau2);
    EXPECT_LT(rel(tau2, tau), 1e-9) << "Galilean, trial " << trial;
    CondensedRegressor(model, ws, sel, s.q, v0, s.a, Y2, nom2);
    EXPECT_LT(rel(nom2, nom), 1e-9) << "Galilean, trial " << trial;
    EXPECT_LT((Y2 - Y).norm() / Y.norm(), 1e-9) << "Galilean, trial " << trial;

    const Eigen::Matrix3d Rz =
        Eigen::AngleAxisd(u(rng), Eigen::Vector3d::UnitZ()).toRotationMatrix();
    Eigen::VectorXd q = s.q, v = s.v, a = s.a;
    q.head<3>() = Rz * s.q.head<3>() + Eigen::Vector3d(3.0 * u(rng), 3.0 * u(rng), 0.5);
    const Eigen::Quaterniond quat(Eigen::Quaterniond(Rz) *
                                  Eigen::Quaterniond(s.q[3], s.q[4], s.q[5], s.q[6]));
    q.segment<4>(3) << quat.w(), quat.x(), quat.y(), quat.z();
    v.head<3>() = Rz * s.v.head<3>();
    a.head<3>() = Rz * s.a.head<3>();
    Rnea(model, ws, q, v, a, tau2);
    tau2.head<3>() = Rz.transpose() * tau2.head<3>().eval();
    EXPECT_LT(rel(tau2, tau), 1e-9) << "yaw, trial " << trial;
    CondensedRegressor(model, ws, sel, q, v, a, Y2, nom2);
    nom2.head<3>() = Rz.transpose() * nom2.head<3>().eval();
    Y2.topRows<3>() = Rz.transpose() * Y2.topRows<3>().eval();
    EXPECT_LT(rel(nom2, nom), 1e-9) << "yaw, trial " << trial;
    EXPECT_LT((Y2 - Y).norm() / Y.norm(), 1e-9) << "yaw, trial " << trial;
  }
}

INSTANTIATE_TEST_SUITE_P(Base, Regressor, ::testing::Values(false, true),
                         [](const auto& param_info) {
                           return param_info.param ? "Floating" : "Fixed";
                         });

}  // namespace
}  // namespace heft::dynamics

// The controllers' model (heft::dynamics underneath) against MuJoCo as the independent reference:
// mass matrix, bias forces, sole Jacobians, their drift (against a finite difference of MuJoCo's
// point velocity along the motion), centre of mass and its velocity, and a payload written into
// both.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <random>

#include "heft/sim/control_model.hpp"
#include "heft/sim/mujoco_model.hpp"

#ifndef HEFT_TEST_ROBOTS_DIR
#error "HEFT_TEST_ROBOTS_DIR must point at config/robots"
#endif

namespace heft::sim {
namespace {

const std::string kFloating = std::string(HEFT_TEST_ROBOTS_DIR) + "/heft_humanoid.urdf";

struct Reference {
  MjModelPtr model = LoadMujocoModel(kFloating, MujocoLoadOptions{});
  MjDataPtr data{mj_makeData(model.get())};
};

// A random state; joint order and q/v layout are MuJoCo's, which heft::dynamics may order
// differently, so the test maps by joint name.
struct State {
  Eigen::VectorXd q_mj, v_mj, q_dyn, v_dyn;
  std::vector<int> dyn_v_of_mj_v;
};

State RandomState(const Reference& ref, const ControlModel& model, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-0.6, 0.6);
  const mjModel* m = ref.model.get();
  State s;
  s.q_mj.setZero(m->nq);
  s.v_mj.setZero(m->nv);
  for (int i = 0; i < m->nv; ++i) s.v_mj[i] = u(rng);
  s.q_mj.head<3>() << u(rng), u(rng), 1.0 + u(rng);
  Eigen::Quaterniond quat(
      Eigen::AngleAxisd(u(rng), Eigen::Vector3d(u(rng), u(rng), 1.0).normalized()));
  s.q_mj.segment<4>(3) << quat.w(), quat.x(), quat.y(), quat.z();
  for (int i = 7; i < m->nq; ++i) s.q_mj[i] = u(rng);
  s.q_dyn = s.q_mj;
  s.v_dyn = s.v_mj;
  s.dyn_v_of_mj_v.resize(m->nv);
  for (int i = 0; i < 6; ++i) s.dyn_v_of_mj_v[i] = i;
  for (int j = 1; j < m->njnt; ++j) {
    const int v_mj = m->jnt_dofadr[j];
    const int v_dyn = model.joint_v_index(mj_id2name(m, mjOBJ_JOINT, j));
    s.dyn_v_of_mj_v[v_mj] = v_dyn;
    s.q_dyn[v_dyn + 1] = s.q_mj[m->jnt_qposadr[j]];
    s.v_dyn[v_dyn] = s.v_mj[v_mj];
  }
  return s;
}

void MujocoKinematics(const Reference& ref, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  mjData* d = ref.data.get();
  for (int i = 0; i < ref.model->nq; ++i) d->qpos[i] = q[i];
  for (int i = 0; i < ref.model->nv; ++i) d->qvel[i] = v[i];
  mj_forward(ref.model.get(), d);
}

Eigen::Vector3d MujocoPointVelocity(const Reference& ref, int body, const Eigen::Vector3d& p_B,
                                    const Eigen::VectorXd& v) {
  const mjData* d = ref.data.get();
  Eigen::Matrix3d R;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) R(r, c) = d->xmat[9 * body + 3 * r + c];
  const Eigen::Vector3d p_W = Eigen::Map<const Eigen::Vector3d>(d->xpos + 3 * body) + R * p_B;
  Eigen::Matrix<double, 3, Eigen::Dynamic, Eigen::RowMajor> jacp(3, ref.model->nv);
  mj_jac(ref.model.get(), d, jacp.data(), nullptr, p_W.data(), body);
  return jacp * v;
}

TEST(ScenariosControlModel, MassMatrixBiasJacobiansAndCentreOfMassMatchMujoco) {
  Reference ref;
  ControlModel model(kFloating);
  const mjModel* m = ref.model.get();
  const Eigen::Vector3d sole(0.03, 0.0, -0.07);
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const State s = RandomState(ref, model, seed);
    MujocoKinematics(ref, s.q_mj, s.v_mj);
    model.Update(s.q_dyn, s.v_dyn);
    // M and h.
    Eigen::MatrixXd M_mj(m->nv, m->nv);
    mj_fullM(m, M_mj.data(), ref.data->qM);
    for (int a = 0; a < m->nv; ++a) {
      EXPECT_NEAR(model.h()[s.dyn_v_of_mj_v[a]], ref.data->qfrc_bias[a], 1e-8) << "row " << a;
      for (int b = 0; b < m->nv; ++b) {
        ASSERT_NEAR(model.M()(s.dyn_v_of_mj_v[a], s.dyn_v_of_mj_v[b]), M_mj(a, b), 1e-9);
      }
    }
    // Centre of mass and its velocity.
    const Eigen::Vector3d com_mj(ref.data->subtree_com[0], ref.data->subtree_com[1],
                                 ref.data->subtree_com[2]);
    EXPECT_LT((model.CenterOfMass() - com_mj).norm(), 1e-12);
    Eigen::Matrix<double, 3, Eigen::Dynamic, Eigen::RowMajor> jcom(3, m->nv);
    mj_jacSubtreeCom(m, ref.data.get(), jcom.data(), 0);
    EXPECT_LT((model.CenterOfMassVelocity() - jcom * s.v_mj).norm(), 1e-10);
    // Sole point of each foot: velocity, and J̇ v against a central difference of MuJoCo's point
    // velocity along the motion (v held constant, so the derivative is J̇ v).
    for (const char* foot : {"left_foot", "right_foot"}) {
      const int body_mj = MujocoBodyId(m, foot, kFloating);
      const int body = model.body(foot);
      Matrix6X J(6, m->nv);
      model.PointJacobian(body, sole, J);
      Eigen::VectorXd v_in_dyn(m->nv);
      for (int a = 0; a < m->nv; ++a) v_in_dyn[s.dyn_v_of_mj_v[a]] = s.v_mj[a];
      const Eigen::Vector3d vel = (J * v_in_dyn).head<3>();
      EXPECT_LT((vel - MujocoPointVelocity(ref, body_mj, sole, s.v_mj)).norm(), 1e-10) << foot;
      const Vector6 drift = model.PointDriftAcceleration(body, sole);
      const double h = 1e-5;
      Eigen::VectorXd q_plus = s.q_mj, q_minus = s.q_mj;
      mj_integratePos(m, q_plus.data(), s.v_mj.data(), h);
      mj_integratePos(m, q_minus.data(), s.v_mj.data(), -h);
      MujocoKinematics(ref, q_plus, s.v_mj);
      const Eigen::Vector3d v_plus = MujocoPointVelocity(ref, body_mj, sole, s.v_mj);
      MujocoKinematics(ref, q_minus, s.v_mj);
      const Eigen::Vector3d v_minus = MujocoPointVelocity(ref, body_mj, sole, s.v_mj);
      MujocoKinematics(ref, s.q_mj, s.v_mj);
      const Eigen::Vector3d reference = (v_plus - v_minus) / (2 * h);
      EXPECT_LT((drift.head<3>() - reference).norm(), 1e-4 * (1.0 + reference.norm()))
          << foot << ": " << drift.head<3>().transpose() << " vs " << reference.transpose();
    }
  }
}

TEST(ScenariosControlModel, PayloadWrittenIntoBothModelsGivesTheSameBiasForces) {
  Reference ref;
  ControlModel model(kFloating);
  const int torso = model.body("torso");
  const int torso_mj = MujocoBodyId(ref.model.get(), "torso", kFloating);
  // The nominal torso (with the head merged) agrees, then both carry 1.3 × the torso.
  ASSERT_TRUE(
      model.parameters(torso).isApprox(MujocoBodyParameters(ref.model.get(), torso_mj), 1e-9));
  const Vector10 loaded = 1.3 * model.parameters(torso);
  ASSERT_TRUE(model.SetParameters(torso, loaded));
  ASSERT_TRUE(SetMujocoBodyParameters(ref.model.get(), torso_mj, loaded));
  const State s = RandomState(ref, model, 42);
  MujocoKinematics(ref, s.q_mj, s.v_mj);
  model.Update(s.q_dyn, s.v_dyn);
  for (int a = 0; a < ref.model->nv; ++a) {
    EXPECT_NEAR(model.h()[s.dyn_v_of_mj_v[a]], ref.data->qfrc_bias[a], 1e-8) << "row " << a;
  }
  EXPECT_NEAR(model.total_mass(), ref.model->body_subtreemass[0], 1e-9);
  Vector10 bad = loaded;
  bad[0] = 0.0;
  EXPECT_FALSE(model.SetParameters(torso, bad));
  EXPECT_TRUE(model.parameters(torso).isApprox(loaded));
}

TEST(ScenariosControlModel, UnknownNamesAreRefusedNamingTheFile) {
  ControlModel model(kFloating);
  try {
    (void)model.joint_v_index("left_elbw");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("left_elbw"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("heft_humanoid.urdf"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("left_elbow"), std::string::npos);
  }
  EXPECT_THROW((void)model.body("no_such_link"), std::invalid_argument);
}

}  // namespace
}  // namespace heft::sim

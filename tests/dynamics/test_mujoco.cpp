// heft's RNEA, mass matrix, kinematics and contact term against MuJoCo on the same URDF.
//
// Conventions matched (see model.hpp): MuJoCo's free joint qpos = [position, quaternion w x y z],
// qvel = [linear velocity in world, angular velocity in the body frame]; joints mapped by name
// (never by order); MuJoCo fuses fixed links (fusestatic) as heft merges them.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <memory>
#include <random>

#include "heft/dynamics/dynamics.hpp"
#include "random_state.hpp"

namespace heft::dynamics {
namespace {

struct MjDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
  void operator()(mjData* d) const { mj_deleteData(d); }
};

struct Case {
  const char* path;
  bool floating;
  const char* name;  // of the test instance
};

std::string PathOf(const Case& c) {
  const std::string p = c.path;
  return p.rfind("data/", 0) == 0 ? std::string(HEFT_DYN_DATA_DIR) + p.substr(4)
                                  : std::string(HEFT_ROBOTS_DIR) + "/" + p;
}

class AgainstMujoco : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    const std::string path = PathOf(GetParam());
    char error[1000] = "";
    mj_.reset(mj_loadXML(path.c_str(), nullptr, error, sizeof(error)));
    ASSERT_TRUE(mj_) << "MuJoCo refused " << path << ": " << error;
    d_.reset(mj_makeData(mj_.get()));
    model_ = LoadModelFromUrdfFile(path, ModelOptions{});
    ASSERT_EQ(model_.floating_base, GetParam().floating);
    ASSERT_EQ(model_.nq, mj_->nq);
    ASSERT_EQ(model_.nv, mj_->nv);
    qmap_.resize(model_.nq);
    vmap_.resize(model_.nv);
    for (const Body& b : model_.bodies) {
      if (b.joint.type == JointType::kFree) {
        ASSERT_EQ(mj_->jnt_type[0], mjJNT_FREE);
        for (int k = 0; k < 7; ++k) qmap_[k] = mj_->jnt_qposadr[0] + k;
        for (int k = 0; k < 6; ++k) vmap_[k] = mj_->jnt_dofadr[0] + k;
        continue;
      }
      const int id = mj_name2id(mj_.get(), mjOBJ_JOINT, b.joint.name.c_str());
      ASSERT_GE(id, 0) << b.joint.name;
      qmap_[b.q_index] = mj_->jnt_qposadr[id];
      vmap_[b.v_index] = mj_->jnt_dofadr[id];
    }
  }

  void Load(const test::State& s) {
    for (int i = 0; i < model_.nq; ++i) d_->qpos[qmap_[i]] = s.q[i];
    for (int i = 0; i < model_.nv; ++i) {
      d_->qvel[vmap_[i]] = s.v[i];
      d_->qacc[vmap_[i]] = s.a[i];
    }
    mj_fwdPosition(mj_.get(), d_.get());
    mj_fwdVelocity(mj_.get(), d_.get());
    for (int i = 0; i < model_.nv; ++i) d_->qacc[vmap_[i]] = s.a[i];
  }

  std::unique_ptr<mjModel, MjDeleter> mj_;
  std::unique_ptr<mjData, MjDeleter> d_;
  Model model_;
  std::vector<int> qmap_, vmap_;
};

TEST_P(AgainstMujoco, TotalMassAndBodyPoses) {
  double mj_mass = 0.0;
  for (int b = 1; b < mj_->nbody; ++b) mj_mass += mj_->body_mass[b];
  // MuJoCo's world body absorbs a welded root; heft's fixed model does not carry it either.
  EXPECT_NEAR(TotalMass(model_), mj_mass, 1e-9);
  Workspace ws(model_);
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 10; ++trial) {
    const test::State s = test::RandomState(model_, rng);
    Load(s);
    ForwardKinematics(model_, ws, s.q);
    for (int i = 0; i < model_.num_bodies(); ++i) {
      const int id = mj_name2id(mj_.get(), mjOBJ_BODY, model_.bodies[i].name.c_str());
      ASSERT_GE(id, 0) << model_.bodies[i].name;
      const Eigen::Map<const Eigen::Vector3d> xpos(d_->xpos + 3 * id);
      const Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>> xmat(d_->xmat + 9 * id);
      EXPECT_LT((ws.op[i] - xpos).norm(), 1e-12) << model_.bodies[i].name;
      EXPECT_LT((ws.oR[i] - xmat).norm(), 1e-12) << model_.bodies[i].name;
    }
  }
}

TEST_P(AgainstMujoco, RneaAndMassMatrix) {
  Workspace ws(model_);
  std::mt19937_64 rng(2);
  Eigen::VectorXd tau(model_.nv), mj_tau(model_.nv);
  Eigen::MatrixXd M(model_.nv, model_.nv);
  std::vector<mjtNum> dense(model_.nv * model_.nv), res(model_.nv);
  double worst_rnea = 0.0, worst_m = 0.0;
  for (int trial = 0; trial < 100; ++trial) {
    const test::State s = test::RandomState(model_, rng);
    Load(s);
    mj_rne(mj_.get(), d_.get(), 1, res.data());
    for (int i = 0; i < model_.nv; ++i) mj_tau[i] = res[vmap_[i]];
    Rnea(model_, ws, s.q, s.v, s.a, tau);
    const double scale = mj_tau.cwiseAbs().maxCoeff();
    worst_rnea = std::max(worst_rnea, (tau - mj_tau).cwiseAbs().maxCoeff() / scale);

    mj_fullM(mj_.get(), dense.data(), d_->qM);
    Crba(model_, ws, s.q, M);
    double m_scale = 0.0, m_err = 0.0;
    for (int i = 0; i < model_.nv; ++i)
      for (int j = 0; j < model_.nv; ++j) {
        const double ref = dense[vmap_[i] * model_.nv + vmap_[j]];
        m_scale = std::max(m_scale, std::abs(ref));
        m_err = std::max(m_err, std::abs(M(i, j) - ref));
      }
    worst_m = std::max(worst_m, m_err / m_scale);
  }
  // MuJoCo diagonalises every body inertia with an iterative eigensolver when it compiles the
  // model; the chain's rotated, merged inertias carry that solver's ~1e-10 error. The humanoids
  // agree to 1e-14.
  const double tol = std::string(GetParam().path).rfind("data/", 0) == 0 ? 1e-8 : 1e-9;
  EXPECT_LT(worst_rnea, tol);
  EXPECT_LT(worst_m, tol);
  RecordProperty("worst_rnea_relative", std::to_string(worst_rnea));
  std::printf(
      "[ heft ] %s: worst RNEA error %.2e, worst M error %.2e (relative to the largest entry)\n",
      GetParam().path, worst_rnea, worst_m);
}

TEST_P(AgainstMujoco, ContactTerm) {
  Workspace ws(model_);
  std::mt19937_64 rng(3);
  std::normal_distribution<double> n(0.0, 100.0);
  std::vector<int> frames;
  for (const char* name :
       {"left_foot_ft", "right_foot_ft", "left_wrist_mount", "tool_tip", "link2"}) {
    for (std::size_t f = 0; f < model_.frames.size(); ++f)
      if (model_.frames[f].name == name && model_.frames[f].body != kWorld)
        frames.push_back(static_cast<int>(f));
  }
  ASSERT_FALSE(frames.empty());
  std::vector<Vector6> wrenches(frames.size());
  std::vector<mjtNum> jacp(3 * model_.nv), jacr(3 * model_.nv);
  Eigen::VectorXd out(model_.nv);
  for (int trial = 0; trial < 30; ++trial) {
    const test::State s = test::RandomState(model_, rng);
    Load(s);
    for (auto& w : wrenches)
      for (int i = 0; i < 6; ++i) w[i] = n(rng);
    ForwardKinematics(model_, ws, s.q);
    ContactTerm(model_, ws, frames, wrenches, out);
    Eigen::VectorXd ref = Eigen::VectorXd::Zero(model_.nv);
    for (std::size_t k = 0; k < frames.size(); ++k) {
      const Frame& fr = model_.frames[frames[k]];
      const Pose pose = FramePose(model_, ws, frames[k]);
      const int body = mj_name2id(mj_.get(), mjOBJ_BODY, model_.bodies[fr.body].name.c_str());
      mjtNum point[3] = {pose.p.x(), pose.p.y(), pose.p.z()};
      mj_jac(mj_.get(), d_.get(), jacp.data(), jacr.data(), point, body);
      const Eigen::Vector3d f = pose.R * wrenches[k].head<3>(), t = pose.R * wrenches[k].tail<3>();
      for (int i = 0; i < model_.nv; ++i) {
        const int c = vmap_[i];
        ref[i] += jacp[c] * f.x() + jacp[model_.nv + c] * f.y() + jacp[2 * model_.nv + c] * f.z() +
                  jacr[c] * t.x() + jacr[model_.nv + c] * t.y() + jacr[2 * model_.nv + c] * t.z();
      }
    }
    EXPECT_LT((out - ref).cwiseAbs().maxCoeff(), 1e-9 * ref.cwiseAbs().maxCoeff())
        << "trial " << trial;
  }
}

// heft_compact: the second humanoid (other proportions, never used while tuning), so that a
// loader or dynamics path that only holds for the reference robot's numbers fails here.
INSTANTIATE_TEST_SUITE_P(Robots, AgainstMujoco,
                         ::testing::Values(Case{"heft_humanoid.urdf", true, "Floating"},
                                           Case{"heft_humanoid_fixed.urdf", false, "Fixed"},
                                           Case{"heft_compact.urdf", true, "CompactFloating"},
                                           Case{"heft_compact_fixed.urdf", false, "CompactFixed"},
                                           Case{"data/chain.urdf", false, "Chain"}),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace heft::dynamics

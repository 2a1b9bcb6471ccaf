#include "heft/scenarios/control_model.hpp"

#include <stdexcept>

namespace heft::scenarios {

ControlModel::ControlModel(const std::string& urdf_path)
    : source_(urdf_path), model_(LoadMujocoModel(urdf_path, MujocoLoadOptions{})) {
  model_->opt.disableflags |= mjDSBL_CONTACT;
  data_.reset(mj_makeData(model_.get()));
  data_shifted_.reset(mj_makeData(model_.get()));
  floating_ = model_->njnt > 0 && model_->jnt_type[0] == mjJNT_FREE;
  for (int j = floating_ ? 1 : 0; j < model_->njnt; ++j) {
    if (model_->jnt_type[j] != mjJNT_HINGE && model_->jnt_type[j] != mjJNT_SLIDE) {
      throw std::invalid_argument("'" + urdf_path + "': joint '" +
                                  mj_id2name(model_.get(), mjOBJ_JOINT, j) +
                                  "' is neither revolute nor prismatic");
    }
  }
  const int nv = model_->nv;
  M_.setZero(nv, nv);
  h_.setZero(nv);
  jacp_.setZero(3, nv);
  jacr_.setZero(3, nv);
  J0_.setZero(6, nv);
  J1_.setZero(6, nv);
  v_.setZero(nv);
}

int ControlModel::body(std::string_view link) const {
  return MujocoBodyId(model_.get(), std::string(link), source_);
}

int ControlModel::joint_v_index(std::string_view joint) const {
  const int id = mj_name2id(model_.get(), mjOBJ_JOINT, std::string(joint).c_str());
  if (id < 0 || model_->jnt_type[id] == mjJNT_FREE) {
    std::string known;
    for (const auto& name : joint_names()) known += (known.empty() ? "" : ", ") + name;
    throw std::invalid_argument("joint '" + std::string(joint) + "' is not a 1-DoF joint of '" +
                                source_ + "'; known: " + known);
  }
  return model_->jnt_dofadr[id];
}

std::vector<std::string> ControlModel::joint_names() const {
  std::vector<std::string> names;
  for (int j = floating_ ? 1 : 0; j < model_->njnt; ++j) {
    names.emplace_back(mj_id2name(model_.get(), mjOBJ_JOINT, j));
  }
  return names;
}

Vector10 ControlModel::parameters(int body) const noexcept {
  return MujocoBodyParameters(model_.get(), body);
}

bool ControlModel::SetParameters(int body, const Vector10& pi) noexcept {
  return SetMujocoBodyParameters(model_.get(), body, pi);
}

double ControlModel::total_mass() const noexcept {
  return model_->body_subtreemass[0];
}

void ControlModel::Update(const Eigen::Ref<const Eigen::VectorXd>& q,
                          const Eigen::Ref<const Eigen::VectorXd>& v) noexcept {
  const mjModel* m = model_.get();
  mjData* d = data_.get();
  for (int i = 0; i < m->nq; ++i) d->qpos[i] = q[i];
  for (int i = 0; i < m->nv; ++i) d->qvel[i] = v[i];
  v_ = v;
  mj_kinematics(m, d);
  mj_comPos(m, d);
  mj_crb(m, d);
  mj_comVel(m, d);
  mj_rne(m, d, 0, h_.data());
  mj_fullM(m, M_.data(), d->qM);  // symmetric: row/column major alike

  // Kinematics at q + ε v for the Jacobian drift.
  constexpr double kEps = 1e-6;
  mjData* s = data_shifted_.get();
  for (int i = 0; i < m->nq; ++i) s->qpos[i] = q[i];
  mj_integratePos(m, s->qpos, d->qvel, kEps);
  mj_kinematics(m, s);
  mj_comPos(m, s);
}

Pose ControlModel::BodyPose(int body) const noexcept {
  Pose pose;
  const mjData* d = data_.get();
  for (int r = 0; r < 3; ++r) {
    pose.p[r] = d->xpos[3 * body + r];
    for (int c = 0; c < 3; ++c) pose.R(r, c) = d->xmat[9 * body + 3 * r + c];
  }
  return pose;
}

Eigen::Vector3d ControlModel::CenterOfMass() const noexcept {
  const mjData* d = data_.get();
  return {d->subtree_com[0], d->subtree_com[1], d->subtree_com[2]};
}

Eigen::Vector3d ControlModel::CenterOfMassVelocity() noexcept {
  mj_jacSubtreeCom(model_.get(), data_.get(), jacp_.data(), 0);
  Eigen::Vector3d velocity;
  velocity.noalias() = jacp_ * v_;
  return velocity;
}

void ControlModel::Jacobian(const mjData* d, int body, const Eigen::Vector3d& p_B,
                            Eigen::Ref<Matrix6X> J) noexcept {
  Eigen::Vector3d p_W;
  for (int r = 0; r < 3; ++r) {
    p_W[r] = d->xpos[3 * body + r];
    for (int c = 0; c < 3; ++c) p_W[r] += d->xmat[9 * body + 3 * r + c] * p_B[c];
  }
  mj_jac(model_.get(), d, jacp_.data(), jacr_.data(), p_W.data(), body);
  J.topRows<3>() = jacp_;
  J.bottomRows<3>() = jacr_;
}

void ControlModel::PointJacobian(int body, const Eigen::Vector3d& p_B,
                                 Eigen::Ref<Matrix6X> J) noexcept {
  Jacobian(data_.get(), body, p_B, J);
}

Vector6 ControlModel::PointDriftAcceleration(int body, const Eigen::Vector3d& p_B) noexcept {
  constexpr double kEps = 1e-6;
  Jacobian(data_.get(), body, p_B, J0_);
  Jacobian(data_shifted_.get(), body, p_B, J1_);
  Vector6 drift;
  drift.noalias() = J1_ * v_;
  drift.noalias() -= J0_ * v_;
  return drift / kEps;
}

}  // namespace heft::scenarios

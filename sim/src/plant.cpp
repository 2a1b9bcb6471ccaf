#include "heft/sim/plant.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "heft/dynamics/model.hpp"

namespace heft::sim {

Plant::Plant(const std::string& urdf_path, std::span<const std::string> foot_links, double timestep)
    : source_(urdf_path) {
  MjModelPtr probe = LoadMujocoModel(urdf_path, MujocoLoadOptions{false, timestep});
  floating_ = probe->njnt > 0 && probe->jnt_type[0] == mjJNT_FREE;
  model_ =
      floating_ ? LoadMujocoModel(urdf_path, MujocoLoadOptions{true, timestep}) : std::move(probe);
  data_.reset(mj_makeData(model_.get()));
  joint_q0_ = floating_ ? 7 : 0;
  joint_v0_ = floating_ ? 6 : 0;
  num_joints_ = model_->nv - joint_v0_;
  if (num_joints_ > static_cast<int>(hal::kMaxJoints) ||
      foot_links.size() > hal::kMaxWrenchSensors) {
    throw std::invalid_argument("'" + urdf_path + "': too many joints or wrench sensors for hal");
  }
  for (const auto& link : foot_links)
    foot_bodies_.push_back(MujocoBodyId(model_.get(), link, source_));
  last_torque_.assign(num_joints_, 0.0);
  // The drives' effort limits from the URDF (MuJoCo's importer does not keep them).
  const dynamics::Model urdf = dynamics::LoadModelFromUrdfFile(urdf_path, dynamics::ModelOptions{});
  effort_.assign(num_joints_, std::numeric_limits<double>::infinity());
  const std::vector<std::string> names = joint_names();
  for (int i = 0; i < num_joints_; ++i) {
    const double effort = urdf.bodies[urdf.joint_body_index(names[i])].joint.effort;
    if (effort > 0.0) effort_[i] = effort;
  }
  beyond_effort_steps_.assign(num_joints_, 0);
}

std::vector<std::string> Plant::joint_names() const {
  std::vector<std::string> names;
  for (int j = floating_ ? 1 : 0; j < model_->njnt; ++j) {
    names.emplace_back(mj_id2name(model_.get(), mjOBJ_JOINT, j));
  }
  return names;
}

int Plant::body(const std::string& link) const {
  return MujocoBodyId(model_.get(), link, source_);
}

void Plant::Reset(std::span<const double> joint_positions, bool drop_to_floor) {
  if (static_cast<int>(joint_positions.size()) != num_joints_) {
    throw std::invalid_argument("Plant::Reset: expected " + std::to_string(num_joints_) +
                                " joint positions");
  }
  mj_resetData(model_.get(), data_.get());
  for (int i = 0; i < num_joints_; ++i) data_->qpos[joint_q0_ + i] = joint_positions[i];
  if (floating_ && drop_to_floor) {
    // Lowest point of any geom (other than the floor) with the base at the origin.
    mj_forward(model_.get(), data_.get());
    double lowest = std::numeric_limits<double>::infinity();
    for (int g = 0; g < model_->ngeom; ++g) {
      if (model_->geom_bodyid[g] == 0) continue;
      const double* R = data_->geom_xmat + 9 * g;
      const double* s = model_->geom_size + 3 * g;
      // Box: lowest corner; other shapes: the bounding radius.
      const double extent =
          model_->geom_type[g] == mjGEOM_BOX
              ? std::abs(R[6]) * s[0] + std::abs(R[7]) * s[1] + std::abs(R[8]) * s[2]
              : model_->geom_rbound[g];
      lowest = std::min(lowest, data_->geom_xpos[3 * g + 2] - extent);
    }
    data_->qpos[2] = -lowest;
  }
  mj_forward(model_.get(), data_.get());
  std::fill(last_torque_.begin(), last_torque_.end(), 0.0);
  base_acceleration_.setZero();
}

bool Plant::SetLinkParameters(int body, const Vector10& pi) noexcept {
  return SetMujocoBodyParameters(model_.get(), body, pi);
}

void Plant::SetDriveDamping(double damping) {
  if (!std::isfinite(damping) || damping < 0.0)
    throw std::invalid_argument("Plant::SetDriveDamping: damping must be finite and >= 0");
  // Replaces the previous drive damping, keeping each joint's viscous friction on top of it.
  for (int i = joint_v0_; i < model_->nv; ++i) model_->dof_damping[i] += damping - drive_damping_;
  drive_damping_ = damping;
}

void Plant::SetJointFriction(int joint, double coulomb, double viscous) {
  if (joint < 0 || joint >= num_joints_ || !std::isfinite(coulomb) || !std::isfinite(viscous) ||
      coulomb < 0.0 || viscous < 0.0)
    throw std::invalid_argument("Plant::SetJointFriction: joint " + std::to_string(joint) + " of " +
                                std::to_string(num_joints_) + ", friction must be finite and >= 0");
  model_->dof_frictionloss[joint_v0_ + joint] = coulomb;
  // MuJoCo's dry friction is a soft constraint: below the Coulomb level the joint creeps. With its
  // default time constant (0.02 s) the curling elbow (Coulomb 0.17–1.15 N·m) crept at up to
  // 0.03–0.06 rad/s under 95 % of it; with the smallest safe one, two time steps, at under
  // 0.001–0.007 rad/s — closer to the sticking of fc·tanh(q̇/0.01) that heft fits.
  model_->dof_solref[mjNREF * (joint_v0_ + joint)] = 2.0 * model_->opt.timestep;
  model_->dof_damping[joint_v0_ + joint] = drive_damping_ + viscous;
}

Vector10 Plant::LinkParameters(int body) const noexcept {
  return MujocoBodyParameters(model_.get(), body);
}

void Plant::Step(std::span<const double> joint_torques) noexcept {
  for (int i = 0; i < joint_v0_; ++i) data_->qfrc_applied[i] = 0.0;
  bool beyond = false;
  const bool void_run = unstable();  // after MuJoCo's reset nothing is counted
  for (int i = 0; i < num_joints_; ++i) {
    // A drive delivers at most its effort limit (it saturates); what was asked beyond is counted.
    const double applied = std::clamp(joint_torques[i], -effort_[i], effort_[i]);
    data_->qfrc_applied[joint_v0_ + i] = applied;
    last_torque_[i] = applied;
    // A plan held at a limit reaches it to rounding: that is delivered, not beyond.
    if (!void_run && std::abs(joint_torques[i]) > effort_[i] * (1.0 + 1e-9)) {
      ++beyond_effort_steps_[i];
      beyond = true;
    }
  }
  if (beyond) ++steps_beyond_effort_;
  Eigen::Matrix<double, 6, 1> v_before = Eigen::Matrix<double, 6, 1>::Zero();
  for (int i = 0; i < joint_v0_; ++i) v_before[i] = data_->qvel[i];
  mj_step(model_.get(), data_.get());
  for (int i = 0; i < joint_v0_; ++i)
    base_acceleration_[i] = (data_->qvel[i] - v_before[i]) / model_->opt.timestep;
}

ImuTruth Plant::Imu(const Eigen::Matrix3d& R_BI, const Eigen::Vector3d& p_BI) const noexcept {
  const mjData* d = data_.get();
  ImuTruth out;
  if (!floating_) return out;
  // The free joint: qpos = [p_WB, q_WB (w x y z)], qvel = [ṗ_WB in W, ω in B].
  const Eigen::Quaterniond q_WB =
      Eigen::Quaterniond(d->qpos[3], d->qpos[4], d->qpos[5], d->qpos[6]).normalized();
  const Eigen::Vector3d w_B(d->qvel[3], d->qvel[4], d->qvel[5]);
  const Eigen::Vector3d a_W = base_acceleration_.head<3>(), w_dot_B = base_acceleration_.tail<3>();
  const Eigen::Vector3d g_W(model_->opt.gravity[0], model_->opt.gravity[1], model_->opt.gravity[2]);
  // Specific force at B's origin in B, then at the IMU's origin (rigid body: a_S = a_B + ω̇ × p +
  // ω × (ω × p)); a resting IMU reads −g, +9.81 up.
  const Eigen::Vector3d f_B =
      q_WB.conjugate() * (a_W - g_W) + w_dot_B.cross(p_BI) + w_B.cross(w_B.cross(p_BI));
  out.w_I = R_BI.transpose() * w_B;
  out.f_I = R_BI.transpose() * f_B;
  out.q_WI = (q_WB * Eigen::Quaterniond(R_BI)).normalized();
  return out;
}

void Plant::Sample(hal::RobotStateSample& out) const noexcept {
  const mjModel* m = model_.get();
  const mjData* d = data_.get();
  out.sequence += 1;
  out.stamp_ns = static_cast<std::int64_t>(std::llround(d->time * 1e9));
  out.num_joints = static_cast<std::uint16_t>(num_joints_);
  out.num_wrenches = static_cast<std::uint16_t>(foot_bodies_.size());
  out.has_base = floating_;
  if (floating_) {
    for (int k = 0; k < 3; ++k) {
      out.base.position[k] = d->qpos[k];
      out.base.linear_velocity[k] = d->qvel[k];
      out.base.angular_velocity[k] = d->qvel[3 + k];
    }
    for (int k = 0; k < 4; ++k) out.base.orientation[k] = d->qpos[3 + k];
    out.base.has_linear_velocity = true;
    out.base.health.state = hal::ChannelState::kOk;
  }
  for (int i = 0; i < num_joints_; ++i) {
    auto& joint = out.joints[i];
    joint.position = d->qpos[joint_q0_ + i];
    joint.velocity = d->qvel[joint_v0_ + i];
    joint.torque = last_torque_[i];
    joint.encoder.state = hal::ChannelState::kOk;
    joint.torque_sensor.state = hal::ChannelState::kOk;
  }
  // Contact wrenches on each foot, at the foot body origin, in the foot frame.
  for (std::size_t f = 0; f < foot_bodies_.size(); ++f) {
    const int body = foot_bodies_[f];
    Eigen::Vector3d force_W = Eigen::Vector3d::Zero(), torque_W = Eigen::Vector3d::Zero();
    const Eigen::Vector3d origin_W(d->xpos[3 * body], d->xpos[3 * body + 1], d->xpos[3 * body + 2]);
    for (int c = 0; c < d->ncon; ++c) {
      const mjContact& con = d->contact[c];
      const int b1 = m->geom_bodyid[con.geom1], b2 = m->geom_bodyid[con.geom2];
      if (b1 != body && b2 != body) continue;
      mjtNum local[6];
      mj_contactForce(m, d, c, local);
      // Contact frame rows are the axes; the force acts on geom2's body, minus on geom1's.
      Eigen::Vector3d f_W = Eigen::Vector3d::Zero(), t_W = Eigen::Vector3d::Zero();
      for (int r = 0; r < 3; ++r) {
        const Eigen::Vector3d axis(con.frame[3 * r], con.frame[3 * r + 1], con.frame[3 * r + 2]);
        f_W += local[r] * axis;
        t_W += local[3 + r] * axis;
      }
      const double sign = b2 == body ? 1.0 : -1.0;
      const Eigen::Vector3d pos(con.pos[0], con.pos[1], con.pos[2]);
      force_W += sign * f_W;
      torque_W += sign * (t_W + (pos - origin_W).cross(f_W));
    }
    Eigen::Matrix3d R;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) R(r, c) = d->xmat[9 * body + 3 * r + c];
    auto& wrench = out.wrenches[f];
    const Eigen::Vector3d f_B = R.transpose() * force_W, t_B = R.transpose() * torque_W;
    for (int k = 0; k < 3; ++k) {
      wrench.wrench[k] = f_B[k];
      wrench.wrench[3 + k] = t_B[k];
    }
    wrench.health.state = hal::ChannelState::kOk;
  }
}

}  // namespace heft::sim

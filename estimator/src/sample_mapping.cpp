#include "heft/estimator/sample_mapping.hpp"

#include <Eigen/Geometry>
#include <stdexcept>

namespace heft::estimator {

namespace {

// Whether the three samples' base state is usable for `mode`; sets `from_imu` (the base's linear
// acceleration from the middle sample's specific force).
bool BaseUsable(const hal::RobotStateSample& newest, const hal::RobotStateSample& mid,
                const hal::RobotStateSample& oldest, BaseAcceleration mode,
                bool& from_imu) noexcept {
  const hal::BaseSample& b = mid.base;
  bool ok = true;
  for (const hal::RobotStateSample* s : {&newest, &mid, &oldest})
    ok = ok && s->has_base && s->base.health.ok();
  const bool velocity =
      newest.base.has_linear_velocity && b.has_linear_velocity && oldest.base.has_linear_velocity;
  switch (mode) {
    case BaseAcceleration::kAuto:
      from_imu = b.has_specific_force;
      ok = ok && (from_imu || velocity);
      break;
    case BaseAcceleration::kImu:
      from_imu = true;
      ok = ok && b.has_specific_force;
      break;
    case BaseAcceleration::kVelocity:
      ok = ok && velocity;
      break;
  }
  return ok;
}

// The base's rows of q: its position (0 without one) and its orientation as a unit quaternion;
// false when the quaternion is zero.
bool BasePose(const hal::BaseSample& b, Eigen::VectorXd& q) noexcept {
  if (b.has_linear_velocity)
    q.head<3>() << b.position[0], b.position[1], b.position[2];
  else
    q.head<3>().setZero();
  Eigen::Vector4d quat(b.orientation[0], b.orientation[1], b.orientation[2], b.orientation[3]);
  const double norm = quat.norm();
  const bool ok = norm > 0.0;
  if (ok) quat /= norm;
  q.segment<4>(3) = quat;
  return ok;
}

// The base's rows of v from a sample. With the IMU the linear velocity is 0 in all three samples,
// so its difference is 0 too.
void BaseVelocity(const hal::BaseSample& s, bool imu, Eigen::Ref<Eigen::VectorXd> out) noexcept {
  if (imu)
    out.head<3>().setZero();
  else
    out.head<3>() << s.linear_velocity[0], s.linear_velocity[1], s.linear_velocity[2];
  out.tail<3>() << s.angular_velocity[0], s.angular_velocity[1], s.angular_velocity[2];
}

// The classical acceleration of the base origin from the specific force at S (see the header),
// into a's linear rows; a's angular rows hold ω̇ already.
void ImuBaseAcceleration(const hal::BaseSample& b, const Eigen::VectorXd& q,
                         const Eigen::VectorXd& v, const Eigen::Vector3d& gravity,
                         Eigen::VectorXd& a) noexcept {
  const Eigen::Vector3d f_B(b.specific_force[0], b.specific_force[1], b.specific_force[2]);
  const Eigen::Vector3d p_BS(b.specific_force_point[0], b.specific_force_point[1],
                             b.specific_force_point[2]);
  const Eigen::Vector3d w = v.segment<3>(3);
  const Eigen::Vector3d w_dot = a.segment<3>(3);
  const Eigen::Matrix3d R_WB = Eigen::Quaterniond(q[3], q[4], q[5], q[6]).toRotationMatrix();
  a.head<3>() = R_WB * (f_B - w_dot.cross(p_BS) - w.cross(w.cross(p_BS))) + gravity;
}

}  // namespace

SampleMapping::SampleMapping(const dynamics::Model& model, const SampleMappingConfig& config)
    : model_(&model), config_(config), h_(config.difference_samples) {
  if (h_ < 1 || 2 * h_ + 1 > 64)
    throw std::invalid_argument("difference_samples must be within 1..31 (got " +
                                std::to_string(h_) + ")");
  if (config.joints.size() > hal::kMaxJoints)
    throw std::invalid_argument("at most " + std::to_string(hal::kMaxJoints) +
                                " joints per state sample");
  if (config.wrench_frames.size() > hal::kMaxWrenchSensors)
    throw std::invalid_argument("at most " + std::to_string(hal::kMaxWrenchSensors) +
                                " force/torque cells");
  std::vector<int> seen(model.bodies.size(), 0);
  for (const std::string& name : config.joints) {
    const int b =
        model.joint_body_index(name);  // throws naming the unknown joint and the known ones
    if (model.bodies[b].joint.type == dynamics::JointType::kFree)
      throw std::invalid_argument("joint '" + name +
                                  "' is the floating base: it comes from the base state");
    if (seen[b]++) throw std::invalid_argument("joint '" + name + "' is mapped twice");
    slot_q_.push_back(model.bodies[b].q_index);
    slot_v_.push_back(model.bodies[b].v_index);
  }
  for (const dynamics::Body& b : model.bodies) {
    if (b.joint.type != dynamics::JointType::kFree && !seen[&b - model.bodies.data()])
      throw std::invalid_argument("joint '" + b.joint.name +
                                  "' of the model has no sensor mapping");
  }
  for (const std::string& frame : config.wrench_frames) (void)model.frame_index(frame);
  q_ = Eigen::VectorXd::Zero(model.nq);
  v_ = v_old_ = v_new_ = a_ = tau_ = Eigen::VectorXd::Zero(model.nv);
  wrenches_.assign(config.wrench_frames.size(), dynamics::Vector6::Zero());
  wrench_valid_.assign(config.wrench_frames.size(), 0);
  in_contact_.assign(config.wrench_frames.size(), 1);
}

TickInput SampleMapping::input() const {
  return TickInput{time_, q_, v_, a_, tau_, wrenches_, wrench_valid_, in_contact_};
}

std::uint32_t SampleMapping::Assemble(const hal::RobotStateSample& newest,
                                      const hal::RobotStateSample& mid,
                                      const hal::RobotStateSample& oldest) noexcept {
  std::uint32_t hold = 0;
  const int nj = static_cast<int>(slot_q_.size());
  const std::int64_t span = newest.stamp_ns - oldest.stamp_ns;
  if (newest.sequence == 0 || oldest.sequence == 0 ||
      newest.sequence - oldest.sequence != 2u * h_ ||
      mid.sequence - oldest.sequence != static_cast<std::uint64_t>(h_) || span <= 0 ||
      newest.num_joints < nj || mid.num_joints < nj || oldest.num_joints < nj)
    return kHoldHistory;
  const double dt = 1e-9 * static_cast<double>(span);
  time_ = 1e-9 * static_cast<double>(mid.stamp_ns);

  const bool floating = model_->floating_base;
  base_from_imu_ = false;
  if (floating) {
    if (!BaseUsable(newest, mid, oldest, config_.base_acceleration, base_from_imu_))
      hold |= kHoldBase;
    if (!BasePose(mid.base, q_)) hold |= kHoldBase;
    BaseVelocity(mid.base, base_from_imu_, v_.head<6>());
    BaseVelocity(newest.base, base_from_imu_, v_new_.head<6>());
    BaseVelocity(oldest.base, base_from_imu_, v_old_.head<6>());
    tau_.head<6>().setZero();  // no actuator on the floating base
  }
  for (int i = 0; i < nj; ++i) {
    const hal::JointSample& jm = mid.joints[i];
    if (!jm.encoder.ok() || !newest.joints[i].encoder.ok() || !oldest.joints[i].encoder.ok())
      hold |= kHoldEncoders;
    if (!jm.torque_sensor.ok()) hold |= kHoldTorques;
    q_[slot_q_[i]] = jm.position;
    v_[slot_v_[i]] = jm.velocity;
    v_new_[slot_v_[i]] = newest.joints[i].velocity;
    v_old_[slot_v_[i]] = oldest.joints[i].velocity;
    tau_[slot_v_[i]] = jm.torque;
  }
  a_ = (v_new_ - v_old_) / dt;
  if (base_from_imu_) ImuBaseAcceleration(mid.base, q_, v_, model_->gravity, a_);
  for (std::size_t k = 0; k < wrenches_.size(); ++k) {
    const hal::WrenchSample& w = mid.wrenches[k];
    wrench_valid_[k] = k < mid.num_wrenches && w.health.ok();
    for (int i = 0; i < 6; ++i) wrenches_[k][i] = w.wrench[i];
    // Contact from the cell when it can be trusted; assumed otherwise (standing/walking robot).
    in_contact_[k] =
        wrench_valid_[k] ? static_cast<unsigned char>(w.wrench[2] > config_.contact_force) : 1;
  }
  if (!q_.allFinite() || !v_.allFinite() || !a_.allFinite() || !tau_.allFinite())
    hold |= kHoldNonFinite;
  return hold;
}

}  // namespace heft::estimator

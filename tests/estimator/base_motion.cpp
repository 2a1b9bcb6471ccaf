#include "base_motion.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>

namespace heft::estimator::test {
namespace {

Eigen::Matrix3d Exp(double theta, const Eigen::Vector3d& axis) {
  return Eigen::AngleAxisd(theta, axis).toRotationMatrix();
}

double Quantise(double x, double lsb) {
  return lsb > 0.0 ? lsb * std::round(x / lsb) : x;
}

}  // namespace

TruthState BaseMotion(const dynamics::Model& model, double t) {
  TruthState x{t, Eigen::VectorXd::Zero(model.nq), Eigen::VectorXd::Zero(model.nv),
               Eigen::VectorXd::Zero(model.nv)};
  // Base origin: a drift that accelerates, plus sines on every axis.
  const double w3 = 2 * M_PI * 0.9, w4 = 2 * M_PI * 1.3, w5 = 2 * M_PI * 1.7;
  x.q.head<3>() << 0.3 * t + 0.1 * t * t + 0.05 * std::sin(w3 * t), 0.04 * std::sin(w4 * t),
      0.9 + 0.03 * std::sin(w5 * t);
  x.v.head<3>() << 0.3 + 0.2 * t + 0.05 * w3 * std::cos(w3 * t), 0.04 * w4 * std::cos(w4 * t),
      0.03 * w5 * std::cos(w5 * t);
  x.a.head<3>() << 0.2 - 0.05 * w3 * w3 * std::sin(w3 * t), -0.04 * w4 * w4 * std::sin(w4 * t),
      -0.03 * w5 * w5 * std::sin(w5 * t);
  // Orientation R0 exp(θ1 k1) exp(θ2 k2): body rates ω = E2ᵀk1 θ̇1 + k2 θ̇2 and
  // ω̇ = −θ̇2 k2 × (E2ᵀk1) θ̇1 + E2ᵀk1 θ̈1 + k2 θ̈2.
  const Eigen::Vector3d k1 = Eigen::Vector3d(0.2, 0.1, 1.0).normalized();
  const Eigen::Vector3d k2 = Eigen::Vector3d(1.0, -0.3, 0.1).normalized();
  const double w1 = 2 * M_PI * 0.7, w2 = 2 * M_PI * 1.1, phase2 = 0.5;
  const double th1 = 0.3 * std::sin(w1 * t), dth1 = 0.3 * w1 * std::cos(w1 * t),
               ddth1 = -0.3 * w1 * w1 * std::sin(w1 * t);
  const double th2 = 0.2 * std::sin(w2 * t + phase2), dth2 = 0.2 * w2 * std::cos(w2 * t + phase2),
               ddth2 = -0.2 * w2 * w2 * std::sin(w2 * t + phase2);
  const Eigen::Matrix3d R0 = Exp(0.1, Eigen::Vector3d::UnitY());
  const Eigen::Matrix3d E2 = Exp(th2, k2);
  const Eigen::Quaterniond quat(R0 * Exp(th1, k1) * E2);
  x.q.segment<4>(3) << quat.w(), quat.x(), quat.y(), quat.z();
  const Eigen::Vector3d u = E2.transpose() * k1;
  x.v.segment<3>(3) = u * dth1 + k2 * dth2;
  x.a.segment<3>(3) = -dth2 * dth1 * k2.cross(u) + u * ddth1 + k2 * ddth2;
  // Joints: a sine about the middle of the range.
  int j = 0;
  for (const dynamics::Body& b : model.bodies) {
    if (b.joint.type == dynamics::JointType::kFree) continue;
    const double mid = b.joint.continuous ? 0.0 : 0.5 * (b.joint.lower + b.joint.upper);
    const double amp =
        b.joint.continuous ? 0.3 : std::min(0.3, 0.4 * (b.joint.upper - b.joint.lower));
    const double w = 2 * M_PI * (0.5 + 0.07 * j), phase = 0.7 * j;
    x.q[b.q_index] = mid + amp * std::sin(w * t + phase);
    x.v[b.v_index] = amp * w * std::cos(w * t + phase);
    x.a[b.v_index] = -amp * w * w * std::sin(w * t + phase);
    ++j;
  }
  return x;
}

Eigen::Vector3d SpecificForce(const dynamics::Model& model, const TruthState& x,
                              const Eigen::Vector3d& p_BS) {
  const Eigen::Matrix3d R_WB =
      Eigen::Quaterniond(x.q[3], x.q[4], x.q[5], x.q[6]).normalized().toRotationMatrix();
  const Eigen::Vector3d w = x.v.segment<3>(3), w_dot = x.a.segment<3>(3);
  const Eigen::Vector3d a_S = x.a.head<3>() + R_WB * (w_dot.cross(p_BS) + w.cross(w.cross(p_BS)));
  return R_WB.transpose() * (a_S - model.gravity);
}

hal::RobotStateSample MeasureState(const dynamics::Model& model,
                                   const std::vector<std::string>& joints, const TruthState& x,
                                   std::uint64_t k, const BaseSensorSpec& spec,
                                   std::mt19937_64& base_rng, std::mt19937_64& joint_rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  hal::RobotStateSample s;
  s.sequence = k + 1;
  s.stamp_ns = static_cast<std::int64_t>(k) * 1000000;
  s.num_joints = static_cast<std::uint16_t>(joints.size());
  s.has_base = true;
  hal::BaseSample& b = s.base;
  b.health.state = hal::ChannelState::kOk;
  for (int i = 0; i < 4; ++i) b.orientation[i] = x.q[3 + i];
  for (int i = 0; i < 3; ++i)
    b.angular_velocity[i] = Quantise(x.v[3 + i] + spec.gyro_sigma * n(base_rng), spec.gyro_lsb);
  if (spec.imu) {
    const Eigen::Vector3d f = SpecificForce(model, x, spec.p_BS);
    for (int i = 0; i < 3; ++i) {
      b.specific_force[i] = Quantise(f[i] + spec.accel_sigma * n(base_rng), spec.accel_lsb);
      b.specific_force_point[i] = spec.p_BS[i];
    }
    b.has_specific_force = true;
  } else {
    for (int i = 0; i < 3; ++i) {
      b.linear_velocity[i] = x.v[i] + spec.velocity_sigma * n(base_rng);
      b.position[i] = x.q[i];
    }
    b.has_linear_velocity = true;
  }
  for (std::size_t i = 0; i < joints.size(); ++i) {
    const dynamics::Body& body = model.bodies[model.joint_body_index(joints[i])];
    hal::JointSample& js = s.joints[i];
    js.position = x.q[body.q_index];
    js.velocity = x.v[body.v_index] + spec.joint_velocity_sigma * n(joint_rng);
    js.encoder.state = js.torque_sensor.state = hal::ChannelState::kOk;
  }
  return s;
}

}  // namespace heft::estimator::test

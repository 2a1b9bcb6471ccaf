#include "heft/sim/control_model.hpp"

#include <Eigen/Geometry>
#include <limits>
#include <stdexcept>

#include "heft/dynamics/inertia.hpp"

namespace heft::sim {
namespace {

dynamics::Model Load(const std::string& path) {
  dynamics::ModelOptions options;  // floating when the URDF says so (dummy root + floating joint)
  return dynamics::LoadModelFromUrdfFile(path, options);
}

constexpr double kDriftStep = 1e-6;  // [s] forward-difference step of the Jacobian drift

}  // namespace

ControlModel::ControlModel(const std::string& urdf_path)
    : source_(urdf_path), model_(Load(urdf_path)), ws_(model_), ws_shifted_(model_) {
  floating_ = model_.floating_base;
  for (const auto& body : model_.bodies) body_frame_.push_back(model_.frame_index(body.name));
  const int nv = model_.nv;
  M_.setZero(nv, nv);
  h_.setZero(nv);
  J0_.setZero(6, nv);
  J1_.setZero(6, nv);
  q_.setZero(model_.nq);
  q_shifted_.setZero(model_.nq);
  v_.setZero(nv);
  zero_.setZero(nv);
}

int ControlModel::body(std::string_view link) const {
  try {
    return model_.body_index(link);
  } catch (const dynamics::ModelError& e) {
    throw std::invalid_argument("'" + source_ + "': " + e.what());
  }
}

int ControlModel::joint_v_index(std::string_view joint) const {
  try {
    const int b = model_.joint_body_index(joint);
    if (model_.bodies[b].joint.type == dynamics::JointType::kFree)
      throw dynamics::ModelError("floating joint");
    return model_.bodies[b].v_index;
  } catch (const dynamics::ModelError& e) {
    std::string known;
    for (const auto& name : joint_names()) known += (known.empty() ? "" : ", ") + name;
    throw std::invalid_argument("joint '" + std::string(joint) + "' is not a 1-DoF joint of '" +
                                source_ + "' (" + e.what() + "); known: " + known);
  }
}

std::vector<std::string> ControlModel::joint_names() const {
  return model_.joint_names();
}

Eigen::VectorXd ControlModel::effort_limits() const {
  Eigen::VectorXd effort =
      Eigen::VectorXd::Constant(model_.nv, std::numeric_limits<double>::infinity());
  for (const dynamics::Body& body : model_.bodies) {
    if (body.joint.type == dynamics::JointType::kFree) continue;
    if (body.joint.effort > 0.0) effort[body.v_index] = body.joint.effort;
  }
  return effort;
}

Vector10 ControlModel::parameters(int body) const noexcept {
  return dynamics::GetBodyParameters(model_, body);
}

bool ControlModel::SetParameters(int body, const Vector10& pi) noexcept {
  if (!pi.allFinite() || !dynamics::IsPhysicallyConsistent(pi)) return false;
  dynamics::SetBodyParameters(model_, body, pi);
  return true;
}

double ControlModel::total_mass() const noexcept {
  double mass = 0.0;
  for (const auto& b : model_.bodies) mass += b.parameters[0];
  return mass;
}

void ControlModel::Update(const Eigen::Ref<const Eigen::VectorXd>& q,
                          const Eigen::Ref<const Eigen::VectorXd>& v) noexcept {
  q_ = q;
  v_ = v;
  dynamics::Crba(model_, ws_, q_, M_);
  dynamics::Rnea(model_, ws_, q_, v_, zero_, h_);
  dynamics::ForwardKinematics(model_, ws_, q_);

  // Kinematics at q ⊕ ε v: base position in world, base orientation by the body-frame angular
  // velocity (right-multiplied), joints.
  q_shifted_ = q_;
  int joints_q = 0, joints_v = 0;
  if (floating_) {
    q_shifted_.head<3>() += kDriftStep * v_.head<3>();
    const Eigen::Quaterniond quat(q_[3], q_[4], q_[5], q_[6]);
    const Eigen::Vector3d w = kDriftStep * v_.segment<3>(3);
    const double angle = w.norm();
    const Eigen::Quaterniond dq = angle > 0.0
                                      ? Eigen::Quaterniond(Eigen::AngleAxisd(angle, w / angle))
                                      : Eigen::Quaterniond::Identity();
    const Eigen::Quaterniond shifted = (quat * dq).normalized();
    q_shifted_[3] = shifted.w();
    q_shifted_[4] = shifted.x();
    q_shifted_[5] = shifted.y();
    q_shifted_[6] = shifted.z();
    joints_q = 7;
    joints_v = 6;
  }
  q_shifted_.tail(model_.nq - joints_q) += kDriftStep * v_.tail(model_.nv - joints_v);
  dynamics::ForwardKinematics(model_, ws_shifted_, q_shifted_);
}

Pose ControlModel::BodyPose(int body) const noexcept {
  return Pose{ws_.oR[body], ws_.op[body]};
}

Eigen::Vector3d ControlModel::CenterOfMass() const noexcept {
  Eigen::Vector3d first_moment = Eigen::Vector3d::Zero();
  double mass = 0.0;
  for (int b = 0; b < model_.num_bodies(); ++b) {
    const Vector10& pi = model_.bodies[b].parameters;
    first_moment += pi[0] * ws_.op[b] + ws_.oR[b] * pi.segment<3>(1);
    mass += pi[0];
  }
  return first_moment / mass;
}

Eigen::Vector3d ControlModel::CenterOfMassVelocity() noexcept {
  // With the base translation in world coordinates, the first three rows of M v are the robot's
  // linear momentum m ċ. A fixed base has no such rows: its centre of mass velocity is J_com v,
  // which the controllers here do not need (zero is returned).
  if (!floating_) return Eigen::Vector3d::Zero();
  Eigen::Vector3d momentum;
  momentum.noalias() = M_.topRows<3>() * v_;
  return momentum / total_mass();
}

void ControlModel::Jacobian(const dynamics::Workspace& ws, int body, const Eigen::Vector3d& p_B,
                            Eigen::Ref<Matrix6X> J) const noexcept {
  dynamics::FrameJacobian(model_, ws, body_frame_[body], J);
  // Move the reference point from the body origin to p_B: v_p = v_o + ω × r = v_o − r × ω.
  const Eigen::Vector3d r = ws.oR[body] * p_B;
  for (int c = 0; c < J.cols(); ++c) {
    const Eigen::Vector3d w = J.block<3, 1>(3, c);
    J.block<3, 1>(0, c) += w.cross(r);
  }
}

void ControlModel::PointJacobian(int body, const Eigen::Vector3d& p_B,
                                 Eigen::Ref<Matrix6X> J) noexcept {
  Jacobian(ws_, body, p_B, J);
}

Vector6 ControlModel::PointDriftAcceleration(int body, const Eigen::Vector3d& p_B) noexcept {
  Jacobian(ws_, body, p_B, J0_);
  Jacobian(ws_shifted_, body, p_B, J1_);
  Vector6 drift;
  drift.noalias() = J1_ * v_;
  drift.noalias() -= J0_ * v_;
  return drift / kDriftStep;
}

}  // namespace heft::sim

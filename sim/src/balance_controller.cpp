// The standing and stepping whole-body controller (BalanceController, controller.hpp): the balance
// QP's tasks, the gait and the swing foot; its contact limits are in contact_limits.cpp.
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "heft/sim/controller.hpp"

namespace heft::sim {
namespace {

// Rotation vector (axis × angle) of a rotation matrix.
Eigen::Vector3d RotationVector(const Eigen::Matrix3d& R) noexcept {
  const Eigen::AngleAxisd aa(R);
  return aa.angle() * aa.axis();
}

// Minimum-jerk 0 → 1 on s ∈ [0, 1] (zero slope and curvature at both ends), and its derivative.
double Smooth(double s) noexcept {
  s = std::clamp(s, 0.0, 1.0);
  return s * s * s * (10.0 - 15.0 * s + 6.0 * s * s);
}
double SmoothRate(double s) noexcept {
  if (s <= 0.0 || s >= 1.0) return 0.0;
  return 30.0 * s * s * (1.0 - s) * (1.0 - s);
}

constexpr double kGravity = 9.81;

}  // namespace

BalanceController::BalanceController(const std::string& urdf_path,
                                     std::span<const std::string> state_joint_names,
                                     std::span<const std::string> estimated_links, bool adaptation,
                                     BalanceConfig config)
    : Controller(urdf_path, state_joint_names, estimated_links, adaptation),
      config_(std::move(config)) {
  if (!model_.floating_base()) {
    throw std::invalid_argument("BalanceController needs a floating-base URDF, not '" + urdf_path +
                                "'");
  }
  if (config_.posture.size() != state_joint_names.size()) {
    throw std::invalid_argument("BalanceConfig::posture: expected " +
                                std::to_string(state_joint_names.size()) + " joint positions");
  }
  pelvis_ = model_.body(config_.pelvis);
  foot_body_ = {model_.body(config_.left_foot), model_.body(config_.right_foot)};
  foot_wrench_ = {config_.left_wrench, config_.right_wrench};
  const int nv = model_.nv();
  posture_.setZero(nv);
  posture_weight_.setZero(nv);
  for (std::size_t i = 0; i < joint_v_.size(); ++i) {
    posture_[joint_v_[i]] = config_.posture[i];
    // With the pelvis and both feet held, the legs have no freedom left: a posture task on them
    // would only fight the pelvis task.
    const auto& name = state_joint_names[i];
    const bool leg = std::find(config_.leg_joints.begin(), config_.leg_joints.end(), name) !=
                     config_.leg_joints.end();
    posture_weight_[joint_v_[i]] = leg ? 0.0 : config_.w_posture;
    if (!config_.curl_joint.empty() && name == config_.curl_joint) {
      curl_v_ = joint_v_[i];
      curl_q_ = joint_q_[i];
      posture_weight_[curl_v_] = config_.w_curl;  // a task, not a posture preference
    }
  }
  friction_ff_.setZero(nv);
  wave_of_v_.assign(nv, -1);
  for (std::size_t k = 0; k < config_.excitation.waves.size(); ++k) {
    const std::string& joint = config_.excitation.waves[k].joint;
    const auto it = std::find(state_joint_names.begin(), state_joint_names.end(), joint);
    if (it == state_joint_names.end() ||
        posture_weight_[joint_v_[it - state_joint_names.begin()]] == 0.0)
      throw std::invalid_argument("BalanceConfig::excitation: '" + joint +
                                  "' is not a joint of the state sample outside the legs");
    wave_of_v_[joint_v_[it - state_joint_names.begin()]] = static_cast<int>(k);
  }
  if (!config_.curl_joint.empty() && curl_v_ < 0)
    throw std::invalid_argument("BalanceConfig::curl_joint: '" + config_.curl_joint +
                                "' is not a joint of the state sample");
  for (auto& J : Jc_) J.setZero(6, nv);
  for (auto& d : drift_) d.setZero();
  const int n = nv + 12, m = 6 + 12 + kMaxActive;
  H_.setZero(n, n);
  K_.setZero(n + m, n + m);
  g_.setZero(n);
  rhs_.setZero(n + m);
  sol_.setZero(n + m);
  sol_previous_.setZero(n + m);
  effort_ = model_.effort_limits();
  const int max_limits = 2 * kFootLimits + 2 * nv;
  limit_rows_.setZero(max_limits, n);
  limit_rhs_.setZero(max_limits);
  limit_norm_.setZero(max_limits);
  limit_slot_.assign(max_limits, -1);
  limit_opposite_.assign(max_limits, -1);
  row_.setZero(n);
  lu_ = Eigen::PartialPivLU<Eigen::MatrixXd>(n + m);
  if (curl_v_ >= 0)
    SetTaskErrorNames({"pelvis_height_error_m", "com_x_error_m", "com_y_error_m",
                       config_.curl_joint + "_error_rad"});
  else
    SetTaskErrorNames({"pelvis_height_error_m", "com_x_error_m", "com_y_error_m"});
}

double BalanceController::FootForce(int foot, const hal::RobotStateSample& state) const noexcept {
  const int index = foot_wrench_[foot];
  if (index >= 0 && index < state.num_wrenches && state.wrenches[index].health.ok()) {
    return state.wrenches[index].wrench[2];
  }
  // No sensor: kinematic contact (sole within 3 mm of the floor) counts as loaded.
  const Pose X = model_.BodyPose(foot_body_[foot]);
  return (X.p + X.R * config_.sole_B).z() < 0.003 ? 1e9 : 0.0;
}

// The gait: the phase changes of this tick (BalanceConfig), then the swing foot's reference.
void BalanceController::UpdateGait(double t, const hal::RobotStateSample& state) noexcept {
  const double dt_phase = t - phase_start_;
  const int stance = 1 - swing_;
  auto sole = [&](int foot) {
    const Pose X = model_.BodyPose(foot_body_[foot]);
    return Eigen::Vector3d(X.p + X.R * config_.sole_B);
  };
  auto start_shift = [&] {
    phase_ = Phase::kShift;
    phase_start_ = t;
    com_start_ = com_goal_;
    const int new_stance = 1 - swing_;
    const Eigen::Vector3d target = sole(new_stance);
    const double inward = new_stance == 0 ? -config_.com_margin : config_.com_margin;
    com_goal_ = Eigen::Vector2d(target.x(), target.y() + inward);
  };
  switch (phase_) {
    case Phase::kStand:
      if (config_.steps > 0 && t >= config_.settle) {
        stance_width_ = sole(0).y() - sole(1).y();
        start_shift();
      }
      break;
    case Phase::kShift:
      if (dt_phase >= config_.shift_time) {
        phase_ = Phase::kLift;
        phase_start_ = t;
        stance_[swing_] = false;
        swing_start_ = sole(swing_);
        swing_goal_ = swing_start_;
        swing_goal_.x() = sole(stance).x() + config_.step_length;
        // The step width of the start, from the stance foot: a stance foot that slipped or
        // turned on its landing does not carry its drift into the next step (the feet would
        // close in, step by step, until one lands on the other).
        swing_goal_.y() = sole(stance).y() + (swing_ == 0 ? stance_width_ : -stance_width_);
        swing_goal_.z() = swing_start_.z() + config_.step_height;
      }
      break;
    case Phase::kLift:
      if (dt_phase >= config_.lift_time) {
        phase_ = Phase::kLower;
        phase_start_ = t;
        swing_start_ = swing_goal_;
      }
      break;
    case Phase::kLower:
      // Touchdown: the swing foot's force sensor reads more than touchdown_force.
      if (FootForce(swing_, state) > config_.touchdown_force) {
        stance_[swing_] = true;
        touchdown_time_[swing_] = t;
        ++touchdowns_;
        ++steps_done_;
        if (steps_done_ >= config_.steps) {
          // Back to the middle of both feet and stand.
          phase_ = Phase::kDone;
          phase_start_ = t;
          com_start_ = com_goal_;
          const Eigen::Vector3d mid = 0.5 * (sole(0) + sole(1));
          com_goal_ = mid.head<2>();
        } else {
          swing_ = stance;
          start_shift();
        }
      }
      break;
    case Phase::kDone:
      break;
  }
  UpdateSwingTarget(t);
}

// The swing foot's reference of this tick.
void BalanceController::UpdateSwingTarget(double t) noexcept {
  const double s = (t - phase_start_);
  if (phase_ == Phase::kLift) {
    const double u = s / config_.lift_time;
    const Eigen::Vector3d delta = swing_goal_ - swing_start_;
    swing_target_ = swing_start_ + Smooth(u) * delta;
    swing_target_vel_ = SmoothRate(u) / config_.lift_time * delta;
  } else if (phase_ == Phase::kLower) {
    // Down at constant speed from the top until contact (the floor stops it).
    swing_target_ = swing_start_;
    swing_target_.z() -= config_.touchdown_speed * s;
    swing_target_vel_ = Eigen::Vector3d(0.0, 0.0, -config_.touchdown_speed);
  }
}

// One tick: the state, the gait, the tasks' costs (pelvis, posture, centre of mass, swing foot,
// wrenches), the KKT system solved under the contact limits, then the joint torques.
bool BalanceController::ComputeGeneralizedForce(double t, const hal::RobotStateSample& state,
                                                Eigen::Ref<Eigen::VectorXd> tau) noexcept {
  const int n = model_.nv() + 12;
  const double mass = model_.total_mass();
  ReadState();
  UpdateGait(t, state);
  H_.setZero();
  g_.setZero();
  AddPelvisTasks(t);
  AddPostureTasks(t);
  const Eigen::Vector2d com_acc = AddCenterOfMassTask(t, mass);
  UpdateFeet();
  AddSwingFootTask();
  AddWrenchRegularisation(com_acc, mass);
  AssembleKkt(n);
  if (!SolveWithLimits(t, n)) return false;
  JointTorques(tau);
  return true;
}

// Centre of mass and its velocity (the first tick's is the centre of mass's goal).
void BalanceController::ReadState() noexcept {
  com_ = model_.CenterOfMass();
  com_vel_ = model_.CenterOfMassVelocity();
  if (!started_) {
    started_ = true;
    com_goal_ = com_.head<2>();
    com_start_ = com_goal_;
  }
}

// The pelvis's height (squatting with the excitation) and its orientation upright.
void BalanceController::AddPelvisTasks(double t) noexcept {
  // Pelvis height: v̇_z (base linear velocity is in world).
  const double z = q_[2];
  const Signal squat = config_.excitation.Squat(t);  // the pelvis lowered (excite)
  const double z_ref = config_.pelvis_height - squat.x;
  const double zdd =
      -squat.ddx + config_.height_kp * (z_ref - z) - config_.height_kd * (v_[2] + squat.dx);
  H_(2, 2) += config_.w_height;
  g_[2] += config_.w_height * zdd;
  errors_[0] = z_ref - z;
  // Pelvis orientation upright, yaw 0: angular acceleration in the base frame.
  const Pose X_pelvis = model_.BodyPose(pelvis_);
  const Eigen::Vector3d e_B = -RotationVector(X_pelvis.R);  // R_des = I; R's rotation vector is
                                                            // the same in base and world axes
  for (int k = 0; k < 3; ++k) {
    const double a = config_.orientation_kp * e_B[k] - config_.orientation_kd * v_[3 + k];
    H_(3 + k, 3 + k) += config_.w_orientation;
    g_[3 + k] += config_.w_orientation * a;
  }
}

// Posture (the curl joint follows its sine, with its velocity and acceleration fed forward).
void BalanceController::AddPostureTasks(double t) noexcept {
  for (std::size_t i = 0; i < joint_v_.size(); ++i) {
    const int v = joint_v_[i];
    double ref = posture_[v], ref_vel = 0.0, ref_acc = 0.0;
    if (v == curl_v_ && t > config_.curl_start) {
      const double dt = t - config_.curl_start, w = 2.0 * std::numbers::pi * config_.curl_frequency;
      const double u = std::min(dt / config_.curl_fade, 1.0);
      const double fade = u * u * (3.0 - 2.0 * u);
      const double fade_rate =
          dt < config_.curl_fade ? 6.0 * u * (1.0 - u) / config_.curl_fade : 0.0;
      const double fade_acc = dt < config_.curl_fade
                                  ? 6.0 * (1.0 - 2.0 * u) / (config_.curl_fade * config_.curl_fade)
                                  : 0.0;
      const double A = config_.curl_amplitude, sn = std::sin(w * dt), cs = std::cos(w * dt);
      ref += A * fade * sn;
      ref_vel = A * (fade_rate * sn + fade * w * cs);
      ref_acc = A * (fade_acc * sn + 2.0 * fade_rate * w * cs - fade * w * w * sn);
      errors_[3] = ref - q_[curl_q_];
    }
    const bool wave_joint = wave_of_v_[v] >= 0;
    if (wave_joint) {
      const Signal wave = config_.excitation.Wave(static_cast<std::size_t>(wave_of_v_[v]), t);
      ref += wave.x;
      ref_vel += wave.dx;
      ref_acc += wave.ddx;
    }
    const double a = ref_acc + config_.posture_kp * (ref - q_[joint_q_[i]]) +
                     config_.posture_kd * (ref_vel - v_[v]);
    H_(v, v) += posture_weight_[v];
    g_[v] += posture_weight_[v] * a;
    friction_ff_[v] = FrictionFeedForward(v, ref_vel);
    if (wave_joint) friction_ff_[v] += ServoTorque(v, ref - q_[joint_q_[i]], ref_vel - v_[v]);
  }
}

// The recording's joint servo (Excitation::servo_stiffness): K e + D ė beside the acceleration
// task, K capped at M_vv ω² and D critically damping it on M_vv.
double BalanceController::ServoTorque(int v, double error, double rate_error) const noexcept {
  const Excitation& x = config_.excitation;
  const double inertia = model_.M()(v, v);
  if (!(x.servo_stiffness > 0.0) || !(inertia > 0.0)) return 0.0;
  const double k = std::min(x.servo_stiffness, inertia * x.servo_bandwidth * x.servo_bandwidth);
  return k * error + 2.0 * std::sqrt(k * inertia) * rate_error;
}

// Centre of mass (x, y) through the sum of the contact forces: m c̈ = Σ f + m g. Returns the
// commanded c̈ (x, y).
Eigen::Vector2d BalanceController::AddCenterOfMassTask(double t, double mass) noexcept {
  const int nv = model_.nv();
  Eigen::Vector2d com_ref = com_goal_;
  Eigen::Vector2d com_ref_vel = Eigen::Vector2d::Zero();
  if (phase_ == Phase::kShift || phase_ == Phase::kDone) {
    const double u = (t - phase_start_) / config_.shift_time;
    com_ref = com_start_ + Smooth(u) * (com_goal_ - com_start_);
    com_ref_vel = SmoothRate(u) / config_.shift_time * (com_goal_ - com_start_);
  }
  const Signal sway = config_.excitation.Sway(t);  // sideways (excite)
  com_ref[1] += sway.x;
  com_ref_vel[1] += sway.dx;
  Eigen::Vector2d com_acc = Eigen::Vector2d::Zero();
  for (int k = 0; k < 2; ++k) {
    const double cdd = (k == 1 ? sway.ddx : 0.0) + config_.com_kp * (com_ref[k] - com_[k]) +
                       config_.com_kd * (com_ref_vel[k] - com_vel_[k]);
    com_acc[k] = cdd;
    // Row, in acceleration units: (f_left,k + f_right,k) / m = cdd.
    for (int a = 0; a < 2; ++a) {
      for (int b = 0; b < 2; ++b)
        H_(nv + 6 * a + k, nv + 6 * b + k) += config_.w_com / (mass * mass);
      g_[nv + 6 * a + k] += config_.w_com / mass * cdd;
    }
  }
  errors_[1] = com_ref[0] - com_[0];
  errors_[2] = com_ref[1] - com_[1];
  return com_acc;
}

// Feet: the soles' Jacobians and drift accelerations.
void BalanceController::UpdateFeet() noexcept {
  for (int foot = 0; foot < 2; ++foot) {
    model_.PointJacobian(foot_body_[foot], config_.sole_B, Jc_[foot]);
    drift_[foot] = model_.PointDriftAcceleration(foot_body_[foot], config_.sole_B);
  }
}

// The swing foot's pose task (none in double support).
void BalanceController::AddSwingFootTask() noexcept {
  if (stance_[swing_]) return;
  const int nv = model_.nv();
  const Pose X = model_.BodyPose(foot_body_[swing_]);
  const Eigen::Vector3d p = X.p + X.R * config_.sole_B;
  Vector6 vel;
  vel.noalias() = Jc_[swing_] * v_;
  Vector6 a_des;
  a_des.head<3>() = config_.swing_kp * (swing_target_ - p) +
                    config_.swing_kd * (swing_target_vel_ - vel.head<3>());
  a_des.tail<3>() = -config_.swing_kp * RotationVector(X.R) - config_.swing_kd * vel.tail<3>();
  a_des -= drift_[swing_];
  H_.topLeftCorner(nv, nv).noalias() += config_.w_swing * Jc_[swing_].transpose() * Jc_[swing_];
  g_.head(nv).noalias() += config_.w_swing * Jc_[swing_].transpose() * a_des;
}

// Wrench regularisation: small wrenches, moments smaller (centre of pressure near each sole
// centre), and with both feet down the normal forces shared by the lever rule at the zero-moment
// point of the commanded centre-of-mass acceleration, z_mp = c − (c_z / g) c̈, along the line
// between the soles (a ratio, so that their sum stays free for the height task).
// Forces are weighed relative to the weight m g, moments relative to m g × 0.1 m, so that the
// weights compare with the acceleration tasks.
void BalanceController::AddWrenchRegularisation(const Eigen::Vector2d& com_acc,
                                                double mass) noexcept {
  const int nv = model_.nv();
  const int nstance = static_cast<int>(stance_[0]) + static_cast<int>(stance_[1]);
  const double f_scale = 1.0 / (mass * kGravity), m_scale = f_scale / 0.1;
  std::array<double, 2> share{stance_[0] ? 1.0 : 0.0, stance_[1] ? 1.0 : 0.0};
  if (nstance == 2) {
    const Pose XL = model_.BodyPose(foot_body_[0]), XR = model_.BodyPose(foot_body_[1]);
    const Eigen::Vector3d sl = XL.p + XL.R * config_.sole_B, sr = XR.p + XR.R * config_.sole_B;
    const Eigen::Vector2d d = (sl - sr).head<2>();
    const double sole_z = 0.5 * (sl.z() + sr.z());
    const Eigen::Vector2d zmp = com_.head<2>() - (com_.z() - sole_z) / kGravity * com_acc;
    const double alpha = std::clamp((zmp - sr.head<2>()).dot(d) / d.squaredNorm(), 0.0, 1.0);
    // (1 − α) f_left,z − α f_right,z = 0: the normal forces in the ratio α : (1 − α).
    const int zl = nv + 2, zr = nv + 6 + 2;
    const double w = config_.w_normal * f_scale * f_scale;
    H_(zl, zl) += w * (1 - alpha) * (1 - alpha);
    H_(zr, zr) += w * alpha * alpha;
    H_(zl, zr) -= w * alpha * (1 - alpha);
    H_(zr, zl) -= w * alpha * (1 - alpha);
    share = {alpha, 1.0 - alpha};
  }
  // A lightly loaded foot can carry little tangential force or moment (friction cone, centre of
  // pressure inside the sole): their weights grow as its share of the weight falls.
  for (int foot = 0; foot < 2; ++foot) {
    const int i0 = nv + 6 * foot;
    const double load = std::max(share[foot], 0.05);
    for (int k = 0; k < 6; ++k) {
      if (k == 2) continue;
      const double w =
          k < 2 ? config_.w_force * f_scale * f_scale : config_.w_moment * m_scale * m_scale;
      H_(i0 + k, i0 + k) += w / (load * load);
    }
    H_(i0 + 2, i0 + 2) += config_.w_force * f_scale * f_scale;
  }
}

// The KKT system of the costs (H_, g_) and the equalities: the base rows, and per foot either
// its sole's acceleration zero (stance) or its wrench zero (swing).
void BalanceController::AssembleKkt(int n) noexcept {
  const int nv = model_.nv();
  const Eigen::MatrixXd& M = model_.M();
  const Eigen::VectorXd& h = model_.h();
  // Tikhonov on v̇ so that the Hessian is positive definite.
  for (int i = 0; i < nv; ++i) H_(i, i) += 1e-6;
  K_.setZero();
  rhs_.setZero();
  K_.topLeftCorner(n, n) = H_;
  rhs_.head(n) = g_;
  // Base rows: M_b v̇ − Σ J_c,bᵀ f = −h_b.
  int row = n;
  for (int r = 0; r < 6; ++r, ++row) {
    K_.block(row, 0, 1, nv) = M.row(r);
    for (int foot = 0; foot < 2; ++foot) {
      K_.block(row, nv + 6 * foot, 1, 6) = -Jc_[foot].col(r).transpose();
    }
    rhs_[row] = -h[r];
  }
  for (int foot = 0; foot < 2; ++foot) {
    for (int k = 0; k < 6; ++k, ++row) {
      if (stance_[foot]) {
        K_.block(row, 0, 1, nv) = Jc_[foot].row(k);
        rhs_[row] = -drift_[foot][k];
      } else {
        K_(row, nv + 6 * foot + k) = 1.0;
      }
    }
  }
  K_.block(0, n, n, 18) = K_.block(n, 0, 18, n).transpose();
}

// tau = M v̇ + h − Σ J_cᵀ f + the friction feed-forward, from the solved v̇ and wrenches.
void BalanceController::JointTorques(Eigen::Ref<Eigen::VectorXd> tau) const noexcept {
  const int nv = model_.nv();
  const Eigen::MatrixXd& M = model_.M();
  const Eigen::VectorXd& h = model_.h();
  const auto vdot = sol_.head(nv);
  tau.noalias() = M * vdot;
  tau += h;
  for (int foot = 0; foot < 2; ++foot) {
    tau.noalias() -= Jc_[foot].transpose() * sol_.segment<6>(nv + 6 * foot);
  }
  tau += friction_ff_;
}

}  // namespace heft::sim

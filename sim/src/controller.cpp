#include "heft/sim/controller.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <stdexcept>

namespace heft::sim {
namespace {

bool SameName(const std::array<char, hal::kLinkNameLength>& a, const std::string& b) noexcept {
  const std::size_t n = ::strnlen(a.data(), a.size());
  return n == b.size() && std::memcmp(a.data(), b.data(), n) == 0;
}

}  // namespace

// ------------------------------------------------------------------------------------------------
Controller::Controller(const std::string& urdf_path, std::span<const std::string> state_joint_names,
                       std::span<const std::string> estimated_links, bool adaptation)
    : model_(urdf_path), adaptation_(adaptation) {
  if (estimated_links.size() > hal::kMaxEstimatedLinks) {
    throw std::invalid_argument("at most " + std::to_string(hal::kMaxEstimatedLinks) +
                                " estimated links");
  }
  const int base_v = model_.floating_base() ? 6 : 0;
  const int base_q = model_.floating_base() ? 7 : 0;
  if (static_cast<int>(state_joint_names.size()) != model_.nv() - base_v) {
    throw std::invalid_argument("'" + urdf_path + "' has " + std::to_string(model_.nv() - base_v) +
                                " joints, the state sample " +
                                std::to_string(state_joint_names.size()));
  }
  for (const auto& name : state_joint_names) {
    const int v = model_.joint_v_index(name);
    joint_v_.push_back(v);
    joint_q_.push_back(v - base_v + base_q);
  }
  for (const auto& name : estimated_links) {
    links_.push_back(Link{name, model_.body(name)});
  }
  joint_names_.assign(state_joint_names.begin(), state_joint_names.end());
  coulomb_.setZero(model_.nv());
  viscous_.setZero(model_.nv());
  q_.setZero(model_.nq());
  if (model_.floating_base()) q_[3] = 1.0;
  v_.setZero(model_.nv());
  tau_.setZero(model_.nv());
}

void Controller::SetTaskErrorNames(std::vector<std::string> names) {
  if (names.size() > kMaxTaskErrors) throw std::invalid_argument("too many task errors");
  error_names_ = std::move(names);
  num_errors_ = error_names_.size();
}

void Controller::SetFrictionModel(std::span<const estimator::JointFriction> friction) {
  coulomb_.setZero();
  viscous_.setZero();
  for (const estimator::JointFriction& f : friction) {
    const auto it = std::find(joint_names_.begin(), joint_names_.end(), f.joint);
    if (it == joint_names_.end())
      throw std::invalid_argument("friction model: '" + f.joint + "' is not a joint of the robot");
    if (!std::isfinite(f.coulomb + f.viscous))
      throw std::invalid_argument("friction model: '" + f.joint + "' is not finite");
    // A negative coefficient (an identification's noise on a joint that hardly moved) would feed
    // energy in: none is fed forward.
    const int v = joint_v_[static_cast<std::size_t>(it - joint_names_.begin())];
    coulomb_[v] = std::max(f.coulomb, 0.0);
    viscous_[v] = std::max(f.viscous, 0.0);
  }
}

void Controller::SetNominalModel(std::span<const BodyParameters> bodies) {
  for (const BodyParameters& b : bodies) {
    const int body = model_.body(b.body);  // throws for an unknown body, naming the known ones
    if (!model_.SetParameters(body, b.pi))
      throw std::invalid_argument("nominal model: '" + b.body +
                                  "' is not finite or not physically consistent");
  }
}

void Controller::SetHandOffReference(std::span<const BodyParameters> heft_nominal) {
  for (const BodyParameters& b : heft_nominal) {
    (void)model_.body(b.body);  // throws for an unknown body, naming the known ones
    if (!b.pi.allFinite())
      throw std::invalid_argument("hand-off reference: '" + b.body + "' is not finite");
    for (Link& link : links_)
      if (link.name == b.body) {
        link.own = model_.parameters(link.body);
        link.reference = b.pi;
        link.has_reference = true;
      }
  }
}

double Controller::FrictionFeedForward(int v, double qd_ref) const noexcept {
  // The model heft-identify fits and the estimator's τ_nom uses (config/README.md).
  constexpr double kVelocityScale = 0.01;  // rad/s
  return coulomb_[v] * std::tanh(qd_ref / kVelocityScale) + viscous_[v] * qd_ref;
}

Vector10 Controller::model_parameters(std::size_t i) const noexcept {
  return model_.parameters(links_[i].body);
}

void Controller::OnInertialEstimate(const hal::InertialEstimate& estimate) noexcept {
  ++received_;
  if (!adaptation_) return;
  if (estimate.status.state != hal::EstimatorState::kEstimating &&
      estimate.status.state != hal::EstimatorState::kHolding) {
    return;
  }
  const std::size_t n = std::min<std::size_t>(estimate.num_links, hal::kMaxEstimatedLinks);
  for (std::size_t k = 0; k < n; ++k) {
    for (auto& link : links_) {
      if (SameName(estimate.links[k].name, link.name)) {
        link.pending = Eigen::Map<const Vector10>(estimate.links[k].parameters.data());
        link.has_pending = true;
      }
    }
  }
}

bool Controller::Compute(double t, const hal::RobotStateSample& state,
                         std::span<double> tau) noexcept {
  std::fill(tau.begin(), tau.end(), 0.0);
  if (state.num_joints != joint_v_.size() || tau.size() < joint_v_.size() ||
      (model_.floating_base() && !state.has_base)) {
    return false;
  }
  for (auto& link : links_) {
    if (!link.has_pending) continue;
    link.has_pending = false;
    // heft's nominal handed on says the link has not changed: the controller's own model of it.
    const bool unchanged = link.has_reference && link.pending == link.reference;
    if (model_.SetParameters(link.body, unchanged ? link.own : link.pending)) {
      ++applied_;
    } else {
      ++rejected_;
    }
  }
  if (model_.floating_base()) {
    for (int k = 0; k < 3; ++k) {
      q_[k] = state.base.position[k];
      v_[k] = state.base.linear_velocity[k];
      v_[3 + k] = state.base.angular_velocity[k];
    }
    for (int k = 0; k < 4; ++k) q_[3 + k] = state.base.orientation[k];
  }
  for (std::size_t i = 0; i < joint_v_.size(); ++i) {
    q_[joint_q_[i]] = state.joints[i].position;
    v_[joint_v_[i]] = state.joints[i].velocity;
  }
  model_.Update(q_, v_);
  tau_.setZero();
  if (!ComputeGeneralizedForce(t, state, tau_) || !tau_.allFinite()) return false;
  for (std::size_t i = 0; i < joint_v_.size(); ++i) tau[i] = tau_[joint_v_[i]];
  return true;
}

// ------------------------------------------------------------------------------------------------
JointTaskController::JointTaskController(const std::string& urdf_path,
                                         std::span<const std::string> state_joint_names,
                                         std::span<const std::string> estimated_links,
                                         bool adaptation, JointTaskConfig config)
    : Controller(urdf_path, state_joint_names, estimated_links, adaptation),
      config_(std::move(config)) {
  if (model_.floating_base()) {
    throw std::invalid_argument("JointTaskController needs a fixed-base URDF, not '" + urdf_path +
                                "'");
  }
  if (config_.home.size() != state_joint_names.size()) {
    throw std::invalid_argument("JointTaskConfig::home: expected " +
                                std::to_string(state_joint_names.size()) + " joint positions");
  }
  const auto it = std::find(state_joint_names.begin(), state_joint_names.end(), config_.task_joint);
  if (it == state_joint_names.end()) {
    throw std::invalid_argument("JointTaskConfig::task_joint '" + config_.task_joint +
                                "' is not a joint of '" + urdf_path + "'");
  }
  task_sample_index_ = static_cast<int>(it - state_joint_names.begin());
  qdd_ref_.setZero(model_.nv());
  SetTaskErrorNames({config_.task_joint + "_error_rad"});
}

bool JointTaskController::ComputeGeneralizedForce(double t, const hal::RobotStateSample& state,
                                                  Eigen::Ref<Eigen::VectorXd> tau) noexcept {
  const double w = 2.0 * std::numbers::pi * config_.frequency;
  t -= config_.start;  // before the task's start every joint holds home
  qdd_ref_.setZero();
  double task_error = 0.0;
  double task_torque = 0.0;
  for (std::size_t i = 0; i < joint_v_.size(); ++i) {
    const double q = state.joints[i].position, qd = state.joints[i].velocity;
    const int v = joint_v_[i];
    if (static_cast<int>(i) == task_sample_index_) {
      // Amplitude faded in over `fade_in` seconds (e, ė, ë) so that the reference starts at rest.
      double e = 1.0, de = 0.0, dde = 0.0;
      if (t < 0.0) {
        e = 0.0;
        dde = 0.0;
      } else if (config_.fade_in > 0.0 && t < config_.fade_in) {
        const double u = std::numbers::pi * std::max(t, 0.0) / config_.fade_in;
        e = 0.5 - 0.5 * std::cos(u);
        de = 0.5 * std::numbers::pi / config_.fade_in * std::sin(u);
        dde = 0.5 * std::pow(std::numbers::pi / config_.fade_in, 2) * std::cos(u);
      }
      const double A = config_.amplitude, sn = std::sin(w * t), cs = std::cos(w * t);
      const double q_ref = config_.home[i] + A * e * sn;
      const double qd_ref = A * (de * sn + e * w * cs);
      qdd_ref_[v] = A * (dde * sn + 2.0 * de * w * cs - e * w * w * sn);
      task_error = q_ref - q;
      // The friction model's feed-forward, its Coulomb part adapted online (JointTaskConfig).
      const double fc_model = model_coulomb(v);
      if (coulomb_estimate_ < 0.0) coulomb_estimate_ = fc_model;
      const double direction = std::tanh(qd_ref / 0.01);
      const double dt = std::clamp(t - last_t_, 0.0, 0.01);
      coulomb_estimate_ =
          std::clamp(coulomb_estimate_ +
                         dt * (config_.friction_gain * ((qd_ref - qd) + task_error) * direction -
                               config_.friction_leak * (coulomb_estimate_ - fc_model)),
                     0.0, config_.friction_max);
      task_torque = config_.task_kp * task_error + config_.task_kd * (qd_ref - qd) +
                    FrictionFeedForward(v, qd_ref) + (coulomb_estimate_ - fc_model) * direction;
    } else {
      qdd_ref_[v] = config_.kp * (config_.home[i] - q) - config_.kd * qd;
    }
  }
  last_t_ = t;
  tau.noalias() = model_.M() * qdd_ref_;
  tau += model_.h();
  tau[joint_v_[task_sample_index_]] += task_torque;
  errors_[0] = task_error;
  return true;
}

}  // namespace heft::sim

// Whole-body controllers of the simulated robot that use the inertial parameters heft hands on.
//
// A controller owns a ControlModel (heft's conventions) of the robot. The estimated links' π in
// that model are the nominal ones until an estimate arrives through OnInertialEstimate (the
// daemon calls it every 3 ms with the latest hal::InertialEstimate); with adaptation off, hand-offs
// are counted and ignored (the paper's "no adaptation" baseline).
//
// Threading and real time: Compute and OnInertialEstimate are called from one thread (the
// simulator's lockstep loop); both are noexcept and allocation-free after construction.
#pragma once

#include <Eigen/Core>
#include <Eigen/LU>
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "heft/estimator/inertial_estimator.hpp"
#include "heft/hal/inertial_estimate.hpp"
#include "heft/hal/robot_state.hpp"
#include "heft/sim/control_model.hpp"
#include "heft/sim/excitation.hpp"

namespace heft::sim {

inline constexpr std::size_t kMaxTaskErrors = 4;

class Controller {
 public:
  /// `state_joint_names`: the joints of hal::RobotStateSample, in sample order (they are mapped to
  /// the model by name); `estimated_links`: links whose π may come from the hand-off.
  Controller(const std::string& urdf_path, std::span<const std::string> state_joint_names,
             std::span<const std::string> estimated_links, bool adaptation);
  virtual ~Controller() = default;
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  /// Latest hand-off. Used (from the next Compute on) when adaptation is on and the estimator is
  /// estimating or holding; a link whose π is not physically consistent keeps its last value.
  void OnInertialEstimate(const hal::InertialEstimate& estimate) noexcept;

  /// The controller's joint friction model (a real controller's: the identified one, heft-identify
  /// --friction, or a datasheet's; never the simulated robot's truth): τ_f = fc·tanh(q̇_ref / 0.01)
  /// + fv·q̇_ref is fed forward on every joint that follows a reference velocity (the arm task,
  /// the curl, the excitation's waves), so that dry friction does not stall a low-gain task.
  /// Joints not listed get none, nor do negative coefficients; by default there is none. Throws
  /// std::invalid_argument for an unknown joint or a non-finite coefficient.
  void SetFrictionModel(std::span<const estimator::JointFriction> friction);

  /// One body's inertial parameters π (mass, first moment, inertia about the link's origin).
  struct BodyParameters {
    std::string body;
    Vector10 pi;
  };
  /// The controller's rigid-body model of the listed bodies (what a real controller could have:
  /// the identified model, robot.parameters, which heft's estimator also starts from; never the
  /// simulated robot's truth outside tests). The others keep the URDF's; an estimated link's
  /// hand-off still replaces it when adaptation is on. Throws std::invalid_argument for an unknown
  /// body or an inconsistent π.
  void SetNominalModel(std::span<const BodyParameters> bodies);
  /// heft's nominal parameters of the estimated links: the model the hand-off is consistent with
  /// (robot.parameters, or the URDF's). heft's hand-off policy hands a link's nominal while the
  /// data show no change of it: the controller then keeps its own model of the link, and takes the
  /// handed π once heft hands anything else. A controller whose model differs from heft's nominal
  /// (a URDF controller, an identified heft) thus loses nothing while nothing is carried. Call
  /// after SetNominalModel. Throws std::invalid_argument for an unknown body or a non-finite π.
  void SetHandOffReference(std::span<const BodyParameters> heft_nominal);

  /// Joint torques (sample joint order) for the state at time t. False if the state is unusable
  /// (then tau is zero).
  bool Compute(double t, const hal::RobotStateSample& state, std::span<double> tau) noexcept;

  /// Task errors of the last Compute (reference − actual), named by task_error_names().
  [[nodiscard]] std::span<const double> task_errors() const noexcept {
    return {errors_.data(), num_errors_};
  }
  [[nodiscard]] std::span<const std::string> task_error_names() const noexcept {
    return error_names_;
  }
  [[nodiscard]] bool adaptation() const noexcept { return adaptation_; }
  [[nodiscard]] std::uint64_t estimates_received() const noexcept { return received_; }
  [[nodiscard]] std::uint64_t estimates_applied() const noexcept { return applied_; }
  [[nodiscard]] std::uint64_t estimates_rejected() const noexcept { return rejected_; }
  /// π currently used for estimated link i (order of the constructor's list).
  [[nodiscard]] Vector10 model_parameters(std::size_t i) const noexcept;
  [[nodiscard]] const ControlModel& model() const noexcept { return model_; }

 protected:
  /// The torque over all nv generalized coordinates (base rows ignored) after model_.Update(q_,
  /// v_).
  virtual bool ComputeGeneralizedForce(double t, const hal::RobotStateSample& state,
                                       Eigen::Ref<Eigen::VectorXd> tau) noexcept = 0;
  void SetTaskErrorNames(std::vector<std::string> names);
  /// The friction model's torque on model coordinate v at reference velocity qd_ref.
  [[nodiscard]] double FrictionFeedForward(int v, double qd_ref) const noexcept;
  [[nodiscard]] double model_coulomb(int v) const noexcept { return coulomb_[v]; }

  ControlModel model_;
  Eigen::VectorXd q_, v_;
  std::vector<int> joint_v_;  // model v index of sample joint i
  std::vector<int> joint_q_;  // model q index of sample joint i
  std::array<double, kMaxTaskErrors> errors_{};
  std::size_t num_errors_ = 0;

 private:
  struct Link {
    std::string name;
    int body = 0;
    Vector10 pending = Vector10::Zero();
    Vector10 own = Vector10::Zero();        // the controller's own model of the link
    Vector10 reference = Vector10::Zero();  // heft's nominal of it (SetHandOffReference)
    bool has_reference = false;
    bool has_pending = false;
  };
  std::vector<Link> links_;
  std::vector<std::string> error_names_;
  std::vector<std::string> joint_names_;  // sample order
  Eigen::VectorXd coulomb_, viscous_;     // friction model, model v order (0: none)
  Eigen::VectorXd tau_;
  bool adaptation_ = false;
  std::uint64_t received_ = 0, applied_ = 0, rejected_ = 0;
};

/// (a) Joint-space task on a fixed-base robot: tau = M(q) a + h(q, v) + tau_task, where a holds
/// every joint other than the task joint at its home position by a PD in acceleration
/// (a = kp e − kd q̇, so well damped whatever the link inertia), and the task joint has a reference
/// acceleration from its trajectory and a weak PD in torque units, tau_task = task_kp e + task_kd
/// ė. The model's feed-forward carries the load: the paper's low-gain joint task.
struct JointTaskConfig {
  std::vector<double> home;             ///< reference of every joint, sample order
  std::string task_joint;               ///< the joint with the low-gain task (the role map's elbow)
  double amplitude = 0.0;               ///< task joint reference: home + amplitude sin(2π f t)
  double frequency = 0.0;               ///< [Hz]
  double fade_in = 1.5;                 ///< [s] the amplitude grows smoothly from 0 over this
  double task_kp = 2.0, task_kd = 0.3;  ///< [Nm/rad], [Nm s/rad] on the task joint
  double start = 0.0;  ///< [s] the task's time origin (the load's arrival): home held before it
  double kp = 100.0, kd = 20.0;  ///< [1/s²], [1/s] on every other joint
  /// Adaptive dry-friction compensation on the task joint: its Coulomb coefficient ĉ (starting at
  /// the friction model's) follows ċ = γ (ė + λ e) tanh(q̇_ref / 0.01) − σ (ĉ − fc_model), λ = 1/s,
  /// ĉ in [0, max]: a velocity deficit or lag that keeps the sign of the reference velocity (a
  /// stalled joint: ė = q̇_ref) is friction the model lacks; a payload's error (gravity: even in
  /// q̇_ref; inertia: ∝ q̈_ref) averages out over a period. γ = 0: off.
  double friction_gain = 2.0;   ///< γ [N·m/(rad·s)]
  double friction_leak = 0.05;  ///< σ [1/s]
  double friction_max = 3.0;    ///< [N·m]
};

class JointTaskController final : public Controller {
 public:
  JointTaskController(const std::string& urdf_path, std::span<const std::string> state_joint_names,
                      std::span<const std::string> estimated_links, bool adaptation,
                      JointTaskConfig config);

 protected:
  bool ComputeGeneralizedForce(double t, const hal::RobotStateSample& state,
                               Eigen::Ref<Eigen::VectorXd> tau) noexcept override;

 public:
  /// ĉ, the task joint's adapted Coulomb coefficient [N·m].
  [[nodiscard]] double coulomb_estimate() const noexcept {
    return std::max(coulomb_estimate_, 0.0);
  }

 private:
  JointTaskConfig config_;
  int task_sample_index_ = 0;
  double coulomb_estimate_ = -1.0;  // ĉ [N·m] (negative: not started)
  double last_t_ = 0.0;
  Eigen::VectorXd qdd_ref_;
};

/// (b)/(c) Floating-base inverse dynamics with the feet in contact.
///
/// Each tick a weighted least-squares problem in x = [v̇; f_left; f_right] (f: 6-D wrench of the
/// ground on the sole centre, world axes) is solved through its KKT system:
///   equalities: the unactuated base rows  M_b v̇ + h_b = Σ J_c,bᵀ f;
///               a stance foot does not accelerate  J_c v̇ + J̇_c v = 0; a swing foot's f = 0;
///   costs:      pelvis height PD, pelvis orientation PD, centre of mass over the support
///               (through m c̈ = Σ f + m g, c and ċ from the model), swing-foot pose PD, posture PD
///               of the joints outside the legs, and the wrenches: normal forces of two stance
///               feet in the ratio of the lever rule at the zero-moment point of the commanded c̈,
///               small tangential forces and sole moments, weighed more the less a foot carries
///               (a soft friction cone / centre of pressure inside the sole; measured in every
///               run, see RunResult::max_cop_fraction).
/// Then tau = (M v̇ + h − Σ J_cᵀ f)[joints]. Every feedback is an acceleration, so the model's
/// mass (including the handed-on torso) sets the force the pelvis-height PD buys: with a wrong
/// torso mass the pelvis sags or rises by about Δm g / (m height_kp).
///
/// Gait: `steps` = 0 stands; otherwise, after `settle` seconds, alternating single steps: shift the
/// centre of mass over the stance foot, lift the other foot `step_height`, move it `step_length`
/// forward of the stance foot and sideways to the feet's distance when the first step started
/// (the step width: a stance foot's slip does not accumulate), and drive it down at
/// `touchdown_speed` until the foot's force sensor reads more than `touchdown_force` (a hard
/// touchdown), then shift again.
struct BalanceConfig {
  std::vector<double> posture;  ///< joint posture reference, sample order
  /// The robot's links (its role map, RoleMap): the feet and the pelvis.
  std::string left_foot, right_foot;
  std::string pelvis;
  /// These joints get no posture task (the legs: the role map's chains from pelvis to feet).
  std::vector<std::string> leg_joints;
  Eigen::Vector3d sole_B{0.03, 0.0, -0.07};  ///< sole centre in the foot frame
  int left_wrench = 0, right_wrench = 1;     ///< wrench sensor index in the sample (-1: none)
  double pelvis_height = 1.0;                ///< [m]
  double height_kp = 16.0, height_kd = 8.0;  ///< [1/s²], [1/s]: pelvis-height task
  double orientation_kp = 100.0, orientation_kd = 20.0;
  double com_kp = 30.0, com_kd = 11.0;
  double posture_kp = 100.0, posture_kd = 20.0;
  double swing_kp = 400.0, swing_kd = 40.0;
  double w_height = 10.0, w_orientation = 10.0, w_com = 10.0, w_posture = 0.1, w_swing = 100.0;
  double w_force = 1e-3, w_normal = 1.0, w_moment = 1e-2;  ///< on f / (m g), n / (0.1 m g)
  // Gait.
  int steps = 0;
  double settle = 1.0;            ///< [s] standing before the first step
  double shift_time = 1.5;        ///< [s] centre of mass to the stance foot
  double lift_time = 0.35;        ///< [s] foot up (and forward)
  double step_height = 0.04;      ///< [m]
  double step_length = 0.0;       ///< [m] forward of the stance foot (0: in place)
  double touchdown_force = 60.0;  ///< [N] vertical force on the swing foot that ends the step
  double touchdown_speed = 0.4;   ///< [m/s] downward at contact
  /// [m] centre-of-mass target in single support, inward of the stance sole's centre. The
  /// scenarios set half the sole's half-width (the reference's 0.06 m sole: 0.03, which leaves
  /// room for a model centre of mass 1–2 cm off; 0.04 put the real one on the sole's inner edge,
  /// where a touchdown rolled the foot; the G1's 0.035 m sole at 0.03 tipped inward at its last
  /// step)
  double com_margin = 0.03;
  // Limits (inequalities on the planned accelerations and wrenches, held by an active set over the
  // KKT solve that adds the most violated and drops any whose multiplier turns negative, until
  // none is violated): on each stance foot, in its sole's frame, the centre of pressure inside
  // `cop_limit` of the sole's half-sizes (below 1, a margin for the model's centre-of-mass error),
  // a normal force of at least `min_normal_force` (fading to 0 on the foot a weight shift
  // unloads), and a landing foot's normal force at most (t − touchdown) / land_time of the weight
  // (at least 2 % of it): its load is blended in; in the floor's frame, the tangential forces
  // inside the friction pyramid |F_x|, |F_y| ≤ `friction` F_z; and every joint's torque
  // (M v̇ + h − Σ J_cᵀ f + the friction feed-forward) within its drive's URDF effort limit.
  // An iterate whose wrenches exceed twice the weight (limits that contradict each other) is not
  // taken: the last one is kept.
  double sole_half_length = 0.12, sole_half_width = 0.06;  ///< [m] the sole box
  double cop_limit = 1.0;
  double min_normal_force = 10.0;  ///< [N]
  double land_time = 0.08;         ///< [s]
  /// Friction coefficient the plan keeps within (the simulated floor's is 1; a margin for the
  /// plan's own error and a foot that rolls).
  double friction = 0.7;
  int active_set_passes = 30;  ///< KKT solves per tick at most (0: no limits)
  /// An arm task while standing (the dumbbell curl): `curl_joint`'s posture reference becomes
  /// posture + curl_amplitude · fade · sin(2π curl_frequency (t − curl_start)) from curl_start on,
  /// the amplitude growing smoothly over `curl_fade`; its error is the fourth task error.
  std::string curl_joint;  ///< empty: no curl
  double curl_amplitude = 0.0, curl_frequency = 0.0, curl_start = 0.0, curl_fade = 1.5;
  double w_curl = 10.0;  ///< weight of the curl joint's task
  /// The identification recording's motion (scenario excite): squats, sway, joint waves.
  Excitation excitation;
};

class BalanceController final : public Controller {
 public:
  BalanceController(const std::string& urdf_path, std::span<const std::string> state_joint_names,
                    std::span<const std::string> estimated_links, bool adaptation,
                    BalanceConfig config);

  enum class Phase : std::uint8_t { kStand, kShift, kLift, kLower, kDone };
  [[nodiscard]] Phase phase() const noexcept { return phase_; }
  [[nodiscard]] int touchdowns() const noexcept { return touchdowns_; }
  [[nodiscard]] const BalanceConfig& config() const noexcept { return config_; }
  [[nodiscard]] Eigen::Vector3d center_of_mass() const noexcept { return com_; }
  /// The ground wrench on a sole (0 left, 1 right) planned by the last Compute, world axes.
  [[nodiscard]] Vector6 planned_wrench(int foot) const noexcept {
    return sol_.segment<6>(model_.nv() + 6 * foot);
  }
  [[nodiscard]] bool in_stance(int foot) const noexcept { return stance_[foot]; }
  /// Contact limits held as equalities by the last Compute (0: none was reached).
  [[nodiscard]] int active_limits() const noexcept { return active_limits_; }

 protected:
  bool ComputeGeneralizedForce(double t, const hal::RobotStateSample& state,
                               Eigen::Ref<Eigen::VectorXd> tau) noexcept override;

 private:
  void UpdateGait(double t, const hal::RobotStateSample& state) noexcept;
  void UpdateSwingTarget(double t) noexcept;
  double FootForce(int foot, const hal::RobotStateSample& state) const noexcept;
  // ComputeGeneralizedForce's steps, in order (balance_controller.cpp).
  void ReadState() noexcept;
  void AddPelvisTasks(double t) noexcept;
  void AddPostureTasks(double t) noexcept;
  [[nodiscard]] double ServoTorque(int v, double error, double rate_error) const noexcept;
  Eigen::Vector2d AddCenterOfMassTask(double t, double mass) noexcept;
  void UpdateFeet() noexcept;
  void AddSwingFootTask() noexcept;
  void AddWrenchRegularisation(const Eigen::Vector2d& com_acc, double mass) noexcept;
  void AssembleKkt(int n) noexcept;
  void JointTorques(Eigen::Ref<Eigen::VectorXd> tau) const noexcept;

  BalanceConfig config_;
  int pelvis_ = 0;
  std::array<int, 2> foot_body_{};
  std::array<int, 2> foot_wrench_{};
  std::array<bool, 2> stance_{true, true};
  Eigen::VectorXd posture_;  // model v order (joints only, base rows unused)
  Eigen::VectorXd posture_weight_;
  int curl_v_ = -1, curl_q_ = -1;  // model v / q index of the curl joint (-1: none)
  std::vector<int> wave_of_v_;     // model v index → excitation wave (-1: none)
  Eigen::VectorXd friction_ff_;    // outside the QP: friction feed-forward, recording servo
  // Gait state.
  Phase phase_ = Phase::kStand;
  int swing_ = 1;  // 0 left, 1 right
  int steps_done_ = 0;
  int touchdowns_ = 0;
  double phase_start_ = 0.0;
  bool started_ = false;
  Eigen::Vector3d com_ = Eigen::Vector3d::Zero(), com_vel_ = Eigen::Vector3d::Zero();
  Eigen::Vector2d com_start_ = Eigen::Vector2d::Zero(), com_goal_ = Eigen::Vector2d::Zero();
  Eigen::Vector3d swing_start_ = Eigen::Vector3d::Zero(), swing_goal_ = Eigen::Vector3d::Zero();
  Eigen::Vector3d swing_target_ = Eigen::Vector3d::Zero(),
                  swing_target_vel_ = Eigen::Vector3d::Zero();
  std::array<double, 2> touchdown_time_{-1e9, -1e9};  // [s] each foot's last touchdown
  double stance_width_ = 0.0;  // [m] left sole − right sole (y) when the first step starts
  // Workspace.
  // Candidate limits of a tick: per stance foot 4 centre of pressure, 2 normal force and 4
  // friction rows, then 2 a joint with an effort limit; at most kMaxActive held at once.
  static constexpr int kFootLimits = 10;
  static constexpr int kMaxActive = 24;
  bool SolveWithLimits(double t, int n) noexcept;
  void AddFootLimits(double t, int foot) noexcept;
  void AddEffortLimits() noexcept;
  void AddLimit(const Eigen::Ref<const Eigen::RowVectorXd>& row, double bound,
                int opposite) noexcept;
  void Activate(int limit, int n) noexcept;
  void Deactivate(int slot, int n) noexcept;
  Eigen::MatrixXd limit_rows_;
  Eigen::VectorXd limit_rhs_;
  Eigen::VectorXd limit_norm_;                // |row|: a violation as a distance in x
  Eigen::VectorXd effort_;                    // model v order: the drives' limits (+inf: none)
  std::vector<int> limit_slot_;               // the KKT slot holding each limit (-1: not held)
  std::vector<int> limit_opposite_;           // the row bounding the same quantity (-1: none)
  std::array<int, kMaxActive> slot_limit_{};  // the limit each held slot holds
  int num_limits_ = 0;
  int active_limits_ = 0;
  Eigen::RowVectorXd row_;
  std::array<Matrix6X, 2> Jc_;
  std::array<Vector6, 2> drift_;
  Eigen::MatrixXd H_, K_;
  Eigen::VectorXd g_, rhs_, sol_, sol_previous_;
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;
};

}  // namespace heft::sim

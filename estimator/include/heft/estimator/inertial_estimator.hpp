// One call per control tick: the measurement Δτ (Foster et al. eq. 14-15: measurement.hpp), the
// filter (KF or log-Cholesky EKF), innovation gating with its release policy, guards and the rate
// limiter.
//
// Set-up (the constructor) validates the configuration against the model, and allocates
// everything; Calibrate() and Step() allocate nothing, never throw and never log.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "heft/dynamics/nominal_uncertainty.hpp"
#include "heft/dynamics/regressor.hpp"
#include "heft/estimator/bias_calibration.hpp"
#include "heft/estimator/gating.hpp"
#include "heft/estimator/inertial_filter.hpp"
#include "heft/estimator/measurement.hpp"
#include "heft/estimator/measurement_lowpass.hpp"
#include "heft/estimator/rate_limiter.hpp"
#include "heft/hal/inertial_estimate.hpp"

namespace heft::estimator {

enum class MeasurementChoice {
  kFullWrench,       // Δτ over all nv rows with the foot wrenches (eq. 14)
  kTorqueNullSpace,  // joint torques only, projected into the null space of the contact constraints
  kAuto,             // full when every wrench sensor is valid, else the null-space measurement
};

// Noise of one force/torque cell, isotropic per part (σ of each force / moment component).
struct FtNoise {
  std::string frame;    // one of contact_frames
  double force = 0.0;   // N
  double moment = 0.0;  // N·m
};

// Joint friction identified by heft-identify (--friction), the same model it fits:
// τ_f = coulomb · tanh(q̇ / epsilon) + viscous · q̇, part of the nominal torque τ_nom.
struct JointFriction {
  std::string joint;
  double coulomb = 0.0;  // N·m
  double viscous = 0.0;  // N·m·s/rad
  // The standard deviation of `coulomb` (heft-identify's posterior; 0: known): a joint the
  // identification never saw slide has F_c ≈ 0 and this its prior's size. The static friction a
  // held joint may carry, in the handed covariance, is then √(F_c² + σ²), not F_c.
  double coulomb_sigma = 0.0;
};

struct EstimatorConfig {
  FilterKind filter = FilterKind::kLogCholesky;
  std::vector<std::string> bodies;          // links to estimate (moving bodies of the model)
  std::vector<std::string> contact_frames;  // force/torque sensor frames (floating base)
  MeasurementChoice measurement = MeasurementChoice::kAuto;
  double control_period = 0.003;  // s
  // Measurement noise (standard deviations).
  double joint_torque_sigma = 1.0;          // N·m, every joint row
  std::vector<double> joint_torque_sigmas;  // optional, per joint in v order (overrides the above)
  // A joint torque sensor's scale (gain) uncertainty, relative: each joint row's variance gains
  // (scale · τ_obs)². A strain-gauge sensor calibrated to ~1–2 % of its reading is off by that
  // much on every tick, worst where the torques are large (hips and knees while walking); without
  // it those rows are trusted at joint_torque_sigma whatever they carry. 0: not modelled.
  double joint_torque_scale = 0.0;
  // Optional, per joint in v order (overrides the above): a joint whose torque is a motor current
  // through a torque constant and a gear ratio carries that conversion's relative uncertainty
  // (drivers.joints[].torque_uncertainty); the others joint_torque_scale.
  std::vector<double> joint_torque_scales;
  double base_force_sigma = 10.0;  // N, floating-base force rows
  double base_torque_sigma = 3.0;  // N·m, floating-base torque rows
  // F/T cells' noise: the full-wrench measurement adds Σ J_cᵀ λ_c, so the cells' noise enters the
  // rows' covariance as R = diag(σ²) + Σ_c J_cᵀ diag(σ_f² I, σ_m² I) J_c (J_c the frame's Jacobian
  // in world axes: an isotropic covariance is the same in the sensor's axes and the world's). The
  // rows are then whitened with R's Cholesky factor instead of row by row. Empty: diag(σ²) only.
  std::vector<FtNoise> ft_noise;
  // Noise of the accelerations the measurement is computed with: a comes from central differences
  // of measured velocities (the joints' encoders, the base IMU's gyro) and from the IMU's specific
  // force, so its noise δa enters every row through the mass matrix, δτ = M(q) δa, and the rows'
  // covariance as R += M Σ_a Mᵀ with Σ_a = diag(σ_a²) (per v coordinate: base linear, base angular,
  // joints). The IMU's gyro noise matters most: differenced over 2h = 4 ms, 0.002 rad/s becomes
  // 0.7 rad/s² of base angular acceleration, times the whole robot's inertia on the base rows.
  // Empty (default): not modelled. Otherwise nv entries; the plugin derives them from the
  // sensors' noise (estimator.noise.gyro / accelerometer / joint_velocity) and the difference.
  Eigen::VectorXd acceleration_sigma;
  // Friction of the nominal model (heft-identify's `friction:`; ε its tanh width, 0.01 rad/s).
  std::vector<JointFriction> friction;
  double friction_epsilon = 0.01;
  // A friction joint's row ignores the part of its innovation within its stiction band, ±F_c at
  // rest (Measurement::StictionBand). Off: the model's F_c tanh(q̇/ε) is taken as exact.
  bool stiction_band = true;
  // Low-pass cutoff (Hz) of the full-wrench measurement, both sides: the whitened rows H and
  // residual z pass through the same first-order filter, x_f ← x_f + α (x − x_f) with
  // α = 1 − exp(−2π f_c dt), so H_f π = z_f holds exactly for constant parameters while the
  // noise of the differenced accelerations in H (an errors-in-variables noise, which pulls
  // the estimate of what it multiplies toward zero) is mostly filtered out. The filter keeps
  // R = I (a low-pass of white noise carries the same information per second: its variance
  // α/(2 − α) times its correlation time); the gate reads the NIS of the filtered rows with their
  // own noise, zᵀ(H P Hᵀ + v·1)⁻¹z for the filtered variance v, so the gate's χ² thresholds keep
  // their meaning per tick. The filter is
  // kept twice: the gate judges a copy that takes every tick, so a lasting residual (a load
  // step) builds up in it whole and is gated, then released; the update learns from a copy that
  // holds only the ticks it used, so a spike the gate rejected (a touchdown's) passes no tail,
  // α (1 − α)ᵏ of it, to the ticks after it, below the gate.
  // Both measurements' rows. Restarted on a gap, a change of the rows' count (a contact, a switch
  // of measurement), calibration and reset. 0: off (the paper's per-tick measurement).
  double measurement_lowpass = 0.0;  // Hz
  // Initial standard deviation and process noise (variance per second), per state of one body, in
  // the filter's coordinates (θ for the EKF, π for the KF).
  dynamics::Vector10 initial_sigma = dynamics::Vector10::Constant(0.3);
  dynamics::Vector10 process_noise = dynamics::Vector10::Constant(1e-3);
  // Renewal time of the prior's information (InertialFilter::PullToPrior, every
  // kPriorPullTicks ticks whose measurement was used, with w = ticks·dt/τ): in directions the
  // motion does not excite, the estimate returns to the nominal parameters over about τ of
  // estimation instead of wandering. 0: off (the paper's filter).
  double prior_time_constant = 0.0;  // s
  // The frame the EKF's log-Cholesky coordinates θ (and so initial_sigma, process_noise and the
  // pull) describe a link in (InertialFilter::SetBodyFrame): its own (kLink, the paper's) or one
  // translated to its nominal centre of mass (kCom), where θ's d and s are the inertia about the
  // CoM and t the CoM's displacement, so that a tight prior on the shape holds those quantities.
  // In the link's frame, with the CoM far from the origin (a torso 0.29 m above its waist joint),
  // the inertia about the CoM is a small difference of large terms that every θ moves
  // (docs/estimator.md, "The inertia states at the centre of mass"). The KF ignores it (its state
  // is π).
  enum class ParameterFrame { kLink, kCom };
  ParameterFrame parameter_frame = ParameterFrame::kLink;
  // Per-link overrides of the four above (a link not listed, or a field not set, takes them):
  // what a team knows about each link decides its prior — a torso whose loads change its mass
  // but not its shape ("rigid": tight shape prior, pull), a forearm whose tool has a shape of its
  // own (the paper's loose prior) — estimated together (docs/estimator.md, "Where the data say
  // nothing").
  struct LinkPrior {
    std::string link;  // one of `bodies`, at most once
    std::optional<dynamics::Vector10> initial_sigma, process_noise;
    std::optional<double> prior_time_constant;
    std::optional<ParameterFrame> parameter_frame;
  };
  std::vector<LinkPrior> link_priors;
  // The nominal model's own error, per estimated link (1σ, each an independent error of the
  // nominal: heft-identify's result or the URDF): the mass (relative), each coordinate of the
  // centre of mass (m), and each principal moment of inertia about it (relative). What the data
  // must show before they move the hand-off away from the nominal, and what a calibration residual
  // the estimated links explain is measured against (below). The defaults are stated for a CAD
  // model of a humanoid's link (docs/handoff.md, "The nominal model's uncertainty").
  using NominalUncertainty = dynamics::NominalSigmas;
  NominalUncertainty nominal_uncertainty;
  // The other bodies' nominal error in the estimate's covariance (a consider analysis; Bierman's
  // "consider covariance"): every body not estimated keeps its nominal mass and first moment, whose
  // errors (nominal_uncertainty, per body) bias the estimate through the rows they load alike on
  // every tick, so that averaging does not shrink them. The filter tracks the estimate's
  // sensitivity D to those errors (InertialFilter, "Consider parameters") and the covariance it
  // reports is P + D Dᵀ: what the filter learns is unchanged, what it claims to know is not more
  // than the nominal model allows. false: P alone (the paper's).
  bool consider_nominal = false;
  // With consider_nominal, the gain counts those errors too (the Schmidt–Kalman filter;
  // InertialFilter::set_consider_gain): what the other bodies' nominal error, the sensors' scales
  // and the static friction explain on the rows is not learned as a change of the link, and the
  // gate reads the NIS against the whole innovation covariance. false: the gain is the filter's
  // own (Bierman's consider covariance: the estimate is what it would be without them).
  bool consider_gain = false;
  // The hand-off policy (HandOn): a link's handed parameters leave the nominal only when the data
  // show a change of the link: when the estimate differs from the nominal by more than the
  // estimate's and the nominal's own errors explain, d² = δᵀ (Σ + Σ_nominal)⁻¹ δ beyond χ² at this
  // confidence for the whole π (10 dof) or for its mass and first moment (4 dof); they follow the
  // estimate at the rate limits from then on, and return to the nominal once d² is back below its
  // median (χ² at 0.5). The estimate's jitter and the other bodies' systematic error the filter
  // absorbs (the nominal model's, Σ_nominal) then never reach the controller while nothing is
  // carried. 0: every tick follows the estimate at the rate limits (the paper's).
  double handoff_confidence = 0.0;
  // The time constant (s) over which a departed link's estimate must be back within that median
  // before the link returns to its nominal: back on at least half of its recent ticks (their share
  // low-passed over this time), not on a single one. An estimate that crosses its nominal on the
  // way to a load beyond it (a load swinging about the nominal) is inside for a few ticks and has
  // not returned. 0: the first tick back returns it.
  double handoff_return_after = 0.1;
  // A load's unknown shape in the handed covariance (docs/handoff.md, "A load's shape"): the
  // data see a load's mass and first moment at once, but its second moments only along the
  // motions that excite them; elsewhere the filter's covariance collapses while the estimate
  // drifts thin. A link whose estimate carries Δm = m̂ − m_nominal > 0 more than its nominal gets,
  // in its handed covariance, the spread of that load's second moments about its own centre of
  // mass: each along the link's axes anywhere in [0, Δm R²] (uniform, σ = Δm R² / √12), each
  // product of inertia with half that σ, independent; R is the larger of load_extent and the
  // link's half-extent along its longest axis from its nominal, √(3 λ_max / m) of its second
  // moments about the CoM (a box's half-side). The estimate, its mass and first moment, and the
  // hand-off are not changed. false: the covariance of the estimate alone (the paper's).
  bool load_shape = false;
  // With load_shape, m: the half-extent about its own centre of mass of the largest load a link
  // is expected to carry, along any axis. A load held in a hand reaches beyond a slim forearm
  // link's own box (a 25 cm dumbbell on the H1_2's elbow link, whose box's half-side is 6 cm);
  // 0.15: an object up to 30 cm across (a tool, a dumbbell, a small box). A link's own box counts
  // where it is larger.
  double load_extent = 0.15;
  // With load_shape, the shape a mass change leaves behind (docs/handoff.md, "A load that
  // changed"): the EKF's θ holds the shape per unit mass, so after the mass changes the estimate
  // carries the shape of the mass it was informed at, m_s, until the data inform it again. The
  // handed covariance then counts f = (m̂ − m_s) m₀ / m_s kilograms of a point load anywhere in
  // the link's box (LoadPlacementCovariance; m₀ the nominal mass), m_s the estimate's mass
  // low-passed over this time [s]. 0: not counted. The log-Cholesky filter only.
  double shape_memory = 2.0;
  GatingConfig gating;
  RateLimits rate_limits;
  CalibrationConfig calibration;
  // Divergence guard: an update whose estimate leaves these bounds is thrown away (last good state
  // kept). Mass in [min_mass_fraction · nominal, nominal + max_added_mass]; centre of mass within
  // max_com_distance of the link origin. (A link does not lose most of its own mass: an estimate
  // that does has diverged.)
  double min_mass_fraction = 0.1;
  double max_added_mass = 50.0;   // kg
  double max_com_distance = 1.0;  // m
};

// Estimated link `link`'s prior_time_constant: its link_priors entry's, else the estimator's (0:
// not pulled). The estimator's pull and the measurement's prior columns read it.
double LinkPriorTimeConstant(const EstimatorConfig& config, const std::string& link);

enum class TickStatus : std::uint8_t {
  kCalibrating,      // averaging the residual at the current estimate (nominal at start-up)
  kUpdated,          // measurement used
  kGated,            // measurement rejected by the innovation gate
  kReleased,         // a lasting rejection run: covariance inflated, gate open until caught up
  kRejectedNumeric,  // non-finite or diverging update thrown away; last good state kept
  kInvalidInput,     // non-finite input: nothing done
};

struct TickInput {
  double time = 0.0;                          // s
  Eigen::Ref<const Eigen::VectorXd> q, v, a;  // a consistent (delay-compensated) set
  Eigen::Ref<const Eigen::VectorXd> tau;  // measured generalized force, nv (floating-base rows 0)
  // F_S per contact frame S: [f; n] the environment applies to the robot at So, expressed in S
  // (hal::WrenchSample::wrench, mapped by SampleMapping).
  std::span<const dynamics::Vector6> wrenches;
  std::span<const unsigned char> wrench_valid;  // per contact frame
  std::span<const unsigned char> in_contact;    // per contact frame (for the null-space model)
};

struct TickResult {
  TickStatus status = TickStatus::kInvalidInput;
  hal::MeasurementModel model = hal::MeasurementModel::kNone;
  double nis = 0.0;
  int dof = 0;
  double gamma = 0.0;
  double explained = -1.0;  // on a release check: share of the NIS the bodies explain (gating.hpp)
  bool rate_limited = false;
  bool target_consistent = true;  // the filter's own estimate (KF can leave the consistent set)
  bool target_thin = false;       // consistent but below the margin: handed moved into it (HandOn)
  // The gate has refused every measurement for gating.hold_after (control periods of gated ticks
  // since the last one used): the estimate is held by a residual the estimated links do not
  // explain (an uncalibrated torque offset, a drifting sensor, a load on a link not estimated).
  bool gate_holding = false;
  CalibrationStatus calibration = CalibrationStatus::kCollecting;
};

class InertialEstimator {
 public:
  // Throws dynamics::ModelError / std::invalid_argument naming what is wrong in the configuration.
  InertialEstimator(const dynamics::Model& nominal, const EstimatorConfig& config);

  // Starts (or restarts) the bias calibration: the filter holds its current estimate π̂ and the
  // residual Δτ − Y_est π̂ is averaged (π̂ is nominal at start-up and after ResetFilter). It does
  // not reset the filter: a payload already estimated stays in the estimate, out of the bias. To
  // re-zero from nominal, call ResetFilter first (the plugin's reset command does). A load the
  // estimate does not hold (attached while heft was down, removed after a persisted estimate) is
  // kept out of the bias too: where the averaged residual holds a change of the estimated links
  // beyond the nominal's uncertainty (a χ² test at 0.999 over the directions their regressor sees
  // at the calibration pose: ShowsALoad), the part they explain is left to the filter and
  // calibration_load() says so.
  void StartCalibration() noexcept;
  // Skips calibration (bias zero) and resets the filter to nominal.
  void SkipCalibration() noexcept;
  // Back to nominal parameters and the initial covariance; keeps the bias. The handed parameters
  // are not reset: every hand-off, a reset's included, moves at the rate limit (HandOn).
  void ResetFilter() noexcept;
  // The prior's own error beyond P₀ as the filter's consider columns
  // (InertialFilter::SetPriorError; set-up, after the first ResetFilter).
  void SetPriorError();
  // Starts from given parameters instead of nominal (heftd's persisted estimate, host.persistence):
  // the filter at π0 (10k) with the covariance `cov_pi` (10 × 10k, the hand-off's blocks) times
  // `inflation` (>= 1, so that the filter can relearn), and the handed parameters at π0 at once.
  // Keeps the bias; the gate restarts. Set-up only (allocates). Returns false and changes nothing
  // if π0 is outside the divergence guard's bounds, not physically consistent, or the covariance
  // not positive definite.
  bool StartFrom(const Eigen::Ref<const Eigen::VectorXd>& pi0,
                 const Eigen::Ref<const Eigen::MatrixXd>& cov_pi, double inflation);
  // One control period of the hand-off without a measurement: the handed parameters take one
  // rate-limited step towards the filter's estimate. Step does this itself; a host calls it on
  // the ticks it does not step (estimation disabled or waiting), so a reset reaches the
  // controller at the limited rate. Allocates nothing.
  [[nodiscard]] TickResult HandOn() noexcept;

  // One control tick: the estimator update (real-time; allocates nothing).
  [[nodiscard]] TickResult Step(const TickInput& in) noexcept;

  bool calibrating() const { return calibrating_; }
  // The change of the estimated links (10k) the last calibration's residual showed and left to
  // the filter (zero when it showed none: the whole residual went into the bias).
  const Eigen::VectorXd& calibration_load() const { return calibration_load_; }
  // The friction joints (estimator.friction) the last calibration averaged while they held still
  // (their stiction band open over at least half the window): their static friction, anywhere
  // within ±F_c, went into the bias with the torque sensor's offset, which no average at rest
  // tells apart (docs/estimator.md, "Stiction"). 0 without friction or before a calibration.
  int calibration_held_joints() const { return calibration_held_; }
  // The friction joints the stiction band reads (estimator.friction): what the count above is of.
  int friction_joints() const { return measurement_.friction_joints(); }
  // Each estimated link's nominal uncertainty as a covariance of π (10 × 10k, block per link).
  const Eigen::MatrixXd& nominal_covariance() const { return nominal_cov_; }
  const Eigen::VectorXd& bias() const { return calibrator_.bias(); }
  const BiasCalibrator& calibrator() const { return calibrator_; }
  // Parameters handed on (rate-limited, always consistent), the filter's raw estimate, nominal.
  const Eigen::VectorXd& handed() const { return handed_; }
  const Eigen::VectorXd& estimate() const { return filter_.parameters(); }
  const Eigen::VectorXd& nominal() const { return nominal_; }
  // Covariance of each body's handed π about the truth: 10 × 10k, block k (columns 10k..10k+9)
  // for body k: the filter's covariance of its estimate plus (π_handed − π̂)(π_handed − π̂)ᵀ, the
  // hand-off's known offset from the estimate (held or rate-limited), plus the nominal's own
  // uncertainty while the hand-off policy holds the link at its nominal, plus the unknown shape of
  // a load the estimate carries (EstimatorConfig::load_shape), plus the shape a change of mass
  // left behind (EstimatorConfig::shape_memory).
  const Eigen::MatrixXd& parameter_covariance() const { return cov_pi_; }
  // The filter's own covariance of its estimate π̂, in the same layout.
  const Eigen::MatrixXd& estimate_covariance() const { return cov_estimate_; }
  const InertialFilter& filter() const { return filter_; }
  const InnovationGate& gate() const { return gate_; }
  const dynamics::RegressorSelection& selection() const { return selection_; }
  const dynamics::Model& model() const { return model_; }
  int num_bodies() const { return selection_.size(); }
  std::uint64_t numeric_rejects() const { return numeric_rejects_; }
  std::uint64_t rate_limited_ticks() const { return rate_limited_ticks_; }
  std::uint64_t inconsistent_targets() const { return inconsistent_targets_; }
  // Ticks whose estimate was consistent but thinner than the margin (handed moved into it).
  std::uint64_t thin_targets() const { return thin_targets_; }

 private:
  // Step's stages, in order.
  struct Screened {
    bool lowpass = false;  // the rows' low-pass runs this tick
    double raw_nis = 0.0;  // the tick's own rows' NIS where it exceeds γ (else 0)
    int dof = 0;
    double gamma = 0.0;
  };
  bool ValidInput(const TickInput& in) const noexcept;
  // Which measurement runs this tick; false when it must be the full one and a wrench is bad.
  bool ChooseModel(const TickInput& in, hal::MeasurementModel& model) const noexcept;
  void Calibrate(const TickInput& in, TickResult& res) noexcept;
  // Tells the gate of each contact whose state changed since the last tick or cannot be told this
  // tick (its wrench invalid): where none struck, a rejection run is released sooner (gating.hpp).
  void NoteContacts(const TickInput& in) noexcept;
  // A calibration tick's regressor and consider columns into their averages' sums, projected onto
  // the contacts' null space when `project` (the null-space measurement).
  void AccumulateCalibrationRows(bool project) noexcept;
  bool BuildMeasurement(const TickInput& in, hal::MeasurementModel model) noexcept;
  // The tick's own rows screened, then blended into the low-pass: what the gate judges.
  Screened Screen(const TickInput& in, TickResult& res) noexcept;
  // The gate's decision and the update it lets through; the divergence guard after it. Returns
  // the decision.
  GateDecision GateAndUpdate(const TickInput& in, const Screened& s, TickResult& res) noexcept;
  // A lasting rejection run: the inflated update, kept only if the bodies explain the residual.
  void Release(const TickInput& in, const Screened& s, double nis_gated, TickResult& res) noexcept;
  // The low-pass after the gate's decision, and the prior's renewal on a used tick.
  void AfterUpdate(const Screened& s, GateDecision decision, const TickResult& res) noexcept;
  // The gated ticks since the last used one, and res.gate_holding from them.
  void CountGatedTicks(TickResult& res) noexcept;
  bool Plausible(const Eigen::VectorXd& pi) const noexcept;
  void HandOn(TickResult& res) noexcept;
  // Where link k's hand-off heads for this tick (HandOn's policy). `released`: the tick is the
  // gate's release or its window after, where no return is judged.
  dynamics::Vector10 HandOnTarget(int k, const dynamics::Vector10& estimate,
                                  bool released = false) noexcept;
  // Whether a difference d of one link's π is significant against its covariance S: beyond the
  // χ² thresholds of its mass and first moment (4 dof) or of the whole π (10 dof).
  bool Significant(const Eigen::Matrix<double, 10, 10>& S, const dynamics::Vector10& d,
                   double threshold4, double threshold10) const noexcept;
  // cov_estimate_ from the filter's state (BodyCovariance), then cov_pi_ for the handed π.
  void EstimateCovariance() noexcept;
  void HandedCovariance() noexcept;
  // The mass each link's shape was informed at (shape_memory): low-passed once a tick, set to the
  // estimate's at a reset.
  void RememberShapeMass() noexcept;
  void ResetShapeMemory() noexcept;
  // At the end of a calibration: the part of the averaged residual the estimated links explain
  // beyond the nominal's uncertainty, out of the bias (StartCalibration).
  void SeparateLoad() noexcept;
  // SeparateLoad's test: whether the whitened residual w = W b holds a change of the estimated
  // links beyond their nominal uncertainty, with H = W Ȳ and load_llt_ the factor of
  // S = H Σ_n Hᵀ + 1 (w's covariance when the links have not changed), u = S⁻¹ w.
  bool ShowsALoad(const Eigen::MatrixXd& H, const Eigen::VectorXd& u) noexcept;
  // At the end of a calibration: calibration_held_joints() from the window's held fractions.
  void CountHeldJoints() noexcept;

  dynamics::Model model_;
  EstimatorConfig config_;
  dynamics::RegressorSelection selection_;
  int nv_, n_;
  Measurement measurement_;  // eq. (14)-(15) and the null-space rows (measurement.hpp)
  InertialFilter filter_;    // its consider columns: the measurement's
  InnovationGate gate_;
  BiasCalibrator calibrator_;
  // EstimatorConfig::measurement_lowpass, one per measurement model: a tick on the other (a foot
  // wrench lost for a tick) leaves the other's memory, which a restart would drop at a touchdown.
  std::array<MeasurementLowPass, 2> lowpass_;
  MeasurementLowPass& lowpass(hal::MeasurementModel model) noexcept {
    return lowpass_[model == hal::MeasurementModel::kFullWrench ? 0 : 1];
  }
  void RestartLowPass() noexcept {
    for (MeasurementLowPass& l : lowpass_) l.Restart();
  }
  Eigen::MatrixXd calibration_c_;  // the consider columns averaged with the calibration's residual
  Eigen::MatrixXd calibration_c_tick_;  // one tick's, projected (a robot without F/T cells)
  bool calibrating_ = false;
  Eigen::VectorXd nominal_, handed_;
  Eigen::MatrixXd cov_pi_, cov_estimate_, nominal_cov_;
  Eigen::MatrixXd load_shape_;  // per link, a load's shape covariance per kg² (LoadShapeCovariance)
  // Per link, a point load's placement covariance per kg² (LoadPlacementCovariance), and the mass
  // the estimate's shape was informed at (shape_memory; negative: not yet, ResetShapeMemory).
  Eigen::MatrixXd load_placement_;
  std::vector<double> shape_mass_;
  double shape_alpha_ = 0.0;  // control_period / shape_memory (0: off)
  Eigen::MatrixXd
      cov_filter_;  // the estimate's covariance without the consider part (HandOnTarget)
  // HandOn's policy: whether each link's estimate departed from its nominal; the χ² thresholds
  // of departing (at handoff_confidence) and of returning (the median), 10 and 4 dof.
  // back_share_: each departed link's share of recent ticks within the median, low-passed with
  // back_alpha_ (handoff_return_after); the link returns when it reaches one half.
  std::vector<unsigned char> departed_;
  std::vector<double> back_share_;
  double back_alpha_ = 1.0;
  double handoff_threshold_ = 0.0, handoff_threshold4_ = 0.0;
  double return_threshold_ = 0.0, return_threshold4_ = 0.0;
  // The calibration's load check (SeparateLoad): its result and work space.
  Eigen::VectorXd calibration_load_, load_w_, load_u_;
  Eigen::VectorXd calibration_held_sum_;  // per friction joint: its held fraction, summed
  int calibration_held_ = 0;
  std::vector<double> load_thresholds_;  // χ²_dof(0.999), dof = 0 … 10k
  Eigen::MatrixXd load_g_, load_a_;      // S⁻¹H (nv × 10k), HᵀS⁻¹H (10k × 10k)
  Eigen::VectorXd load_grad_, load_y_;   // HᵀS⁻¹w, scratch
  Eigen::VectorXd load_trial_;           // π̂ + δ
  static constexpr double kLoadPriorScale = 1e4;
  Eigen::MatrixXd load_hs_, load_s_, calibration_y_, calibration_h_;
  Eigen::LLT<Eigen::MatrixXd> load_llt_;
  double release_threshold_ = 0.0;  // NIS reduction a release must achieve (gating.hpp)
  static constexpr int kPriorPullTicks = 10;
  int ticks_since_pull_ = 0;
  // Gated ticks since the last one whose measurement was used (gate_holding).
  std::int64_t gated_ticks_ = 0;
  // Per contact frame its state at the last tick (NoteContacts): 0 or 1, kContactUnknown when its
  // wrench was invalid; empty before the first tick.
  static constexpr unsigned char kContactUnknown = 2;
  std::vector<unsigned char> contact_state_;
  bool contacts_seen_ = false;
  // Per state (10 per body, link_priors applied): σ₀, the random walk, the pull's weight per
  // kPriorPullTicks (0: not pulled).
  Eigen::VectorXd initial_sigma_, process_noise_, pull_weight_;
  bool pull_ = false;
  std::uint64_t numeric_rejects_ = 0, rate_limited_ticks_ = 0, inconsistent_targets_ = 0,
                thin_targets_ = 0;
};

}  // namespace heft::estimator

#include "heft/estimator/inertial_estimator.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "heft/estimator/nominal_uncertainty.hpp"

namespace heft::estimator {

namespace {

// The configuration's checks that need no link: its sizes, periods and time constants.
void CheckSettings(const EstimatorConfig& config, const dynamics::Model& model) {
  const int nv = model.nv;
  if (config.bodies.empty())
    throw std::invalid_argument("estimator.bodies: choose at least one link to estimate");
  if (config.bodies.size() > hal::kMaxEstimatedLinks)
    throw std::invalid_argument("estimator.bodies: at most " +
                                std::to_string(hal::kMaxEstimatedLinks) +
                                " links can be estimated");
  if (!(config.control_period > 0.0))
    throw std::invalid_argument("estimator.control_period must be > 0");
  if (!config.joint_torque_sigmas.empty() &&
      static_cast<int>(config.joint_torque_sigmas.size()) != nv - (model.floating_base ? 6 : 0))
    throw std::invalid_argument("estimator.joint_torque_sigmas: one value per joint (" +
                                std::to_string(nv - (model.floating_base ? 6 : 0)) + ") expected");
  if (!(config.prior_time_constant >= 0.0) || !std::isfinite(config.prior_time_constant))
    throw std::invalid_argument("estimator.prior_time_constant must be >= 0 (0: off)");
  if (!(config.measurement_lowpass >= 0.0) ||
      !(config.measurement_lowpass < 0.5 / config.control_period))
    throw std::invalid_argument(
        "estimator.measurement_lowpass must be >= 0 (0: off) and below the control rate's "
        "Nyquist frequency (" +
        std::to_string(0.5 / config.control_period) + " Hz)");
}

// Each estimated link's prior (estimator.link_priors over the defaults): its initial σ, process
// noise and pull toward the nominal (weight pull_ticks · dt / τ, 0: off) into the n-vectors;
// `pull`: whether any link is pulled. Returns each link's parameter frame.
std::vector<EstimatorConfig::ParameterFrame> ReadLinkPriors(
    const EstimatorConfig& config, int pull_ticks, Eigen::VectorXd& initial_sigma,
    Eigen::VectorXd& process_noise, Eigen::VectorXd& pull_weight, bool& pull) {
  std::vector<EstimatorConfig::ParameterFrame> frames;  // per estimated link
  for (int k = 0; k < static_cast<int>(config.bodies.size()); ++k) {
    dynamics::Vector10 sigma = config.initial_sigma, q = config.process_noise;
    double tau = config.prior_time_constant;
    EstimatorConfig::ParameterFrame frame = config.parameter_frame;
    int found = 0;
    for (const EstimatorConfig::LinkPrior& lp : config.link_priors) {
      if (lp.link != config.bodies[k]) continue;
      ++found;
      sigma = lp.initial_sigma.value_or(sigma);
      q = lp.process_noise.value_or(q);
      tau = lp.prior_time_constant.value_or(tau);
      frame = lp.parameter_frame.value_or(frame);
    }
    frames.push_back(frame);
    if (found > 1)
      throw std::invalid_argument("estimator.link_priors: '" + config.bodies[k] +
                                  "' is given more than once");
    if (!(sigma.array() > 0.0).all() || !sigma.allFinite() || !(q.array() >= 0.0).all() ||
        !q.allFinite() || !(tau >= 0.0) || !std::isfinite(tau))
      throw std::invalid_argument("estimator.link_priors: '" + config.bodies[k] +
                                  "': initial_sigma > 0, process_noise >= 0 and "
                                  "prior_time_constant >= 0 (0: off), all finite");
    initial_sigma.segment<10>(10 * k) = sigma;
    process_noise.segment<10>(10 * k) = q;
    pull_weight.segment<10>(10 * k).setConstant(tau > 0.0 ? pull_ticks * config.control_period / tau
                                                          : 0.0);
    pull = pull || tau > 0.0;
  }
  for (const EstimatorConfig::LinkPrior& lp : config.link_priors)
    if (std::find(config.bodies.begin(), config.bodies.end(), lp.link) == config.bodies.end())
      throw std::invalid_argument("estimator.link_priors: '" + lp.link +
                                  "' is not an estimated link (estimator.bodies)");
  return frames;
}

// Every estimated link's nominal parameters must be consistent, with the margin; the reason a
// link is refused names what it is: massless, inconsistent, or degenerate (on the boundary).
void CheckNominals(const EstimatorConfig& config, const dynamics::RegressorSelection& selection,
                   const Eigen::VectorXd& nominal) {
  for (int k = 0; k < selection.size(); ++k) {
    const dynamics::Vector10 pi = nominal.segment<10>(10 * k);
    const std::string link = "estimator.bodies: the nominal parameters of '" + config.bodies[k];
    if (!pi.allFinite() || !(pi[0] > 0.0))
      throw std::invalid_argument(link +
                                  "' have no positive mass (a massless link cannot be "
                                  "estimated)");
    if (dynamics::HasConsistencyMargin(pi)) continue;
    const dynamics::PseudoInertiaExtremes e = dynamics::PseudoInertiaEigenvalues(pi);
    if (e.min < -dynamics::kDegenerateTolerance * e.max)
      throw std::invalid_argument(link +
                                  "' are not physically consistent (the inertia about the centre "
                                  "of mass is not positive definite or breaks the triangle "
                                  "inequalities)");
    // The set-up (plugin_config.hpp, CheckEstimatedNominals) refuses it first, naming the file.
    throw std::invalid_argument(link +
                                "' are degenerate (a point mass, rod or plate: pseudo-inertia's "
                                "smallest eigenvalue below 1e-6 of its largest); give the link an "
                                "inertia, or inflate it to the margin (robot.repair_inertia)");
  }
}

// dᵀ S⁻¹ d for a symmetric positive definite S (infinite when it is not). No allocation.
template <int N>
double Mahalanobis(const Eigen::Matrix<double, N, N>& S,
                   const Eigen::Matrix<double, N, 1>& d) noexcept {
  const Eigen::LLT<Eigen::Matrix<double, N, N>> llt(S);
  if (llt.info() != Eigen::Success) return std::numeric_limits<double>::infinity();
  const Eigen::Matrix<double, N, 1> w = llt.matrixL().solve(d);
  return w.squaredNorm();
}

}  // namespace

InertialEstimator::InertialEstimator(const dynamics::Model& nominal, const EstimatorConfig& config)
    : model_(nominal),
      config_(config),
      selection_(model_, config.bodies),
      nv_(model_.nv),
      n_(10 * static_cast<int>(config.bodies.size())),
      measurement_(model_, selection_, config),
      filter_(config.filter, static_cast<int>(config.bodies.size()), model_.nv,
              measurement_.consider_columns()),
      gate_(config.gating, model_.nv),
      calibrator_(model_.nv, config.calibration),
      lowpass_(config.measurement_lowpass, config.control_period, model_.nv,
               10 * static_cast<int>(config.bodies.size()) + measurement_.consider_columns()) {
  CheckSettings(config, model_);
  initial_sigma_.resize(n_);
  process_noise_.resize(n_);
  pull_weight_.resize(n_);
  const std::vector<EstimatorConfig::ParameterFrame> frames =
      ReadLinkPriors(config, kPriorPullTicks, initial_sigma_, process_noise_, pull_weight_, pull_);

  if (config.measurement == MeasurementChoice::kTorqueNullSpace && !model_.floating_base &&
      !config.contact_frames.empty())
    throw std::invalid_argument(
        "estimator.measurement: the null-space model needs a floating base");

  nominal_ = selection_.Gather(model_);
  CheckNominals(config, selection_, nominal_);
  for (int k = 0; k < selection_.size(); ++k)
    if (frames[k] == EstimatorConfig::ParameterFrame::kCom)
      filter_.SetBodyFrame(k, nominal_.segment<3>(10 * k + 1) / nominal_[10 * k]);
  handed_ = nominal_;
  cov_pi_ = Eigen::MatrixXd::Zero(10, n_);
  cov_estimate_ = Eigen::MatrixXd::Zero(10, n_);
  cov_filter_ = Eigen::MatrixXd::Zero(10, n_);
  nominal_cov_ = Eigen::MatrixXd::Zero(10, n_);
  const EstimatorConfig::NominalUncertainty& u = config.nominal_uncertainty;
  if (!(u.mass >= 0.0 && u.com >= 0.0 && u.inertia >= 0.0) ||
      !std::isfinite(u.mass + u.com + u.inertia))
    throw std::invalid_argument(
        "estimator.nominal_uncertainty: mass, com and inertia >= 0, finite");
  for (int k = 0; k < selection_.size(); ++k)
    nominal_cov_.middleCols<10>(10 * k) =
        NominalCovariance(nominal_.segment<10>(10 * k), u.mass, u.com, u.inertia);
  if (!(config.handoff_confidence >= 0.0 && config.handoff_confidence < 1.0))
    throw std::invalid_argument("estimator.handoff_confidence must be in [0, 1) (0: off)");
  if (config.handoff_confidence > 0.0) {
    handoff_threshold_ = ChiSquareQuantile(config.handoff_confidence, 10);
    handoff_threshold4_ = ChiSquareQuantile(config.handoff_confidence, 4);
    return_threshold_ = ChiSquareQuantile(0.5, 10);
    return_threshold4_ = ChiSquareQuantile(0.5, 4);
  }
  load_threshold_ = ChiSquareQuantile(0.999, 10);
  departed_.assign(selection_.size(), 0);
  calibration_load_ = Eigen::VectorXd::Zero(n_);
  load_w_.resize(nv_);
  calibration_y_.setZero(nv_, n_);
  calibration_c_.setZero(nv_, measurement_.consider_columns());
  calibration_c_tick_.setZero(nv_, measurement_.consider_columns());
  calibration_h_.setZero(nv_, n_);
  load_u_.resize(nv_);
  load_hs_.resize(nv_, n_);
  load_s_.resize(nv_, nv_);
  load_llt_.compute(Eigen::MatrixXd::Identity(nv_, nv_));  // sized (and its info set) at set-up
  // What a white innovation (no parameter change) can lose at most when P is inflated: its
  // projection on range(H), χ² with rank(H) ≤ n dof (gating.hpp).
  release_threshold_ = ChiSquareQuantile(config.gating.confidence, n_);

  ResetFilter();
}

void InertialEstimator::EstimateCovariance() noexcept {
  for (int k = 0; k < selection_.size(); ++k) {
    filter_.BodyCovariance(k, cov_estimate_.middleCols<10>(10 * k));
    if (measurement_.consider_columns() > 0)
      filter_.BodyCovariance(k, cov_filter_.middleCols<10>(10 * k), false);
    else
      cov_filter_.middleCols<10>(10 * k) = cov_estimate_.middleCols<10>(10 * k);
  }
}

void InertialEstimator::HandedCovariance() noexcept {
  // The handed π's error about the truth is the estimate's plus the known offset between them:
  // E[(π_h − π)(π_h − π)ᵀ] = Σ + δδᵀ with δ = π_h − π̂; while the policy holds the nominal, the
  // nominal's own error too.
  for (int k = 0; k < selection_.size(); ++k) {
    const dynamics::Vector10 d =
        handed_.segment<10>(10 * k) - filter_.parameters().segment<10>(10 * k);
    cov_pi_.middleCols<10>(10 * k) = cov_estimate_.middleCols<10>(10 * k);
    cov_pi_.middleCols<10>(10 * k).noalias() += d * d.transpose();
    // A link handed at its nominal (the policy holds it there) carries the nominal's own error.
    if (handoff_threshold_ > 0.0 && handed_.segment<10>(10 * k) == nominal_.segment<10>(10 * k))
      cov_pi_.middleCols<10>(10 * k) += nominal_cov_.middleCols<10>(10 * k);
  }
}

void InertialEstimator::ResetFilter() noexcept {
  filter_.Reset(nominal_, initial_sigma_);
  EstimateCovariance();
  HandedCovariance();
  // handed_ is left alone: it moves to the new estimate through the rate limiter (HandOn).
  gate_.Reset();
  lowpass_.Restart();
}

bool InertialEstimator::StartFrom(const Eigen::Ref<const Eigen::VectorXd>& pi0,
                                  const Eigen::Ref<const Eigen::MatrixXd>& cov_pi,
                                  double inflation) {
  if (pi0.size() != n_ || !Plausible(pi0)) return false;
  for (int k = 0; k < selection_.size(); ++k)
    if (!dynamics::HasConsistencyMargin(pi0.segment<10>(10 * k))) return false;
  if (!filter_.Reset(pi0, initial_sigma_, cov_pi, inflation)) return false;
  // Handed at once: π0 is what was handed before the restart (host.persistence writes the
  // hand-off), so a controller that kept running sees no step; going through the rate limit from
  // the nominal instead would step its model back to the nominal and ramp it up again.
  handed_ = filter_.parameters();
  EstimateCovariance();
  // The policy's state from π0: a persisted load counts as departed from the nominal at once.
  for (int k = 0; k < selection_.size(); ++k) (void)HandOnTarget(k, handed_.segment<10>(10 * k));
  HandedCovariance();
  gate_.Reset();
  lowpass_.Restart();
  return true;
}

TickResult InertialEstimator::HandOn() noexcept {
  TickResult res;
  res.status = TickStatus::kInvalidInput;
  HandOn(res);
  HandedCovariance();
  return res;
}

dynamics::Vector10 InertialEstimator::HandOnTarget(int k,
                                                   const dynamics::Vector10& estimate) noexcept {
  if (!(handoff_threshold_ > 0.0)) return estimate;  // the policy is off
  // Whether the data show the link changed: the estimate differs from the nominal by more than
  // both errors explain, the estimate's and the nominal's own (a body's systematic error the
  // filter absorbed is not a load). A link that departed stays so until the estimate is back
  // within the median of that distance (hysteresis: no flipping at the threshold).
  const dynamics::Vector10 nominal = nominal_.segment<10>(10 * k);
  // The estimate's own covariance here is the filter's P alone: what the consider analysis adds
  // is the nominal's error as the estimate carries it, which Σ_nominal already counts (once).
  const Eigen::Matrix<double, 10, 10> S =
      cov_filter_.middleCols<10>(10 * k) + nominal_cov_.middleCols<10>(10 * k);
  const dynamics::Vector10 d = estimate - nominal;
  if (!departed_[k] && Significant(S, d, handoff_threshold4_, handoff_threshold_)) departed_[k] = 1;
  if (departed_[k] && !Significant(S, d, return_threshold4_, return_threshold_)) departed_[k] = 0;
  return departed_[k] ? estimate : nominal;
}

bool InertialEstimator::Significant(const Eigen::Matrix<double, 10, 10>& S,
                                    const dynamics::Vector10& d, double threshold4,
                                    double threshold10) const noexcept {
  // The whole π (10 dof), or its mass and first moment alone (4 dof: what a load changes most and
  // a whole-body controller's balance reads), each against its χ²: a load that moves only the mass
  // and the CoM is not diluted by the six inertia dof it leaves as they were.
  const Eigen::Matrix4d S4 = S.topLeftCorner<4, 4>();
  const Eigen::Vector4d d4 = d.head<4>();
  return Mahalanobis<4>(S4, d4) > threshold4 || Mahalanobis<10>(S, d) > threshold10;
}

void InertialEstimator::HandOn(TickResult& res) noexcept {
  // Rate-limited along the segment towards the estimate, only towards targets consistent with the
  // margin (dynamics::kConsistencyMargin). A target that is consistent but thinner (λ_min(J) > 0,
  // below the margin) is handed moved into it (dynamics::InflateToMargin: J + δ·1, δ ≤ 2e-6 λ_max;
  // counted in thin_targets); one that is not consistent at all (the baseline KF's) keeps the
  // link's last handed set, and target_consistent is false (inconsistent_targets). Both ends having
  // the margin, every set on the segment has it (λ_min − ε λ_max is concave in π).
  // Policy (EstimatorConfig::handoff_confidence): a link moves only when the data show a change.
  const Eigen::VectorXd& estimate = filter_.parameters();
  for (int k = 0; k < selection_.size(); ++k) {
    dynamics::Vector10 t = HandOnTarget(k, estimate.segment<10>(10 * k));
    if (!dynamics::HasConsistencyMargin(t)) {
      if (!dynamics::IsPhysicallyConsistent(t, 0.0)) {
        res.target_consistent = false;
        continue;
      }
      t = dynamics::InflateToMargin(t);
      res.target_thin = true;
    }
    const RateLimitResult step =
        RateLimitStep(handed_.segment<10>(10 * k), t, config_.rate_limits, config_.control_period);
    handed_.segment<10>(10 * k) = step.handed;
    res.rate_limited = res.rate_limited || step.fraction < 1.0;
  }
  if (!res.target_consistent) ++inconsistent_targets_;
  if (res.target_thin) ++thin_targets_;
  if (res.rate_limited) ++rate_limited_ticks_;
}

void InertialEstimator::StartCalibration() noexcept {
  calibrator_.Restart();
  calibrating_ = config_.calibration.enabled;
  // The filter keeps its estimate: the residual is averaged against it, so a payload the filter
  // has already found stays in the estimate and does not go into the bias.
}

void InertialEstimator::SkipCalibration() noexcept {
  calibrator_.Restart();
  calibrating_ = false;
  ResetFilter();
}

bool InertialEstimator::BuildMeasurement(const TickInput& in,
                                         hal::MeasurementModel model) noexcept {
  // The bias is the calibration's result: not subtracted while it is being calibrated.
  // The stiction band acts on the innovation: not while calibrating (the bias is averaged from
  // the whole residual).
  const Eigen::VectorXd* bias = calibrating_ ? nullptr : &calibrator_.bias();
  const Eigen::VectorXd* estimate = calibrating_ ? nullptr : &filter_.parameters();
  return model == hal::MeasurementModel::kFullWrench
             ? measurement_.FullWrench(in, bias, estimate)
             : measurement_.TorqueNullSpace(in, bias, estimate);
}

bool InertialEstimator::Plausible(const Eigen::VectorXd& pi) const noexcept {
  if (!pi.allFinite()) return false;
  for (int k = 0; k < selection_.size(); ++k) {
    const double m = pi[10 * k];
    if (filter_.kind() == FilterKind::kLogCholesky && !(m > 0.0)) return false;
    if (!(m <= nominal_[10 * k] + config_.max_added_mass)) return false;
    if (!(m >= config_.min_mass_fraction * nominal_[10 * k])) return false;
    if (m > 0.0 && pi.segment<3>(10 * k + 1).norm() > config_.max_com_distance * m) return false;
  }
  return true;
}

TickResult InertialEstimator::Step(const TickInput& in) noexcept {
  // calibrate → measure → screen → gate → update → hand on.
  TickResult res;
  if (!ValidInput(in) || !ChooseModel(in, res.model)) return res;
  if (calibrating_) lowpass_.Restart();  // the low-pass restarts after
  if (calibrating_) {
    Calibrate(in, res);
    return res;
  }
  if (!BuildMeasurement(in, res.model)) {
    ++numeric_rejects_;
    res.status = TickStatus::kRejectedNumeric;
    return res;
  }
  filter_.Predict(process_noise_, config_.control_period);
  const Screened screened = Screen(in, res);
  GateAndUpdate(in, screened, res);
  AfterUpdate(screened, res);
  if (res.status == TickStatus::kRejectedNumeric) ++numeric_rejects_;
  EstimateCovariance();
  HandOn(res);
  HandedCovariance();
  return res;
}

bool InertialEstimator::ValidInput(const TickInput& in) const noexcept {
  // q, v, a and τ of the model's sizes (τ has the floating base's six rows too), finite; anything
  // else is invalid input and nothing is done (never a read out of bounds, never an update from
  // misaligned rows).
  if (in.q.size() != model_.nq || in.v.size() != model_.nv || in.a.size() != model_.nv ||
      in.tau.size() != model_.nv)
    return false;
  return std::isfinite(in.time) && in.q.allFinite() && in.v.allFinite() && in.a.allFinite() &&
         in.tau.allFinite();
}

bool InertialEstimator::ChooseModel(const TickInput& in,
                                    hal::MeasurementModel& model) const noexcept {
  // A contact frame's wrench counts only when both spans reach it (a short span is a missing
  // wrench, not a read past its end).
  bool wrenches_ok = true;
  for (std::size_t k = 0; k < static_cast<std::size_t>(measurement_.num_contacts()); ++k) {
    wrenches_ok = wrenches_ok && k < in.wrench_valid.size() && k < in.wrenches.size() &&
                  in.wrench_valid[k] && in.wrenches[k].allFinite();
  }
  model = hal::MeasurementModel::kFullWrench;
  if (config_.measurement == MeasurementChoice::kTorqueNullSpace ||
      (config_.measurement == MeasurementChoice::kAuto && !wrenches_ok))
    model = hal::MeasurementModel::kTorqueNullSpace;
  if (measurement_.num_contacts() == 0) {
    model = hal::MeasurementModel::kFullWrench;  // fixed base: joint rows only
    return true;
  }
  return !(model == hal::MeasurementModel::kFullWrench && !wrenches_ok);  // forced full, bad
}

void InertialEstimator::Calibrate(const TickInput& in, TickResult& res) noexcept {
  res.status = TickStatus::kCalibrating;
  HandOn(res);  // a reset estimate reaches the controller at the limited rate meanwhile
  HandedCovariance();
  if (!BuildMeasurement(in, res.model)) return;
  // Without the foot wrenches (the null-space measurement) the residual, the regressor and the
  // consider columns are averaged as projected onto the contacts' null space: the part a contact
  // wrench could carry is unknown, and the null-space rows never see it.
  const bool project = res.model != hal::MeasurementModel::kFullWrench;
  Eigen::VectorXd& r = measurement_.residual();
  r.noalias() -= measurement_.regressor() * filter_.parameters();  // against the current estimate
  if (project) measurement_.ProjectOntoNullSpace(r);
  const double speed = in.v.cwiseAbs().maxCoeff();
  res.calibration = calibrator_.Add(r, speed, in.time);
  // The regressor averaged over the same ticks as the residual (the window restarts with it).
  if (res.calibration == CalibrationStatus::kCollecting ||
      res.calibration == CalibrationStatus::kDone)
    AccumulateCalibrationRows(project);
  // The nominal's error at the calibration pose went into the bias with the residual: the
  // consider columns lose the same average (Measurement::SetConsiderBias).
  if (res.calibration == CalibrationStatus::kDone && calibrator_.samples() > 0) {
    calibration_c_ /= calibrator_.samples();
    measurement_.SetConsiderBias(calibration_c_);
  }
  if (res.calibration == CalibrationStatus::kDone) SeparateLoad();
  if (res.calibration == CalibrationStatus::kDone ||
      res.calibration == CalibrationStatus::kTimedOut)
    calibrating_ = false;
}

void InertialEstimator::AccumulateCalibrationRows(bool project) noexcept {
  if (calibrator_.samples() == 1) {
    calibration_y_.setZero();
    calibration_c_.setZero();
  }
  if (!project) {
    calibration_y_ += measurement_.regressor();
    measurement_.AccumulateConsider(calibration_c_);
    return;
  }
  calibration_h_ = measurement_.regressor();  // scratch here: SeparateLoad sets it anew
  measurement_.ProjectOntoNullSpace(calibration_h_);
  calibration_y_ += calibration_h_;
  calibration_c_tick_.setZero();
  measurement_.AccumulateConsider(calibration_c_tick_);
  measurement_.ProjectOntoNullSpace(calibration_c_tick_);
  calibration_c_ += calibration_c_tick_;
}

void InertialEstimator::SeparateLoad() noexcept {
  // The averaged residual b against the estimate π̂ and the regressor Ȳ averaged over the same
  // ticks, whitened with the last tick's rows (w = W b, H = W Ȳ; a tick's R, not R / N: the average
  // holds the nominal model's systematic error, which averaging does not shrink). The change δ of
  // the estimated links that explains it, with the nominal's uncertainty Σ_n as its prior, and how
  // far it is beyond that uncertainty:
  //   δ = Σ_n Hᵀ u,  u = (H Σ_n Hᵀ + 1)⁻¹ w,  d² = δᵀ Σ_n⁻¹ δ = uᵀ H Σ_n Hᵀ u.
  // Beyond χ²₁₀(0.999) it is a load the estimate does not hold (attached while heft was down, or
  // gone since a persisted estimate): Y δ leaves the bias and the filter finds the load.
  calibration_load_.setZero();
  if (calibrator_.samples() < 1) return;
  calibration_y_ /= calibrator_.samples();  // Ȳ
  calibration_h_ = calibration_y_;
  measurement_.Whiten(calibration_h_);
  load_w_ = calibrator_.bias();
  measurement_.Whiten(load_w_);
  const Eigen::MatrixXd& H = calibration_h_;
  for (int k = 0; k < selection_.size(); ++k)
    load_hs_.middleCols<10>(10 * k).noalias() =
        H.middleCols<10>(10 * k) * nominal_cov_.middleCols<10>(10 * k);
  load_s_.noalias() = load_hs_ * H.transpose();
  load_s_.diagonal().array() += 1.0;
  load_llt_.compute(load_s_);
  if (load_llt_.info() != Eigen::Success) return;
  load_u_ = load_w_;
  load_llt_.solveInPlace(load_u_);
  calibration_load_.noalias() = load_hs_.transpose() * load_u_;  // δ
  load_w_.noalias() = H * calibration_load_;                     // H Σ_n Hᵀ u
  const double d2 = load_u_.dot(load_w_);
  load_w_ = calibrator_.bias();
  measurement_.Whiten(load_w_);
  if (!std::isfinite(d2) || !(d2 > load_threshold_)) {
    calibration_load_.setZero();
    return;
  }
  // Significant: the whole part of b that Y explains leaves the bias (the prior scaled by
  // kLoadPriorScale: the least-squares δ in the Σ_n metric), not the prior-shrunk δ above.
  load_hs_ *= kLoadPriorScale;
  load_s_.noalias() = load_hs_ * H.transpose();
  load_s_.diagonal().array() += 1.0;
  load_llt_.compute(load_s_);
  if (load_llt_.info() != Eigen::Success) {
    calibration_load_.setZero();
    return;
  }
  load_u_ = load_w_;  // still W b
  load_llt_.solveInPlace(load_u_);
  calibration_load_.noalias() = load_hs_.transpose() * load_u_;
  load_w_.noalias() = calibration_y_ * calibration_load_;  // Ȳ δ, out of the bias
  calibrator_.RemoveFromBias(load_w_);
}

InertialEstimator::Screened InertialEstimator::Screen(const TickInput& in,
                                                      TickResult& res) noexcept {
  // The tick's own rows are screened too, before the low-pass blends them in: a spike a tick or
  // two long (a touchdown) reaches the low-passed copy at α(2 − α) of its NIS (0.17 at 5 Hz),
  // under the gate, and would then feed the update for the low-pass's whole memory. The screen
  // factorises only when ỹᵀỹ, its bound, exceeds the gate's threshold (InertialFilter::Nis).
  // Rows dropped inside their stiction band are zeros in H and z: no degree of freedom.
  Screened s;
  s.lowpass = lowpass_.enabled();
  s.dof = std::max(measurement_.rows() - measurement_.dropped_rows(), 0);
  s.gamma = gate_.threshold(std::min(s.dof, nv_));
  res.dof = s.dof;
  res.gamma = s.gamma;
  if (!s.lowpass) return s;
  if (!filter_.Nis(measurement_.H(), measurement_.z(), s.raw_nis, s.gamma) ||
      !(s.raw_nis > s.gamma))
    s.raw_nis = 0.0;  // passes (or unusable: the gate meets the same numbers and says so)
  // The gate judges the copy that takes every tick, the update learns from the copy that holds
  // only the ticks it used (MeasurementLowPass); the gate's NIS is read for its copy's noise.
  lowpass_.Blend(in.time, measurement_.H(), measurement_.z(), measurement_.rows());
  return s;
}

void InertialEstimator::GateAndUpdate(const TickInput& in, const Screened& s,
                                      TickResult& res) noexcept {
  // With the low-pass, the gate reads the gate copy's NIS for its own noise (HGateNis) and the
  // update learns from the used ticks' rows (HUse: the gate's own while the copies agree).
  InertialFilter::Candidate cand;
  const bool ok = s.lowpass ? filter_.Nis(lowpass_.HGate(), lowpass_.zGate(), cand.nis, -1.0,
                                          lowpass_.GateNisScale())
                            : filter_.Evaluate(measurement_.H(), measurement_.z(), cand);
  const double gated_nis = cand.nis;
  cand.nis = std::max(gated_nis, s.raw_nis);
  cand.dof = s.dof;
  res.nis = cand.nis;
  if (!ok) {
    res.status = TickStatus::kRejectedNumeric;
    filter_.RecoverCovariance();  // an overflowed or indefinite P would fail every later tick
    return;
  }
  switch (gate_.Decide(cand.nis, cand.dof, in.time)) {
    case GateDecision::kAccept:
      // The update's copy is often the gate's own, just read by Nis: its staging is reused.
      res.status = (!s.lowpass || filter_.Evaluate(lowpass_.HUse(), lowpass_.zUse(), cand, true)) &&
                           filter_.Apply()
                       ? TickStatus::kUpdated
                       : TickStatus::kRejectedNumeric;
      break;
    case GateDecision::kReject:
      res.status = TickStatus::kGated;
      break;
    case GateDecision::kOpen:
      res.status =
          (!s.lowpass || filter_.Evaluate(lowpass_.HGate(), lowpass_.zGate(), cand, true)) &&
                  filter_.Apply()
              ? TickStatus::kReleased
              : TickStatus::kRejectedNumeric;
      break;
    case GateDecision::kRelease:
      Release(in, s, gated_nis, res);
      break;
  }
  if ((res.status == TickStatus::kUpdated || res.status == TickStatus::kReleased) &&
      !Plausible(filter_.parameters())) {
    filter_.Revert();
    res.status = TickStatus::kRejectedNumeric;
  }
}

void InertialEstimator::Release(const TickInput& in, const Screened& s, double nis_gated,
                                TickResult& res) noexcept {
  // Release only for a residual the estimated bodies can explain (gating.hpp), judged on the rows
  // the release evaluates: a lasting residual builds up whole in the low-passed ones, while one
  // that only the raw screen sees (chatter the low-pass averages out) is nothing a parameter
  // explains. The NIS as the gate reads it, the update on the gate copy's rows with R = 1.
  InertialFilter::Candidate cand;
  filter_.Inflate(config_.gating.inflation, config_.gating.max_covariance_factor);
  double nis = 0.0;
  bool ok = s.lowpass ? filter_.Nis(lowpass_.HGate(), lowpass_.zGate(), nis, -1.0,
                                    lowpass_.GateNisScale())
                      : filter_.Evaluate(measurement_.H(), measurement_.z(), cand);
  if (!s.lowpass) nis = cand.nis;
  const double reduction = ok ? nis_gated - nis : 0.0;
  res.explained = nis_gated > 0.0 ? reduction / nis_gated : 0.0;
  if (ok && reduction >= release_threshold_) {
    res.nis = nis;
    ok = !s.lowpass || filter_.Evaluate(lowpass_.HGate(), lowpass_.zGate(), cand, true);
    res.status = ok && filter_.Apply() ? TickStatus::kReleased : TickStatus::kRejectedNumeric;
    if (res.status == TickStatus::kRejectedNumeric) filter_.UndoInflate();
  } else {
    filter_.UndoInflate();
    gate_.RefuseRelease(in.time);
    res.status = ok ? TickStatus::kGated : TickStatus::kRejectedNumeric;
  }
}

void InertialEstimator::AfterUpdate(const Screened& s, const TickResult& res) noexcept {
  const bool used = res.status == TickStatus::kUpdated || res.status == TickStatus::kReleased;
  if (s.lowpass)
    lowpass_.After(res.status == TickStatus::kUpdated, res.status == TickStatus::kReleased);
  // The prior is renewed with the data: only on ticks whose measurement was used, so a held or
  // gated estimate stays where it is rather than sliding back to nominal.
  if (used && pull_ && ++ticks_since_pull_ >= kPriorPullTicks) {
    ticks_since_pull_ = 0;
    if (!filter_.PullToPrior(pull_weight_)) filter_.RecoverCovariance();
  }
}

}  // namespace heft::estimator

// InertialEstimator's set-up: the configuration's checks, each link's prior and nominal, the
// hand-off policy's thresholds and the scratch the real-time path uses (everything allocated here).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "heft/estimator/inertial_estimator.hpp"
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

}  // namespace

double LinkPriorTimeConstant(const EstimatorConfig& config, const std::string& link) {
  double tau = config.prior_time_constant;
  for (const EstimatorConfig::LinkPrior& lp : config.link_priors)
    if (lp.link == link) tau = lp.prior_time_constant.value_or(tau);
  return tau;
}

namespace {

// Each estimated link's prior (estimator.link_priors over the defaults): its initial σ, process
// noise and pull toward the nominal (weight pull_ticks · dt / τ, 0: off) into the n-vectors;
// `pull`: whether any link is pulled. Returns each link's parameter frame.
std::vector<EstimatorConfig::ParameterFrame> ReadLinkPriors(
    const EstimatorConfig& config, int pull_ticks, Eigen::VectorXd& initial_sigma,
    Eigen::VectorXd& process_noise, Eigen::VectorXd& pull_weight, bool& pull) {
  std::vector<EstimatorConfig::ParameterFrame> frames;  // per estimated link
  for (int k = 0; k < static_cast<int>(config.bodies.size()); ++k) {
    dynamics::Vector10 sigma = config.initial_sigma, q = config.process_noise;
    const double tau = LinkPriorTimeConstant(config, config.bodies[k]);
    EstimatorConfig::ParameterFrame frame = config.parameter_frame;
    int found = 0;
    for (const EstimatorConfig::LinkPrior& lp : config.link_priors) {
      if (lp.link != config.bodies[k]) continue;
      ++found;
      sigma = lp.initial_sigma.value_or(sigma);
      q = lp.process_noise.value_or(q);
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
      lowpass_{MeasurementLowPass(config.measurement_lowpass, config.control_period, model_.nv,
                                  n_ + measurement_.consider_columns()),
               MeasurementLowPass(config.measurement_lowpass, config.control_period, model_.nv,
                                  n_ + measurement_.consider_columns())} {
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
  if (config.consider_nominal && config.consider_gain && measurement_.consider_columns() > 0) {
    // The gain counts every consider parameter that is the same on every tick; the static
    // friction a joint holds now is drawn anew at each hold (and with each load), so it stays in
    // the covariance only.
    Eigen::VectorXd in_gain = Eigen::VectorXd::Ones(measurement_.consider_columns());
    in_gain.segment(measurement_.held_column(), measurement_.stiction_columns()).setZero();
    filter_.set_consider_gain(in_gain);
  }
  handed_ = nominal_;
  cov_pi_ = Eigen::MatrixXd::Zero(10, n_);
  cov_estimate_ = Eigen::MatrixXd::Zero(10, n_);
  cov_filter_ = Eigen::MatrixXd::Zero(10, n_);
  nominal_cov_ = Eigen::MatrixXd::Zero(10, n_);
  const EstimatorConfig::NominalUncertainty& u = config.nominal_uncertainty;
  if (!(u.mass >= 0.0 && u.com >= 0.0 && u.inertia >= 0.0 && u.turn >= 0.0) ||
      !std::isfinite(u.mass + u.com + u.inertia + u.turn))
    throw std::invalid_argument(
        "estimator.nominal_uncertainty: mass, com, inertia and turn >= 0, finite");
  if (!(config.load_extent >= 0.0 && config.load_extent <= 2.0))
    throw std::invalid_argument("estimator.load_extent must be in [0, 2] m");
  load_shape_ = Eigen::MatrixXd::Zero(10, n_);
  for (int k = 0; k < selection_.size(); ++k) {
    nominal_cov_.middleCols<10>(10 * k) = NominalCovariance(nominal_.segment<10>(10 * k), u);
    load_shape_.middleCols<10>(10 * k) =
        LoadShapeCovariance(nominal_.segment<10>(10 * k), config.load_extent);
  }
  if (!(config.gating.hold_after >= 0.0 && config.gating.hold_after <= 600.0))
    throw std::invalid_argument("estimator.gating.hold_after must be in [0, 600] s (0: never)");
  if (!(config.shape_memory >= 0.0 && config.shape_memory <= 60.0))
    throw std::invalid_argument("estimator.shape_memory must be in [0, 60] s (0: off)");
  load_placement_ = Eigen::MatrixXd::Zero(10, n_);
  for (int k = 0; k < selection_.size(); ++k)
    load_placement_.middleCols<10>(10 * k) = LoadPlacementCovariance(nominal_.segment<10>(10 * k));
  shape_mass_.assign(selection_.size(), -1.0);
  if (config.load_shape && config.shape_memory > 0.0 && config.filter == FilterKind::kLogCholesky)
    shape_alpha_ = std::min(1.0, config.control_period / config.shape_memory);
  if (!(config.handoff_confidence >= 0.0 && config.handoff_confidence < 1.0))
    throw std::invalid_argument("estimator.handoff_confidence must be in [0, 1) (0: off)");
  if (config.handoff_confidence > 0.0) {
    handoff_threshold_ = ChiSquareQuantile(config.handoff_confidence, 10);
    handoff_threshold4_ = ChiSquareQuantile(config.handoff_confidence, 4);
    return_threshold_ = ChiSquareQuantile(0.5, 10);
    return_threshold4_ = ChiSquareQuantile(0.5, 4);
  }
  if (!(config.handoff_return_after >= 0.0 && config.handoff_return_after <= 10.0))
    throw std::invalid_argument("estimator.handoff_return_after must be in [0, 10] s");
  back_alpha_ = std::min(1.0, config.control_period / std::max(config.handoff_return_after, 1e-12));
  load_thresholds_.assign(static_cast<std::size_t>(n_) + 1, 0.0);
  for (int dof = 1; dof <= n_; ++dof)
    load_thresholds_[static_cast<std::size_t>(dof)] = ChiSquareQuantile(0.999, dof);
  load_g_.setZero(nv_, n_);
  load_a_.setZero(n_, n_);
  load_grad_.setZero(n_);
  load_y_.setZero(n_);
  load_trial_.setZero(n_);
  departed_.assign(selection_.size(), 0);
  contact_state_.assign(static_cast<std::size_t>(measurement_.num_contacts()), kContactUnknown);
  back_share_.assign(selection_.size(), 0.0);
  calibration_load_ = Eigen::VectorXd::Zero(n_);
  calibration_held_sum_ = Eigen::VectorXd::Zero(measurement_.friction_joints());
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
  SetPriorError();
}

void InertialEstimator::SetPriorError() {
  if (measurement_.prior_columns() == 0) return;
  std::vector<int> pulled;
  for (int k = 0; k < selection_.size(); ++k)
    if (pull_weight_[10 * k] > 0.0) pulled.push_back(k);
  // The prior's covariance is the nominal's stated one (Σ₀, nominal_uncertainty): what the pull's
  // x₀ is actually worth, against P₀ (initial_sigma), what the filter weighs it as.
  if (10 * static_cast<int>(pulled.size()) != measurement_.prior_columns() ||
      !filter_.SetPriorError(measurement_.prior_column(), nominal_cov_, pulled))
    throw std::logic_error("estimator: the prior's error columns do not match the pulled links");
  EstimateCovariance();
  HandedCovariance();
}

}  // namespace heft::estimator

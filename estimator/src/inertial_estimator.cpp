#include "heft/estimator/inertial_estimator.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace heft::est {
namespace {

// Applies Qᵀ of a Householder QR to the rows of dst (no allocation: `work` has dst.cols() entries).
void ApplyQTranspose(const Eigen::HouseholderQR<Eigen::MatrixXd>& qr,
                     Eigen::Ref<Eigen::MatrixXd> dst, Eigen::Ref<Eigen::VectorXd> work) {
  const Eigen::Index n = qr.matrixQR().rows();
  const Eigen::Index k = std::min(qr.matrixQR().rows(), qr.matrixQR().cols());
  for (Eigen::Index i = 0; i < k; ++i) {
    dst.bottomRows(n - i).applyHouseholderOnTheLeft(qr.matrixQR().col(i).tail(n - i - 1),
                                                    qr.hCoeffs()(i), work.data());
  }
}

}  // namespace

InertialEstimator::InertialEstimator(const dyn::Model& nominal, const EstimatorConfig& config)
    : model_(nominal),
      config_(config),
      selection_(model_, config.bodies),
      ws_(model_),
      nv_(model_.nv),
      n_(10 * static_cast<int>(config.bodies.size())),
      filter_(config.filter, static_cast<int>(config.bodies.size()), model_.nv),
      gate_(config.gating, model_.nv),
      calibrator_(model_.nv, config.calibration) {
  if (config.bodies.empty())
    throw std::invalid_argument("estimator.bodies: choose at least one link to estimate");
  if (config.bodies.size() > hal::kMaxEstimatedLinks)
    throw std::invalid_argument("estimator.bodies: at most " +
                                std::to_string(hal::kMaxEstimatedLinks) +
                                " links can be estimated");
  if (!(config.control_period > 0.0))
    throw std::invalid_argument("estimator.control_period must be > 0");
  if (!config.joint_torque_sigmas.empty() &&
      static_cast<int>(config.joint_torque_sigmas.size()) != nv_ - (model_.floating_base ? 6 : 0))
    throw std::invalid_argument("estimator.joint_torque_sigmas: one value per joint (" +
                                std::to_string(nv_ - (model_.floating_base ? 6 : 0)) +
                                ") expected");
  for (const std::string& frame : config.contact_frames)
    contact_frames_.push_back(model_.frame_index(frame));
  if (!(config.prior_time_constant >= 0.0) || !std::isfinite(config.prior_time_constant))
    throw std::invalid_argument("estimator.prior_time_constant must be >= 0 (0: off)");
  if (!(config.friction_epsilon > 0.0))
    throw std::invalid_argument("estimator: friction epsilon must be > 0");
  for (const JointFriction& f : config.friction) {
    int v = -1;
    for (const dyn::Body& b : model_.bodies)
      if (b.joint.type != dyn::JointType::kFree && b.joint.name == f.joint) v = b.v_index;
    if (v < 0)
      throw std::invalid_argument("estimator.friction: '" + f.joint +
                                  "' is not a 1-DoF joint of the model");
    if (!std::isfinite(f.coulomb) || !std::isfinite(f.viscous))
      throw std::invalid_argument("estimator.friction: '" + f.joint + "' has a non-finite value");
    friction_v_.push_back(v);
  }
  ft_force_sigma_.assign(contact_frames_.size(), 0.0);
  ft_moment_sigma_.assign(contact_frames_.size(), 0.0);
  for (const FtNoise& n : config.ft_noise) {
    const auto it = std::find(config.contact_frames.begin(), config.contact_frames.end(), n.frame);
    if (it == config.contact_frames.end())
      throw std::invalid_argument("estimator.noise.ft: '" + n.frame +
                                  "' is not a force/torque cell frame");
    if (!(n.force >= 0.0) || !(n.moment >= 0.0))
      throw std::invalid_argument("estimator.noise.ft: noise of '" + n.frame + "' must be >= 0");
    const auto k = static_cast<std::size_t>(it - config.contact_frames.begin());
    ft_force_sigma_[k] = n.force;
    ft_moment_sigma_[k] = n.moment;
    ft_noise_ = ft_noise_ || n.force > 0.0 || n.moment > 0.0;
  }
  if (config.measurement == MeasurementChoice::kTorqueNullSpace && !model_.floating_base &&
      !contact_frames_.empty())
    throw std::invalid_argument(
        "estimator.measurement: the null-space model needs a floating base");

  nominal_ = selection_.Gather(model_);
  for (int k = 0; k < selection_.size(); ++k)
    if (!dyn::IsPhysicallyConsistent(nominal_.segment<10>(10 * k), 0.0))
      throw std::invalid_argument(
          "estimator.bodies: the nominal parameters of '" + config.bodies[k] +
          "' are not physically consistent (a massless link cannot be estimated)");
  handed_ = nominal_;
  cov_pi_ = Eigen::MatrixXd::Zero(10, n_);
  // What a white innovation (no parameter change) can lose at most when P is inflated: its
  // projection on range(H), χ² with rank(H) ≤ n dof (gating.hpp).
  release_threshold_ = ChiSquareQuantile(config.gating.confidence, n_);

  row_sigma_.resize(nv_);
  const int first_joint = model_.floating_base ? 6 : 0;
  if (model_.floating_base) {
    row_sigma_.head<3>().setConstant(config.base_force_sigma);
    row_sigma_.segment<3>(3).setConstant(config.base_torque_sigma);
  }
  for (int i = first_joint; i < nv_; ++i)
    row_sigma_[i] = config.joint_torque_sigmas.empty()
                        ? config.joint_torque_sigma
                        : config.joint_torque_sigmas[i - first_joint];
  if ((row_sigma_.array() <= 0.0).any())
    throw std::invalid_argument("estimator: noise sigmas must be > 0");

  Y_.resize(nv_, n_);
  H_.resize(nv_, n_);
  tau_nom_.resize(nv_);
  r_.resize(nv_);
  contact_.resize(nv_);
  z_.resize(nv_);
  jac_.resize(6, nv_);
  qy_.resize(nv_, std::max(n_, nv_) + 1);
  rfull_.resize(nv_, nv_);
  if (config.acceleration_sigma.size() != 0) {
    if (config.acceleration_sigma.size() != nv_ ||
        !(config.acceleration_sigma.array() >= 0.0).all() || !config.acceleration_sigma.allFinite())
      throw std::invalid_argument("estimator: acceleration noise needs " + std::to_string(nv_) +
                                  " finite values >= 0");
    acceleration_noise_ = (config.acceleration_sigma.array() > 0.0).any();
    mass_.setZero(nv_, nv_);
    mass_scaled_.setZero(nv_, nv_);
  }
  qr_work_.resize(std::max(n_, nv_) + 1);
  ft_llt_.compute(Eigen::MatrixXd::Identity(nv_, nv_));  // sized (and initialised) once
  const int nc = static_cast<int>(contact_frames_.size());
  // Reserved first: Eigen's decompositions must not be copied before they have computed something
  // (their status member is uninitialised until then).
  jct_.reserve(nc + 1);
  qr_.reserve(nc + 1);
  rproj_.reserve(nc + 1);
  rllt_.reserve(nc + 1);
  for (int c = 0; c <= nc; ++c) {
    const int rows = std::max(nv_ - 6 * c, 1);
    jct_.emplace_back(Eigen::MatrixXd::Zero(nv_, std::max(6 * c, 1)));
    qr_.emplace_back(nv_, std::max(6 * c, 1));
    rproj_.emplace_back(Eigen::MatrixXd::Zero(rows, rows));
    rllt_.emplace_back(rows);
    rllt_.back().compute(Eigen::MatrixXd::Identity(rows, rows));
  }
  ResetFilter();
}

void InertialEstimator::ResetFilter() noexcept {
  filter_.Reset(nominal_, config_.initial_sigma);
  for (int k = 0; k < selection_.size(); ++k)
    filter_.BodyCovariance(k, cov_pi_.middleCols<10>(10 * k));
  // handed_ is left alone: it moves to the new estimate through the rate limiter (HandOn).
  gate_.Reset();
}

bool InertialEstimator::StartFrom(const Eigen::Ref<const Eigen::VectorXd>& pi0,
                                  const Eigen::Ref<const Eigen::MatrixXd>& cov_pi,
                                  double inflation) {
  if (pi0.size() != n_ || !Plausible(pi0)) return false;
  for (int k = 0; k < selection_.size(); ++k)
    if (!dyn::IsPhysicallyConsistent(pi0.segment<10>(10 * k), 0.0)) return false;
  if (!filter_.Reset(pi0, config_.initial_sigma, cov_pi, inflation)) return false;
  for (int k = 0; k < selection_.size(); ++k)
    filter_.BodyCovariance(k, cov_pi_.middleCols<10>(10 * k));
  handed_ = filter_.parameters();  // the controller gets it from the first hand-off on
  gate_.Reset();
  return true;
}

TickResult InertialEstimator::HandOn() noexcept {
  TickResult res;
  res.status = TickStatus::kInvalidInput;
  HandOn(res);
  return res;
}

void InertialEstimator::HandOn(TickResult& res) noexcept {
  // Rate-limited along the segment towards the estimate, only towards consistent targets.
  const Eigen::VectorXd& target = filter_.parameters();
  for (int k = 0; k < selection_.size(); ++k) {
    const dyn::Vector10 t = target.segment<10>(10 * k);
    if (!dyn::IsPhysicallyConsistent(t, 0.0)) {
      res.target_consistent = false;
      continue;
    }
    const RateLimitResult step =
        RateLimitStep(handed_.segment<10>(10 * k), t, config_.rate_limits, config_.control_period);
    handed_.segment<10>(10 * k) = step.handed;
    res.rate_limited = res.rate_limited || step.fraction < 1.0;
  }
  if (!res.target_consistent) ++inconsistent_targets_;
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
  // r = τ_obs − τ_nom (+ Σ Jᵀλ) − bias, and the whitened rows H = W Y_est, z = W r.
  dyn::CondensedRegressor(model_, ws_, selection_, in.q, in.v, in.a, Y_, tau_nom_);
  // The nominal model's friction (heft-identify's model): τ_f = F_c tanh(q̇/ε) + F_v q̇.
  for (std::size_t j = 0; j < friction_v_.size(); ++j) {
    const double qd = in.v[friction_v_[j]];
    tau_nom_[friction_v_[j]] +=
        config_.friction[j].coulomb * std::tanh(qd / config_.friction_epsilon) +
        config_.friction[j].viscous * qd;
  }
  r_ = in.tau - tau_nom_;
  if (model == hal::MeasurementModel::kFullWrench) {
    if (!contact_frames_.empty()) {
      dyn::ContactTerm(model_, ws_, contact_frames_, in.wrenches, contact_);
      r_ += contact_;
    }
    if (!calibrating_) r_ -= calibrator_.bias();
    rows_ = nv_;
    if ((ft_noise_ && !contact_frames_.empty()) || acceleration_noise_) {
      // R = diag(σ²) + Σ_c J_cᵀ Σ_c J_c + M Σ_a Mᵀ, whitened by its Cholesky factor L: H = L⁻¹Y,
      // z = L⁻¹r.
      rfull_.setZero();
      rfull_.diagonal() = row_sigma_.array().square().matrix();
      AddAccelerationNoise(in.q);
      if (ft_noise_ && !contact_frames_.empty()) {
        dyn::ForwardKinematics(model_, ws_, in.q);
        for (std::size_t k = 0; k < contact_frames_.size(); ++k) {
          if (ft_force_sigma_[k] <= 0.0 && ft_moment_sigma_[k] <= 0.0) continue;
          dyn::FrameJacobian(model_, ws_, contact_frames_[k], jac_);
          jac_.topRows<3>() *= ft_force_sigma_[k];
          jac_.bottomRows<3>() *= ft_moment_sigma_[k];
          rfull_.selfadjointView<Eigen::Lower>().rankUpdate(jac_.transpose());
        }
      }
      ft_llt_.compute(rfull_);
      if (ft_llt_.info() != Eigen::Success) return false;
      H_ = Y_;
      z_ = r_;
      ft_llt_.matrixL().solveInPlace(H_);
      ft_llt_.matrixL().solveInPlace(z_);
      return true;
    }
    for (int i = 0; i < nv_; ++i) {
      H_.row(i) = Y_.row(i) / row_sigma_[i];
      z_[i] = r_[i] / row_sigma_[i];
    }
    return true;
  }
  // Null-space model: rows Q₂ᵀ(...) with Q₂ spanning the complement of range(J_cᵀ).
  r_ -= calibrator_.bias();
  dyn::ForwardKinematics(model_, ws_, in.q);
  // c contacts in contact: their J_cᵀ fill the 6c columns of jct_[c], the matrix factorised below.
  int c = 0;
  for (std::size_t k = 0; k < contact_frames_.size(); ++k)
    c += k < in.in_contact.size() && in.in_contact[k];
  int column = 0;
  for (std::size_t k = 0; k < contact_frames_.size() && c > 0; ++k) {
    if (!(k < in.in_contact.size() && in.in_contact[k])) continue;
    dyn::FrameJacobian(model_, ws_, contact_frames_[k], jac_);
    jct_[c].middleCols<6>(6 * column) = jac_.transpose();
    ++column;
  }
  rows_ = nv_ - 6 * c;
  auto qy = qy_.leftCols(n_ + 1);
  qy.leftCols(n_) = Y_;
  qy.col(n_) = r_;
  rfull_.setZero();
  rfull_.diagonal() = row_sigma_.array().square().matrix();
  AddAccelerationNoise(in.q);
  if (c > 0) {
    qr_[c].compute(jct_[c]);
    ApplyQTranspose(qr_[c], qy, qr_work_.head(n_ + 1));
    ApplyQTranspose(qr_[c], rfull_, qr_work_.head(nv_));
    rfull_.transposeInPlace();
    ApplyQTranspose(qr_[c], rfull_, qr_work_.head(nv_));
  }
  auto& llt = rllt_[c];
  llt.compute(rfull_.bottomRightCorner(rows_, rows_));
  if (llt.info() != Eigen::Success) return false;
  H_.topRows(rows_) = qy.bottomRows(rows_).leftCols(n_);
  z_.head(rows_) = qy.bottomRows(rows_).col(n_);
  llt.matrixL().solveInPlace(H_.topRows(rows_));
  llt.matrixL().solveInPlace(z_.head(rows_));
  return true;
}

void InertialEstimator::AddAccelerationNoise(const Eigen::Ref<const Eigen::VectorXd>& q) noexcept {
  if (!acceleration_noise_) return;
  // M Σ_a Mᵀ = (M D)(M D)ᵀ with D = diag(σ_a), both triangles (the null-space path projects the
  // whole matrix from both sides).
  dyn::Crba(model_, ws_, q, mass_);
  mass_scaled_.noalias() = mass_ * config_.acceleration_sigma.asDiagonal();
  rfull_.noalias() += mass_scaled_ * mass_scaled_.transpose();
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
  TickResult res;
  if (!in.q.allFinite() || !in.v.allFinite() || !in.a.allFinite() || !in.tau.allFinite())
    return res;

  // Which measurement model runs this tick.
  bool wrenches_ok = true;
  for (std::size_t k = 0; k < contact_frames_.size(); ++k) {
    wrenches_ok = wrenches_ok && k < in.wrench_valid.size() && in.wrench_valid[k] &&
                  in.wrenches[k].allFinite();
  }
  hal::MeasurementModel model = hal::MeasurementModel::kFullWrench;
  if (config_.measurement == MeasurementChoice::kTorqueNullSpace ||
      (config_.measurement == MeasurementChoice::kAuto && !wrenches_ok))
    model = hal::MeasurementModel::kTorqueNullSpace;
  if (model == hal::MeasurementModel::kFullWrench && !wrenches_ok)
    return res;  // forced full, sensors bad
  if (contact_frames_.empty())
    model = hal::MeasurementModel::kFullWrench;  // fixed base: joint rows only
  res.model = model;

  if (calibrating_) {
    res.status = TickStatus::kCalibrating;
    HandOn(res);  // a reset estimate reaches the controller at the limited rate meanwhile
    if (model != hal::MeasurementModel::kFullWrench) {
      res.calibration = calibrator_.Refuse(in.time);  // needs the foot wrenches
      if (res.calibration == CalibrationStatus::kTimedOut) calibrating_ = false;
      return res;
    }
    if (!BuildMeasurement(in, model)) return res;
    r_.noalias() -= Y_ * filter_.parameters();  // against the current estimate (nominal at start)
    const double speed = in.v.cwiseAbs().maxCoeff();
    res.calibration = calibrator_.Add(r_, speed, in.time);
    if (res.calibration == CalibrationStatus::kDone ||
        res.calibration == CalibrationStatus::kTimedOut)
      calibrating_ = false;
    return res;
  }

  if (!BuildMeasurement(in, model)) {
    ++numeric_rejects_;
    res.status = TickStatus::kRejectedNumeric;
    return res;
  }
  filter_.Predict(config_.process_noise, config_.control_period);
  InertialFilter::Candidate cand;
  const auto H = H_.topRows(rows_);
  const auto z = z_.head(rows_);
  bool ok = filter_.Evaluate(H, z, cand);
  res.nis = cand.nis;
  res.dof = cand.dof;
  res.gamma = gate_.threshold(std::min(std::max(cand.dof, 0), nv_));
  if (!ok) {
    res.status = TickStatus::kRejectedNumeric;
    filter_.RecoverCovariance();  // an overflowed or indefinite P would fail every later tick
  } else {
    switch (gate_.Decide(cand.nis, cand.dof, in.time)) {
      case GateDecision::kAccept:
        res.status = filter_.Apply() ? TickStatus::kUpdated : TickStatus::kRejectedNumeric;
        break;
      case GateDecision::kReject:
        res.status = TickStatus::kGated;
        break;
      case GateDecision::kOpen:
        res.status = filter_.Apply() ? TickStatus::kReleased : TickStatus::kRejectedNumeric;
        break;
      case GateDecision::kRelease: {
        // Release only for a residual the estimated bodies can explain (gating.hpp).
        const double nis_gated = cand.nis;
        filter_.Inflate(config_.gating.inflation, config_.gating.max_covariance_factor);
        ok = filter_.Evaluate(H, z, cand);
        const double reduction = ok ? nis_gated - cand.nis : 0.0;
        res.explained = nis_gated > 0.0 ? reduction / nis_gated : 0.0;
        if (ok && reduction >= release_threshold_) {
          res.nis = cand.nis;
          res.status = filter_.Apply() ? TickStatus::kReleased : TickStatus::kRejectedNumeric;
        } else {
          filter_.UndoInflate();
          gate_.RefuseRelease(in.time);
          res.status = ok ? TickStatus::kGated : TickStatus::kRejectedNumeric;
        }
        break;
      }
    }
    if ((res.status == TickStatus::kUpdated || res.status == TickStatus::kReleased) &&
        !Plausible(filter_.parameters())) {
      filter_.Revert();
      res.status = TickStatus::kRejectedNumeric;
    }
  }
  // The prior is renewed with the data: only on ticks whose measurement was used, so a held or
  // gated estimate stays where it is rather than sliding back to nominal.
  const bool used = res.status == TickStatus::kUpdated || res.status == TickStatus::kReleased;
  if (used && config_.prior_time_constant > 0.0 && ++ticks_since_pull_ >= kPriorPullTicks) {
    ticks_since_pull_ = 0;
    if (!filter_.PullToPrior(kPriorPullTicks * config_.control_period /
                             config_.prior_time_constant))
      filter_.RecoverCovariance();
  }
  if (res.status == TickStatus::kRejectedNumeric) ++numeric_rejects_;

  HandOn(res);
  for (int k = 0; k < selection_.size(); ++k)
    filter_.BodyCovariance(k, cov_pi_.middleCols<10>(10 * k));
  return res;
}

}  // namespace heft::est

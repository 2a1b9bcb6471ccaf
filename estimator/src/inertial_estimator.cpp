// InertialEstimator's tick: calibrate → measure → screen → gate → update → hand on (Step), and
// the filter's resets. Set-up, hand-off and calibration are in the inertial_estimator_*.cpp files.
#include "heft/estimator/inertial_estimator.hpp"

#include <algorithm>
#include <cmath>

namespace heft::estimator {

void InertialEstimator::ResetFilter() noexcept {
  filter_.Reset(nominal_, initial_sigma_);
  ResetShapeMemory();
  EstimateCovariance();
  HandedCovariance();
  // handed_ is left alone: it moves to the new estimate through the rate limiter (HandOn).
  gate_.Reset();
  gated_ticks_ = 0;
  RestartLowPass();
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
  ResetShapeMemory();
  EstimateCovariance();
  // The policy's state from π0: a persisted load counts as departed from the nominal at once.
  std::fill(departed_.begin(), departed_.end(), 0);
  for (int k = 0; k < selection_.size(); ++k) (void)HandOnTarget(k, handed_.segment<10>(10 * k));
  HandedCovariance();
  gate_.Reset();
  gated_ticks_ = 0;
  RestartLowPass();
  return true;
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
  NoteContacts(in);
  if (calibrating_) RestartLowPass();  // the low-pass restarts after
  if (calibrating_) {
    Calibrate(in, res);
    return res;
  }
  if (!BuildMeasurement(in, res.model)) {
    ++numeric_rejects_;
    res.status = TickStatus::kRejectedNumeric;
    CountGatedTicks(res);
    return res;
  }
  filter_.Predict(process_noise_, config_.control_period);
  const Screened screened = Screen(in, res);
  const GateDecision decision = GateAndUpdate(in, screened, res);
  AfterUpdate(screened, decision, res);
  CountGatedTicks(res);
  if (res.status == TickStatus::kRejectedNumeric) ++numeric_rejects_;
  EstimateCovariance();
  HandOn(res);
  RememberShapeMass();
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

void InertialEstimator::NoteContacts(const TickInput& in) noexcept {
  // A contact's state is known only with its wrench (SampleMapping reads the cell's normal force;
  // without a valid cell it reports contact whatever the foot does). No contacts (a fixed base):
  // only the first tick counts, as the start of what the gate knows. The gate reads the events
  // only for its quick release: without it, nothing to do on the tick.
  if (!(config_.gating.quick_release_after > 0.0)) return;
  bool event = !contacts_seen_;
  contacts_seen_ = true;
  for (std::size_t k = 0; k < contact_state_.size(); ++k) {
    const bool known = k < in.wrench_valid.size() && in.wrench_valid[k] && k < in.in_contact.size();
    const unsigned char state =
        known ? static_cast<unsigned char>(in.in_contact[k] != 0) : kContactUnknown;
    event = event || state == kContactUnknown || state != contact_state_[k];
    contact_state_[k] = state;
  }
  if (event) gate_.ContactEvent(in.time);
}

InertialEstimator::Screened InertialEstimator::Screen(const TickInput& in,
                                                      TickResult& res) noexcept {
  // The tick's own rows are screened too, before the low-pass blends them in: a spike a tick or
  // two long (a touchdown) reaches the low-passed copy at α(2 − α) of its NIS (0.17 at 5 Hz),
  // under the gate, and would then feed the update for the low-pass's whole memory. The screen
  // factorises only when ỹᵀỹ, its bound, exceeds the gate's threshold (InertialFilter::Nis).
  // Rows dropped inside their stiction band are zeros in H and z: no degree of freedom.
  Screened s;
  MeasurementLowPass& lpf = lowpass(res.model);
  s.lowpass = lpf.enabled();
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
  lpf.Blend(in.time, measurement_.H(), measurement_.z(), measurement_.rows());
  return s;
}

GateDecision InertialEstimator::GateAndUpdate(const TickInput& in, const Screened& s,
                                              TickResult& res) noexcept {
  // With the low-pass, the gate reads the gate copy's NIS for its own noise (HGateNis) and the
  // update learns from the used ticks' rows (HUse: the gate's own while the copies agree).
  const MeasurementLowPass& lpf = lowpass(res.model);
  InertialFilter::Candidate cand;
  const bool ok = s.lowpass
                      ? filter_.Nis(lpf.HGate(), lpf.zGate(), cand.nis, -1.0, lpf.GateNisScale())
                      : filter_.Evaluate(measurement_.H(), measurement_.z(), cand);
  const double gated_nis = cand.nis;
  cand.nis = std::max(gated_nis, s.raw_nis);
  cand.dof = s.dof;
  res.nis = cand.nis;
  if (!ok) {
    res.status = TickStatus::kRejectedNumeric;
    filter_.RecoverCovariance();  // an overflowed or indefinite P would fail every later tick
    return GateDecision::kReject;
  }
  const GateDecision decision = gate_.Decide(cand.nis, cand.dof, in.time);
  switch (decision) {
    case GateDecision::kAccept:
      // The update's copy is often the gate's own, just read by Nis: its staging is reused.
      res.status =
          (!s.lowpass || filter_.Evaluate(lpf.HUse(), lpf.zUse(), cand, true)) && filter_.Apply()
              ? TickStatus::kUpdated
              : TickStatus::kRejectedNumeric;
      break;
    case GateDecision::kReject:
      res.status = TickStatus::kGated;
      break;
    case GateDecision::kOpen:
      // The window after a release learns from the update's copy, as an accepted tick does: it
      // holds the window's used ticks, not a spike the window refused (InnovationGate).
      res.status =
          (!s.lowpass || filter_.Evaluate(lpf.HUse(), lpf.zUse(), cand, true)) && filter_.Apply()
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
  return decision;
}

void InertialEstimator::Release(const TickInput& in, const Screened& s, double nis_gated,
                                TickResult& res) noexcept {
  // Release only for a residual the estimated bodies can explain (gating.hpp), judged on the rows
  // the release evaluates: a lasting residual builds up whole in the low-passed ones, while one
  // that only the raw screen sees (chatter the low-pass averages out) is nothing a parameter
  // explains. The NIS as the gate reads it, the update on the gate copy's rows with R = 1.
  const MeasurementLowPass& lpf = lowpass(res.model);
  InertialFilter::Candidate cand;
  filter_.Inflate(config_.gating.inflation, config_.gating.max_covariance_factor);
  double nis = 0.0;
  bool ok = s.lowpass ? filter_.Nis(lpf.HGate(), lpf.zGate(), nis, -1.0, lpf.GateNisScale())
                      : filter_.Evaluate(measurement_.H(), measurement_.z(), cand);
  if (!s.lowpass) nis = cand.nis;
  const double reduction = ok ? nis_gated - nis : 0.0;
  res.explained = nis_gated > 0.0 ? reduction / nis_gated : 0.0;
  if (ok && reduction >= release_threshold_) {
    res.nis = nis;
    ok = !s.lowpass || filter_.Evaluate(lpf.HGate(), lpf.zGate(), cand, true);
    res.status = ok && filter_.Apply() ? TickStatus::kReleased : TickStatus::kRejectedNumeric;
    if (res.status == TickStatus::kRejectedNumeric) filter_.UndoInflate();
  } else {
    filter_.UndoInflate();
    gate_.RefuseRelease(in.time);
    res.status = ok ? TickStatus::kGated : TickStatus::kRejectedNumeric;
  }
}

void InertialEstimator::AfterUpdate(const Screened& s, GateDecision decision,
                                    const TickResult& res) noexcept {
  const bool used = res.status == TickStatus::kUpdated || res.status == TickStatus::kReleased;
  // A release makes the two copies one (the gate's copy is the world); a tick of the open window
  // that follows is kept as an accepted one is.
  const bool released = used && decision == GateDecision::kRelease;
  if (s.lowpass) lowpass(res.model).After(used && !released, released);
  // The prior is renewed with the data: only on ticks whose measurement was used, so a held or
  // gated estimate stays where it is rather than sliding back to nominal.
  if (used && pull_ && ++ticks_since_pull_ >= kPriorPullTicks) {
    ticks_since_pull_ = 0;
    if (!filter_.PullToPrior(pull_weight_)) filter_.RecoverCovariance();
  }
}

void InertialEstimator::CountGatedTicks(TickResult& res) noexcept {
  // A used measurement ends the run; a numeric rejection neither ends nor lengthens it.
  if (res.status == TickStatus::kUpdated || res.status == TickStatus::kReleased) gated_ticks_ = 0;
  if (res.status == TickStatus::kGated) ++gated_ticks_;
  const double hold_after = config_.gating.hold_after;
  res.gate_holding =
      hold_after > 0.0 && static_cast<double>(gated_ticks_) * config_.control_period >= hold_after;
}

}  // namespace heft::estimator

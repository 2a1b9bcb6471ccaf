// The estimator's tick (estimator/src/inertial_estimator*.cpp: InertialEstimator::Step and the
// calls around it: StartCalibration, SkipCalibration, ResetFilter, HandOn) on fuzzed TickInputs,
// up to 64 calls per input on an estimator built fresh for the input (the models are loaded once:
// the humanoid of config/robots, fixed and floating). Checks beyond "no crash, no out-of-bounds
// read, no UB", after every call:
//   - q, v, a or τ of a size other than the model's (nq, nv, nv, nv), or holding a NaN or an inf:
//     Step returns kInvalidInput and changes nothing (estimate, handed, bias, calibrating,
//     counters); a wrench span shorter than the contact frames (wrench_valid set or not) is a
//     missing wrench: with `measurement: full` forced the same kInvalidInput, otherwise a tick of
//     the null-space model, never a read past the span; a span longer than the contact frames is
//     either read up to the frames' count or refused as kInvalidInput (changing nothing), never a
//     crash;
//   - a well-formed input is never kInvalidInput: kCalibrating while calibrating, else kUpdated,
//     kGated, kReleased or kRejectedNumeric, and the filter's estimate moves only on kUpdated and
//     kReleased (a gated, rejected or calibrating tick holds it bit for bit);
//   - the handed parameters are finite and physically consistent, each link's pseudo-inertia
//     with at least half the estimator's margin (λ_min ≥ ½ kConsistencyMargin λ_max: the margin
//     HandOn promises, with room for rounding), the filter's estimate and the handed covariance
//     finite; after ResetFilter and SkipCalibration the estimate is the nominal (to rounding).
// A violation aborts with the call's number and what broke; HEFT_FUZZ_TRACE=1 prints every Step.
//
// Input: one byte choosing the configuration (kConfigs below), then calls. Each call is one byte
// (mod 16: 0-9 and 14-15 a Step, 10 StartCalibration, 11 SkipCalibration, 12 ResetFilter, 13
// HandOn), a Step followed by its tick:
//   - time: one byte (mod 16): the clock +period (0-9), the same (10), backwards by 1-256 periods
//     (11, one more byte), a gap of 0-65 s (12, two bytes), a third of a period (14); or for this
//     tick alone NaN, ±inf, 1e300, ... (13, one byte) or any bit pattern (15, eight bytes);
//   - shape: one byte; bit 7 clear: q, v, a, τ of the model's sizes, else one byte per vector
//     (mod 7: the model's size, one less, one more, empty, 300, the other vector's size (nq for
//     nv, nv for nq), nv − 6 (τ without the floating base's rows));
//   - values: one byte of flags and four bytes seeding the generator of q, v, a (a unit base
//     quaternion, joints within ±1.5 rad, velocities ±0.1 or ±3, accelerations ±1 or ±30) and the
//     wrenches (a foot's load about 300 N, or a lifted foot); flag 0x08: τ consistent with them
//     (RNEA minus the contacts' Σ Jᵀλ at the nominal parameters, plus up to ±1 N·m), else random
//     (±50); flag 0x04: one value of q, v, a or τ, or a wrench, replaced (two bytes, then a
//     special value or eight raw bytes);
//   - spans: one byte for the wrench count and one for the wrench_valid and in_contact counts
//     (each mod 6: the contact frames' count (twice as likely), 0, 1, one more, 8), then one byte
//     of wrench_valid flags and one of in_contact flags (bit k for frame k).
// The harness's parts (models, configurations, decoding) are in tick_input_parts.hpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "fuzz_bytes.hpp"
#include "heft/dynamics/dynamics.hpp"
#include "heft/dynamics/inertia.hpp"
#include "heft/dynamics/model.hpp"
#include "heft/estimator/inertial_estimator.hpp"
#include "tick_input_parts.hpp"

namespace {

using heft::dynamics::Model;
using heft::dynamics::Vector10;
using heft::dynamics::Vector6;
using heft::estimator::EstimatorConfig;
using heft::estimator::InertialEstimator;
using heft::estimator::MeasurementChoice;
using heft::estimator::TickInput;
using heft::estimator::TickResult;
using heft::estimator::TickStatus;
using heft::fuzz::Bytes;
using heft::fuzz::Fail;
using heft::fuzz::Generator;
using heft::fuzz::kConfigs;
using heft::fuzz::kMaxCalls;
using heft::fuzz::kMaxSpan;
using heft::fuzz::kPeriod;
using heft::fuzz::LoadModels;
using heft::fuzz::MakeSetup;
using heft::fuzz::Models;
using heft::fuzz::Setup;
using heft::fuzz::SizeFor;
using heft::fuzz::SpanFor;
using heft::fuzz::Special;
using heft::fuzz::Tick;
using heft::fuzz::Trace;

class Harness {
 public:
  explicit Harness(const Setup& setup)
      : model_(*setup.model),
        config_(setup.config),
        est_(model_, config_),
        ws_(model_),
        contacts_(config_.contact_frames.size()) {
    for (const std::string& f : config_.contact_frames) frames_.push_back(model_.frame_index(f));
    contact_tau_.resize(model_.nv);
  }

  void Run(Bytes& in) {
    for (int call = 0; call < kMaxCalls && in.left() > 0; ++call) {
      call_ = call;
      const auto op = in.Take(1) % 16;
      const Snapshot before = Take();
      switch (op) {
        case 10:
          est_.StartCalibration();
          Same(before, /*calibration_may_change=*/true, "StartCalibration");
          if (est_.calibrating() != config_.calibration.enabled)
            Fail(call, "StartCalibration: calibrating() is not calibration.enabled");
          break;
        case 11:
          est_.SkipCalibration();
          if (est_.calibrating()) Fail(call, "SkipCalibration: still calibrating");
          if (!Nominal()) Fail(call, "SkipCalibration: not nominal");
          if (est_.handed() != before.handed) Fail(call, "SkipCalibration moved the handed set");
          break;
        case 12:
          est_.ResetFilter();
          if (!Nominal()) Fail(call, "ResetFilter: not nominal");
          if (est_.handed() != before.handed) Fail(call, "ResetFilter moved the handed set");
          if (est_.calibrating() != before.calibrating || est_.bias() != before.bias)
            Fail(call, "ResetFilter changed the calibration");
          break;
        case 13: {
          const TickResult r = est_.HandOn();
          if (r.status != TickStatus::kInvalidInput) Fail(call, "HandOn: a status of its own");
          if (est_.estimate() != before.estimate) Fail(call, "HandOn moved the estimate");
          break;
        }
        default:
          Step(in, before);
          break;
      }
      Consistent();
    }
  }

 private:
  struct Snapshot {
    Eigen::VectorXd estimate, handed, bias;
    bool calibrating;
    std::uint64_t numeric_rejects, rate_limited, inconsistent, thin;
  };
  Snapshot Take() const {
    return {est_.estimate(),
            est_.handed(),
            est_.bias(),
            est_.calibrating(),
            est_.numeric_rejects(),
            est_.rate_limited_ticks(),
            est_.inconsistent_targets(),
            est_.thin_targets()};
  }
  // Nothing of the estimator's visible state moved (bit for bit).
  void Same(const Snapshot& b, bool calibration_may_change, const char* what) const {
    const bool same = est_.estimate() == b.estimate && est_.handed() == b.handed &&
                      est_.numeric_rejects() == b.numeric_rejects &&
                      est_.rate_limited_ticks() == b.rate_limited &&
                      est_.inconsistent_targets() == b.inconsistent &&
                      est_.thin_targets() == b.thin;
    if (!same) Fail(call_, what);
    if (!calibration_may_change && (est_.calibrating() != b.calibrating || est_.bias() != b.bias))
      Fail(call_, what);
  }

  // The filter's estimate is the nominal, to the rounding of the map to θ and back (at a link's
  // CoM, parameter_frame: com, a translation there and back).
  bool Nominal() const {
    const Eigen::VectorXd& n = est_.nominal();
    return (est_.estimate() - n).cwiseAbs().maxCoeff() <= 1e-9 * n.cwiseAbs().maxCoeff();
  }

  // The invariants of every state: the handed set finite and consistent with (half) the margin,
  // the estimate and the handed covariance finite.
  void Consistent() const {
    const Eigen::VectorXd& handed = est_.handed();
    if (handed.size() != 10 * est_.num_bodies() || !handed.allFinite())
      Fail(call_, "handed parameters not finite");
    for (int k = 0; k < est_.num_bodies(); ++k) {
      const Vector10 pi = handed.segment<10>(10 * k);
      if (!heft::dynamics::IsPhysicallyConsistent(pi, 0.0))
        Fail(call_, "handed parameters not physically consistent");
      const heft::dynamics::PseudoInertiaExtremes e = heft::dynamics::PseudoInertiaEigenvalues(pi);
      if (!(e.min >= 0.5 * e.threshold())) Fail(call_, "handed parameters thinner than the margin");
    }
    if (!est_.estimate().allFinite()) Fail(call_, "estimate not finite");
    if (!est_.parameter_covariance().allFinite()) Fail(call_, "handed covariance not finite");
  }

  // The tick's time: the clock advanced (or set back), or for this tick alone a special value.
  void NextTime(Bytes& in) {
    switch (in.Take(1) % 16) {
      case 10:
        break;
      case 11:
        clock_ -= kPeriod * static_cast<double>(1 + in.Take(1));
        break;
      case 12:
        clock_ += 1e-3 * static_cast<double>(in.Take(2));
        break;
      case 13:
        tick_.time = Special(in);
        return;
      case 14:
        clock_ += kPeriod / 3.0;
        break;
      case 15:
        tick_.time = in.Double();
        return;
      default:
        clock_ += kPeriod;
        break;
    }
    tick_.time = clock_;
  }

  // q, v, a of the model's sizes from the generator: a unit base quaternion, joints within ±1.5
  // rad; the wrenches: a foot carrying ~300 N or lifted.
  void Values(Generator& g, std::uint64_t flags) {
    const int nq = model_.nq, nv = model_.nv;
    q_.resize(nq);
    v_.resize(nv);
    a_.resize(nv);
    for (int i = 0; i < nq; ++i) q_[i] = g.Uniform(1.5);
    if (model_.floating_base) {
      q_.head<3>() *= 0.1;
      Eigen::Vector4d quat(1.0 + g.Uniform(0.3), g.Uniform(0.3), g.Uniform(0.3), g.Uniform(0.3));
      q_.segment<4>(3) = quat.normalized();
    }
    const double vs = (flags & 0x01) ? 3.0 : 0.1, as = (flags & 0x02) ? 30.0 : 1.0;
    for (int i = 0; i < nv; ++i) v_[i] = g.Uniform(vs);
    for (int i = 0; i < nv; ++i) a_[i] = g.Uniform(as);
    for (std::size_t k = 0; k < kMaxSpan; ++k) {
      const bool lifted = g.Uniform(1.0) > 0.6;
      Vector6 w;
      for (int i = 0; i < 6; ++i) w[i] = g.Uniform(i < 3 ? 20.0 : 5.0);
      if (!lifted) w[2] += 300.0;
      tick_.wrenches[k] = w;
    }
  }

  // τ: the nominal model's, consistent with q, v, a and the contacts' wrenches (flag 0x08), or
  // random.
  void Torques(Generator& g, std::uint64_t flags) {
    tau_.resize(model_.nv);
    if (flags & 0x08) {
      heft::dynamics::Rnea(model_, ws_, q_, v_, a_, tau_);
      if (contacts_ > 0) {
        heft::dynamics::ContactTerm(model_, ws_, frames_,
                                    std::span<const Vector6>(tick_.wrenches.data(), contacts_),
                                    contact_tau_);
        tau_ -= contact_tau_;
      }
      for (int i = 0; i < model_.nv; ++i) tau_[i] += g.Uniform(1.0);
    } else {
      for (int i = 0; i < model_.nv; ++i) tau_[i] = g.Uniform(50.0);
    }
  }

  // The tick's vectors at the chosen sizes: the generated values where they reach, zeros past
  // them.
  static void Sized(const Eigen::VectorXd& from, int size, Eigen::VectorXd& out) {
    out = Eigen::VectorXd::Zero(size);
    const auto n = std::min<Eigen::Index>(size, from.size());
    out.head(n) = from.head(n);
  }

  void Step(Bytes& in, const Snapshot& before) {
    NextTime(in);
    const int nq = model_.nq, nv = model_.nv;
    int sizes[4] = {nq, nv, nv, nv};
    if (in.Take(1) & 0x80) {
      sizes[0] = SizeFor(in.Take(1), nq, nv, nv);
      for (int i = 1; i < 4; ++i) sizes[i] = SizeFor(in.Take(1), nv, nq, nv);
    }
    const std::uint64_t flags = in.Take(1);
    Generator g(in.Take(4));
    Values(g, flags);
    Torques(g, flags);
    Sized(q_, sizes[0], tick_.q);
    Sized(v_, sizes[1], tick_.v);
    Sized(a_, sizes[2], tick_.a);
    Sized(tau_, sizes[3], tick_.tau);
    Spans(in);
    if (flags & 0x04) ReplaceOne(in);  // one value replaced by a special one

    if (Trace())  // before the call: the last line names the input of a crash inside Step
      std::fprintf(stderr, "call %d: Step t=%g sizes %d %d %d %d spans %zu %zu %zu\n", call_,
                   tick_.time, sizes[0], sizes[1], sizes[2], sizes[3], tick_.n_wrenches,
                   tick_.n_valid, tick_.n_contact);
    const TickResult r = est_.Step(tick_.View());
    if (Trace())
      std::fprintf(stderr, "  status %d model %d nis %g\n", static_cast<int>(r.status),
                   static_cast<int>(r.model), r.nis);

    Decided(before, r);
  }

  // The spans' lengths (the wrenches, the wrench_valid and in_contact flags) and their flags.
  void Spans(Bytes& in) {
    const auto counts = in.Take(1), flag_counts = in.Take(1);
    tick_.n_wrenches = SpanFor(counts, contacts_);
    tick_.n_valid = SpanFor(flag_counts, contacts_);
    tick_.n_contact = SpanFor(flag_counts >> 3, contacts_);
    const auto valid = in.Take(1), contact = in.Take(1);
    for (std::size_t k = 0; k < kMaxSpan; ++k) {
      tick_.valid[k] = static_cast<unsigned char>((valid >> k) & 1u);
      tick_.contact[k] = static_cast<unsigned char>((contact >> k) & 1u);
    }
  }

  // One value of q, v, a or τ, or of a wrench, replaced by a special one.
  void ReplaceOne(Bytes& in) {
    const auto where = in.Take(1), index = in.Take(1);
    const double value = Special(in);
    Eigen::VectorXd* vectors[4] = {&tick_.q, &tick_.v, &tick_.a, &tick_.tau};
    if (where % 5 < 4) {
      Eigen::VectorXd& target = *vectors[where % 5];
      if (target.size() > 0) target[static_cast<Eigen::Index>(index % target.size())] = value;
    } else {
      tick_.wrenches[index % kMaxSpan][static_cast<Eigen::Index>((index >> 3) % 6)] = value;
    }
  }

  // What Step must have decided, from the input alone.
  void Decided(const Snapshot& before, const TickResult& r) const {
    const int nq = model_.nq, nv = model_.nv;
    const bool well_sized = tick_.q.size() == nq && tick_.v.size() == nv && tick_.a.size() == nv &&
                            tick_.tau.size() == nv;
    const bool finite = well_sized && std::isfinite(tick_.time) && tick_.q.allFinite() &&
                        tick_.v.allFinite() && tick_.a.allFinite() && tick_.tau.allFinite();
    bool wrenches_ok = true;
    for (std::size_t k = 0; k < contacts_; ++k)
      wrenches_ok = wrenches_ok && k < tick_.n_wrenches && k < tick_.n_valid && tick_.valid[k] &&
                    tick_.wrenches[k].allFinite();
    const bool forced_full = contacts_ > 0 && config_.measurement == MeasurementChoice::kFullWrench;
    if (!finite || (forced_full && !wrenches_ok)) {
      if (r.status != TickStatus::kInvalidInput)
        Fail(call_, well_sized ? "a non-finite input or a missing wrench was not kInvalidInput"
                               : "a vector of the wrong size was not kInvalidInput");
      Same(before, false, "kInvalidInput changed the estimator's state");
      return;
    }
    // Spans longer than the contact frames: their extra entries may be ignored or the tick refused
    // (TickInput does not say), refused then changing nothing.
    const bool longer_spans =
        tick_.n_wrenches > contacts_ || tick_.n_valid > contacts_ || tick_.n_contact > contacts_;
    if (r.status == TickStatus::kInvalidInput && longer_spans) {
      Same(before, false, "a refused tick with longer spans changed the estimator's state");
      return;
    }
    if (r.status == TickStatus::kInvalidInput) Fail(call_, "a well-formed input was refused");
    if (before.calibrating != (r.status == TickStatus::kCalibrating))
      Fail(call_, "kCalibrating and calibrating() disagree");
    if (contacts_ > 0 && !forced_full && !wrenches_ok &&
        r.model != heft::hal::MeasurementModel::kTorqueNullSpace)
      Fail(call_, "a missing wrench did not fall back to the null-space model");
    const bool used = r.status == TickStatus::kUpdated || r.status == TickStatus::kReleased;
    if (!used && est_.estimate() != before.estimate)
      Fail(call_, "the estimate moved on a tick that used no measurement");
  }

  const Model& model_;
  EstimatorConfig config_;
  InertialEstimator est_;
  heft::dynamics::Workspace ws_;
  std::size_t contacts_;
  std::vector<int> frames_;
  Eigen::VectorXd q_, v_, a_, tau_, contact_tau_;
  Tick tick_;
  double clock_ = 0.0;  // s: the times of the ticks that are not special
  int call_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Models& models = LoadModels();
  Bytes in(data, size);
  const Setup setup = MakeSetup(static_cast<int>(in.Take(1) % kConfigs), models);
  Harness harness(setup);
  harness.Run(in);
  return 0;
}
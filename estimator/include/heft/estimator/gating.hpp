// Innovation gating (Foster et al. eq. 22) with a release policy for lasting load changes.
//
// A measurement is used only if its NIS = ỹᵀS⁻¹ỹ is at most γ. γ is either given raw or set as a χ²
// confidence for the measurement's degrees of freedom (γ = χ²⁻¹(confidence; dof)). Gating alone
// would lock out a real, lasting load change (every innovation after it is large), so: when
// measurements have been rejected without interruption for longer than `release_after`, the gate
// releases — the caller inflates the covariance once — and then stays open (every measurement used)
// for `open_for` while the filter catches up; releases are counted.
//
// A lasting residual is not always a load change: friction or a drifting sensor on a row the
// estimated bodies barely affect gives one too, and releasing on it only inflates P in directions
// no measurement renews. So the caller confirms a release: it re-evaluates the measurement with
// the inflated covariance and releases only when that lowers the NIS by more than a white
// innovation could: with no parameter change, the most any covariance can take off the NIS is the
// innovation's projection on range(H), χ² with rank(H) ≤ n degrees of freedom (n states), so the
// reduction must exceed χ²⁻¹(confidence; n). Otherwise it calls RefuseRelease and the gate goes on
// rejecting, checking again after another `release_after`. The inflation itself is capped
// (max_covariance_factor × P₀ per state), so even released cycles cannot grow P without bound.
// The open window is for the residual the release confirmed: a tick inside it whose NIS exceeds
// what that residual reads at the gate's confidence (the release's NIS plus z times its own spread,
// a noncentral χ²'s) is a new outlier (a walking robot's touchdown), rejected and counted
// (refused_in_window), and the window goes on; as the filter catches up the NIS falls.
// A gate that refuses every measurement for `hold_after` holds the estimate as surely as a dead
// sensor does; the estimator says so (TickResult::gate_holding) until a measurement is used again.
//
// What `release_after` waits out is a contact's impulse (the paper's touchdown spikes). Where no
// contact can have struck — every contact's state known and unchanged since `release_after` before
// the rejection run began (the caller reports each change and each tick it cannot tell:
// ContactEvent), or a fixed base with no contacts at all — the run's first check comes after
// `quick_release_after` instead: a load grasped by a still robot reaches the estimate in a few
// ticks rather than after the arm has fallen for 0.1 s — provided the run's NIS is not decaying
// (at least its first tick's): a lasting change builds up in a low-passed copy, while a spike's
// tail there, which outlives the spike, only decays. A refused check waits `release_after` for the
// next one, as before.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace heft::estimator {

// Inverse of the χ² cumulative distribution (p in (0, 1), dof ≥ 1). Set-up use.
double ChiSquareQuantile(double p, int dof);
// The χ² cumulative distribution P(X ≤ x).
double ChiSquareCdf(double x, int dof);

struct GatingConfig {
  bool enabled = true;
  double confidence = 0.999;   // χ² confidence; used when gamma <= 0
  double gamma = 0.0;          // raw threshold; > 0 overrides the confidence
  double release_after = 0.1;  // s of uninterrupted rejections before the gate releases
  // s of them when no contact can have struck (above; opt-in, docs/estimator.md, "The gate's quick
  // release"); 0, or not below release_after: release_after always
  double quick_release_after = 0.0;
  double inflation = 10.0;               // covariance factor applied on release
  double open_for = 0.3;                 // s the gate stays open after a release
  double max_covariance_factor = 100.0;  // inflation never takes a variance above this × P₀
  // s of gated ticks with none used in between after which the estimate counts as held
  // (TickResult::gate_holding; the plugin reports state holding, reason "gated"); 0: never.
  double hold_after = 2.0;
};

enum class GateDecision {
  kAccept,   // within the gate
  kReject,   // outside the gate
  kRelease,  // a lasting rejection run ends: inflate the covariance, use the measurement
  kOpen,     // after a release, until the filter has caught up: use the measurement
};

class InnovationGate {
 public:
  // Precomputes γ for every dof up to max_dof (allocates).
  InnovationGate(const GatingConfig& config, int max_dof);
  double threshold(int dof) const { return thresholds_[dof]; }
  GateDecision Decide(double nis, int dof, double time) noexcept;
  // The last kRelease came after quick_release_after.
  bool released_quick() const { return released_quick_; }
  // The rejection run's wait before its release check, at a tick of NIS `nis`: quick_release_after
  // when no contact can have struck, no check of the run was refused and the run's NIS is not
  // decaying (at least its first tick's), release_after otherwise.
  double ReleaseAfter(double nis) const noexcept;
  void Reset() noexcept {
    rejecting_since_ = -1.0;
    open_since_ = -1.0;
    open_limit_ = 0.0;
    refused_in_run_ = false;
  }
  // A contact's state changed at `time`, or could not be told (its wrench invalid): a rejection run
  // that begins within release_after of it waits release_after.
  void ContactEvent(double time) noexcept { last_contact_event_ = time; }
  bool open() const { return open_since_ >= 0.0; }
  // The caller refused the release Decide just returned (the residual is not one the estimated
  // bodies explain): the gate stays closed and the rejection run restarts at `time`.
  void RefuseRelease(double time) noexcept {
    open_since_ = -1.0;
    rejecting_since_ = time;
    refused_in_run_ = true;
    --releases_;
    ++rejected_;
    ++refused_releases_;
  }
  std::uint64_t refused_releases() const { return refused_releases_; }
  // Ticks rejected inside an open window, their NIS above its limit (the release's and spread).
  std::uint64_t refused_in_window() const { return refused_in_window_; }

  std::uint64_t rejected() const { return rejected_; }
  std::uint64_t releases() const { return releases_; }
  std::uint64_t accepted() const { return accepted_; }

 private:
  GatingConfig config_;
  std::vector<double> thresholds_;
  double rejecting_since_ = -1.0;
  double open_since_ = -1.0;
  double open_limit_ = 0.0;  // the largest NIS the open window takes (its release's and spread)
  double window_z_ = 0.0;    // the one-sided normal quantile at the gate's confidence
  double last_contact_event_ = -std::numeric_limits<double>::infinity();
  bool refused_in_run_ = false;  // a release of this rejection run was refused: release_after
  double run_first_nis_ = 0.0;   // the NIS of the run's first tick
  bool released_quick_ = false;
  std::uint64_t rejected_ = 0, releases_ = 0, accepted_ = 0, refused_releases_ = 0,
                refused_in_window_ = 0;
};

}  // namespace heft::estimator

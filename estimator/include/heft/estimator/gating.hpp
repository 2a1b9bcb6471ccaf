// Innovation gating (Foster et al. eq. 22) with a release policy for lasting load changes.
//
// A measurement is used only if its NIS = ỹᵀS⁻¹ỹ is at most γ. γ is either given raw or set as a χ²
// confidence for the measurement's degrees of freedom (γ = χ²⁻¹(confidence; dof)). Gating alone
// would lock out a real, lasting load change (every innovation after it is large), so: when
// measurements have been rejected without interruption for longer than `release_after`, the gate
// releases — the caller inflates the covariance once — and then stays open (every measurement used)
// for `open_for` while the filter catches up; releases are counted.
#pragma once

#include <cstdint>
#include <vector>

namespace heft::est {

// Inverse of the χ² cumulative distribution (p in (0, 1), dof ≥ 1). Set-up use.
double ChiSquareQuantile(double p, int dof);
// The χ² cumulative distribution P(X ≤ x).
double ChiSquareCdf(double x, int dof);

struct GatingConfig {
  bool enabled = true;
  double confidence = 0.999;   // χ² confidence; used when gamma <= 0
  double gamma = 0.0;          // raw threshold; > 0 overrides the confidence
  double release_after = 0.1;  // s of uninterrupted rejections before the gate releases
  double inflation = 10.0;     // covariance factor applied on release
  double open_for = 0.3;       // s the gate stays open after a release
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
  void Reset() noexcept {
    rejecting_since_ = -1.0;
    open_since_ = -1.0;
  }
  bool open() const { return open_since_ >= 0.0; }

  std::uint64_t rejected() const { return rejected_; }
  std::uint64_t releases() const { return releases_; }
  std::uint64_t accepted() const { return accepted_; }

 private:
  GatingConfig config_;
  std::vector<double> thresholds_;
  double rejecting_since_ = -1.0;
  double open_since_ = -1.0;
  std::uint64_t rejected_ = 0, releases_ = 0, accepted_ = 0;
};

}  // namespace heft::est

#include "heft/estimator/gating.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace heft::estimator {
namespace {

// Regularised lower incomplete gamma P(a, x): series for x < a + 1, continued fraction otherwise.
double GammaP(double a, double x) {
  if (x <= 0.0) return 0.0;
  const double log_prefix = a * std::log(x) - x - std::lgamma(a);
  if (x < a + 1.0) {
    double term = 1.0 / a, sum = term;
    for (int n = 1; n < 1000 && std::abs(term) > 1e-16 * std::abs(sum); ++n) {
      term *= x / (a + n);
      sum += term;
    }
    return sum * std::exp(log_prefix);
  }
  // Lentz's method for the continued fraction of Q(a, x).
  const double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 1000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::abs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1.0) < 1e-16) break;
  }
  return 1.0 - std::exp(log_prefix) * h;
}

}  // namespace

double ChiSquareCdf(double x, int dof) {
  return GammaP(0.5 * dof, 0.5 * x);
}

double ChiSquareQuantile(double p, int dof) {
  if (!(p > 0.0 && p < 1.0) || dof < 1)
    throw std::invalid_argument("chi-square quantile needs 0 < p < 1 and dof >= 1 (got p = " +
                                std::to_string(p) + ", dof = " + std::to_string(dof) + ")");
  // Bracket and bisect on the CDF (monotone); 200 halvings reach double precision.
  double lo = 0.0, hi = dof + 10.0 * std::sqrt(2.0 * dof) + 50.0;
  while (ChiSquareCdf(hi, dof) < p) hi *= 2.0;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (ChiSquareCdf(mid, dof) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

InnovationGate::InnovationGate(const GatingConfig& config, int max_dof) : config_(config) {
  thresholds_.assign(max_dof + 1, std::numeric_limits<double>::infinity());
  // The one-sided normal quantile at the gate's confidence: z² is χ²₁'s quantile at 2p − 1.
  const double two_sided = 2.0 * config.confidence - 1.0;
  window_z_ = two_sided > 0.0 && two_sided < 1.0 ? std::sqrt(ChiSquareQuantile(two_sided, 1)) : 0.0;
  if (!config.enabled) return;
  for (int dof = 1; dof <= max_dof; ++dof)
    thresholds_[dof] =
        config.gamma > 0.0 ? config.gamma : ChiSquareQuantile(config.confidence, dof);
}

double InnovationGate::ReleaseAfter(double nis) const noexcept {
  const double quick = config_.quick_release_after;
  const bool no_contact_struck = last_contact_event_ < rejecting_since_ - config_.release_after;
  return quick > 0.0 && quick < config_.release_after && !refused_in_run_ &&
                 nis >= run_first_nis_ && no_contact_struck
             ? quick
             : config_.release_after;
}

GateDecision InnovationGate::Decide(double nis, int dof, double time) noexcept {
  const double gamma = dof >= 0 && dof < static_cast<int>(thresholds_.size())
                           ? thresholds_[dof]
                           : std::numeric_limits<double>::infinity();
  if (open_since_ >= 0.0) {
    if (time - open_since_ < config_.open_for) {
      if (nis <= open_limit_) return GateDecision::kOpen;
      ++rejected_;  // larger than the residual the window is for: a new outlier
      ++refused_in_window_;
      return GateDecision::kReject;
    }
    open_since_ = -1.0;  // normal gating again
  }
  if (nis <= gamma) {
    rejecting_since_ = -1.0;
    refused_in_run_ = false;
    ++accepted_;
    return GateDecision::kAccept;
  }
  if (rejecting_since_ < 0.0) {
    rejecting_since_ = time;
    run_first_nis_ = nis;
  }
  const double wait = ReleaseAfter(nis);
  if (time - rejecting_since_ >= wait) {
    released_quick_ = wait < config_.release_after;
    rejecting_since_ = -1.0;
    refused_in_run_ = false;
    open_since_ = time;
    // The released residual's NIS and its own spread: a residual of noncentrality λ on `dof`
    // rows reads NIS ~ χ'²(dof, λ), mean dof + λ and variance 2 (dof + 2λ), so with λ = nis − dof
    // the window allows the upper quantile at the gate's confidence of the same residual.
    open_limit_ = nis + window_z_ * std::sqrt(2.0 * std::max(2.0 * nis - dof, 0.0));
    ++releases_;
    return GateDecision::kRelease;
  }
  ++rejected_;
  return GateDecision::kReject;
}

}  // namespace heft::estimator

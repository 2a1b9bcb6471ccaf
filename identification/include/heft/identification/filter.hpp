// Zero-phase low-pass filtering for offline identification: a second-order Butterworth section
// (bilinear transform with pre-warping) run forward and backward, so the result has no phase lag
// and the magnitude response |H|² (−6 dB at the cut-off).
#pragma once

#include <vector>

namespace heft::identification {

// y[n] = b0 x[n] + b1 x[n−1] + b2 x[n−2] − a1 y[n−1] − a2 y[n−2]
struct Biquad {
  double b0 = 1, b1 = 0, b2 = 0, a1 = 0, a2 = 0;
};

// Throws std::invalid_argument unless 0 < cutoff < rate / 2.
Biquad ButterworthLowPass(double cutoff_hz, double rate_hz);

// One causal pass, starting from the steady state for the first input (no start-up transient).
void FilterForward(const Biquad& f, std::vector<double>& x);

// Forward-backward filtering with odd-reflection padding at both ends. Sequences shorter than two
// samples are left unchanged.
void FiltFilt(const Biquad& f, std::vector<double>& x, int pad = -1);

}  // namespace heft::identification

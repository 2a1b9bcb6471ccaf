#include "heft/identification/filter.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace heft::identification {

Biquad ButterworthLowPass(double cutoff_hz, double rate_hz) {
  if (!(cutoff_hz > 0.0 && rate_hz > 0.0 && cutoff_hz < 0.5 * rate_hz))
    throw std::invalid_argument("low-pass cut-off must be in (0, rate/2): cut-off " +
                                std::to_string(cutoff_hz) + " Hz, rate " + std::to_string(rate_hz) +
                                " Hz");
  const double k = std::tan(M_PI * cutoff_hz / rate_hz);  // pre-warped analog frequency (×T/2)
  const double q = std::sqrt(2.0);                        // 1/Q of the Butterworth pair
  const double norm = 1.0 / (1.0 + q * k + k * k);
  Biquad f;
  f.b0 = k * k * norm;
  f.b1 = 2.0 * f.b0;
  f.b2 = f.b0;
  f.a1 = 2.0 * (k * k - 1.0) * norm;
  f.a2 = (1.0 - q * k + k * k) * norm;
  return f;
}

void FilterForward(const Biquad& f, std::vector<double>& x) {
  if (x.empty()) return;
  // Transposed direct form II, initial state = steady state of a constant input x[0].
  const double gain = (f.b0 + f.b1 + f.b2) / (1.0 + f.a1 + f.a2);
  const double y0 = gain * x[0];
  double z2 = f.b2 * x[0] - f.a2 * y0;
  double z1 = f.b1 * x[0] - f.a1 * y0 + z2;
  for (double& s : x) {
    const double in = s;
    const double y = f.b0 * in + z1;
    z1 = f.b1 * in - f.a1 * y + z2;
    z2 = f.b2 * in - f.a2 * y;
    s = y;
  }
}

void FiltFilt(const Biquad& f, std::vector<double>& x, int pad) {
  const int n = static_cast<int>(x.size());
  if (n < 2) return;
  if (pad < 0) {
    // A few time constants of the filter: the pole radius sets how fast start-up effects decay.
    const double r = std::sqrt(std::max(f.a2, 1e-12));
    pad = static_cast<int>(std::ceil(8.0 / std::max(1e-6, -std::log(r))));
  }
  pad = std::clamp(pad, 0, n - 1);
  std::vector<double> y(static_cast<std::size_t>(n + 2 * pad));
  for (int i = 0; i < pad; ++i) y[i] = 2.0 * x[0] - x[pad - i];
  for (int i = 0; i < n; ++i) y[pad + i] = x[i];
  for (int i = 0; i < pad; ++i) y[pad + n + i] = 2.0 * x[n - 1] - x[n - 2 - i];
  FilterForward(f, y);
  std::reverse(y.begin(), y.end());
  FilterForward(f, y);
  std::reverse(y.begin(), y.end());
  for (int i = 0; i < n; ++i) x[i] = y[pad + i];
}

}  // namespace heft::identification

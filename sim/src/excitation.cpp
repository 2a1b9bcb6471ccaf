#include "heft/sim/excitation.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

namespace heft::sim {
namespace {

constexpr double kTwoPi = 2.0 * std::numbers::pi;

// Minimum-jerk ramp 0 → 1 on s ∈ [0, 1] and its first two derivatives with respect to s.
Signal Ramp(double s) noexcept {
  if (s <= 0.0) return {};
  if (s >= 1.0) return {1.0, 0.0, 0.0};
  return {s * s * s * (10.0 - 15.0 * s + 6.0 * s * s), 30.0 * s * s * (1.0 - s) * (1.0 - s),
          60.0 * s * (1.0 - s) * (1.0 - 2.0 * s)};
}

// 0 outside [start, end]; rises to 1 over `fade` after start and falls to 0 over `fade` before
// end (both ramps minimum-jerk).
Signal Envelope(double t, double start, double end, double fade) noexcept {
  if (!(t > start && t < end)) return {};
  if (!(fade > 0.0)) return {1.0, 0.0, 0.0};
  const Signal up = Ramp((t - start) / fade);
  const Signal down =
      std::isfinite(end) ? Ramp((end - t) / fade) : Signal{1.0, 0.0, 0.0};  // d/dt = −d/ds
  const double u = up.x, du = up.dx / fade, ddu = up.ddx / (fade * fade);
  const double d = down.x, dd = -down.dx / fade, ddd = down.ddx / (fade * fade);
  return {u * d, du * d + u * dd, ddu * d + 2.0 * du * dd + u * ddd};
}

// e · s by the product rule.
Signal Times(const Signal& e, const Signal& s) noexcept {
  return {e.x * s.x, e.dx * s.x + e.x * s.dx, e.ddx * s.x + 2.0 * e.dx * s.dx + e.x * s.ddx};
}

bool Has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

Signal Excitation::Squat(double t) const noexcept {
  const Signal e = Envelope(t, start, end, fade);
  if (e.x == 0.0 && e.dx == 0.0 && e.ddx == 0.0) return {};
  if (squat_frequencies.empty() || !(squat_block > 0.0)) return {};
  const double tau = t - start;
  const auto block = static_cast<std::size_t>(std::floor(tau / squat_block));
  const double w = kTwoPi * squat_frequencies[block % squat_frequencies.size()];
  const double tb = tau - static_cast<double>(block) * squat_block;
  const Signal s{0.5 * squat_depth * (1.0 - std::cos(w * tb)),
                 0.5 * squat_depth * w * std::sin(w * tb),
                 0.5 * squat_depth * w * w * std::cos(w * tb)};
  return Times(e, s);
}

Signal Excitation::Sway(double t) const noexcept {
  const Signal e = Envelope(t, start, end, fade);
  const double w = kTwoPi * sway_frequency, tau = t - start;
  const Signal s{sway_amplitude * std::sin(w * tau), sway_amplitude * w * std::cos(w * tau),
                 -sway_amplitude * w * w * std::sin(w * tau)};
  return Times(e, s);
}

Signal Excitation::Wave(std::size_t i, double t) const noexcept {
  if (i >= waves.size()) return {};
  const Signal e = Envelope(t, start, waves_end, fade);
  const JointWave& wave = waves[i];
  Signal s;
  const double tau = t - start;
  for (std::size_t k = 0; k < wave.amplitude.size(); ++k) {
    const double a = wave.amplitude[k], w = kTwoPi * wave.frequency[k];
    const double arg = w * tau + wave.phase[k];
    s.x += a * std::sin(arg);
    s.dx += a * w * std::cos(arg);
    s.ddx -= a * w * w * std::sin(arg);
  }
  return Times(e, s);
}

Excitation TrainingMotion(const std::vector<std::string>& joints,
                          const std::vector<std::string>& arm_joints,
                          const std::vector<std::string>& waist_joints, std::uint64_t seed,
                          double start, double end, double waves_end) {
  Excitation x;
  x.start = start;
  x.end = end;
  x.waves_end = waves_end;
  x.fade = 1.0;
  x.squat_depth = 0.12;
  x.squat_frequencies = {0.25, 0.5, 1.0};
  x.squat_block = 4.0;  // one, two and four squats
  x.sway_amplitude = 0.03;
  x.sway_frequency = 0.25;
  // The drives' joint servo a team records with: 40 N·m/rad breaks a static friction of 1 N·m
  // (the deviated robot's largest) within 0.025 rad of the wave.
  x.servo_stiffness = 40.0;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (const std::string& name : joints) {
    const bool arm = Has(arm_joints, name);
    const bool waist = Has(waist_joints, name);
    if (!arm && !waist) continue;
    const double total = arm ? 0.35 : 0.12;
    JointWave wave;
    wave.joint = name;
    for (int k = 0; k < 3; ++k) {
      wave.amplitude.push_back(total / 3.0 * (0.6 + 0.8 * unit(rng)));
      wave.frequency.push_back(0.2 + 0.6 * unit(rng));
      wave.phase.push_back(kTwoPi * unit(rng));
    }
    x.waves.push_back(std::move(wave));
  }
  return x;
}

}  // namespace heft::sim

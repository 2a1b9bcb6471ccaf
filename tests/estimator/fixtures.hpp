// What the estimation tests share: the left-arm motion that excites the forearm, the estimator
// set up for it, a payload that appears at a time, and the tolerances derived from the filter's
// own covariance or the configured noise (never from the paper's targets).
#pragma once

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "heft/estimator/inertial_estimator.hpp"
#include "trajectory.hpp"

namespace heft::estimator::test {

// The four left-arm joints moving (0.5 rad), the left forearm's π logged as the truth.
inline DataSpec ArmMotion(double duration) {
  DataSpec spec;
  spec.duration = duration;
  spec.motion.joints = {"left_shoulder_pitch", "left_shoulder_roll", "left_elbow",
                        "left_wrist_pitch"};
  spec.motion.amplitude = 0.5;
  spec.watched = {"left_forearm"};
  return spec;
}

// The left elbow alone moving, the left forearm's π logged as the truth.
inline DataSpec ElbowMotion(double duration) {
  DataSpec spec;
  spec.duration = duration;
  spec.motion.joints = {"left_elbow"};
  spec.watched = {"left_forearm"};
  return spec;
}

// The robot standing still throughout, with no noise at all: a test adds the noise it studies.
inline DataSpec StandingStill(double duration) {
  DataSpec spec;
  spec.duration = duration;
  spec.motion.still_until = 1e9;  // never moves
  spec.noise.tau_sigma = 0.0;
  spec.noise.tau_quantum = 0.0;
  spec.noise.v_sigma = 0.0;
  spec.noise.force_sigma = 0.0;
  spec.noise.torque_sigma = 0.0;
  return spec;
}

// The left forearm's π with a `mass` kg cylinder 0.27 m down it (a dumbbell in the hand).
inline dynamics::Vector10 WithForearmLoad(const dynamics::Vector10& pi, double mass) {
  return WithCylinder(pi, mass, {0.0, 0.0, -0.27});
}

// That load on the left forearm from `from` s on.
inline auto ForearmPayload(double mass, double from = 0.0) {
  return [mass, from](double t, const dynamics::Model& nominal, dynamics::Model& truth) {
    const int b = nominal.body_index("left_forearm");
    truth.bodies[b].parameters = t < from ? nominal.bodies[b].parameters
                                          : WithForearmLoad(nominal.bodies[b].parameters, mass);
  };
}

// The estimator of `bodies` with both feet's cells, σ = 1 N·m on the joints (torque noise plus
// the finite-difference acceleration noise through M(q)), 5 N / 5 N·m on the base rows, no
// start-up calibration.
inline EstimatorConfig ArmConfig(std::vector<std::string> bodies = {"left_forearm"}) {
  EstimatorConfig c;
  c.bodies = std::move(bodies);
  c.contact_frames = {"left_foot_ft", "right_foot_ft"};
  c.joint_torque_sigma = 1.0;
  c.base_force_sigma = 5.0;
  c.base_torque_sigma = 5.0;
  c.calibration.enabled = false;
  return c;
}

// The estimator's tick rate in the generated data (trajectory.hpp), Hz.
constexpr double kTickRate = 1000.0 / 3.0;

// An error must stay within kSigmas of the filter's own σ: sqrt(P_ii) of π_i is the filter's
// statement of its error, so a regression that makes an error 10× larger crosses it.
constexpr double kSigmas = 2.0;

// σ of parameter i (0 mass, 1..3 first moments, ...) of watched body `body`'s estimate.
inline double Sigma(const InertialEstimator& est, int i, int body = 0) {
  return std::sqrt(est.estimate_covariance()(i, 10 * body + i));
}

// The most ticks a correct gate of confidence `confidence` rejects out of `ticks` with white
// noise: the binomial mean plus 4 standard deviations, plus 2 ticks (the warm-up's prior share).
inline double GateFalseAlarms(double confidence, double ticks) {
  const double p = 1.0 - confidence;
  return ticks * p + 4.0 * std::sqrt(ticks * p * (1.0 - p)) + 2.0;
}

}  // namespace heft::estimator::test

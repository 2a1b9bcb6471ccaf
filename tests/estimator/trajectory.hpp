// Synthetic measurement data for the estimator tests: a smooth motion of the reference humanoid,
// the "true" torques from the dynamics core's RNEA of a model that carries a payload the estimator
// does not know, contact wrenches that balance the floating-base rows, sensor noise, quantisation,
// a constant torque bias and (optionally) contact impulses. Samples at 1 kHz; ticks at 333 Hz with
// finite-difference accelerations and the other signals delayed by the same lag, as the plugin
// does.
#pragma once

#include <functional>
#include <random>
#include <vector>

#include "heft/dynamics/dynamics.hpp"

namespace heft::estimator::test {

struct MotionSpec {
  std::vector<std::string> joints;  // joints that move (others hold their offset)
  double amplitude = 0.4;           // rad
  double base_amplitude = 0.02;     // m (base sway) and rad (base pitch)
  std::vector<double> frequencies = {0.31, 0.53, 0.87, 1.23};  // Hz, mixed per joint
  double still_until = 0.0;  // s: the robot stands still, then the motion fades in over 1 s
};

struct NoiseSpec {
  double tau_sigma = 0.3;        // N·m
  double tau_quantum = 0.01;     // N·m
  double tau_bias = 0.0;         // N·m, constant per joint (alternating sign)
  double v_sigma = 0.0005;       // rad/s (the spec's velocity LSB)
  double gyro_sigma = 0.0;       // rad/s on the base's angular velocity (an IMU's gyro; 0: none)
  double force_sigma = 2.0;      // N
  double torque_sigma = 0.2;     // N·m
  double impulse_period = 0.0;   // s between contact impulses (0: none)
  double impulse_force = 400.0;  // N peak, lasting impulse_length
  double impulse_length = 0.015;
};

struct Tick {
  double t;
  Eigen::VectorXd q, v, a, tau;
  std::vector<dynamics::Vector6> wrenches;  // left, right foot F/T frames
  Eigen::VectorXd truth;                    // π of the watched bodies (10 per body)
};

struct DataSpec {
  double duration = 10.0;
  MotionSpec motion;
  NoiseSpec noise;
  std::vector<std::string> watched;  // bodies whose true π is recorded
  // Changes the true model at time t (payloads); called at every 1 kHz sample.
  std::function<void(double t, const dynamics::Model& nominal, dynamics::Model& truth)> payload;
  std::uint64_t seed = 1;
};

dynamics::Model ReferenceHumanoid();
std::vector<Tick> Generate(const DataSpec& spec);

// A payload rigidly attached to `body`: a solid cylinder of mass m, radius r, length l along y,
// centred at `at` in the body frame, added to the body's π.
dynamics::Vector10 WithCylinder(const dynamics::Vector10& pi, double m, const Eigen::Vector3d& at,
                                double r = 0.03, double l = 0.2);
// π of the same body with its mass scaled to `mass` (centre of mass kept).
dynamics::Vector10 ScaledToMass(const dynamics::Vector10& pi, double mass);

}  // namespace heft::estimator::test

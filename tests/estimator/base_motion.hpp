// A floating robot's exact motion and what its base sensors report about it, for the tests of the
// base acceleration (SampleMapping) and docs/estimator.md's comparison of the two ways to measure
// it.
//
// The truth is analytic (no integration error): the base translates (a drift plus sines), rotates
// about two axes at once, R_WB(t) = R0 exp(θ1(t) k1) exp(θ2(t) k2), and every joint moves on a sine
// about the middle of its range. q, v, a follow model.hpp's conventions (a = dv/dt).
// The sensors: either a state estimator's base velocity (white noise) or an IMU at a point S of
// the base (gyro and accelerometer: white noise, then quantisation), the orientation exact.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "heft/dynamics/model.hpp"
#include "heft/hal/robot_state.hpp"

namespace heft::estimator::test {

struct TruthState {
  double t = 0.0;
  Eigen::VectorXd q, v, a;
};

// The motion of `model` (floating) at time t [s].
TruthState BaseMotion(const dynamics::Model& model, double t);

struct BaseSensorSpec {
  bool imu = true;  // specific force + gyro; false: the state estimator's linear velocity + gyro
  Eigen::Vector3d p_BS{0.06, -0.04, 0.12};    // S in the base frame [m]
  double velocity_sigma = 0.0;                // m/s (state estimator)
  double gyro_sigma = 0.0, gyro_lsb = 0.0;    // rad/s
  double accel_sigma = 0.0, accel_lsb = 0.0;  // m/s²
  double joint_velocity_sigma = 0.0;          // rad/s
};

// The classical acceleration of S in the world and the specific force at S in the base frame,
// f_B = R_WBᵀ (a_S − g_W), for the truth x.
Eigen::Vector3d SpecificForce(const dynamics::Model& model, const TruthState& x,
                              const Eigen::Vector3d& p_BS);

// State sample number k (sequence k + 1, stamp k ms) of the truth x: joints in `joints` order
// (true positions, velocities with noise, zero torques, channels ok), no wrenches, and the base as
// the sensors of `spec` report it. `base_rng` draws the base sensors' noise and `joint_rng` the
// joints', so that two sensor specs can share the same joint and gyro noise.
hal::RobotStateSample MeasureState(const dynamics::Model& model,
                                   const std::vector<std::string>& joints, const TruthState& x,
                                   std::uint64_t k, const BaseSensorSpec& spec,
                                   std::mt19937_64& base_rng, std::mt19937_64& joint_rng);

}  // namespace heft::estimator::test

// The exciting motion a team records to identify its robot (scenario `excite`): the training motion
// of Mistry et al. (squats at several speeds, side-to-side sway, waist and arm motion; the foot
// lifts are the balance controller's steps in place), performed by the simulated robot under its
// balance controller rather than prescribed kinematically (tests/identification/motion.cpp does
// that for the offline proofs).
//
// Every signal is a pure function of time with its first two derivatives (fed forward by the
// controller), smoothly faded in and out: evaluation is noexcept and allocation-free.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace heft::sim {

/// A reference offset and its first two time derivatives.
struct Signal {
  double x = 0.0, dx = 0.0, ddx = 0.0;
};

/// Σ amplitude[k] · sin(2π frequency[k] · t + phase[k]) on one joint's posture reference.
struct JointWave {
  std::string joint;
  std::vector<double> amplitude;  ///< [rad]
  std::vector<double> frequency;  ///< [Hz]
  std::vector<double> phase;      ///< [rad]
};

struct Excitation {
  /// Squats and sway between `start` and `end` [s], faded in and out over `fade` [s].
  double start = 0.0, end = 0.0, fade = 1.0;
  /// Squats: the pelvis lowered by depth · ½(1 − cos 2π f τ), τ the time since `start`; f runs
  /// through `squat_frequencies` in turn, `squat_block` seconds each (whole periods of each, so the
  /// depth and its rate are continuous at the block boundaries).
  double squat_depth = 0.0;  ///< [m]
  std::vector<double> squat_frequencies;
  double squat_block = 8.0;  ///< [s]
  /// Side-to-side sway of the centre of mass: amplitude · sin(2π frequency τ).
  double sway_amplitude = 0.0;  ///< [m]
  double sway_frequency = 0.0;  ///< [Hz]
  /// Waves on joints outside the legs, from `start` (faded in) to `waves_end` (faded out).
  std::vector<JointWave> waves;
  double waves_end = std::numeric_limits<double>::infinity();
  /// The joint servo a robot's drives run a recording with: a wave's joint gets, besides the
  /// controller's acceleration task, τ = K (q_ref − q) + D (q̇_ref − q̇) with K in N·m/rad and D
  /// critically damping K on the joint's own inertia (M_vv), so that every joint's static
  /// friction (up to K × a few hundredths of a radian) breaks and the joint slides. The
  /// acceleration task alone gives a wrist about M_vv·kp ≈ 0.2 N·m/rad: held by its friction
  /// throughout. K is at most M_vv·ω² with ω = `servo_bandwidth`, which keeps the servo's loop
  /// (closed once per control tick) well damped on the lightest joint. 0: no servo.
  double servo_stiffness = 0.0;    ///< [N·m/rad]
  double servo_bandwidth = 150.0;  ///< [rad/s]

  /// How far the pelvis is lowered at time t.
  [[nodiscard]] Signal Squat(double t) const noexcept;
  /// The centre of mass's sideways (world y) offset at time t.
  [[nodiscard]] Signal Sway(double t) const noexcept;
  /// Wave i's offset of its joint's posture reference at time t.
  [[nodiscard]] Signal Wave(std::size_t i, double t) const noexcept;
};

/// The training motion: squats (0.12 m deep at 0.25, 0.5 and 1 Hz in turn) and ±3 cm sway at
/// 0.25 Hz from `start` to `end`; from `start` to `waves_end`, every joint of `joints` (the
/// state's, in its order) that is in `arm_joints` or `waist_joints` (the role map's chains,
/// RobotRoles) moves by a sum of three sines (arms 0.35 rad, waist 0.12 rad in all; frequencies
/// 0.2–0.8 Hz and phases drawn from `seed`, joint by joint in the order of `joints`), on a
/// 40 N·m/rad joint servo (`servo_stiffness`).
Excitation TrainingMotion(const std::vector<std::string>& joints,
                          const std::vector<std::string>& arm_joints,
                          const std::vector<std::string>& waist_joints, std::uint64_t seed,
                          double start, double end, double waves_end);

}  // namespace heft::sim

// Test equipment for identification: a "true" humanoid that differs from its URDF (perturbed
// masses, centres of mass and inertias, a cable-like mass on the torso, joint friction) and
// recordings of it at 1 kHz from heft's inverse dynamics (checked against MuJoCo's to 1e-14 in
// test_dynamics_mujoco): joint torques and foot wrenches that produce the motion, with sensor noise
// and quantisation like the reference robot's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heft/dynamics/model.hpp"
#include "heft/recording/recording.hpp"

namespace heft::identification::test {

enum class Motion {
  kSquatSway,  // training / validation: squats at several speeds, side-to-side sway, alternating
               // foot lifts, arm and waist motion (Mistry et al.'s training set)
  kStepping,   // out of distribution: a different gait, faster alternating steps, arm swing
  kReaching,   // out of distribution: a new task, standing and reaching with both arms, bending
  kStanding,   // standing still in the squat's start posture (what start-up calibration sees)
};

struct SimNoise {
  double joint_torque = 0.3, torque_quantum = 0.01, velocity = 0.0005;
  double force = 2.0, moment = 0.2;
};

struct SimSpec {
  Motion motion = Motion::kSquatSway;
  double duration = 20.0;
  std::uint64_t seed = 1;
  SimNoise noise;
  double coulomb = 0.0, viscous = 0.0;  // true joint friction, same on every joint
  // Each joint torque sensor's constant offset: ±torque_offset, its sign and size (⅓ to 1) drawn
  // per joint from a stream of its own (the same offsets for every seed).
  double torque_offset = 0.0;
  // Each joint torque sensor's gain error γ (τ_m = (1 + γ)(τ + friction) + offset): ±torque_gain,
  // drawn like the offsets from a stream of the joint's own.
  double torque_gain = 0.0;
  // Each F/T cell's constant offset, per axis: ±ft_force (N), ±ft_moment (N·m), drawn per cell.
  double ft_force = 0.0, ft_moment = 0.0;
  std::vector<std::string> held;  // joints that stay at their start posture (a held wrist)
};

// The offset SimSpec::torque_offset gives the joint sensed at v index `vi`.
double TorqueOffset(const SimSpec& spec, int vi);
// The gain error SimSpec::torque_gain gives that joint's sensor.
double TorqueGain(const SimSpec& spec, int vi);
// The offset of F/T cell `cell` (0 left foot, 1 right foot), wrench component k (force, moment).
double FtOffset(const SimSpec& spec, int cell, int k);

// The URDF's model with perturbed parameters (seeded) plus a 1.8 kg cable run on the torso.
dynamics::Model PerturbedTruth(const dynamics::Model& nominal, std::uint64_t seed = 7);

recording::Recording Simulate(const dynamics::Model& truth, const SimSpec& spec);

}  // namespace heft::identification::test

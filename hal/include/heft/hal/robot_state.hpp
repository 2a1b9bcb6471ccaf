// The robot state sample: one coherent snapshot of every sensor, published once per millisecond
// by the driver loop and read by the control thread. Plain, fixed-size, trivially copyable, so that
// it can live in a lock-free buffer and in shared memory.
//
// Units: SI (rad, rad/s, Nm, N, m, s). Joint order: the order of the configuration's joint list,
// which the estimator maps to its model by URDF joint name at set-up.
//
// Frames, in Drake's monogram notation (the boundary's names say which frame a quantity is in and
// a reader can check them): X_AB the pose of frame B in frame A (R_AB its rotation, p_AB the
// position of Bo, B's origin, in A), w_AB_C the angular velocity of B in A expressed in C, v_ABo_C
// the velocity of Bo in A expressed in C, F_S a wrench at So expressed in S. Frames used: W a
// gravity-aligned world frame, B the base link's frame, S a six-axis cell's sensor frame (also the
// IMU's origin for a specific force), L an estimated link's frame (hal/inertial_estimate.hpp).
// Joint quantities (q, v, τ) are scalars along the joint's axis and carry no frame.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>

namespace heft::hal {

inline constexpr std::size_t kMaxJoints = 64;
inline constexpr std::size_t kMaxWrenchSensors = 4;

/// Why a channel is (not) usable right now.
enum class ChannelState : std::uint8_t {
  kOk = 0,         ///< fresh, usable sample
  kNeverSeen = 1,  ///< no usable sample since start
  kStale = 2,      ///< last usable sample older than the channel's timeout
  kFault = 3,      ///< the device reports a fault (status bits / fault code)
};

/// Health of one channel. Counters are cumulative since the driver started.
struct ChannelHealth {
  ChannelState state = ChannelState::kNeverSeen;
  std::uint32_t age_us = 0;           ///< time since the last usable sample
  std::uint32_t lost_samples = 0;     ///< samples missed (rolling-counter gaps, unpaired frames)
  std::uint32_t rejected_frames = 0;  ///< malformed frames for this device
  std::uint16_t status_bits = 0;      ///< last raw status byte / fault code the device sent
  [[nodiscard]] bool ok() const noexcept { return state == ChannelState::kOk; }
};

struct JointSample {
  double position = 0.0;  ///< q [rad] (or [m] for prismatic joints), the URDF axis' sense
  double velocity = 0.0;  ///< v = dq/dt [rad/s] (or [m/s])
  double torque = 0.0;    ///< τ: measured joint torque about the axis [Nm] (or force [N])
  ChannelHealth encoder;  ///< health of position + velocity
  ChannelHealth torque_sensor;
};

/// Wrench measured by a six-axis cell: F_S, the wrench the environment applies to the robot at
/// the origin So of the sensor frame S (a URDF frame named in the configuration), expressed in S:
/// [fx fy fz tx ty tz] ([f; n], forces [N] then torques [Nm], the estimator's order).
struct WrenchSample {
  std::array<double, 6> wrench{};  ///< F_S
  ChannelHealth health;
};

/// Floating-base motion. It does not come from the joint devices: on a robot it is either the base
/// IMU on CAN (decoded by the drivers, `drivers.imu`) or the controller framework's state estimator
/// through the shared-memory input segment (hal/framework_input.h); on the simulated robot it is
/// the simulated IMU's frames. Frames (Drake-style monogram notation): W a gravity-aligned world
/// frame (z up, yaw arbitrary: nothing may depend on it), B the base link's frame, S the point
/// where the specific force was measured (the IMU's origin).
///
/// What inverse dynamics needs of the base is its orientation (for gravity), its angular velocity
/// and the classical acceleration of its origin; by Galilean invariance not its linear velocity.
/// The acceleration comes either from `specific_force` (what an accelerometer measures, transported
/// to the base origin by the estimator with ω and a finite difference of ω) or, when only a
/// velocity is known, from a finite difference of `linear_velocity`.
struct BaseSample {
  std::array<double, 4> orientation{1.0, 0.0, 0.0,
                                    0.0};        ///< R_WB as a unit quaternion (w, x, y, z)
  std::array<double, 3> angular_velocity{};      ///< w_WB_B: angular velocity, base frame [rad/s]
  std::array<double, 3> specific_force{};        ///< f_S_B: acceleration minus gravity at S [m/s^2]
  std::array<double, 3> specific_force_point{};  ///< p_BS: S in the base frame [m]
  std::array<double, 3> linear_velocity{};       ///< v_WB_W: velocity of the base origin [m/s]
  std::array<double, 3> position{};  ///< p_WB: base origin in world [m] (optional; heft ignores it)
  bool has_specific_force = false;   ///< specific_force and specific_force_point are set
  bool has_linear_velocity = false;  ///< linear_velocity (and position) are set
  ChannelHealth health;
};

struct RobotStateSample {
  std::uint64_t sequence = 0;  ///< +1 per published sample; 0 = nothing published yet
  std::int64_t stamp_ns = 0;  ///< time of the driver tick that produced it (CLOCK_MONOTONIC or sim)
  std::uint16_t num_joints = 0;
  std::uint16_t num_wrenches = 0;
  bool has_base = false;  ///< false for a fixed-base robot
  BaseSample base;
  std::array<JointSample, kMaxJoints> joints{};
  std::array<WrenchSample, kMaxWrenchSensors> wrenches{};
};

static_assert(std::is_trivially_copyable_v<RobotStateSample>);

}  // namespace heft::hal

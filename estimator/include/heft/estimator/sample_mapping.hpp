// From the state buffer's samples to the estimator's input: joints by URDF name into the model's
// order, the floating base from hal::BaseSample, the F/T cells' wrenches, and accelerations by a
// finite difference at the control rate with the other signals delayed to match (Foster et al.
// §III-D):
//   a(t − h) = (v(t) − v(t − 2h)) / 2h,   q, v, τ, λ taken at t − h,
// where h is `difference_samples` samples of the 1 kHz state (default 2 ms, a lag of 2 ms).
//
// The floating base (model.hpp's conventions: v = [ṗ_WB in W; ω_WB in B], a = dv/dt). Inverse
// dynamics with classical accelerations does not depend on the base's linear velocity (Galilean
// invariance), so with an IMU the base's linear velocity is set to 0 and its linear acceleration is
// the classical acceleration of the base origin, from the specific force f measured at S:
//   a_WB = R_WB (f_B − ω̇ × p_BS − ω × (ω × p_BS)) + g_W,
// with f, ω, R_WB at t − h and ω̇ = (ω(t) − ω(t − 2h)) / 2h (a resting IMU reads f = −R_WBᵀ g_W,
// +9.81 along z up). Without an IMU, the base's linear velocity is differenced like the joints'.
// The base position is irrelevant to inverse dynamics: the sample's when it has one, else 0.
//
// Set-up (the constructor) checks every name against the model and allocates; Assemble() does not
// allocate, throw or log.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "heft/estimator/inertial_estimator.hpp"
#include "heft/hal/robot_state.hpp"

namespace heft::estimator {

// Where the base's linear acceleration comes from (estimator.base_acceleration).
enum class BaseAcceleration {
  kAuto,      // the IMU's specific force when the middle sample has one, else the velocity
  kImu,       // the specific force only (a sample without one holds the base)
  kVelocity,  // a finite difference of the base's linear velocity only
};

struct SampleMappingConfig {
  std::vector<std::string> joints;  // URDF joint name of sample slot i (every model joint once)
  std::vector<std::string>
      wrench_frames;  // model frame of wrench slot i (EstimatorConfig::contact_frames order)
  int difference_samples = 2;   // h, in state samples
  double contact_force = 50.0;  // N: a foot is in contact when its cell reads more (normal, +z)
  BaseAcceleration base_acceleration = BaseAcceleration::kAuto;
};

// Why the estimate is held (bits of hal::EstimatorStatus::hold_reason): an assembled input that is
// not usable, or (kHoldGated) a gate that has refused every measurement for gating.hold_after.
enum HoldReason : std::uint32_t {
  kHoldEncoders = 1u << 0,   // a joint position/velocity channel is not ok
  kHoldTorques = 1u << 1,    // a joint torque channel is not ok
  kHoldBase = 1u << 2,       // the floating-base state is not ok (or lacks what the config asks)
  kHoldHistory = 1u << 3,    // not enough samples yet, or they are not evenly spaced
  kHoldNonFinite = 1u << 4,  // a value is NaN/inf
  kHoldGated = 1u << 5,      // usable input the gate refuses (TickResult::gate_holding)
};

class SampleMapping {
 public:
  SampleMapping(const dynamics::Model& model, const SampleMappingConfig& config);

  int lag_samples() const { return h_; }
  // Samples of history Assemble needs: newest, newest − h, newest − 2h.
  int history() const { return 2 * h_ + 1; }

  // Returns 0 when the input is usable, else a set of HoldReason bits. Wrench validity is reported
  // per cell (wrench_valid()), not as a hold: the estimator falls back to the null-space model.
  std::uint32_t Assemble(const hal::RobotStateSample& newest, const hal::RobotStateSample& mid,
                         const hal::RobotStateSample& oldest) noexcept;

  // The last assembled input (valid until the next Assemble).
  TickInput input() const;
  double time() const { return time_; }
  // Whether the last assembled base acceleration came from the IMU's specific force.
  bool base_from_imu() const { return base_from_imu_; }
  const Eigen::VectorXd& q() const { return q_; }
  const Eigen::VectorXd& v() const { return v_; }
  const Eigen::VectorXd& a() const { return a_; }
  const Eigen::VectorXd& tau() const { return tau_; }
  std::span<const dynamics::Vector6> wrenches() const { return wrenches_; }
  std::span<const unsigned char> wrench_valid() const { return wrench_valid_; }
  std::span<const unsigned char> in_contact() const { return in_contact_; }

 private:
  const dynamics::Model* model_;
  SampleMappingConfig config_;
  int h_;
  std::vector<int> slot_q_, slot_v_;  // per sample slot: index into q and v
  Eigen::VectorXd q_, v_, v_old_, v_new_, a_, tau_;
  std::vector<dynamics::Vector6> wrenches_;
  std::vector<unsigned char> wrench_valid_, in_contact_;
  double time_ = 0.0;
  bool base_from_imu_ = false;
};

}  // namespace heft::estimator

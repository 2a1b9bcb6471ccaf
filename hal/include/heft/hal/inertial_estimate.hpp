// The hand-off from the estimator to the whole-body controller: for every estimated link, its
// inertial parameters (always physically consistent), their covariance and the estimator's status.
// Written by the 333 Hz control thread into a wait-free mailbox (a SeqlockRing of depth 2 or more)
// and, for controllers in other processes, into shared memory with the same layout.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace heft::hal {

inline constexpr std::size_t kMaxEstimatedLinks = 4;
inline constexpr std::size_t kLinkNameLength = 48;

/// π_L = [m, hx, hy, hz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz] of a link whose (URDF) frame is L: mass
/// [kg], first moment h_L = m p_LoLcm_L [kg m] and rotational inertia I_Lo_L about L's origin Lo
/// [kg m^2], both expressed in L (Foster et al. eq. 3; frames: hal/robot_state.hpp).
using InertialParameters = std::array<double, 10>;

enum class EstimatorState : std::uint8_t {
  kInactive = 0,         ///< not activated, or disabled by command
  kWaitForWalking = 1,   ///< waiting for the robot to be on the ground and walking
  kCalibratingBias = 2,  ///< averaging the residual at nominal parameters
  kEstimating = 3,       ///< running the filter
  kHolding = 4,  ///< last good estimate held: a required channel is stale/invalid, or the gate
                 ///< has refused every measurement for estimator.gating.hold_after
};

enum class MeasurementModel : std::uint8_t {
  kNone = 0,
  kFullWrench = 1,       ///< delta_tau over all nv rows with the foot wrenches (Foster eq. 14)
  kTorqueNullSpace = 2,  ///< joint torques only, projected into the contact null space
};

struct EstimatorStatus {
  EstimatorState state = EstimatorState::kInactive;
  MeasurementModel model = MeasurementModel::kNone;
  std::uint32_t hold_reason = 0;  ///< why kHolding: bit set of the channels, or 0x20 (gated)
  std::uint64_t ticks = 0;
  std::uint64_t updates = 0;          ///< accepted filter updates
  std::uint64_t gated = 0;            ///< updates rejected by the innovation gate
  std::uint64_t gate_releases = 0;    ///< times a lasting rejection run inflated the covariance
  std::uint64_t numeric_rejects = 0;  ///< non-finite / diverging updates thrown away
  std::uint64_t rate_limited = 0;     ///< ticks where the rate limiter was active
  double last_nis = 0.0;              ///< normalised innovation squared of the last update
};

struct LinkEstimate {
  std::array<char, kLinkNameLength> name{};  ///< URDF link name, NUL-terminated
  InertialParameters parameters{};           ///< π_L handed on (rate-limited, consistent)
  std::array<double, 100> covariance{};      ///< 10x10 row-major covariance of π_L (how it is
                                             ///< computed: docs/handoff.md, "The handed
                                             ///< covariance")
};

struct InertialEstimate {
  std::uint64_t sequence = 0;
  std::int64_t stamp_ns = 0;  ///< time of the state sample the estimate was computed from
  std::uint16_t num_links = 0;
  /// The nominal model the handed parameters are a change of (hal/model_identity.hpp: FNV-1a over
  /// the URDF's and the parameters file's bytes); 0: unknown.
  std::uint32_t nominal_model = 0;
  EstimatorStatus status;
  std::array<LinkEstimate, kMaxEstimatedLinks> links{};
};

static_assert(std::is_trivially_copyable_v<InertialEstimate>);
static_assert(offsetof(InertialEstimate, nominal_model) == 20, "in the padding before the status");

}  // namespace heft::hal

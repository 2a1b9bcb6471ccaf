// heftd's status as the command socket reports it (`status` request, `heftctl status`): what the
// estimator does, why it holds, its counters and the drivers', the framework input's health, and
// per estimated link the handed mass and centre of mass with their 1σ.
//
// The host fills a StatusSnapshot on the command server's (non-real-time) thread, from the latest
// hand-off estimate (FillFromEstimate) and its own counters; EncodeStatusJson / DecodeStatusJson
// are the wire format (JSON, one document per reply).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "heft/hal/inertial_estimate.hpp"
#include "heft/hal/robot_state.hpp"

namespace heft::host {

struct LinkStatus {
  std::string name;
  double mass = 0.0;                  ///< m [kg]
  double mass_sigma = 0.0;            ///< sqrt(P00) [kg]
  std::array<double, 3> com{};        ///< c = h / m in the link frame [m]
  std::array<double, 3> com_sigma{};  ///< first-order 1σ of c [m]
};

struct DriverStatus {
  std::uint64_t published = 0;  ///< state samples published by the 1 kHz loop
  std::uint64_t rejected = 0;   ///< malformed frames
  std::uint64_t lost = 0;       ///< counter gaps, abandoned halves
  std::uint64_t stale = 0;      ///< channels going stale
};

struct InputStatus {
  bool present = false;  ///< heftd reads a framework input segment
  hal::ChannelState state = hal::ChannelState::kNeverSeen;
  std::uint64_t accepted = 0;
  std::uint64_t rejected = 0;
  std::uint64_t commands = 0;
};

struct StatusSnapshot {
  bool have_estimate = false;  ///< false until the plugin published its first estimate
  std::uint64_t sequence = 0;  ///< estimate sequence
  std::int64_t stamp_ns = 0;   ///< time of the state sample the estimate was computed from
  hal::EstimatorStatus estimator;
  DriverStatus drivers;
  InputStatus input;
  std::vector<LinkStatus> links;
};

/// Mass, centre of mass and their 1σ from π and its covariance: σ_m = sqrt(P00); c = h / m with
/// ∂c/∂m = −h/m², ∂c/∂h = I/m, so var(c_i) = (h_i² P00 / m² − 2 h_i P0,i / m + Pi,i) / m²
/// (index i of h_i is 1..3 in π). A non-positive mass gives c = 0 and σ = inf.
LinkStatus LinkFromParameters(const char* name, const hal::InertialParameters& pi,
                              const std::array<double, 100>& covariance);

/// Copies what the estimate carries (status, stamp, links) into `out`.
void FillFromEstimate(const hal::InertialEstimate& estimate, StatusSnapshot& out);

/// Names of the set bits of EstimatorStatus::hold_reason (estimator/sample_mapping.hpp HoldReason;
/// unknown bits as "bit<N>").
std::vector<std::string> HoldReasonNames(std::uint32_t bits);
const char* EstimatorStateName(hal::EstimatorState state);
const char* MeasurementModelName(hal::MeasurementModel model);
const char* ChannelStateName(hal::ChannelState state);

/// The `status` reply: {"ok":true, "estimate":..., "state":..., ...} (config/README.md).
std::string EncodeStatusJson(const StatusSnapshot& s);
/// Reads a reply written by EncodeStatusJson back. Returns false (and a reason) if it is not one.
bool DecodeStatusJson(const std::string& text, StatusSnapshot& out, std::string* error);

}  // namespace heft::host

#include "heft/host/framework_joints.hpp"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "heft/hal/enum_name.hpp"

namespace heft::host {
namespace {

std::string SegmentPath(const std::string& name) {
  return "/dev/shm/" + name;
}

bool Bit(std::uint64_t mask, std::size_t i) {
  return ((mask >> i) & 1U) != 0;
}

// In JointsReject's and ChannelReject's declaration order.
constexpr std::array<const char*, kNumJointsRejects> kJointsRejectNames{
    "none", "incompatible", "torn", "count", "future_stamp", "old_stamp", "frozen_sequence"};
constexpr std::array<const char*, kNumChannelRejects> kChannelRejectNames{
    "invalid", "non_finite", "position", "velocity", "torque", "wrench"};

}  // namespace

const char* JointsRejectName(JointsReject reason) noexcept {
  return hal::EnumName(reason, kJointsRejectNames, "unknown");
}

const char* ChannelRejectName(ChannelReject reason) noexcept {
  return hal::EnumName(reason, kChannelRejectNames, "unknown");
}

// ---- FrameworkJoints -------------------------------------------------------------------------

FrameworkJoints::FrameworkJoints(const std::string& name, const FrameworkJointsLayout& layout,
                                 const FrameworkJointsLimits& limits)
    : mapping_(std::make_unique<JointsMapping>(name, true)),
      segment_(mapping_->get()),
      limits_(limits) {
  Init(layout);
}

FrameworkJoints::FrameworkJoints(heft_joints_segment* segment, const FrameworkJointsLayout& layout,
                                 const FrameworkJointsLimits& limits)
    : segment_(segment), limits_(limits) {
  if (segment == nullptr) throw std::invalid_argument("framework joints: null segment");
  Init(layout);
}

void FrameworkJoints::Init(const FrameworkJointsLayout& layout) {
  const auto positive = [](double v) { return !std::isnan(v) && v > 0.0; };
  if (limits_.timeout_ns <= 0 || limits_.future_tolerance_ns < 0 ||
      !(limits_.position_margin >= 0.0) || !(limits_.limit_factor >= 1.0) ||
      !positive(limits_.max_force) || !positive(limits_.max_moment) ||
      limits_.max_read_attempts < 1)
    throw std::invalid_argument(
        "framework joints limits: timeout > 0, future tolerance >= 0, position margin >= 0, limit "
        "factor >= 1, wrench bounds > 0 and read attempts >= 1 required");
  if (layout.joints.size() > HEFT_JOINTS_MAX_JOINTS ||
      layout.wrench_frames.size() > HEFT_JOINTS_MAX_WRENCHES ||
      layout.limits.size() != layout.joints.size())
    throw std::invalid_argument(
        "framework joints: at most " + std::to_string(HEFT_JOINTS_MAX_JOINTS) + " joints and " +
        std::to_string(HEFT_JOINTS_MAX_WRENCHES) + " wrenches, with one limit per joint");
  num_joints_ = layout.joints.size();
  num_wrenches_ = layout.wrench_frames.size();
  joint_limits_ = layout.limits;
  std::vector<const char*> joints, frames;
  for (const auto& j : layout.joints) joints.push_back(j.c_str());
  for (const auto& f : layout.wrench_frames) frames.push_back(f.c_str());
  // Always (re)initialised: the names are this configuration's, whatever an earlier heftd wrote.
  (void)heft_joints_init(segment_, static_cast<std::uint32_t>(getpid()),
                         static_cast<unsigned>(num_joints_), joints.data(),
                         static_cast<unsigned>(num_wrenches_), frames.data());
  good_.num_joints = static_cast<std::uint16_t>(num_joints_);
  good_.num_wrenches = static_cast<std::uint16_t>(num_wrenches_);
}

JointsReject FrameworkJoints::Validate(const heft_joints_sample& s,
                                       std::int64_t now_ns) const noexcept {
  if (s.num_joints != num_joints_ || (s.num_wrenches != num_wrenches_ && s.num_wrenches != 0))
    return JointsReject::kCount;
  return CheckStamp(
      s.stamp_ns, now_ns, limits_.timeout_ns, limits_.future_tolerance_ns,
      StampReasons<JointsReject>{JointsReject::kNone, JointsReject::kFuture, JointsReject::kOld});
}

// Each channel of an accepted sample on its own: its value kept when usable, else in fault.
void FrameworkJoints::AcceptChannels(const heft_joints_sample& s) noexcept {
  auto refuse = [this](ChannelReject r) {
    Bump(counters_.channel_rejected[static_cast<std::size_t>(r)]);
    ++channel_rejects_;
  };
  for (std::size_t j = 0; j < num_joints_; ++j) {
    const JointLimits& l = joint_limits_[j];
    const double q = s.position[j], v = s.velocity[j], tau = s.torque[j];
    std::optional<ChannelReject> enc, trq;
    if (!Bit(s.encoder_valid, j))
      enc = ChannelReject::kInvalid;
    else if (!std::isfinite(q) || !std::isfinite(v))
      enc = ChannelReject::kNonFinite;
    else if (q < l.lower - limits_.position_margin || q > l.upper + limits_.position_margin)
      enc = ChannelReject::kPosition;
    else if (std::abs(v) > limits_.limit_factor * l.velocity)
      enc = ChannelReject::kVelocity;
    if (!Bit(s.torque_valid, j))
      trq = ChannelReject::kInvalid;
    else if (!std::isfinite(tau))
      trq = ChannelReject::kNonFinite;
    else if (std::abs(tau) > limits_.limit_factor * l.effort)
      trq = ChannelReject::kTorque;
    encoder_ok_[j] = !enc;
    torque_ok_[j] = !trq;
    if (enc) refuse(*enc);
    if (trq) refuse(*trq);
    if (!enc) {
      good_.joints[j].position = q;
      good_.joints[j].velocity = v;
    }
    if (!trq) good_.joints[j].torque = tau;
  }
  for (std::size_t k = 0; k < num_wrenches_; ++k) {
    const double* w = s.wrench[k];
    std::optional<ChannelReject> r;
    if (s.num_wrenches == 0 || !Bit(s.wrench_valid, k)) {
      r = ChannelReject::kInvalid;
    } else {
      bool finite = true;
      for (int i = 0; i < 6; ++i) finite = finite && std::isfinite(w[i]);
      if (!finite)
        r = ChannelReject::kNonFinite;
      else if (std::hypot(w[0], w[1], w[2]) > limits_.max_force ||
               std::hypot(w[3], w[4], w[5]) > limits_.max_moment)
        r = ChannelReject::kWrench;
    }
    wrench_ok_[k] = !r;
    if (r) {
      refuse(*r);
    } else {
      for (std::size_t i = 0; i < 6; ++i) good_.wrenches[k].wrench[i] = w[i];
    }
  }
  good_stamp_ns_ = s.stamp_ns;
  seen_ = true;
}

bool FrameworkJoints::Read(std::int64_t now_ns, hal::RobotStateSample& out) noexcept {
  Bump(counters_.reads);
  JointsReject reason = JointsReject::kNone;
  bool empty = false;
  if (!heft_joints_compatible(segment_)) {
    reason = JointsReject::kIncompatible;
  } else {
    const int r = heft_joints_read(segment_, &read_, limits_.max_read_attempts);
    if (r == HEFT_JOINTS_EMPTY) {
      empty = true;
    } else if (r == HEFT_JOINTS_TORN) {
      reason = JointsReject::kTorn;
      ++torn_;
    } else {
      sequence_.Observe(read_.sequence, now_ns);
      reason = Validate(read_, now_ns);
      if (reason == JointsReject::kNone && sequence_.Frozen(now_ns, limits_.timeout_ns))
        reason = JointsReject::kFrozen;
      if (reason == JointsReject::kNone) AcceptChannels(read_);
    }
  }
  if (empty)
    Bump(counters_.empty);
  else if (reason == JointsReject::kNone)
    Bump(counters_.accepted);
  else
    Bump(counters_.rejected[static_cast<std::size_t>(reason)]);
  Health(out, reason, empty, now_ns);
  return !empty && reason == JointsReject::kNone;
}

// Every channel's value (the last accepted) and health into `out`.
void FrameworkJoints::Health(hal::RobotStateSample& out, JointsReject reason, bool empty,
                             std::int64_t now_ns) noexcept {
  const bool fresh = Fresh(seen_, now_ns, good_stamp_ns_, limits_.timeout_ns);
  hal::ChannelState sample_state = hal::ChannelState::kOk;  // of a channel the sample accepted
  if (empty || !seen_) {
    sample_state = hal::ChannelState::kNeverSeen;
  } else if (reason == JointsReject::kTorn) {
    // No new copy this tick: the last accepted values stand while they are fresh.
    sample_state = fresh ? hal::ChannelState::kOk : hal::ChannelState::kStale;
  } else if (reason == JointsReject::kOld || reason == JointsReject::kFrozen) {
    sample_state = hal::ChannelState::kStale;
  } else if (reason != JointsReject::kNone) {
    sample_state = hal::ChannelState::kFault;
  }
  hal::ChannelHealth h;
  h.age_us = AgeUs(seen_, now_ns, good_stamp_ns_);
  h.lost_samples = torn_;
  h.rejected_frames = channel_rejects_;
  h.status_bits = static_cast<std::uint16_t>(reason);  // this read's JointsReject
  auto state = [&](bool ok) {
    return sample_state == hal::ChannelState::kOk && !ok ? hal::ChannelState::kFault : sample_state;
  };
  out.num_joints = static_cast<std::uint16_t>(num_joints_);
  out.num_wrenches = static_cast<std::uint16_t>(num_wrenches_);
  for (std::size_t j = 0; j < num_joints_; ++j) {
    hal::JointSample& o = out.joints[j];
    o = good_.joints[j];
    o.encoder = h;
    o.encoder.state = state(encoder_ok_[j]);
    o.torque_sensor = h;
    o.torque_sensor.state = state(torque_ok_[j]);
  }
  for (std::size_t k = 0; k < num_wrenches_; ++k) {
    out.wrenches[k].wrench = good_.wrenches[k].wrench;
    out.wrenches[k].health = h;
    out.wrenches[k].health.state = state(wrench_ok_[k]);
  }
}

FrameworkJointsCounters FrameworkJoints::counters() const noexcept {
  FrameworkJointsCounters c;
  // relaxed: each counter is read untorn; they need not be mutually consistent.
  c.reads = counters_.reads.load(std::memory_order_relaxed);
  c.accepted = counters_.accepted.load(std::memory_order_relaxed);
  c.empty = counters_.empty.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < kNumJointsRejects; ++i)
    c.rejected[i] = counters_.rejected[i].load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < kNumChannelRejects; ++i)
    c.channel_rejected[i] = counters_.channel_rejected[i].load(std::memory_order_relaxed);
  return c;
}

// ---- FrameworkJointsWriter -------------------------------------------------------------------

FrameworkJointsWriter::FrameworkJointsWriter(const std::string& name)
    : mapping_(std::make_unique<JointsMapping>(name, false)), segment_(mapping_->get()) {
  if (!heft_joints_compatible(segment_))
    throw std::runtime_error("framework joints " + SegmentPath(name) + ": layout " +
                             std::to_string(segment_->header.layout_version) +
                             " is not this build's " + std::to_string(HEFT_JOINTS_LAYOUT_VERSION));
  heft_joints_attach_writer(segment_, static_cast<std::uint32_t>(getpid()));
}

FrameworkJointsWriter::FrameworkJointsWriter(heft_joints_segment* segment) : segment_(segment) {
  if (segment == nullptr || !heft_joints_compatible(segment))
    throw std::invalid_argument("framework joints writer: null or uninitialised segment");
  heft_joints_attach_writer(segment_, static_cast<std::uint32_t>(getpid()));
}

}  // namespace heft::host

#include "heft/host/framework_input.hpp"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "heft/hal/enum_name.hpp"

namespace heft::host {
namespace {

std::string SegmentPath(const std::string& name) {
  return "/dev/shm/" + name;
}

template <std::size_t N>
bool Finite(const double (&v)[N]) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

template <std::size_t N>
double Norm(const double (&v)[N]) {
  double s = 0.0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

// In InputReject's declaration order.
constexpr std::array<const char*, kNumInputRejects> kInputRejectNames{
    "none",       "incompatible",     "torn",           "flags",           "non_finite",
    "quaternion", "angular_velocity", "specific_force", "linear_velocity", "future_stamp",
    "old_stamp",  "frozen_sequence"};

}  // namespace

const char* InputRejectName(InputReject reason) noexcept {
  return hal::EnumName(reason, kInputRejectNames, "unknown");
}

// ---- FrameworkInput --------------------------------------------------------------------------

FrameworkInput::FrameworkInput(const std::string& name, const FrameworkInputLimits& limits)
    : mapping_(std::make_unique<InputMapping>(name, true)),
      segment_(mapping_->get()),
      limits_(limits) {
  Attach(mapping_->created());
}

FrameworkInput::FrameworkInput(heft_input_segment* segment, const FrameworkInputLimits& limits)
    : segment_(segment), limits_(limits) {
  if (segment == nullptr) throw std::invalid_argument("framework input: null segment");
  Attach(false);
}

void FrameworkInput::Attach(bool fresh) {
  const auto positive = [](double v) { return std::isfinite(v) && v > 0.0; };
  if (limits_.timeout_ns <= 0 || limits_.future_tolerance_ns < 0 ||
      !positive(limits_.quaternion_tolerance) || limits_.quaternion_tolerance >= 1.0 ||
      !positive(limits_.max_angular_velocity) || !positive(limits_.max_specific_force) ||
      !positive(limits_.max_linear_velocity) || limits_.max_read_attempts < 1)
    throw std::invalid_argument(
        "framework input limits: timeout > 0, future tolerance >= 0, quaternion tolerance in (0, "
        "1), "
        "bounds > 0 and read attempts >= 1 required");
  const auto pid = static_cast<std::uint32_t>(getpid());
  if (fresh || !heft_input_compatible(segment_)) {
    heft_input_init(segment_, pid);
  } else {
    heft_input_set_reader(segment_, pid);
  }
  heft_input_commands c;
  heft_input_read_commands(segment_, &c);
  for (std::size_t i = 0; i < kNumCommands; ++i) command_base_[i] = c.count[i];
  last_command_total_ = c.last_command >> 8;
}

InputReject FrameworkInput::Validate(const heft_input_sample& s,
                                     std::int64_t now_ns) const noexcept {
  constexpr std::uint32_t kMotion = HEFT_INPUT_HAS_SPECIFIC_FORCE | HEFT_INPUT_HAS_LINEAR_VELOCITY;
  if ((s.flags & kMotion) == 0 || (s.flags & ~kMotion) != 0) return InputReject::kFlags;
  const bool force = (s.flags & HEFT_INPUT_HAS_SPECIFIC_FORCE) != 0;
  const bool velocity = (s.flags & HEFT_INPUT_HAS_LINEAR_VELOCITY) != 0;
  if (!Finite(s.orientation) || !Finite(s.angular_velocity) ||
      (force && !Finite(s.specific_force)) || (velocity && !Finite(s.linear_velocity)))
    return InputReject::kNonFinite;
  if (std::abs(Norm(s.orientation) - 1.0) > limits_.quaternion_tolerance)
    return InputReject::kQuaternion;
  if (Norm(s.angular_velocity) > limits_.max_angular_velocity) return InputReject::kAngularVelocity;
  if (force && Norm(s.specific_force) > limits_.max_specific_force)
    return InputReject::kSpecificForce;
  if (velocity && Norm(s.linear_velocity) > limits_.max_linear_velocity)
    return InputReject::kLinearVelocity;
  return CheckStamp(
      s.stamp_ns, now_ns, limits_.timeout_ns, limits_.future_tolerance_ns,
      StampReasons<InputReject>{InputReject::kNone, InputReject::kFuture, InputReject::kOld});
}

void FrameworkInput::Accept(const heft_input_sample& s, std::int64_t /*now_ns*/) noexcept {
  const double n = Norm(s.orientation);
  for (std::size_t i = 0; i < 4; ++i) good_.orientation[i] = s.orientation[i] / n;
  for (std::size_t i = 0; i < 3; ++i) good_.angular_velocity[i] = s.angular_velocity[i];
  good_.has_specific_force = (s.flags & HEFT_INPUT_HAS_SPECIFIC_FORCE) != 0;
  good_.has_linear_velocity = (s.flags & HEFT_INPUT_HAS_LINEAR_VELOCITY) != 0;
  for (std::size_t i = 0; i < 3; ++i) {
    good_.specific_force[i] = good_.has_specific_force ? s.specific_force[i] : 0.0;
    good_.specific_force_point[i] = 0.0;  // the segment's specific force is at the base origin
    good_.linear_velocity[i] = good_.has_linear_velocity ? s.linear_velocity[i] : 0.0;
    good_.position[i] = 0.0;
  }
  good_stamp_ns_ = s.stamp_ns;
  seen_ = true;
}

void FrameworkInput::ReadCommands(CommandEdges& cmds) noexcept {
  heft_input_commands c;
  heft_input_read_commands(segment_, &c);
  cmds = CommandEdges{};
  std::uint64_t delivered = 0;
  for (std::size_t i = 0; i < kNumCommands; ++i) {
    std::uint64_t n = 0;
    if (c.count[i] >= command_base_[i]) {
      n = c.count[i] - command_base_[i];
    } else {
      // The counter went backwards: the segment was re-initialised (a writer reset). What it
      // counts now arrived since then; the old difference is not a flood of commands.
      n = c.count[i];
      Bump(counters_.writer_resets);
    }
    command_base_[i] = c.count[i];
    cmds.count[i] = Saturate32(n);
    delivered += n;
  }
  const std::uint64_t total = c.last_command >> 8;
  const auto id = static_cast<std::size_t>(c.last_command & 0xFFU);
  if (total != last_command_total_ && id < kNumCommands && cmds.count[id] != 0)
    cmds.last = static_cast<int>(id);
  last_command_total_ = total;
  if (delivered != 0) Bump(counters_.commands, delivered);
}

bool FrameworkInput::Read(std::int64_t now_ns, hal::BaseSample& out, CommandEdges& cmds) noexcept {
  Bump(counters_.reads);
  ReadCommands(cmds);

  InputReject reason = InputReject::kNone;
  bool empty = false;
  heft_input_sample s;
  if (!heft_input_compatible(segment_)) {
    reason = InputReject::kIncompatible;
  } else {
    const int r = heft_input_read(segment_, &s, limits_.max_read_attempts);
    if (r == HEFT_INPUT_EMPTY) {
      empty = true;
    } else if (r == HEFT_INPUT_TORN) {
      reason = InputReject::kTorn;
      ++torn_;
    } else {
      sequence_.Observe(s.sequence, now_ns);
      reason = Validate(s, now_ns);
      if (reason == InputReject::kNone && sequence_.Frozen(now_ns, limits_.timeout_ns))
        reason = InputReject::kFrozen;
      if (reason == InputReject::kNone) Accept(s, now_ns);
    }
  }

  hal::ChannelHealth health = out.health;
  out = good_;
  if (empty) {
    Bump(counters_.empty);
    health.state = hal::ChannelState::kNeverSeen;
  } else if (reason == InputReject::kNone) {
    Bump(counters_.accepted);
    health.state = hal::ChannelState::kOk;
  } else {
    Bump(counters_.rejected[static_cast<std::size_t>(reason)]);
    ++rejected_reads_;
    if (reason == InputReject::kTorn) {
      // No new copy this tick: the last accepted sample stands while it is fresh.
      const bool fresh = Fresh(seen_, now_ns, good_stamp_ns_, limits_.timeout_ns);
      health.state = fresh ? hal::ChannelState::kOk
                           : (seen_ ? hal::ChannelState::kStale : hal::ChannelState::kNeverSeen);
    } else if (reason == InputReject::kOld || reason == InputReject::kFrozen) {
      health.state = hal::ChannelState::kStale;
    } else {
      health.state = hal::ChannelState::kFault;
    }
  }
  health.age_us = AgeUs(seen_, now_ns, good_stamp_ns_);
  health.lost_samples = torn_;
  health.rejected_frames = rejected_reads_;
  health.status_bits = static_cast<std::uint16_t>(reason);  // this read's InputReject
  out.health = health;
  state_.store(static_cast<std::uint8_t>(health.state), std::memory_order_relaxed);
  return out.health.ok();
}

FrameworkInputCounters FrameworkInput::counters() const noexcept {
  FrameworkInputCounters c;
  // relaxed: each counter is read untorn; they need not be mutually consistent.
  c.reads = counters_.reads.load(std::memory_order_relaxed);
  c.accepted = counters_.accepted.load(std::memory_order_relaxed);
  c.empty = counters_.empty.load(std::memory_order_relaxed);
  c.commands = counters_.commands.load(std::memory_order_relaxed);
  c.writer_resets = counters_.writer_resets.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < kNumInputRejects; ++i)
    c.rejected[i] = counters_.rejected[i].load(std::memory_order_relaxed);
  return c;
}

// ---- FrameworkInputWriter --------------------------------------------------------------------

FrameworkInputWriter::FrameworkInputWriter(const std::string& name)
    : mapping_(std::make_unique<InputMapping>(name, false)), segment_(mapping_->get()) {
  if (!heft_input_compatible(segment_))
    throw std::runtime_error("framework input " + SegmentPath(name) + ": layout " +
                             std::to_string(segment_->header.layout_version) +
                             " is not this build's " + std::to_string(HEFT_INPUT_LAYOUT_VERSION));
  heft_input_attach_writer(segment_, static_cast<std::uint32_t>(getpid()));
}

FrameworkInputWriter::FrameworkInputWriter(heft_input_segment* segment) : segment_(segment) {
  if (segment == nullptr || !heft_input_compatible(segment))
    throw std::invalid_argument("framework input writer: null or uninitialised segment");
  heft_input_attach_writer(segment_, static_cast<std::uint32_t>(getpid()));
}

}  // namespace heft::host

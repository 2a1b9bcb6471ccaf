// heftd's side of the framework joint-state segment (hal/framework_joints.h): the joint positions,
// velocities and torques, and optionally the foot wrenches, of a robot whose controller framework
// owns the joints (drivers.joints_from / ft_cells_from: framework).
//
// FrameworkJoints creates (or re-attaches to) the segment at set-up with the configuration's joint
// and wrench names, and then, on the 1 kHz driver thread, Read() checks the newest sample as the
// framework input's reader does (framework_input.hpp): the whole sample (torn copies retried, the
// counts, stamp, sequence) and then every channel on its own (the framework's validity bit,
// finite, within limits). What passes reaches the driver loop in configuration order with each
// channel's health; nothing else does. Read() never allocates, locks, throws or logs.
//
// FrameworkJointsWriter is the framework's side in C++ (tests, the simulator's stand-in
// framework); C frameworks use the header's heft_joints_* functions directly.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "heft/hal/framework_joints.h"
#include "heft/hal/robot_state.hpp"
#include "heft/host/framework_segment.hpp"

namespace heft::host {

/// One joint's limits (the URDF's <limit>; infinite where it has none).
struct JointLimits {
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  double velocity = std::numeric_limits<double>::infinity();  ///< |v| [rad/s or m/s]
  double effort = std::numeric_limits<double>::infinity();    ///< |τ| [Nm or N]
};

/// What Read() accepts besides each joint's limits.
struct FrameworkJointsLimits {
  std::int64_t timeout_ns = 20'000'000;  ///< stamp older, or sequence unchanged this long: stale
  std::int64_t future_tolerance_ns = 1'000'000;  ///< stamp ahead of `now` by more: fault
  double position_margin = 0.05;  ///< allowed beyond a joint's position limits [rad or m]
  double limit_factor = 2.0;      ///< |v| and |τ| up to this times the URDF's velocity and effort
  double max_force = 1e4;         ///< |f| of a wrench [N]
  double max_moment = 1e3;        ///< |n| of a wrench [Nm]
  int max_read_attempts = HEFT_JOINTS_READ_ATTEMPTS;  ///< torn copies retried per Read()
};

/// Why a whole sample was not accepted (every channel's status_bits carries it, 0 if accepted).
enum class JointsReject : std::uint8_t {
  kNone = 0,
  kIncompatible,  ///< the segment's magic/layout is not this build's
  kTorn,          ///< every copy attempt overlapped a write
  kCount,         ///< num_joints / num_wrenches are not the configuration's
  kFuture,        ///< stamp ahead of now
  kOld,           ///< stamp older than the timeout (stale)
  kFrozen,        ///< sequence not advancing for longer than the timeout (stale)
  kCount_
};
inline constexpr std::size_t kNumJointsRejects = static_cast<std::size_t>(JointsReject::kCount_);
const char* JointsRejectName(JointsReject reason) noexcept;

/// Why one channel of an accepted sample was not used (it is in fault until a good value comes).
enum class ChannelReject : std::uint8_t {
  kInvalid,    ///< the framework's validity bit is clear
  kNonFinite,  ///< NaN or inf
  kPosition,   ///< beyond the position limits and the margin
  kVelocity,   ///< |v| beyond limit_factor × the velocity limit
  kTorque,     ///< |τ| beyond limit_factor × the effort limit
  kWrench,     ///< |f| or |n| beyond max_force / max_moment
  kCount
};
inline constexpr std::size_t kNumChannelRejects = static_cast<std::size_t>(ChannelReject::kCount);
const char* ChannelRejectName(ChannelReject reason) noexcept;

struct FrameworkJointsCounters {
  std::uint64_t reads = 0;     ///< Read() calls
  std::uint64_t accepted = 0;  ///< reads whose sample passed the whole-sample checks
  std::uint64_t empty = 0;     ///< reads before the framework wrote anything
  std::array<std::uint64_t, kNumJointsRejects> rejected{};           ///< by JointsReject
  std::array<std::uint64_t, kNumChannelRejects> channel_rejected{};  ///< by ChannelReject
  [[nodiscard]] std::uint64_t rejected_total() const noexcept {
    std::uint64_t n = 0;
    for (auto r : rejected) n += r;
    return n;
  }
  [[nodiscard]] std::uint64_t channel_rejected_total() const noexcept {
    std::uint64_t n = 0;
    for (auto r : channel_rejected) n += r;
    return n;
  }
};

/// What the segment carries for this configuration: joints and wrench frames in its order.
struct FrameworkJointsLayout {
  std::vector<std::string> joints;         ///< drivers.joints' names
  std::vector<JointLimits> limits;         ///< per joint (same size)
  std::vector<std::string> wrench_frames;  ///< drivers.ft_cells' frames (empty: none expected)
};

/// A shared-memory mapping of the segment (RAII: unmapped on destruction, never unlinked).
class JointsMapping {
 public:
  /// create: shm_open(O_CREAT, 0660) + fchmod 0660 + ftruncate (heftd); otherwise open an
  /// existing segment read-write (the framework). Throws std::runtime_error naming /dev/shm/<name>.
  JointsMapping(const std::string& name, bool create)
      : mapping_("framework joints", name, sizeof(heft_joints_segment), create,
                 HEFT_JOINTS_LAYOUT_VERSION) {}
  [[nodiscard]] heft_joints_segment* get() const noexcept {
    return static_cast<heft_joints_segment*>(mapping_.get());
  }
  /// Removes /dev/shm/<name> (tests, heft-sim; heftd leaves the segment for the framework).
  static void Unlink(const std::string& name) noexcept { FrameworkSegment::Unlink(name); }

 private:
  FrameworkSegment mapping_;
};

class FrameworkJoints {
 public:
  /// Creates /dev/shm/<name> (mode 0660) or attaches to it and initialises it with `layout`'s
  /// names (a framework re-checks its slots when reader_pid changes). Throws std::runtime_error
  /// (name and errno) or std::invalid_argument (layout, limits) at set-up.
  FrameworkJoints(const std::string& name, const FrameworkJointsLayout& layout,
                  const FrameworkJointsLimits& limits = {});
  /// The same on a segment someone else maps (tests, in-process simulator); not owned.
  FrameworkJoints(heft_joints_segment* segment, const FrameworkJointsLayout& layout,
                  const FrameworkJointsLimits& limits);

  /// 1 kHz driver thread (one thread): the newest sample into out.joints[0, n) and
  /// out.wrenches[0, m) (the last accepted value of each channel, with its health: ok, stale,
  /// fault or never seen), and num_joints / num_wrenches. Returns true when the whole sample was
  /// accepted. Never allocates, locks, throws or logs.
  bool Read(std::int64_t now_ns, hal::RobotStateSample& out) noexcept;

  /// Any thread: a copy of the counters (each one individually atomic).
  [[nodiscard]] FrameworkJointsCounters counters() const noexcept;
  [[nodiscard]] const heft_joints_segment* segment() const noexcept { return segment_; }

 private:
  void Init(const FrameworkJointsLayout& layout);
  [[nodiscard]] JointsReject Validate(const heft_joints_sample& s,
                                      std::int64_t now_ns) const noexcept;
  void AcceptChannels(const heft_joints_sample& s) noexcept;
  void Health(hal::RobotStateSample& out, JointsReject reason, bool empty,
              std::int64_t now_ns) noexcept;
  static void Bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) noexcept {
    // relaxed: single writer (the driver thread); readers only need each value untorn.
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  std::unique_ptr<JointsMapping> mapping_;
  heft_joints_segment* segment_ = nullptr;
  FrameworkJointsLimits limits_;
  std::vector<JointLimits> joint_limits_;
  std::size_t num_joints_ = 0, num_wrenches_ = 0;

  // Driver-thread state: the sample read (large: a member, not on the stack), the last accepted
  // value of every channel and whether it is usable now.
  heft_joints_sample read_{};
  hal::RobotStateSample good_;
  std::array<bool, hal::kMaxJoints> encoder_ok_{}, torque_ok_{};
  std::array<bool, hal::kMaxWrenchSensors> wrench_ok_{};
  std::int64_t good_stamp_ns_ = 0;
  bool seen_ = false;
  SequenceWatch sequence_;
  std::uint32_t torn_ = 0;
  std::uint32_t channel_rejects_ = 0;

  struct AtomicCounters {
    std::atomic<std::uint64_t> reads{0}, accepted{0}, empty{0};
    std::array<std::atomic<std::uint64_t>, kNumJointsRejects> rejected{};
    std::array<std::atomic<std::uint64_t>, kNumChannelRejects> channel_rejected{};
  } counters_;
};

/// The framework's side in C++: opens the segment heftd created (read-write, no O_CREAT) or uses
/// one in this process. Write() from one thread.
class FrameworkJointsWriter {
 public:
  /// Throws std::runtime_error if /dev/shm/<name> is missing ("is heftd running?") or speaks
  /// another layout.
  explicit FrameworkJointsWriter(const std::string& name);
  explicit FrameworkJointsWriter(heft_joints_segment* segment);
  void Write(const heft_joints_sample& sample) noexcept { heft_joints_write(segment_, &sample); }
  [[nodiscard]] heft_joints_segment* segment() const noexcept { return segment_; }

 private:
  std::unique_ptr<JointsMapping> mapping_;
  heft_joints_segment* segment_ = nullptr;
};

/// The limits of `joints` (URDF joint names) from a URDF model's <limit> elements.
template <typename Model>
std::vector<JointLimits> JointLimitsOf(const Model& model, const std::vector<std::string>& joints) {
  std::vector<JointLimits> out;
  for (const std::string& name : joints) {
    const auto& j = model.bodies[static_cast<std::size_t>(model.joint_body_index(name))].joint;
    JointLimits l;
    if (!j.continuous && j.upper > j.lower) {
      l.lower = j.lower;
      l.upper = j.upper;
    }
    if (j.velocity > 0.0) l.velocity = j.velocity;
    if (j.effort > 0.0) l.effort = j.effort;
    out.push_back(l);
  }
  return out;
}

}  // namespace heft::host

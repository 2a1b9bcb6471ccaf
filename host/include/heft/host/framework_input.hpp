// heftd's side of the framework input segment (hal/framework_input.h): the floating-base state and
// the commands that the robot's controller framework writes into POSIX shared memory.
//
// FrameworkInput creates (or re-attaches to) the segment at set-up and then, on the 1 kHz driver
// thread, Read() validates every field of the newest sample before it may reach the estimator and
// turns the command counters into edges. Read() never allocates, locks, throws or logs.
//
// FrameworkInputWriter is the framework's side in C++ (tests, the simulator, C++ frameworks); C
// frameworks use the header's heft_input_* functions directly.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "heft/hal/framework_input.h"
#include "heft/hal/robot_state.hpp"
#include "heft/host/framework_segment.hpp"
#include "heft/plugin/controller_interface.hpp"

namespace heft::host {

/// What Read() accepts. Defaults: an IMU-class base state (±2000 °/s gyro, ±16 g accelerometer)
/// written at 1 kHz; a timeout of 20 writer periods.
struct FrameworkInputLimits {
  std::int64_t timeout_ns = 20'000'000;  ///< stamp older, or sequence unchanged this long: stale
  std::int64_t future_tolerance_ns = 1'000'000;      ///< stamp ahead of `now` by more: fault
  double quaternion_tolerance = 0.01;                ///< allowed | |q| - 1 | (then normalised)
  double max_angular_velocity = 35.0;                ///< |w_WB_B| [rad/s]
  double max_specific_force = 160.0;                 ///< |f_Bo_B| [m/s^2]
  double max_linear_velocity = 10.0;                 ///< |v_WBo_W| [m/s]
  int max_read_attempts = HEFT_INPUT_READ_ATTEMPTS;  ///< torn copies retried per Read()
};

/// Why a read was not accepted (ChannelHealth::status_bits carries this read's, 0 if accepted).
enum class InputReject : std::uint8_t {
  kNone = 0,
  kIncompatible,     ///< the segment's magic/layout is not this build's
  kTorn,             ///< every copy attempt overlapped a write
  kFlags,            ///< neither specific force nor linear velocity, or unknown flag bits
  kNonFinite,        ///< NaN or inf in a field in use
  kQuaternion,       ///< orientation norm outside 1 ± tolerance
  kAngularVelocity,  ///< |w| above the bound
  kSpecificForce,    ///< |f| above the bound
  kLinearVelocity,   ///< |v| above the bound
  kFuture,           ///< stamp ahead of now
  kOld,              ///< stamp older than the timeout (stale)
  kFrozen,           ///< sequence not advancing for longer than the timeout (stale)
  kCount
};
inline constexpr std::size_t kNumInputRejects = static_cast<std::size_t>(InputReject::kCount);
const char* InputRejectName(InputReject reason) noexcept;

struct FrameworkInputCounters {
  std::uint64_t reads = 0;          ///< Read() calls
  std::uint64_t accepted = 0;       ///< reads whose sample passed every check
  std::uint64_t empty = 0;          ///< reads before the framework wrote anything
  std::uint64_t commands = 0;       ///< command edges delivered
  std::uint64_t writer_resets = 0;  ///< command counters that went backwards
  std::array<std::uint64_t, kNumInputRejects> rejected{};  ///< by InputReject
  [[nodiscard]] std::uint64_t rejected_total() const noexcept {
    std::uint64_t n = 0;
    for (auto r : rejected) n += r;
    return n;
  }
};

inline constexpr std::size_t kNumCommands = HEFT_INPUT_NUM_COMMANDS;

/// Commands that arrived since the previous Read().
struct CommandEdges {
  std::array<std::uint32_t, kNumCommands> count{};  ///< new commands per heft_input_command_id
  int last = -1;  ///< the newest of them when known (heft_input_command_id), else -1

  [[nodiscard]] bool any() const noexcept {
    for (auto c : count)
      if (c != 0) return true;
    return false;
  }
  /// Calls fn(plugin::Command) once per kind that arrived (a repeat changes nothing): reset,
  /// disable, enable, stopped, walking, except that the newest (`last`) comes last.
  template <typename F>
  void ForEach(F&& fn) const {
    constexpr std::array<int, kNumCommands> kOrder{HEFT_INPUT_CMD_RESET, HEFT_INPUT_CMD_DISABLE,
                                                   HEFT_INPUT_CMD_ENABLE, HEFT_INPUT_CMD_STOPPED,
                                                   HEFT_INPUT_CMD_WALKING};
    for (int id : kOrder)
      if (id != last && count[static_cast<std::size_t>(id)] != 0)
        fn(static_cast<plugin::Command>(id));
    if (last >= 0 && count[static_cast<std::size_t>(last)] != 0)
      fn(static_cast<plugin::Command>(last));
  }
};

static_assert(static_cast<int>(plugin::Command::kRobotWalking) == HEFT_INPUT_CMD_WALKING);
static_assert(static_cast<int>(plugin::Command::kRobotStopped) == HEFT_INPUT_CMD_STOPPED);
static_assert(static_cast<int>(plugin::Command::kEnable) == HEFT_INPUT_CMD_ENABLE);
static_assert(static_cast<int>(plugin::Command::kDisable) == HEFT_INPUT_CMD_DISABLE);
static_assert(static_cast<int>(plugin::Command::kReset) == HEFT_INPUT_CMD_RESET);

/// A shared-memory mapping of the segment (RAII: unmapped on destruction, never unlinked).
class InputMapping {
 public:
  /// create: shm_open(O_CREAT, 0660) + fchmod 0660 + ftruncate (heftd); otherwise open an
  /// existing segment read-write (the framework). Throws std::runtime_error naming /dev/shm/<name>.
  InputMapping(const std::string& name, bool create)
      : mapping_("framework input", name, sizeof(heft_input_segment), create,
                 HEFT_INPUT_LAYOUT_VERSION) {}
  [[nodiscard]] heft_input_segment* get() const noexcept {
    return static_cast<heft_input_segment*>(mapping_.get());
  }
  [[nodiscard]] bool created() const noexcept { return mapping_.resized(); }
  /// Removes /dev/shm/<name> (tests; heftd leaves the segment for the framework).
  static void Unlink(const std::string& name) noexcept { FrameworkSegment::Unlink(name); }

 private:
  FrameworkSegment mapping_;
};

class FrameworkInput {
 public:
  /// Creates /dev/shm/<name> (mode 0660) or attaches to it; (re)initialises it when it is new or
  /// speaks another layout, and writes this process's pid as the reader. Commands counted before
  /// this are not delivered. Throws std::runtime_error (name and errno) or std::invalid_argument
  /// (limits) at set-up.
  explicit FrameworkInput(const std::string& name, const FrameworkInputLimits& limits = {});
  /// The same on a segment someone else maps (tests, in-process simulator); not owned.
  FrameworkInput(heft_input_segment* segment, const FrameworkInputLimits& limits);

  /// 1 kHz driver thread (one thread): validates the newest sample into `out` (the last accepted
  /// values, with out.health saying ok / stale / fault / never seen) and writes the commands that
  /// arrived since the previous call into `cmds`. Returns out.health.ok(). Never allocates, locks,
  /// throws or logs.
  bool Read(std::int64_t now_ns, hal::BaseSample& out, CommandEdges& cmds) noexcept;

  /// Any thread: a copy of the counters (each one individually atomic).
  [[nodiscard]] FrameworkInputCounters counters() const noexcept;
  [[nodiscard]] const FrameworkInputLimits& limits() const noexcept { return limits_; }
  [[nodiscard]] const heft_input_segment* segment() const noexcept { return segment_; }
  /// The base channel's state after the last Read() (any thread).
  [[nodiscard]] hal::ChannelState state() const noexcept {
    return static_cast<hal::ChannelState>(state_.load(std::memory_order_relaxed));
  }

 private:
  void Attach(bool fresh);
  [[nodiscard]] InputReject Validate(const heft_input_sample& s,
                                     std::int64_t now_ns) const noexcept;
  void Accept(const heft_input_sample& s, std::int64_t now_ns) noexcept;
  void ReadCommands(CommandEdges& cmds) noexcept;
  static void Bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) noexcept {
    // relaxed: single writer (the driver thread); readers only need each value untorn.
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  std::unique_ptr<InputMapping> mapping_;
  heft_input_segment* segment_ = nullptr;
  FrameworkInputLimits limits_;

  // Driver-thread state.
  hal::BaseSample good_;  ///< the last accepted sample (health not used)
  std::int64_t good_stamp_ns_ = 0;
  bool seen_ = false;  ///< a sample was accepted since start
  SequenceWatch sequence_;
  std::uint32_t torn_ = 0;
  std::uint32_t rejected_reads_ = 0;
  std::array<std::uint64_t, kNumCommands> command_base_{};
  std::uint64_t last_command_total_ = 0;

  struct AtomicCounters {
    std::atomic<std::uint64_t> reads{0}, accepted{0}, empty{0}, commands{0}, writer_resets{0};
    std::array<std::atomic<std::uint64_t>, kNumInputRejects> rejected{};
  } counters_;
  std::atomic<std::uint8_t> state_{static_cast<std::uint8_t>(hal::ChannelState::kNeverSeen)};
};

/// The framework's side in C++: opens the segment heftd created (read-write, no O_CREAT) or uses
/// one in this process. Write() from one thread, Command() from any.
class FrameworkInputWriter {
 public:
  /// Throws std::runtime_error if /dev/shm/<name> is missing ("is heftd running?") or speaks
  /// another layout.
  explicit FrameworkInputWriter(const std::string& name);
  explicit FrameworkInputWriter(heft_input_segment* segment);
  void Write(const heft_input_sample& sample) noexcept { heft_input_write(segment_, &sample); }
  void Command(plugin::Command command) noexcept {
    heft_input_command(segment_, static_cast<heft_input_command_id>(command));
  }
  [[nodiscard]] heft_input_segment* segment() const noexcept { return segment_; }

 private:
  std::unique_ptr<InputMapping> mapping_;
  heft_input_segment* segment_ = nullptr;
};

}  // namespace heft::host

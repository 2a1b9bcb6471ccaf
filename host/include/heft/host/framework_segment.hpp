// What heftd's readers of the framework's shared-memory segments (framework_input.hpp: the base
// state and commands; framework_joints.hpp: the joint state) have in common: the segment's mapping
// (created or opened, its size checked against the layout), and the checks of a copied sample's
// time (its stamp neither ahead of now nor older than the timeout, its sequence advancing, its
// age). The seqlock copy itself with its torn-read retries is the C headers'
// (hal/framework_segment.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

namespace heft::host {

/// A POSIX shared-memory segment of a fixed size, mapped read-write (RAII: unmapped on
/// destruction, never unlinked). `what` names it in every message ("framework input").
class FrameworkSegment {
 public:
  /// create: shm_open(O_CREAT, 0660) + fchmod 0660 + ftruncate to `bytes` when its size differs
  /// (heftd; resized() then says so); otherwise open an existing segment of exactly `bytes`
  /// read-write (the framework). Throws std::invalid_argument for a bad name and
  /// std::runtime_error naming /dev/shm/<name> and errno, or the sizes and `layout_version`.
  FrameworkSegment(const char* what, const std::string& name, std::size_t bytes, bool create,
                   unsigned layout_version);
  ~FrameworkSegment();
  FrameworkSegment(const FrameworkSegment&) = delete;
  FrameworkSegment& operator=(const FrameworkSegment&) = delete;
  [[nodiscard]] void* get() const noexcept { return memory_; }
  /// It was new (size 0) or of another size, and was truncated to this layout's.
  [[nodiscard]] bool resized() const noexcept { return resized_; }
  /// Removes /dev/shm/<name> (tests, heft-sim; heftd leaves a segment for the framework).
  static void Unlink(const std::string& name) noexcept;

 private:
  void* memory_ = nullptr;
  std::size_t bytes_ = 0;
  bool resized_ = false;
};

/// A reader's reasons for a sample's time: usable, stamped ahead of now, stamped too long ago.
template <typename Reason>
struct StampReasons {
  Reason ok, future, old;
};

/// The stamp against now: ahead by more than `future_tolerance_ns`, or older than `timeout_ns`.
/// Differences in unsigned arithmetic: a garbage stamp must not overflow.
template <typename Reason>
Reason CheckStamp(std::int64_t stamp_ns, std::int64_t now_ns, std::int64_t timeout_ns,
                  std::int64_t future_tolerance_ns, StampReasons<Reason> reasons) noexcept {
  const auto stamp = static_cast<std::uint64_t>(stamp_ns), now = static_cast<std::uint64_t>(now_ns);
  if (stamp_ns > now_ns && stamp - now > static_cast<std::uint64_t>(future_tolerance_ns))
    return reasons.future;
  if (stamp_ns <= now_ns && now - stamp > static_cast<std::uint64_t>(timeout_ns))
    return reasons.old;
  return reasons.ok;
}

/// The writer's sequence over the reads: when it last advanced. A sequence that stops advancing
/// for longer than the timeout makes the input stale even while its stamp moves.
class SequenceWatch {
 public:
  void Observe(std::uint64_t sequence, std::int64_t now_ns) noexcept {
    if (!seen_ || sequence != last_) {
      seen_ = true;
      last_ = sequence;
      advanced_ns_ = now_ns;
    }
  }
  [[nodiscard]] bool Frozen(std::int64_t now_ns, std::int64_t timeout_ns) const noexcept {
    return now_ns - advanced_ns_ > timeout_ns;
  }

 private:
  bool seen_ = false;
  std::uint64_t last_ = 0;
  std::int64_t advanced_ns_ = 0;
};

inline std::uint32_t Saturate32(std::uint64_t v) noexcept {
  return v > std::numeric_limits<std::uint32_t>::max() ? std::numeric_limits<std::uint32_t>::max()
                                                       : static_cast<std::uint32_t>(v);
}

/// The last accepted sample's age in µs (0 before any, or for a stamp not behind now).
inline std::uint32_t AgeUs(bool seen, std::int64_t now_ns, std::int64_t stamp_ns) noexcept {
  return seen && now_ns > stamp_ns
             ? Saturate32(static_cast<std::uint64_t>(now_ns - stamp_ns) / 1000U)
             : 0U;
}

/// The last accepted sample is still usable (a torn read leaves it standing while it is).
inline bool Fresh(bool seen, std::int64_t now_ns, std::int64_t stamp_ns,
                  std::int64_t timeout_ns) noexcept {
  return seen && now_ns >= stamp_ns && now_ns - stamp_ns <= timeout_ns;
}

}  // namespace heft::host

// The hand-off in shared memory, for whole-body controllers in other processes: a versioned header
// (the writer's identity and a heartbeat) followed by the same wait-free seqlock ring the
// in-process mailbox uses. heftd creates and writes it (POSIX shared memory, /dev/shm/<name>;
// heft/host/shared_memory.hpp); readers map it read-only and read it through the C API of
// hal/shared_hand_off.h (heft_handoff_read: the estimate only while the writer is live).
// Layout version 2:
//   offset 0    SharedHandOffHeader (128 bytes: identity; heartbeat in the second cache line)
//   offset 128  SeqlockRing<InertialEstimate, kSharedHandOffDepth> (its atomics are lock-free
//   64-bit words)
// A reader must refuse a region whose magic, layout_version, estimate_size or depth differ from its
// own.
#pragma once

#include <atomic>
#include <cstdint>

#include "heft/hal/inertial_estimate.hpp"
#include "heft/hal/seqlock_ring.hpp"

namespace heft::hal {

inline constexpr std::uint64_t kSharedHandOffMagic =
    0x444E414854464548ULL;  // "HEFTHAND", little-endian
inline constexpr std::uint32_t kSharedHandOffLayout = 2;
inline constexpr std::uint32_t kSharedHandOffDepth = 8;
inline constexpr std::uint32_t kWriterRunning = 1;  // SharedHandOffHeader::writer_state
inline constexpr std::uint32_t kWriterStopped = 2;  // stopped cleanly: nothing more will come

struct alignas(64) SharedHandOffHeader {
  // Stored last (release) by the writer: a reader that acquires it sees the rest of the header.
  std::atomic<std::uint64_t> magic{kSharedHandOffMagic};
  std::uint32_t layout_version = kSharedHandOffLayout;
  std::uint32_t estimate_size = sizeof(InertialEstimate);
  std::uint32_t depth = kSharedHandOffDepth;
  std::uint32_t writer_pid = 0;
  std::uint64_t writer_start_time = 0;  // /proc/<pid>/stat field 22 (clock ticks after boot)
  std::atomic<std::uint32_t> writer_state{0};
  std::uint32_t control_period_ns = 0;
  // Second cache line, written every control tick: CLOCK_MONOTONIC of the tick, and their count.
  alignas(64) std::atomic<std::int64_t> heartbeat_ns{0};
  std::atomic<std::uint64_t> heartbeats{0};
};
static_assert(sizeof(SharedHandOffHeader) == 128);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free &&
              std::atomic<std::int64_t>::is_always_lock_free &&
              std::atomic<std::uint32_t>::is_always_lock_free);

struct SharedHandOff {
  SharedHandOffHeader header;
  SeqlockRing<InertialEstimate, kSharedHandOffDepth> ring;

  [[nodiscard]] bool compatible() const noexcept {
    // acquire: pairs with the writer's release store of the magic.
    return header.magic.load(std::memory_order_acquire) == kSharedHandOffMagic &&
           header.layout_version == kSharedHandOffLayout &&
           header.estimate_size == sizeof(InertialEstimate) && header.depth == kSharedHandOffDepth;
  }
};

}  // namespace heft::hal

// The hand-off in shared memory, for whole-body controllers in other processes: a versioned header
// followed by the same wait-free seqlock ring the in-process mailbox uses. heftd creates and writes
// it (POSIX shared memory, /dev/shm/<name>); readers map it read-only, check the header, and call
// ring.read_latest(). Layout version 1:
//   offset 0    SharedHandOffHeader (64 bytes)
//   offset 64   SeqlockRing<InertialEstimate, kSharedHandOffDepth> (its atomics are lock-free
//   64-bit words)
// A reader must refuse a region whose magic, layout_version, estimate_size or depth differ from its
// own.
#pragma once

#include <cstdint>

#include "heft/hal/inertial_estimate.hpp"
#include "heft/hal/seqlock_ring.hpp"

namespace heft::hal {

inline constexpr std::uint64_t kSharedHandOffMagic =
    0x444E414854464548ULL;  // "HEFTHAND", little-endian
inline constexpr std::uint32_t kSharedHandOffLayout = 1;
inline constexpr std::uint32_t kSharedHandOffDepth = 8;

struct alignas(64) SharedHandOffHeader {
  std::uint64_t magic = kSharedHandOffMagic;
  std::uint32_t layout_version = kSharedHandOffLayout;
  std::uint32_t estimate_size = sizeof(InertialEstimate);
  std::uint32_t depth = kSharedHandOffDepth;
  std::uint32_t writer_pid = 0;
};

struct SharedHandOff {
  SharedHandOffHeader header;
  SeqlockRing<InertialEstimate, kSharedHandOffDepth> ring;

  [[nodiscard]] bool compatible() const noexcept {
    return header.magic == kSharedHandOffMagic && header.layout_version == kSharedHandOffLayout &&
           header.estimate_size == sizeof(InertialEstimate) && header.depth == kSharedHandOffDepth;
  }
};

}  // namespace heft::hal

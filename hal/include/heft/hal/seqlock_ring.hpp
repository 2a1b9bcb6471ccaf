// A single-writer, multi-reader ring of the last N values of a trivially copyable T, each slot
// guarded by its own sequence counter (a seqlock per slot).
//
// Wait-freedom: the writer never waits (publish is a bounded copy). A reader copies a slot and
// checks its sequence; it only has to retry when the writer overwrote that very slot during the
// copy, i.e. when the reader lags N publishes behind. Every read takes a bounded number of
// attempts and returns false rather than spin, so neither side can be blocked by the other.
//
// The payload is stored as atomic 64-bit words (release/acquire) so that the concurrent copy is not
// a data race in the C++ memory model (and ThreadSanitizer agrees); the sequence counters carry the
// ordering.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace heft::hal {

template <typename T, std::size_t N>
class SeqlockRing {
  static_assert(std::is_trivially_copyable_v<T>, "SeqlockRing holds trivially copyable values");
  static_assert(N >= 2 && (N & (N - 1)) == 0, "N must be a power of two");
  static constexpr std::size_t kWords = (sizeof(T) + 7) / 8;

 public:
  static constexpr std::size_t kCapacity = N;
  static constexpr int kMaxReadAttempts = 4;

  SeqlockRing() noexcept = default;
  SeqlockRing(const SeqlockRing&) = delete;
  SeqlockRing& operator=(const SeqlockRing&) = delete;

  /// Writer side (one thread only). Returns the publish index (1, 2, ...).
  std::uint64_t publish(const T& value) noexcept {
    // relaxed: only the writer modifies head_.
    const std::uint64_t index = head_.load(std::memory_order_relaxed) + 1;
    Slot& slot = slots_[index & (N - 1)];
    // Odd sequence = write in progress (relaxed: ordered by the release stores that follow).
    const std::uint64_t seq = slot.seq.load(std::memory_order_relaxed);
    slot.seq.store(seq + 1, std::memory_order_relaxed);
    std::array<std::uint64_t, kWords> words{};
    std::memcpy(words.data(), &value, sizeof(T));
    for (std::size_t i = 0; i < kWords; ++i) {
      // release: a reader whose acquire load sees this word also sees the odd sequence above, so
      // its re-check of the sequence detects the overlap. (No standalone fences: GCC's TSan does
      // not model them; on x86 release stores and acquire loads are plain moves.)
      slot.words[i].store(words[i], std::memory_order_release);
    }
    slot.index.store(index, std::memory_order_release);  // same pairing as the words
    // release: payload and index happen-before a reader that acquires the even sequence.
    slot.seq.store(seq + 2, std::memory_order_release);
    // release: a reader that acquires head_ sees the completed slot.
    head_.store(index, std::memory_order_release);
    return index;
  }

  /// Index of the newest published value (0 if none). acquire pairs with publish()'s release.
  [[nodiscard]] std::uint64_t latest_index() const noexcept {
    return head_.load(std::memory_order_acquire);
  }

  /// Copies the newest value. Returns false if nothing was published or the copy kept tearing.
  [[nodiscard]] bool read_latest(T& out) const noexcept {
    for (int attempt = 0; attempt < kMaxReadAttempts; ++attempt) {
      const std::uint64_t index = latest_index();
      if (index == 0) return false;
      if (read_index(index, out)) return true;
    }
    return false;
  }

  /// Copies the value published `back` publishes before the newest (0 = newest).
  [[nodiscard]] bool read_back(std::size_t back, T& out) const noexcept {
    const std::uint64_t head = latest_index();
    if (back >= N - 1 || head <= back) return false;  // keep one slot of slack for the writer
    return read_index(head - back, out);
  }

  /// Copies the value with publish index `index`, if it is still in the ring and not torn.
  [[nodiscard]] bool read_index(std::uint64_t index, T& out) const noexcept {
    const Slot& slot = slots_[index & (N - 1)];
    for (int attempt = 0; attempt < kMaxReadAttempts; ++attempt) {
      // acquire: pairs with the writer's final release store of the sequence.
      const std::uint64_t seq0 = slot.seq.load(std::memory_order_acquire);
      if ((seq0 & 1U) != 0) continue;                                         // write in progress
      if (slot.index.load(std::memory_order_acquire) != index) return false;  // overwritten
      std::array<std::uint64_t, kWords> words;
      for (std::size_t i = 0; i < kWords; ++i) {
        // acquire: pairs with the writer's release store of the word (see publish()), and keeps
        // the sequence re-check below after the copy.
        words[i] = slot.words[i].load(std::memory_order_acquire);
      }
      const std::uint64_t seq1 = slot.seq.load(std::memory_order_relaxed);
      if (seq0 == seq1) {
        std::memcpy(static_cast<void*>(&out), words.data(), sizeof(T));
        return true;
      }
    }
    return false;
  }

 private:
  struct alignas(64) Slot {
    std::atomic<std::uint64_t> seq{0};
    std::atomic<std::uint64_t> index{0};
    std::array<std::atomic<std::uint64_t>, kWords> words{};
  };
  alignas(64) std::atomic<std::uint64_t> head_{0};
  std::array<Slot, N> slots_{};
};

}  // namespace heft::hal

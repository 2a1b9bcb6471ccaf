// A bounded single-producer/single-consumer queue of trivially copyable records, wait-free on both
// sides: how real-time threads hand telemetry and events to a non-real-time thread that logs them,
// and the in-memory CAN bus's frames (drivers::MemoryBus). The project's one SPSC ring.
// push() fails (and counts a drop) when the queue is full: a slow logger never stalls the producer.
// push() and pop() are real-time status returns: [[nodiscard]], a caller that may lose a record
// says so with (void) (the drop is counted in drops()).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <type_traits>

namespace heft::hal {

template <typename T, std::size_t N>
class SpscQueue {
  static_assert(std::is_trivially_copyable_v<T>);
  static_assert(N >= 2 && (N & (N - 1)) == 0, "capacity must be a power of two");

 public:
  static constexpr std::size_t kCapacity = N;

  /// Producer thread only. False (and a drop counted) when full.
  [[nodiscard]] bool push(const T& value) noexcept {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    // acquire: the consumer's release store of tail_ frees the slot before we overwrite it.
    if (head - tail_.load(std::memory_order_acquire) >= N) {
      drops_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    slots_[head & (N - 1)] = value;
    // release: publishes the slot's content to the consumer's acquire load of head_.
    head_.store(head + 1, std::memory_order_release);
    return true;
  }
  /// Consumer thread only. False when empty.
  [[nodiscard]] bool pop(T& out) noexcept {
    const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    // acquire: pairs with push()'s release store; the slot's content is visible.
    if (tail == head_.load(std::memory_order_acquire)) return false;
    out = slots_[tail & (N - 1)];
    // release: the slot may be reused by the producer only after we copied it.
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }
  /// Producer thread only: no free slot now (a push would fail).
  [[nodiscard]] bool full() const noexcept {
    return head_.load(std::memory_order_relaxed) - tail_.load(std::memory_order_acquire) >= N;
  }
  /// Any thread: records queued now (exact on either side's own thread when the other is idle;
  /// otherwise a snapshot between 0 and N).
  [[nodiscard]] std::size_t size() const noexcept {
    // tail_ first: head_ read after it is never older, so the difference never goes negative.
    const std::uint64_t tail = tail_.load(std::memory_order_acquire);
    return static_cast<std::size_t>(head_.load(std::memory_order_acquire) - tail);
  }
  [[nodiscard]] std::uint64_t drops() const noexcept {
    return drops_.load(std::memory_order_relaxed);
  }

 private:
  alignas(64) std::atomic<std::uint64_t> head_{0};
  alignas(64) std::atomic<std::uint64_t> tail_{0};
  alignas(64) std::atomic<std::uint64_t> drops_{0};
  std::array<T, N> slots_{};
};

}  // namespace heft::hal

#include "heft/drivers/memory_bus.hpp"

#include <chrono>
#include <thread>

#include "heft/drivers/error_frames.hpp"

namespace heft::drivers {

hal::IoStatus MemoryBus::send(const hal::CanFrame& frame) noexcept {
  if (down_.load(std::memory_order_acquire) || off_.load(std::memory_order_acquire))
    return hal::IoStatus::kDown;
  // Back-pressure: when full the frame is lost (counted in ring_.drops()), as on a full socket
  // queue.
  if (!ring_.push(frame)) return hal::IoStatus::kEmpty;
  tx_.fetch_add(1, std::memory_order_relaxed);
  if (frame.is_error()) {
    errors_.fetch_add(1, std::memory_order_relaxed);
    if (frame.id & kErrBusOff) bus_off_.fetch_add(1, std::memory_order_relaxed);
  }
  return hal::IoStatus::kOk;
}

bool MemoryBus::EnterBusOff(std::int64_t stamp_ns) noexcept {
  if (off_.load(std::memory_order_acquire)) return false;
  // Counted as an error frame and a bus-off event (lost if the queue is full).
  (void)send(ErrorFrame(kErrBusOff, stamp_ns));
  off_.store(true, std::memory_order_release);
  return true;
}

hal::IoStatus MemoryBus::receive(hal::CanFrame& frame) noexcept {
  if (down_.load(std::memory_order_acquire)) return hal::IoStatus::kDown;
  if (!ring_.pop(frame)) return hal::IoStatus::kEmpty;
  rx_.fetch_add(1, std::memory_order_relaxed);
  return hal::IoStatus::kOk;
}

bool MemoryBus::wait(std::int64_t timeout_ns) noexcept {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
  while (queued() == 0) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

std::size_t MemoryBus::queued() const noexcept {
  return ring_.size();
}

hal::CanBusStats MemoryBus::stats() const noexcept {
  hal::CanBusStats s;
  s.rx_frames = rx_.load(std::memory_order_relaxed);
  s.tx_frames = tx_.load(std::memory_order_relaxed);
  s.kernel_drops = ring_.drops();
  s.error_frames = errors_.load(std::memory_order_relaxed);
  s.bus_off = bus_off_.load(std::memory_order_relaxed);
  s.restarts = restarts_.load(std::memory_order_relaxed);
  s.up = !down_.load(std::memory_order_relaxed) && !off_.load(std::memory_order_relaxed);
  return s;
}

bool MemoryBus::restart() noexcept {
  down_.store(false, std::memory_order_release);
  off_.store(false, std::memory_order_release);
  restarts_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace heft::drivers

// An in-memory CAN bus: a lock-free single-producer/single-consumer queue (hal::SpscQueue, the
// project's one SPSC ring) behind the CanTransport
// interface. The producer (the simulated robot, a test, a candump replay) calls send(); the driver
// loop calls receive(). Faults on request: the bus goes down (receive/send report kDown until
// restart()), the bus goes bus-off (as a SocketCAN interface does: an error frame of class
// bus-off reaches the reader, then nothing can be sent until restart()), frames are lost when the
// queue is full (counted as kernel drops, as SO_RXQ_OVFL would).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "heft/hal/can.hpp"
#include "heft/hal/spsc_queue.hpp"

namespace heft::drivers {

class MemoryBus final : public hal::CanTransport {
 public:
  static constexpr std::size_t kCapacity = 4096;  // frames; a power of two

  explicit MemoryBus(std::string name) : name_(std::move(name)) {}

  std::string_view name() const noexcept override { return name_; }
  // Consumer side.
  [[nodiscard]] hal::IoStatus receive(hal::CanFrame& frame) noexcept override;
  [[nodiscard]] bool wait(std::int64_t timeout_ns) noexcept override;
  // Producer side (also what a node on the bus transmitting looks like).
  [[nodiscard]] hal::IoStatus send(const hal::CanFrame& frame) noexcept override;
  hal::CanBusStats stats() const noexcept override;
  bool restart() noexcept override;

  // Fault injection: the bus goes down (bus-off) until restart().
  void set_down(bool down) noexcept { down_.store(down, std::memory_order_release); }
  // Fault injection: the controller goes bus-off. An error frame (class bus-off) is queued for the
  // reader, who still drains what was received before it; send() reports kDown until restart().
  // Producer side. Returns false when the bus is already off.
  bool EnterBusOff(std::int64_t stamp_ns) noexcept;
  bool bus_off() const noexcept { return off_.load(std::memory_order_acquire); }
  std::size_t queued() const noexcept;

 private:
  std::string name_;
  // The frames in flight; its drops() are the kernel drops (a full socket queue).
  hal::SpscQueue<hal::CanFrame, kCapacity> ring_;
  std::atomic<bool> down_{false};
  std::atomic<bool> off_{false};
  std::atomic<std::uint64_t> rx_{0}, tx_{0}, restarts_{0}, errors_{0}, bus_off_{0};
};

}  // namespace heft::drivers

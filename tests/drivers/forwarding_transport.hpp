// A transport in front of another that forwards every call; a test overrides what it changes
// (send, typically). Header-only, so that test_socketcan_vcan stays one self-contained executable
// (it runs inside a QEMU guest).
#pragma once

#include "heft/hal/can.hpp"

namespace heft::drivers::test {

class ForwardingTransport : public hal::CanTransport {
 public:
  explicit ForwardingTransport(hal::CanTransport& inner) : inner_(inner) {}
  std::string_view name() const noexcept override { return inner_.name(); }
  hal::IoStatus receive(hal::CanFrame& f) noexcept override { return inner_.receive(f); }
  hal::IoStatus send(const hal::CanFrame& f) noexcept override { return inner_.send(f); }
  bool wait(std::int64_t timeout_ns) noexcept override { return inner_.wait(timeout_ns); }
  hal::CanBusStats stats() const noexcept override { return inner_.stats(); }
  bool restart() noexcept override { return inner_.restart(); }

 protected:
  hal::CanTransport& inner_;
};

}  // namespace heft::drivers::test

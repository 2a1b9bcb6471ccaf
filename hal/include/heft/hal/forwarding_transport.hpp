// A transport in front of another that forwards every call; a subclass overrides what it changes
// (heftd's candump tap: receive; tests: send, typically). Header-only like the rest of hal, so that
// test_socketcan_vcan stays one self-contained executable (it runs inside a QEMU guest).
#pragma once

#include "heft/hal/can.hpp"

namespace heft::hal {

class ForwardingTransport : public CanTransport {
 public:
  explicit ForwardingTransport(CanTransport& inner) : inner_(inner) {}
  std::string_view name() const noexcept override { return inner_.name(); }
  IoStatus receive(CanFrame& f) noexcept override { return inner_.receive(f); }
  IoStatus send(const CanFrame& f) noexcept override { return inner_.send(f); }
  bool wait(std::int64_t timeout_ns) noexcept override { return inner_.wait(timeout_ns); }
  CanBusStats stats() const noexcept override { return inner_.stats(); }
  bool restart() noexcept override { return inner_.restart(); }

 protected:
  CanTransport& inner_;
};

}  // namespace heft::hal

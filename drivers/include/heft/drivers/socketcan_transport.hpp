// The SocketCAN transport: a raw CAN socket (CAN_RAW) bound to one interface, FD frames accepted,
// non-blocking, with an error mask (bus-off, controller problems, ACK — not every bus error) and
// the kernel's drop counter (SO_RXQ_OVFL). restart() goes through libsocketcan (can_do_restart) and
// must be called from a supervisor thread. The descriptor is owned (RAII).
#pragma once

#include <string>

#include "heft/hal/can.hpp"

namespace heft::drivers {

class SocketCanTransport final : public hal::CanTransport {
 public:
  // Opens and binds the socket; throws std::runtime_error naming the interface and the errno text.
  explicit SocketCanTransport(std::string interface);
  ~SocketCanTransport() override;
  SocketCanTransport(const SocketCanTransport&) = delete;
  SocketCanTransport& operator=(const SocketCanTransport&) = delete;

  std::string_view name() const noexcept override { return name_; }
  hal::IoStatus receive(hal::CanFrame& frame) noexcept override;
  hal::IoStatus send(const hal::CanFrame& frame) noexcept override;
  bool wait(std::int64_t timeout_ns) noexcept override;
  hal::CanBusStats stats() const noexcept override { return stats_; }
  bool restart() noexcept override;

 private:
  std::string name_;
  int fd_ = -1;
  hal::CanBusStats stats_;
};

}  // namespace heft::drivers

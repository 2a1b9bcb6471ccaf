// The SocketCAN transport: a raw CAN socket (CAN_RAW) bound to one interface, FD frames accepted,
// non-blocking, with an error mask (bus-off, controller problems, ACK, restarted, TX timeout — not
// every bus error), the kernel's drop counter (SO_RXQ_OVFL) and its receive stamp of every frame
// (SO_TIMESTAMPNS, carried to CLOCK_MONOTONIC as hal::CanFrame::kRxStamp). Optional kernel
// receive filters (CAN_RAW_FILTER); by default every data frame is received. The descriptor is
// owned (RAII).
//
// Down interfaces: the kernel reports an interface going down (or away) once, as an error on the
// socket; from then on receive() checks the interface (two ioctls) and returns kDown on every call
// until it is up again, then carries on. restart() (supervisor thread) binds the socket again when
// the interface was deleted and created anew (new index), returns false at once while it is absent
// or administratively down, and otherwise restarts a bus-off controller through libsocketcan
// (can_do_restart; a virtual interface has no CAN link and the call fails cleanly).
//
// Error frames are sent and received as hal::CanFrame::kError with the class bits in the id.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "heft/hal/can.hpp"

namespace heft::drivers {

// One kernel receive filter: a data frame passes when (frame id & mask) == (id & mask) and its
// identifier kind (11 or 29 bits) is `extended`. Error frames follow the error mask, not filters.
struct CanIdFilter {
  std::uint32_t id = 0;
  std::uint32_t mask = 0;
  bool extended = false;
};

class SocketCanTransport final : public hal::CanTransport {
 public:
  static constexpr std::size_t kMaxFilters = 64;
  // Opens and binds the socket; throws std::runtime_error naming the interface and the errno text.
  // `filters` empty: every data frame is received; at most kMaxFilters.
  explicit SocketCanTransport(std::string interface, std::span<const CanIdFilter> filters = {});
  ~SocketCanTransport() override;
  SocketCanTransport(const SocketCanTransport&) = delete;
  SocketCanTransport& operator=(const SocketCanTransport&) = delete;

  std::string_view name() const noexcept override { return name_; }
  [[nodiscard]] hal::IoStatus receive(hal::CanFrame& frame) noexcept override;
  [[nodiscard]] hal::IoStatus send(const hal::CanFrame& frame) noexcept override;
  // True when a frame (or an error to report, e.g. the interface went down) is waiting; the timeout
  // is rounded up to whole milliseconds.
  [[nodiscard]] bool wait(std::int64_t timeout_ns) noexcept override;
  hal::CanBusStats stats() const noexcept override;
  bool restart() noexcept override;

 private:
  bool ApplyFilters() noexcept;
  // The interface exists under our name with the index the socket is bound to, and is up.
  bool InterfaceUp() const noexcept;

  std::string name_;
  std::vector<CanIdFilter> filters_;
  int fd_ = -1;
  std::atomic<int> ifindex_{0};  // written by restart() (supervisor), read by receive() (loop)
  std::atomic<std::uint64_t> restarts_{0};
  hal::CanBusStats stats_;
};

}  // namespace heft::drivers

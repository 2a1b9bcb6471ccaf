// Error-frame classes carried in hal::CanFrame::id when kError is set. The values are Linux's
// CAN_ERR_* class bits (linux/can/error.h), so the SocketCAN transport passes them through and the
// in-memory bus and the tests use the same numbers without Linux headers.
#pragma once

#include <cstdint>

#include "heft/hal/can.hpp"

namespace heft::drivers {

inline constexpr std::uint32_t kErrTxTimeout = 0x001;
inline constexpr std::uint32_t kErrLostArbitration = 0x002;
inline constexpr std::uint32_t kErrController = 0x004;
inline constexpr std::uint32_t kErrProtocol = 0x008;
inline constexpr std::uint32_t kErrTransceiver = 0x010;
inline constexpr std::uint32_t kErrAck = 0x020;
inline constexpr std::uint32_t kErrBusOff = 0x040;
inline constexpr std::uint32_t kErrBusError = 0x080;
inline constexpr std::uint32_t kErrRestarted = 0x100;

// An error frame of class(es) `classes`, as the kernel delivers one (8 data bytes, all zero here).
constexpr hal::CanFrame ErrorFrame(std::uint32_t classes, std::int64_t stamp_ns) noexcept {
  hal::CanFrame f;
  f.flags = hal::CanFrame::kError;
  f.id = classes;
  f.len = 8;
  f.stamp_ns = stamp_ns;
  return f;
}

}  // namespace heft::drivers

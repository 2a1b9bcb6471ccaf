// Error-frame classes carried in hal::CanFrame::id when kError is set. The values are Linux's
// CAN_ERR_* class bits (linux/can/error.h), so the SocketCAN transport passes them through and the
// in-memory bus and the tests use the same numbers without Linux headers.
#pragma once

#include <cstdint>

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

}  // namespace heft::drivers

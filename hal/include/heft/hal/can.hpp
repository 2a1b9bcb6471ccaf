// CAN transport interface: what a driver needs from a bus, nothing Linux-specific.
//
// Lifecycle contract
//   construction / open():  may allocate, open descriptors, block, throw (set-up only).
//   receive(), send(), wait(), stats(): real-time safe. They never allocate, lock, throw or log;
//     a timeout or an empty queue is a status, not an error.
//   restart(): may block (it goes through the kernel's netlink); call it from a supervisor thread,
//     never from the 1 kHz loop.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace heft::hal {

/// One CAN frame, classic or FD. Mirrors the information of Linux's canfd_frame without its header.
struct CanFrame {
  static constexpr std::uint8_t kMaxData = 64;
  // Flags.
  static constexpr std::uint8_t kFd = 1U << 0;        ///< carried in a CAN FD frame
  static constexpr std::uint8_t kExtended = 1U << 1;  ///< 29-bit identifier
  static constexpr std::uint8_t kRemote = 1U << 2;    ///< remote transmission request
  static constexpr std::uint8_t kError = 1U << 3;  ///< error frame (id holds the error class bits)
  static constexpr std::uint8_t kBrs = 1U << 4;    ///< FD bit-rate switch
  static constexpr std::uint8_t kEsi = 1U << 5;    ///< FD error state indicator
  /// stamp_ns is the frame's receive time on the driver loop's clock (SocketCAN: the kernel's
  /// receive stamp on CLOCK_MONOTONIC; a candump replay: the log's stamp): a sample's age counts
  /// from it. Without it the loop takes the tick that drained the frame as its receive time.
  static constexpr std::uint8_t kRxStamp = 1U << 6;

  std::uint32_t id = 0;  ///< identifier without flag bits (or error class for error frames)
  std::uint8_t len = 0;  ///< payload length in bytes (0..8 classic, 0..64 FD)
  std::uint8_t flags = 0;
  std::int64_t stamp_ns = 0;  ///< receive time (with kRxStamp) or send time; 0 if unknown
  std::array<std::uint8_t, kMaxData> data{};

  [[nodiscard]] bool is_fd() const noexcept { return (flags & kFd) != 0; }
  [[nodiscard]] bool is_error() const noexcept { return (flags & kError) != 0; }
  [[nodiscard]] bool is_remote() const noexcept { return (flags & kRemote) != 0; }
  [[nodiscard]] bool is_extended() const noexcept { return (flags & kExtended) != 0; }
};

enum class IoStatus : std::uint8_t {
  kOk,     ///< one frame transferred
  kEmpty,  ///< nothing to read now (receive) / would block (send): back-pressure, not a fault
  kDown,   ///< the interface is down or gone
  kError,  ///< any other failure; see stats()
};

/// Bus health, cumulative since open. Trivially copyable: it travels with the samples.
struct CanBusStats {
  std::uint64_t rx_frames = 0;
  std::uint64_t tx_frames = 0;
  std::uint64_t kernel_drops = 0;  ///< frames the kernel dropped (SO_RXQ_OVFL)
  std::uint64_t error_frames = 0;  ///< error frames of any class
  std::uint64_t bus_off = 0;       ///< bus-off events
  std::uint64_t controller_errors = 0;
  std::uint64_t ack_errors = 0;
  std::uint64_t restarts = 0;
  std::uint64_t io_errors = 0;
  bool up = false;
};

class CanTransport {
 public:
  virtual ~CanTransport() = default;
  /// The bus name (e.g. "can0"); stable for the transport's lifetime.
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  /// Non-blocking receive of one frame.
  [[nodiscard]] virtual IoStatus receive(CanFrame& frame) noexcept = 0;
  /// Non-blocking send of one frame.
  [[nodiscard]] virtual IoStatus send(const CanFrame& frame) noexcept = 0;
  /// Waits at most timeout_ns for a frame to become readable. Returns true if one is.
  [[nodiscard]] virtual bool wait(std::int64_t timeout_ns) noexcept = 0;
  [[nodiscard]] virtual CanBusStats stats() const noexcept = 0;
  /// Brings a bus-off interface back. May block: supervisor thread only. Returns true on success.
  virtual bool restart() noexcept = 0;
};

}  // namespace heft::hal

#include "heft/drivers/socketcan_transport.hpp"

#include <fcntl.h>
#include <libsocketcan.h>
#include <linux/can.h>
#include <linux/can/error.h>
#include <linux/can/raw.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace heft::drivers {

SocketCanTransport::SocketCanTransport(std::string interface) : name_(std::move(interface)) {
  auto fail = [&](const char* what) {
    const std::string msg = "CAN interface '" + name_ + "': " + what + ": " + std::strerror(errno);
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    throw std::runtime_error(msg);
  };
  fd_ = ::socket(PF_CAN, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, CAN_RAW);
  if (fd_ < 0) fail("socket(PF_CAN) failed (is the can-raw module loaded?)");
  const int on = 1;
  if (setsockopt(fd_, SOL_CAN_RAW, CAN_RAW_FD_FRAMES, &on, sizeof(on)) != 0)
    fail("CAN_RAW_FD_FRAMES");
  const can_err_mask_t mask =
      CAN_ERR_BUSOFF | CAN_ERR_CRTL | CAN_ERR_ACK | CAN_ERR_RESTARTED | CAN_ERR_TX_TIMEOUT;
  if (setsockopt(fd_, SOL_CAN_RAW, CAN_RAW_ERR_FILTER, &mask, sizeof(mask)) != 0)
    fail("CAN_RAW_ERR_FILTER");
  if (setsockopt(fd_, SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof(on)) != 0) fail("SO_RXQ_OVFL");
  const unsigned index = if_nametoindex(name_.c_str());
  if (index == 0) fail("no such interface");
  sockaddr_can addr{};
  addr.can_family = AF_CAN;
  addr.can_ifindex = static_cast<int>(index);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) fail("bind failed");
  stats_.up = true;
}

SocketCanTransport::~SocketCanTransport() {
  if (fd_ >= 0) ::close(fd_);
}

hal::IoStatus SocketCanTransport::receive(hal::CanFrame& out) noexcept {
  canfd_frame frame{};
  iovec iov{&frame, sizeof(frame)};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(std::uint32_t))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  const ssize_t n = ::recvmsg(fd_, &msg, MSG_DONTWAIT);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return hal::IoStatus::kEmpty;
    ++stats_.io_errors;
    stats_.up = errno != ENETDOWN && errno != ENODEV;
    return stats_.up ? hal::IoStatus::kError : hal::IoStatus::kDown;
  }
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
      std::uint32_t drops = 0;
      std::memcpy(&drops, CMSG_DATA(c), sizeof(drops));
      stats_.kernel_drops = drops;
    }
  if (n != CAN_MTU && n != CANFD_MTU) {
    ++stats_.io_errors;
    return hal::IoStatus::kError;
  }
  out = hal::CanFrame{};
  out.flags = n == CANFD_MTU ? hal::CanFrame::kFd : 0;
  if (frame.can_id & CAN_ERR_FLAG) {
    out.flags |= hal::CanFrame::kError;
    out.id = frame.can_id & CAN_ERR_MASK;
    ++stats_.error_frames;
    if (out.id & CAN_ERR_BUSOFF) ++stats_.bus_off;
    if (out.id & CAN_ERR_CRTL) ++stats_.controller_errors;
    if (out.id & CAN_ERR_ACK) ++stats_.ack_errors;
  } else {
    if (frame.can_id & CAN_EFF_FLAG) out.flags |= hal::CanFrame::kExtended;
    if (frame.can_id & CAN_RTR_FLAG) out.flags |= hal::CanFrame::kRemote;
    out.id = frame.can_id & ((frame.can_id & CAN_EFF_FLAG) ? CAN_EFF_MASK : CAN_SFF_MASK);
    if (out.is_fd() && (frame.flags & CANFD_BRS)) out.flags |= hal::CanFrame::kBrs;
    if (out.is_fd() && (frame.flags & CANFD_ESI)) out.flags |= hal::CanFrame::kEsi;
  }
  out.len = frame.len;
  std::memcpy(out.data.data(), frame.data, std::min<std::size_t>(frame.len, out.data.size()));
  ++stats_.rx_frames;
  return hal::IoStatus::kOk;
}

hal::IoStatus SocketCanTransport::send(const hal::CanFrame& in) noexcept {
  canfd_frame frame{};
  frame.can_id =
      in.id | (in.is_extended() ? CAN_EFF_FLAG : 0u) | (in.is_remote() ? CAN_RTR_FLAG : 0u);
  frame.len = in.len;
  if (in.flags & hal::CanFrame::kBrs) frame.flags |= CANFD_BRS;
  std::memcpy(frame.data, in.data.data(), std::min<std::size_t>(in.len, sizeof(frame.data)));
  const std::size_t size = in.is_fd() ? CANFD_MTU : CAN_MTU;
  const ssize_t n = ::write(fd_, &frame, size);
  if (n == static_cast<ssize_t>(size)) {
    ++stats_.tx_frames;
    return hal::IoStatus::kOk;
  }
  if (n < 0 && (errno == EAGAIN || errno == ENOBUFS)) return hal::IoStatus::kEmpty;
  ++stats_.io_errors;
  return (errno == ENETDOWN || errno == ENODEV) ? hal::IoStatus::kDown : hal::IoStatus::kError;
}

bool SocketCanTransport::wait(std::int64_t timeout_ns) noexcept {
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(timeout_ns / 1'000'000)) > 0 && (p.revents & POLLIN);
}

bool SocketCanTransport::restart() noexcept {
  // libsocketcan: restart a bus-off controller. A virtual interface has no CAN link state: the call
  // fails cleanly there, and the interface needs no restart.
  if (can_do_restart(name_.c_str()) == 0) {
    ++stats_.restarts;
    stats_.up = true;
    return true;
  }
  return false;
}

}  // namespace heft::drivers

#include "heft/drivers/socketcan_transport.hpp"

#include <libsocketcan.h>
#include <linux/can.h>
#include <linux/can/error.h>
#include <linux/can/raw.h>
#include <net/if.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <string>

namespace heft::drivers {

SocketCanTransport::SocketCanTransport(std::string interface, std::span<const CanIdFilter> filters)
    : name_(std::move(interface)) {
  if (name_.empty() || name_.size() >= IFNAMSIZ)
    throw std::runtime_error("CAN interface '" + name_ + "': not a valid interface name");
  if (filters.size() > kMaxFilters)
    throw std::runtime_error("CAN interface '" + name_ + "': more than " +
                             std::to_string(kMaxFilters) + " receive filters");
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
  filters_.assign(filters.begin(), filters.end());
  if (!ApplyFilters()) fail("CAN_RAW_FILTER");
  if (setsockopt(fd_, SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof(on)) != 0) fail("SO_RXQ_OVFL");
  // The kernel's receive stamp of every frame (software, CLOCK_REALTIME): a sample's age counts
  // from it, not from the tick that drains the queue.
  if (setsockopt(fd_, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)) != 0) fail("SO_TIMESTAMPNS");
  const unsigned index = if_nametoindex(name_.c_str());
  if (index == 0) fail("no such interface");
  sockaddr_can addr{};
  addr.can_family = AF_CAN;
  addr.can_ifindex = static_cast<int>(index);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) fail("bind failed");
  ifindex_.store(static_cast<int>(index), std::memory_order_relaxed);
  stats_.up = InterfaceUp();
}

SocketCanTransport::~SocketCanTransport() {
  if (fd_ >= 0) ::close(fd_);
}

bool SocketCanTransport::ApplyFilters() noexcept {
  // No filters: one that passes every data frame (the kernel's default, which it forgets when the
  // interface goes away).
  std::array<can_filter, kMaxFilters> kernel{};
  std::size_t n = 1;
  if (!filters_.empty()) {
    n = std::min(filters_.size(), kernel.size());
    for (std::size_t i = 0; i < n; ++i) {
      const CanIdFilter& f = filters_[i];
      const canid_t bits = f.extended ? CAN_EFF_MASK : CAN_SFF_MASK;
      kernel[i].can_id = (f.id & bits) | (f.extended ? CAN_EFF_FLAG : 0U);
      kernel[i].can_mask = (f.mask & bits) | CAN_EFF_FLAG;  // the identifier kind always counts
    }
  }
  return setsockopt(fd_, SOL_CAN_RAW, CAN_RAW_FILTER, kernel.data(),
                    static_cast<socklen_t>(n * sizeof(can_filter))) == 0;
}

bool SocketCanTransport::InterfaceUp() const noexcept {
  ifreq req{};
  std::memcpy(req.ifr_name, name_.c_str(), name_.size() + 1);  // size < IFNAMSIZ (constructor)
  if (::ioctl(fd_, SIOCGIFINDEX, &req) != 0 ||
      req.ifr_ifindex != ifindex_.load(std::memory_order_relaxed))
    return false;  // gone, or deleted and created again: restart() binds to the new one
  if (::ioctl(fd_, SIOCGIFFLAGS, &req) != 0) return false;
  return (req.ifr_flags & IFF_UP) != 0;
}

hal::CanBusStats SocketCanTransport::stats() const noexcept {
  hal::CanBusStats s = stats_;
  s.restarts = restarts_.load(std::memory_order_relaxed);
  return s;
}

namespace {

std::int64_t Nanoseconds(const timespec& t) {
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// The kernel stamps on CLOCK_REALTIME, the driver loop ticks on CLOCK_MONOTONIC: the frame's age
// on the first (at most a queue's worth, never negative) carried over to the second.
std::int64_t MonotonicReceiveTime(const timespec& realtime_stamp) noexcept {
  timespec real{}, mono{};
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  const std::int64_t age =
      std::max<std::int64_t>(Nanoseconds(real) - Nanoseconds(realtime_stamp), 0);
  return Nanoseconds(mono) - age;
}

}  // namespace

hal::IoStatus SocketCanTransport::receive(hal::CanFrame& out) noexcept {
  canfd_frame frame{};
  iovec iov{&frame, sizeof(frame)};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(std::uint32_t)) + CMSG_SPACE(sizeof(timespec))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  const ssize_t n = ::recvmsg(fd_, &msg, MSG_DONTWAIT);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      if (stats_.up) return hal::IoStatus::kEmpty;
      // The kernel reported the interface down (or gone) once; it stays down until it is back.
      if (!InterfaceUp()) return hal::IoStatus::kDown;
      stats_.up = true;
      return hal::IoStatus::kEmpty;
    }
    ++stats_.io_errors;
    if (errno == ENETDOWN || errno == ENODEV) {
      stats_.up = false;
      return hal::IoStatus::kDown;
    }
    return hal::IoStatus::kError;
  }
  timespec stamp{};
  bool stamped = false;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET) continue;
    if (c->cmsg_type == SO_RXQ_OVFL) {
      std::uint32_t drops = 0;
      std::memcpy(&drops, CMSG_DATA(c), sizeof(drops));
      stats_.kernel_drops = drops;
    } else if (c->cmsg_type == SCM_TIMESTAMPNS && c->cmsg_len >= CMSG_LEN(sizeof(stamp))) {
      std::memcpy(&stamp, CMSG_DATA(c), sizeof(stamp));
      stamped = true;
    }
  }
  if (n != CAN_MTU && n != CANFD_MTU) {
    ++stats_.io_errors;
    return hal::IoStatus::kError;
  }
  stats_.up = true;
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
  if (stamped) {
    out.stamp_ns = MonotonicReceiveTime(stamp);
    out.flags |= hal::CanFrame::kRxStamp;
  }
  out.len = frame.len;
  std::memcpy(out.data.data(), frame.data, std::min<std::size_t>(frame.len, out.data.size()));
  ++stats_.rx_frames;
  return hal::IoStatus::kOk;
}

hal::IoStatus SocketCanTransport::send(const hal::CanFrame& in) noexcept {
  canfd_frame frame{};
  if (in.is_error()) {
    frame.can_id = (in.id & CAN_ERR_MASK) | CAN_ERR_FLAG;
  } else {
    frame.can_id =
        in.id | (in.is_extended() ? CAN_EFF_FLAG : 0u) | (in.is_remote() ? CAN_RTR_FLAG : 0u);
  }
  frame.len = in.len;
  if (in.flags & hal::CanFrame::kBrs) frame.flags |= CANFD_BRS;
  std::memcpy(frame.data, in.data.data(), std::min<std::size_t>(in.len, sizeof(frame.data)));
  const std::size_t size = in.is_fd() ? CANFD_MTU : CAN_MTU;
  const ssize_t n = ::write(fd_, &frame, size);
  if (n == static_cast<ssize_t>(size)) {
    ++stats_.tx_frames;
    stats_.up = true;
    return hal::IoStatus::kOk;
  }
  if (n < 0 && (errno == EAGAIN || errno == ENOBUFS)) return hal::IoStatus::kEmpty;
  ++stats_.io_errors;
  if (n < 0 && (errno == ENETDOWN || errno == ENODEV)) {
    stats_.up = false;
    return hal::IoStatus::kDown;
  }
  return hal::IoStatus::kError;
}

bool SocketCanTransport::wait(std::int64_t timeout_ns) noexcept {
  const std::int64_t ms =
      timeout_ns <= 0 ? 0 : std::min<std::int64_t>((timeout_ns + 999'999) / 1'000'000, INT_MAX);
  pollfd p{fd_, POLLIN, 0};
  // POLLERR: the kernel has an error to report (the interface went down): receive() returns it.
  return ::poll(&p, 1, static_cast<int>(ms)) > 0 && (p.revents & (POLLIN | POLLERR));
}

bool SocketCanTransport::restart() noexcept {
  // The loop asks again on every tick a bus is down, so the cases a restart cannot help return at
  // once, without netlink traffic (or libsocketcan's messages on stderr): the interface is gone
  // (an unplugged adapter) or administratively down (taken down on purpose).
  const unsigned index = if_nametoindex(name_.c_str());
  if (index == 0) return false;
  // Deleted and created again (a re-plugged adapter): a new index. The kernel unbound the socket
  // and dropped its filters when the old interface went away: set them again and bind.
  if (static_cast<int>(index) != ifindex_.load(std::memory_order_relaxed)) {
    sockaddr_can addr{};
    addr.can_family = AF_CAN;
    addr.can_ifindex = static_cast<int>(index);
    if (!ApplyFilters() || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
      return false;
    ifindex_.store(static_cast<int>(index), std::memory_order_relaxed);
    restarts_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  if (!InterfaceUp()) return false;  // administratively down: not a bus-off, nothing to restart
  // libsocketcan: restart a bus-off controller. A virtual interface has no CAN link state: the call
  // fails cleanly there (with a message on stderr), and the interface needs no restart.
  if (can_do_restart(name_.c_str()) == 0) {
    restarts_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  return false;
}

}  // namespace heft::drivers

// The vcan rig of test_socketcan_vcan.cpp and test_socketcan_vcan_loop.cpp: virtual CAN
// interfaces created, reconfigured and deleted through rtnetlink (no iproute2 in the QEMU guest),
// a plain raw socket as any other program on the bus, frames and their comparison, and the
// fixture that makes vcan0 (CAN FD, MTU 72) and vcan1 (classic only, MTU 16) fresh for every test.
#pragma once

#include <gtest/gtest.h>
#include <linux/can.h>
#include <linux/can/raw.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "heft/hal/can.hpp"

namespace heft::drivers::test {

inline constexpr std::int64_t kMs = 1'000'000;
inline constexpr std::int64_t kSecond = 1'000'000'000;

// An owned descriptor.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// One rtnetlink link request (RTM_NEWLINK / RTM_DELLINK) with its attributes.
class LinkRequest {
 public:
  LinkRequest(std::uint16_t type, std::uint16_t flags, unsigned ifi_flags = 0,
              unsigned ifi_change = 0) {
    nlmsghdr h{};
    h.nlmsg_type = type;
    h.nlmsg_flags = static_cast<std::uint16_t>(NLM_F_REQUEST | NLM_F_ACK | flags);
    h.nlmsg_seq = 1;
    Append(&h, sizeof(h));
    ifinfomsg info{};
    info.ifi_family = AF_UNSPEC;
    info.ifi_flags = ifi_flags;
    info.ifi_change = ifi_change;
    Append(&info, sizeof(info));
  }
  void Attr(std::uint16_t type, const void* data, std::size_t len) {
    rtattr a{};
    a.rta_len = static_cast<unsigned short>(RTA_LENGTH(len));
    a.rta_type = type;
    Append(&a, sizeof(a));
    if (len > 0) Append(data, len);
    buf_.resize(NLMSG_ALIGN(buf_.size()));
  }
  void Attr(std::uint16_t type, const std::string& s) { Attr(type, s.c_str(), s.size() + 1); }
  std::size_t Open(std::uint16_t type) {
    const std::size_t at = buf_.size();
    Attr(type, nullptr, 0);
    return at;
  }
  void Close(std::size_t at) {
    const auto len = static_cast<unsigned short>(buf_.size() - at);
    std::memcpy(buf_.data() + at + offsetof(rtattr, rta_len), &len, sizeof(len));
  }
  // Sends the request; returns 0 or the kernel's negative errno.
  int Send() {
    const auto len = static_cast<std::uint32_t>(buf_.size());
    std::memcpy(buf_.data() + offsetof(nlmsghdr, nlmsg_len), &len, sizeof(len));
    Fd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
    if (fd.get() < 0) return -errno;
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(fd.get(), buf_.data(), buf_.size(), 0, reinterpret_cast<sockaddr*>(&kernel),
                 sizeof(kernel)) < 0)
      return -errno;
    alignas(nlmsghdr) char reply[4096];
    const ssize_t n = ::recv(fd.get(), reply, sizeof(reply), 0);
    if (n < static_cast<ssize_t>(NLMSG_HDRLEN + sizeof(nlmsgerr))) return -EPROTO;
    nlmsghdr h{};
    std::memcpy(&h, reply, sizeof(h));
    if (h.nlmsg_type != NLMSG_ERROR) return -EPROTO;
    nlmsgerr err{};
    std::memcpy(&err, reply + NLMSG_HDRLEN, sizeof(err));
    return err.error;
  }

 private:
  void Append(const void* p, std::size_t n) {
    const auto* b = static_cast<const char*>(p);
    buf_.insert(buf_.end(), b, b + n);
  }
  std::vector<char> buf_;
};

inline int AddVcan(const std::string& name) {
  LinkRequest r(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
  r.Attr(IFLA_IFNAME, name);
  const std::size_t info = r.Open(IFLA_LINKINFO);
  r.Attr(IFLA_INFO_KIND, "vcan", 4);
  r.Close(info);
  return r.Send();
}

inline int DeleteLink(const std::string& name) {
  LinkRequest r(RTM_DELLINK, 0);
  r.Attr(IFLA_IFNAME, name);
  return r.Send();
}

inline int SetMtu(const std::string& name, std::uint32_t mtu) {
  LinkRequest r(RTM_NEWLINK, 0);
  r.Attr(IFLA_IFNAME, name);
  r.Attr(IFLA_MTU, &mtu, sizeof(mtu));
  return r.Send();
}

inline int SetLinkUp(const std::string& name, bool up) {  // `ip link set NAME up|down`
  LinkRequest r(RTM_NEWLINK, 0, up ? static_cast<unsigned>(IFF_UP) : 0U, IFF_UP);
  r.Attr(IFLA_IFNAME, name);
  return r.Send();
}

inline void CreateVcan(const std::string& name, std::uint32_t mtu) {
  DeleteLink(name);  // left over from a failed test: ENODEV otherwise
  ASSERT_EQ(AddVcan(name), 0) << "creating " << name << " (is the vcan module loaded?)";
  ASSERT_EQ(SetMtu(name, mtu), 0) << name << " MTU " << mtu;
  ASSERT_EQ(SetLinkUp(name, true), 0) << name << " up";
}

// A plain raw socket, as any other program on the bus would use: injects frames (error frames
// included: user space may write CAN_ERR_FLAG frames on a virtual interface).
class RawSocket {
 public:
  explicit RawSocket(const std::string& name)
      : fd_(::socket(PF_CAN, SOCK_RAW | SOCK_CLOEXEC, CAN_RAW)) {
    const int on = 1;
    ok_ = fd_.get() >= 0 &&
          setsockopt(fd_.get(), SOL_CAN_RAW, CAN_RAW_FD_FRAMES, &on, sizeof(on)) == 0;
    sockaddr_can addr{};
    addr.can_family = AF_CAN;
    addr.can_ifindex = static_cast<int>(if_nametoindex(name.c_str()));
    ok_ = ok_ && ::bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  bool ok() const { return ok_; }
  bool Write(canid_t id, std::vector<std::uint8_t> data) {
    can_frame f{};
    f.can_id = id;
    f.len = static_cast<std::uint8_t>(data.size());
    std::memcpy(f.data, data.data(), data.size());
    return ::write(fd_.get(), &f, sizeof(f)) == static_cast<ssize_t>(sizeof(f));
  }

 private:
  Fd fd_;
  bool ok_ = false;
};

inline hal::CanFrame Frame(std::uint32_t id, std::vector<std::uint8_t> data,
                           std::uint8_t flags = 0) {
  hal::CanFrame f;
  f.id = id;
  f.flags = flags;
  f.len = static_cast<std::uint8_t>(data.size());
  std::copy(data.begin(), data.end(), f.data.begin());
  return f;
}

inline std::vector<std::uint8_t> Bytes(std::size_t n, std::uint8_t first) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(first + i);
  return v;
}

// Waits (at most `timeout_ns`) for the next frame and reads it.
inline hal::IoStatus Next(hal::CanTransport& bus, hal::CanFrame& f,
                          std::int64_t timeout_ns = kSecond) {
  if (!bus.wait(timeout_ns)) return hal::IoStatus::kEmpty;
  return bus.receive(f);
}

inline void ExpectSame(const hal::CanFrame& got, const hal::CanFrame& sent) {
  EXPECT_EQ(got.id, sent.id);
  // Every received frame carries its kernel receive time (SO_TIMESTAMPNS) on CLOCK_MONOTONIC.
  EXPECT_EQ(got.flags, sent.flags | hal::CanFrame::kRxStamp);
  ASSERT_EQ(got.len, sent.len);
  for (int i = 0; i < got.len; ++i) EXPECT_EQ(got.data[i], sent.data[i]) << "byte " << i;
}

class Vcan : public ::testing::Test {
 protected:
  void SetUp() override {
    Fd probe(::socket(PF_CAN, SOCK_RAW | SOCK_CLOEXEC, CAN_RAW));
    ASSERT_GE(probe.get(), 0) << "no CAN_RAW sockets: this test runs inside the QEMU guest "
                                 "(tests/drivers/qemu/run_vcan_test.sh, ctest -L qemu)";
    ASSERT_NO_FATAL_FAILURE(CreateVcan("vcan0", CANFD_MTU));
    ASSERT_NO_FATAL_FAILURE(CreateVcan("vcan1", CAN_MTU));
  }
  void TearDown() override {
    DeleteLink("vcan0");
    DeleteLink("vcan1");
  }
};

}  // namespace heft::drivers::test

// heft's SocketCAN transport and driver loop against a real Linux CAN stack: virtual CAN interfaces
// (vcan) of a stock Debian 12 kernel. The host kernel of CI has no CAN support, so this binary runs
// inside that kernel booted in QEMU (tests/drivers/qemu/run_vcan_test.sh, ctest label `qemu`). It
// needs root and the can, can-raw and vcan modules, and creates, reconfigures and deletes its own
// interfaces (rtnetlink): vcan0 with CAN FD (MTU 72) and vcan1 classic only (MTU 16), fresh for
// every test.
#include <gtest/gtest.h>
#include <libsocketcan.h>
#include <linux/can.h>
#include <linux/can/error.h>
#include <linux/can/raw.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "heft/drivers/codecs.hpp"
#include "heft/drivers/driver_loop.hpp"
#include "heft/drivers/error_frames.hpp"
#include "heft/drivers/sample_encoder.hpp"
#include "heft/drivers/socketcan_transport.hpp"
#include "heft/hal/forwarding_transport.hpp"
#include "reference_motion.hpp"

namespace heft::drivers {
namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kSecond = 1'000'000'000;

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

int AddVcan(const std::string& name) {
  LinkRequest r(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
  r.Attr(IFLA_IFNAME, name);
  const std::size_t info = r.Open(IFLA_LINKINFO);
  r.Attr(IFLA_INFO_KIND, "vcan", 4);
  r.Close(info);
  return r.Send();
}

int DeleteLink(const std::string& name) {
  LinkRequest r(RTM_DELLINK, 0);
  r.Attr(IFLA_IFNAME, name);
  return r.Send();
}

int SetMtu(const std::string& name, std::uint32_t mtu) {
  LinkRequest r(RTM_NEWLINK, 0);
  r.Attr(IFLA_IFNAME, name);
  r.Attr(IFLA_MTU, &mtu, sizeof(mtu));
  return r.Send();
}

int SetLinkUp(const std::string& name, bool up) {  // `ip link set NAME up|down`
  LinkRequest r(RTM_NEWLINK, 0, up ? static_cast<unsigned>(IFF_UP) : 0U, IFF_UP);
  r.Attr(IFLA_IFNAME, name);
  return r.Send();
}

void CreateVcan(const std::string& name, std::uint32_t mtu) {
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

hal::CanFrame Frame(std::uint32_t id, std::vector<std::uint8_t> data, std::uint8_t flags = 0) {
  hal::CanFrame f;
  f.id = id;
  f.flags = flags;
  f.len = static_cast<std::uint8_t>(data.size());
  std::copy(data.begin(), data.end(), f.data.begin());
  return f;
}

std::vector<std::uint8_t> Bytes(std::size_t n, std::uint8_t first) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(first + i);
  return v;
}

// Waits (at most `timeout_ns`) for the next frame and reads it.
hal::IoStatus Next(hal::CanTransport& bus, hal::CanFrame& f, std::int64_t timeout_ns = kSecond) {
  if (!bus.wait(timeout_ns)) return hal::IoStatus::kEmpty;
  return bus.receive(f);
}

void ExpectSame(const hal::CanFrame& got, const hal::CanFrame& sent) {
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

TEST_F(Vcan, ClassicFramesBothWays) {
  SocketCanTransport a("vcan0"), b("vcan0");
  EXPECT_EQ(a.name(), "vcan0");
  EXPECT_TRUE(a.stats().up);
  const std::vector<hal::CanFrame> sent = {
      Frame(0x123, Bytes(8, 1)), Frame(0x1ABCDEF, Bytes(3, 0xA0), hal::CanFrame::kExtended),
      Frame(0x7FF, {}), Frame(0x042, {}, hal::CanFrame::kRemote)};
  for (const auto& f : sent) ASSERT_EQ(a.send(f), hal::IoStatus::kOk);
  for (const auto& f : sent) {
    hal::CanFrame got;
    ASSERT_EQ(Next(b, got), hal::IoStatus::kOk);
    ExpectSame(got, f);
  }
  hal::CanFrame none;
  EXPECT_EQ(a.receive(none), hal::IoStatus::kEmpty);  // no echo of one's own frames
  EXPECT_EQ(b.receive(none), hal::IoStatus::kEmpty);

  hal::CanFrame back = Frame(0x321, Bytes(5, 9));
  ASSERT_EQ(b.send(back), hal::IoStatus::kOk);
  hal::CanFrame got;
  ASSERT_EQ(Next(a, got), hal::IoStatus::kOk);
  ExpectSame(got, back);

  EXPECT_EQ(a.stats().tx_frames, 4u);
  EXPECT_EQ(a.stats().rx_frames, 1u);
  EXPECT_EQ(b.stats().rx_frames, 4u);
  EXPECT_EQ(b.stats().tx_frames, 1u);
  EXPECT_EQ(a.stats().io_errors + b.stats().io_errors, 0u);
  EXPECT_EQ(b.stats().kernel_drops, 0u);
}

TEST_F(Vcan, FdFramesBothWays) {
  SocketCanTransport a("vcan0"), b("vcan0");
  const std::vector<hal::CanFrame> sent = {
      Frame(0x321, Bytes(64, 0), hal::CanFrame::kFd | hal::CanFrame::kBrs),
      Frame(0x055, Bytes(12, 100), hal::CanFrame::kFd),
      Frame(0x1234567, Bytes(48, 7),
            hal::CanFrame::kFd | hal::CanFrame::kBrs | hal::CanFrame::kExtended),
      Frame(0x056, Bytes(8, 50))};  // a classic frame on the same FD interface stays classic
  for (const auto& f : sent) ASSERT_EQ(a.send(f), hal::IoStatus::kOk);
  for (const auto& f : sent) {
    hal::CanFrame got;
    ASSERT_EQ(Next(b, got), hal::IoStatus::kOk);
    ExpectSame(got, f);
  }
  // The other way, an encoder sample carried in a CAN FD frame (the spec: drivers accept both).
  EncoderConfig enc;
  enc.node = 3;
  hal::CanFrame fd = EncodeEncoder(enc, 123456, -321, 0x01, 77);
  fd.flags |= hal::CanFrame::kFd;
  ASSERT_EQ(b.send(fd), hal::IoStatus::kOk);
  hal::CanFrame got;
  ASSERT_EQ(Next(a, got), hal::IoStatus::kOk);
  EXPECT_TRUE(got.is_fd());
  EncoderReading r;
  ASSERT_EQ(DecodeEncoder(got, enc, r), Reject::kNone);
  EXPECT_EQ(r.counts, 123456);
  EXPECT_EQ(r.velocity_raw, -321);
  EXPECT_EQ(r.counter, 77);
}

TEST_F(Vcan, FdFrameOnAClassicInterfaceIsAnErrorAndTheBusCarriesOn) {
  SocketCanTransport a("vcan1"), b("vcan1");  // MTU 16: classic CAN only
  EXPECT_EQ(a.send(Frame(0x100, Bytes(16, 0), hal::CanFrame::kFd)), hal::IoStatus::kError);
  EXPECT_EQ(a.stats().io_errors, 1u);
  EXPECT_TRUE(a.stats().up);
  const hal::CanFrame classic = Frame(0x100, Bytes(8, 0));
  ASSERT_EQ(a.send(classic), hal::IoStatus::kOk);
  hal::CanFrame got;
  ASSERT_EQ(Next(b, got), hal::IoStatus::kOk);
  ExpectSame(got, classic);
}

TEST_F(Vcan, KernelFiltersPassOnlyTheConfiguredIdentifiers) {
  const std::vector<CanIdFilter> filters = {{0x100, 0x780, false},  // 0x100..0x17F
                                            {0x1ABCDEF, 0x1FFFFFFF, true}};
  SocketCanTransport filtered("vcan0", filters), all("vcan0"), tx("vcan0");
  RawSocket injector("vcan0");
  ASSERT_TRUE(injector.ok());
  const std::vector<hal::CanFrame> sent = {
      Frame(0x100, Bytes(8, 0)),
      Frame(0x180, Bytes(8, 0)),
      Frame(0x17F, Bytes(8, 0), hal::CanFrame::kFd),
      Frame(0x200, Bytes(8, 0)),
      Frame(0x100, Bytes(8, 0), hal::CanFrame::kExtended),  // a 29-bit 0x100 is another identifier
      Frame(0x1ABCDEF, Bytes(2, 0), hal::CanFrame::kExtended),
      Frame(0x0EF, Bytes(2, 0))};
  for (const auto& f : sent) ASSERT_EQ(tx.send(f), hal::IoStatus::kOk);
  ASSERT_TRUE(
      injector.Write(CAN_ERR_FLAG | CAN_ERR_BUSOFF, Bytes(8, 0)));  // error mask, not filter
  std::vector<hal::CanFrame> got;
  hal::CanFrame f;
  while (Next(filtered, f, 100 * kMs) == hal::IoStatus::kOk) got.push_back(f);
  ASSERT_EQ(got.size(), 4u);
  ExpectSame(got[0], sent[0]);
  ExpectSame(got[1], sent[2]);
  ExpectSame(got[2], sent[5]);
  EXPECT_TRUE(got[3].is_error());
  int everything = 0;
  while (Next(all, f, 100 * kMs) == hal::IoStatus::kOk) ++everything;
  EXPECT_EQ(everything, 8);
}

TEST_F(Vcan, ErrorFramesFromUserSpaceAreClassified) {
  SocketCanTransport rx("vcan0"), tx("vcan0");
  RawSocket injector("vcan0");
  ASSERT_TRUE(injector.ok());
  // Written by another program, as a CAN controller driver would report them.
  ASSERT_TRUE(injector.Write(CAN_ERR_FLAG | CAN_ERR_BUSOFF, Bytes(8, 0)));
  ASSERT_TRUE(
      injector.Write(CAN_ERR_FLAG | CAN_ERR_CRTL, {0, CAN_ERR_CRTL_RX_WARNING, 0, 0, 0, 0, 0, 0}));
  ASSERT_TRUE(injector.Write(CAN_ERR_FLAG | CAN_ERR_PROT, Bytes(8, 0)));  // not in heft's mask
  ASSERT_TRUE(injector.Write(CAN_ERR_FLAG | CAN_ERR_ACK, Bytes(8, 0)));
  ASSERT_TRUE(injector.Write(CAN_ERR_FLAG | CAN_ERR_BUSOFF | CAN_ERR_CRTL, Bytes(8, 0)));
  ASSERT_TRUE(injector.Write(CAN_ERR_FLAG | CAN_ERR_RESTARTED, Bytes(8, 0)));
  ASSERT_TRUE(injector.Write(0x123, Bytes(8, 0)));  // a data frame in between
  // And through heft's own transport (the simulator's and candump replay's error frames).
  ASSERT_EQ(tx.send(Frame(kErrBusOff, Bytes(8, 0), hal::CanFrame::kError)), hal::IoStatus::kOk);

  const std::vector<std::uint32_t> classes = {kErrBusOff, kErrController, kErrAck,
                                              kErrBusOff | kErrController, kErrRestarted};
  for (std::uint32_t c : classes) {
    hal::CanFrame f;
    ASSERT_EQ(Next(rx, f), hal::IoStatus::kOk);
    EXPECT_TRUE(f.is_error()) << c;
    EXPECT_FALSE(f.is_fd());
    EXPECT_EQ(f.id, c);
    EXPECT_EQ(f.len, CAN_ERR_DLC);
    if (c == kErrController) {
      EXPECT_EQ(f.data[1], CAN_ERR_CRTL_RX_WARNING);
    }
  }
  hal::CanFrame f;
  ASSERT_EQ(Next(rx, f), hal::IoStatus::kOk);
  EXPECT_FALSE(f.is_error());
  EXPECT_EQ(f.id, 0x123u);
  ASSERT_EQ(Next(rx, f), hal::IoStatus::kOk);
  EXPECT_TRUE(f.is_error());
  EXPECT_EQ(f.id, kErrBusOff);
  EXPECT_EQ(rx.receive(f), hal::IoStatus::kEmpty);
  const hal::CanBusStats s = rx.stats();
  EXPECT_EQ(s.error_frames, 6u);
  EXPECT_EQ(s.bus_off, 3u);
  EXPECT_EQ(s.controller_errors, 2u);
  EXPECT_EQ(s.ack_errors, 1u);
  EXPECT_EQ(s.rx_frames, 7u);
  EXPECT_TRUE(s.up);
}

TEST_F(Vcan, KernelDropsAreCounted) {
  SocketCanTransport rx("vcan0"), tx("vcan0");
  std::uint64_t sent = 0;  // far beyond the default receive buffer, nobody reading
  for (int i = 0; i < 3000; ++i)
    if (tx.send(Frame(0x100 + static_cast<std::uint32_t>(i % 64), Bytes(8, 0))) ==
        hal::IoStatus::kOk)
      ++sent;
  hal::CanFrame f;
  std::uint64_t received = 0;
  while (rx.receive(f) == hal::IoStatus::kOk) ++received;
  ASSERT_GT(received, 0u);
  ASSERT_LT(received, sent);
  // The kernel tells the count with the next frame it queues after the drops.
  ASSERT_EQ(tx.send(Frame(0x7FF, {})), hal::IoStatus::kOk);
  ASSERT_EQ(Next(rx, f), hal::IoStatus::kOk);
  EXPECT_EQ(f.id, 0x7FFu);
  EXPECT_EQ(rx.stats().kernel_drops, sent - received);
  EXPECT_EQ(rx.stats().rx_frames, received + 1);
  EXPECT_EQ(rx.stats().io_errors, 0u);
}

TEST_F(Vcan, BusDownIsReportedUntilItIsUpAgain) {
  SocketCanTransport rx("vcan0"), tx("vcan0");
  hal::CanFrame f;
  ASSERT_EQ(tx.send(Frame(0x101, Bytes(8, 1))), hal::IoStatus::kOk);
  ASSERT_EQ(Next(rx, f), hal::IoStatus::kOk);

  ASSERT_EQ(SetLinkUp("vcan0", false), 0);  // ip link set vcan0 down
  EXPECT_TRUE(rx.wait(kSecond));            // the kernel's report wakes a waiting reader
  EXPECT_EQ(rx.receive(f), hal::IoStatus::kDown);
  EXPECT_FALSE(rx.stats().up);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(rx.receive(f), hal::IoStatus::kDown) << "still down";
  EXPECT_EQ(tx.send(Frame(0x101, Bytes(8, 2))), hal::IoStatus::kDown);
  EXPECT_FALSE(tx.stats().up);
  EXPECT_FALSE(rx.restart());  // an administratively down vcan is nothing libsocketcan restarts
  EXPECT_EQ(rx.stats().restarts, 0u);

  ASSERT_EQ(SetLinkUp("vcan0", true), 0);
  EXPECT_EQ(rx.receive(f), hal::IoStatus::kEmpty);
  EXPECT_TRUE(rx.stats().up);
  const hal::CanFrame again = Frame(0x101, Bytes(8, 3));
  ASSERT_EQ(tx.send(again), hal::IoStatus::kOk);
  EXPECT_TRUE(tx.stats().up);
  ASSERT_EQ(Next(rx, f), hal::IoStatus::kOk);
  ExpectSame(f, again);
  EXPECT_TRUE(rx.stats().up);
}

TEST_F(Vcan, DeletedAndRecreatedInterfaceIsBoundAgainByRestart) {
  const std::vector<CanIdFilter> filters = {{0x100, 0x700, false}};
  SocketCanTransport rx("vcan1", filters);
  hal::CanFrame f;
  ASSERT_EQ(DeleteLink("vcan1"), 0);  // an adapter unplugged
  EXPECT_EQ(rx.receive(f), hal::IoStatus::kDown);
  EXPECT_EQ(rx.receive(f), hal::IoStatus::kDown);
  EXPECT_FALSE(rx.restart());  // nothing to bind to yet

  ASSERT_NO_FATAL_FAILURE(CreateVcan("vcan1", CAN_MTU));  // plugged in again: a new index
  EXPECT_EQ(rx.receive(f), hal::IoStatus::kDown) << "the socket is not bound to the new interface";
  EXPECT_TRUE(rx.restart());
  EXPECT_EQ(rx.stats().restarts, 1u);
  EXPECT_EQ(rx.receive(f), hal::IoStatus::kEmpty);
  EXPECT_TRUE(rx.stats().up);
  SocketCanTransport tx("vcan1");
  ASSERT_EQ(tx.send(Frame(0x200, Bytes(8, 0))), hal::IoStatus::kOk);  // filtered out
  const hal::CanFrame wanted = Frame(0x123, Bytes(8, 4));
  ASSERT_EQ(tx.send(wanted), hal::IoStatus::kOk);
  ASSERT_EQ(Next(rx, f), hal::IoStatus::kOk);
  ExpectSame(f, wanted);  // the filters were set again too
  EXPECT_EQ(rx.receive(f), hal::IoStatus::kEmpty);
}

TEST_F(Vcan, LibsocketcanFailsCleanlyOnVirtualInterfaces) {
  // vcan has no CAN link data (state, bit timing, restart): every call must return an error, fast.
  const auto t0 = std::chrono::steady_clock::now();
  int state = -1;
  EXPECT_NE(can_get_state("vcan0", &state), 0);
  can_bittiming bt{};
  EXPECT_NE(can_get_bittiming("vcan0", &bt), 0);
  std::uint32_t restart_ms = 0;
  EXPECT_NE(can_get_restart_ms("vcan0", &restart_ms), 0);
  EXPECT_NE(can_do_restart("vcan0"), 0);
  EXPECT_NE(can_do_restart("nosuchcan"), 0);
  SocketCanTransport bus("vcan0"), peer("vcan0");
  EXPECT_FALSE(bus.restart());
  EXPECT_EQ(bus.stats().restarts, 0u);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  // and the interface is untouched
  ASSERT_EQ(peer.send(Frame(0x10, Bytes(1, 0))), hal::IoStatus::kOk);
  hal::CanFrame f;
  EXPECT_EQ(Next(bus, f), hal::IoStatus::kOk);
  EXPECT_TRUE(bus.stats().up);
}

// Forwards every data frame as a CAN FD frame with bit-rate switch: the devices of an FD bus.
class AsFd final : public hal::ForwardingTransport {
 public:
  using ForwardingTransport::ForwardingTransport;
  hal::IoStatus send(const hal::CanFrame& f) noexcept override {
    hal::CanFrame fd = f;
    fd.flags |= hal::CanFrame::kFd | hal::CanFrame::kBrs;
    return inner_.send(fd);
  }
};

// The driver loop on the two vcan buses: 12 joints (encoder + torque sensor) and two F/T cells,
// sent by heft's sample encoder through the kernel (FD frames on vcan0, classic on vcan1).
class VcanDriverLoop : public Vcan {
 protected:
  static std::vector<std::string> JointNames() {
    std::vector<std::string> names;
    for (int i = 0; i < 12; ++i) names.push_back("joint" + std::to_string(i));
    return names;
  }
  struct Rig {
    DriverConfig cfg = [] {
      DriverConfig c = ReferenceDriverConfig(JointNames(), {"left_foot_ft", "right_foot_ft"});
      c.buses = {"vcan0", "vcan1"};
      return c;
    }();
    SocketCanTransport dev0{"vcan0"}, dev1{"vcan1"};  // the devices' side
    AsFd dev0_fd{dev0};
    std::vector<hal::CanTransport*> devices{&dev0_fd, &dev1};
    SocketCanTransport can0{"vcan0"}, can1{"vcan1"};  // heft's side
    std::vector<hal::CanTransport*> buses{&can0, &can1};
    hal::StateBuffer buffer;
    DriverLoop loop{cfg, buses, buffer};
    BusSupervisor supervisor{loop, buses};
    SampleEncoder encoder{cfg};
    hal::RobotStateSample truth;
    std::int64_t now = 0;

    Rig() {
      truth.num_joints = static_cast<std::uint16_t>(cfg.joints.size());
      truth.num_wrenches = 2;
    }
    // One millisecond: devices send through the kernel, the loop ticks. Returns the tick's wall
    // time.
    std::chrono::nanoseconds Step() {
      now += kMs;
      const std::int64_t whole_ms = now / kMs;
      test::SetReferenceMotion(truth, cfg.joints.size(), 1e-3 * static_cast<double>(whole_ms));
      encoder.Emit(truth, now, devices);
      for (auto* bus : buses)
        if (bus->stats().up) static_cast<void>(bus->wait(10 * kMs));  // delivered (loopback)
      const auto t0 = std::chrono::steady_clock::now();
      loop.Tick(now);
      return std::chrono::steady_clock::now() - t0;
    }
    bool BusOk(int bus) const {
      const hal::RobotStateSample& s = loop.last_sample();
      bool ok = true;
      for (std::size_t i = 0; i < cfg.joints.size(); ++i)
        if (cfg.joints[i].bus == bus)
          ok = ok && s.joints[i].encoder.ok() && s.joints[i].torque_sensor.ok();
      for (std::size_t k = 0; k < cfg.ft_cells.size(); ++k)
        if (cfg.ft_cells[k].bus == bus) ok = ok && s.wrenches[k].health.ok();
      return ok;
    }
    void ExpectDecoded(int bus) const {
      hal::RobotStateSample s;
      ASSERT_TRUE(buffer.read_latest(s));
      EXPECT_EQ(s.stamp_ns, now);
      for (std::size_t i = 0; i < cfg.joints.size(); ++i) {
        if (cfg.joints[i].bus != bus) continue;
        EXPECT_NEAR(s.joints[i].position, truth.joints[i].position, M_PI / 1048576.0 + 1e-12);
        EXPECT_NEAR(s.joints[i].velocity, truth.joints[i].velocity, 0.00025 + 1e-12);
        EXPECT_NEAR(s.joints[i].torque, truth.joints[i].torque, 0.00005 + 1e-12);
      }
      for (std::size_t k = 0; k < cfg.ft_cells.size(); ++k) {
        if (cfg.ft_cells[k].bus != bus) continue;
        for (int i = 0; i < 6; ++i)
          EXPECT_NEAR(s.wrenches[k].wrench[i], truth.wrenches[k].wrench[i], 0.05) << k << i;
      }
    }
  };
};

std::int64_t MonotonicNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// Frames received 5 ms before the tick that drains them are 5 ms old: staleness counts from the
// kernel's receive stamp. Fails if the transport gives no stamp (or not on CLOCK_MONOTONIC, or
// not within the frame's real age), or if the loop times the sample by the tick (then it is 0 ms
// old and ok with the 3 ms timeout).
TEST_F(VcanDriverLoop, SamplesAgeFromTheKernelsReceiveStamp) {
  Rig rig;
  SocketCanTransport probe{"vcan1"};
  const std::int64_t sent = MonotonicNs();
  rig.encoder.Emit(rig.truth, 0, rig.devices);
  ASSERT_TRUE(probe.wait(kSecond));
  hal::CanFrame f;
  ASSERT_EQ(probe.receive(f), hal::IoStatus::kOk);
  ASSERT_NE(f.flags & hal::CanFrame::kRxStamp, 0);
  EXPECT_GE(f.stamp_ns, sent - kMs);  // CLOCK_MONOTONIC, after it was sent (1 ms for rounding)
  EXPECT_LE(f.stamp_ns, MonotonicNs());
  for (auto* bus : rig.buses) ASSERT_TRUE(bus->wait(kSecond));  // delivered, not yet drained
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const std::int64_t tick = MonotonicNs();
  rig.loop.Tick(tick);
  const hal::RobotStateSample& s = rig.loop.last_sample();
  for (std::size_t j = 0; j < rig.cfg.joints.size(); ++j) {
    EXPECT_EQ(s.joints[j].encoder.state, hal::ChannelState::kStale) << "joint " << j;
    EXPECT_GE(s.joints[j].encoder.age_us, 5000u) << "joint " << j;
    EXPECT_LE(s.joints[j].encoder.age_us, static_cast<std::uint64_t>(tick - sent) / 1000) << j;
  }
  EXPECT_EQ(rig.loop.counters().rejected_total(), 0u);
}

TEST_F(VcanDriverLoop, DecodesRealFramesIntoAStateSample) {
  Rig rig;
  for (int k = 0; k < 20; ++k) rig.Step();
  EXPECT_TRUE(rig.BusOk(0));
  EXPECT_TRUE(rig.BusOk(1));
  rig.ExpectDecoded(0);
  rig.ExpectDecoded(1);
  // 6 encoders + 6 torque sensors + one F/T cell (2 frames) per bus and millisecond.
  EXPECT_EQ(rig.loop.bus(0).frames, 20u * 14u);
  EXPECT_EQ(rig.loop.bus(1).frames, 20u * 14u);
  EXPECT_EQ(rig.loop.counters().rejected_total(), 0u);
  EXPECT_EQ(rig.loop.counters().lost_samples, 0u);
  EXPECT_EQ(rig.loop.counters().published, 20u);
  EXPECT_EQ(rig.can0.stats().rx_frames, 20u * 14u);
  EXPECT_EQ(rig.can0.stats().kernel_drops, 0u);
}

TEST_F(VcanDriverLoop, ADownBusDoesNotStallTheOtherAndRecovers) {
  Rig rig;
  for (int k = 0; k < 5; ++k) rig.Step();
  ASSERT_TRUE(rig.BusOk(0) && rig.BusOk(1));

  ASSERT_EQ(SetLinkUp("vcan1", false), 0);
  std::chrono::nanoseconds worst{0};
  for (int k = 0; k < 10; ++k) {
    worst = std::max(worst, rig.Step());
    EXPECT_TRUE(rig.BusOk(0)) << "vcan0 stalled at tick " << k;
    rig.supervisor.Poll();  // restart requests: libsocketcan cannot restart a vcan
  }
  rig.ExpectDecoded(0);
  EXPECT_LT(worst, std::chrono::milliseconds(200)) << "a tick blocked";  // generous: emulated CPU
  EXPECT_FALSE(rig.BusOk(1));
  EXPECT_EQ(rig.loop.last_sample().joints[11].encoder.state, hal::ChannelState::kStale);
  EXPECT_EQ(rig.loop.bus(1).down_ticks, 10u);  // reported on every tick while down
  EXPECT_EQ(rig.loop.bus(0).down_ticks, 0u);
  EXPECT_TRUE(rig.loop.Silent(1, rig.now, 5 * kMs));
  EXPECT_FALSE(rig.loop.Silent(0, rig.now, 5 * kMs));
  EXPECT_GE(rig.loop.bus(1).restart_requests, 1u);
  EXPECT_GE(rig.supervisor.failed_restarts(), 1u);
  EXPECT_EQ(rig.supervisor.restarts(), 0u);
  EXPECT_FALSE(rig.can1.stats().up);

  ASSERT_EQ(SetLinkUp("vcan1", true), 0);
  rig.Step();  // the loop sees the interface up; the devices' frames flow again
  for (int k = 0; k < 5; ++k) rig.Step();
  EXPECT_TRUE(rig.BusOk(0));
  EXPECT_TRUE(rig.BusOk(1));
  rig.ExpectDecoded(1);
  EXPECT_TRUE(rig.can1.stats().up);
  EXPECT_EQ(rig.loop.bus(1).down_ticks, 10u);
  // The 13 devices of vcan1 (6 encoders, 6 torque sensors, one F/T cell) lost the 10 samples they
  // sent while it was down; nothing else was lost.
  EXPECT_EQ(rig.loop.counters().lost_samples, 13u * 10u);
  EXPECT_EQ(rig.loop.counters().rejected_total(), 0u);
}

TEST_F(VcanDriverLoop, BusOffErrorFrameRaisesARestartThatFailsCleanlyOnVcan) {
  Rig rig;
  RawSocket controller("vcan0");
  ASSERT_TRUE(controller.ok());
  rig.Step();
  ASSERT_TRUE(controller.Write(CAN_ERR_FLAG | CAN_ERR_BUSOFF, Bytes(8, 0)));
  ASSERT_TRUE(controller.Write(CAN_ERR_FLAG | CAN_ERR_CRTL, Bytes(8, 0)));
  rig.Step();
  EXPECT_EQ(rig.loop.bus(0).error_frames, 2u);
  EXPECT_EQ(rig.loop.bus(0).bus_off, 1u);
  EXPECT_EQ(rig.loop.bus(0).controller_errors, 1u);
  EXPECT_EQ(rig.loop.bus(0).restart_requests, 1u);
  EXPECT_EQ(rig.supervisor.Poll(), 0);
  EXPECT_EQ(rig.supervisor.failed_restarts(), 1u);
  for (int k = 0; k < 5; ++k) rig.Step();
  EXPECT_TRUE(rig.BusOk(0));
  EXPECT_TRUE(rig.BusOk(1));
  EXPECT_EQ(rig.loop.bus(0).restart_requests, 1u);
  EXPECT_EQ(rig.loop.bus(1).error_frames, 0u);
}

}  // namespace
}  // namespace heft::drivers

// heft's SocketCAN transport and driver loop against a real Linux CAN stack: virtual CAN interfaces
// (vcan) of a stock Debian 12 kernel. The host kernel of CI has no CAN support, so this binary runs
// inside that kernel booted in QEMU (tests/drivers/qemu/run_vcan_test.sh, ctest label `qemu`). It
// needs root and the can, can-raw and vcan modules, and creates, reconfigures and deletes its own
// interfaces (rtnetlink): vcan0 with CAN FD (MTU 72) and vcan1 classic only (MTU 16), fresh for
// every test (vcan_rig.hpp). The driver loop on the two buses is in test_socketcan_vcan_loop.cpp.
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
#include "vcan_rig.hpp"

namespace heft::drivers {
namespace {

using test::Bytes;
using test::CreateVcan;
using test::DeleteLink;
using test::ExpectSame;
using test::Frame;
using test::kMs;
using test::kSecond;
using test::Next;
using test::RawSocket;
using test::SetLinkUp;
using test::Vcan;

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

}  // namespace
}  // namespace heft::drivers

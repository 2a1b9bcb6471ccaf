// heft's driver loop on two virtual CAN buses of a real Linux CAN stack (the vcan rig of
// vcan_rig.hpp; run with test_socketcan_vcan.cpp inside Debian 12's kernel booted in QEMU): 12
// joints and two F/T cells sent by heft's sample encoder through the kernel. Samples age from the
// kernel's receive stamp, real frames decode into a state sample, a down bus does not stall the
// other and recovers, and a bus-off error frame raises a restart that fails cleanly on vcan.
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
using test::kMs;
using test::kSecond;
using test::RawSocket;
using test::SetLinkUp;
using test::Vcan;

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

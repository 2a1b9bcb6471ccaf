// The in-memory bus on one thread: its queue (hal::SpscQueue) fills, counts what it leaves out as
// kernel drops and gives back the rest in order; bus-off and down refuse frames until restart().
#include <gtest/gtest.h>

#include "heft/drivers/error_frames.hpp"
#include "heft/drivers/memory_bus.hpp"

namespace heft::drivers {
namespace {

hal::CanFrame Frame(std::uint32_t k) {
  hal::CanFrame f;
  f.id = k % 2048;
  f.len = 1;
  f.data[0] = static_cast<std::uint8_t>(k);
  f.stamp_ns = k;
  return f;
}

// Fails if a full bus overwrites a queued frame, blocks, forgets to count the frame it refused,
// or loses count of what is queued.
TEST(MemoryBus, AFullQueueLeavesFramesOutAndCountsThemAsKernelDrops) {
  MemoryBus bus("can0");
  constexpr std::uint32_t kExtra = 5;
  for (std::uint32_t k = 0; k < MemoryBus::kCapacity + kExtra; ++k) {
    const hal::IoStatus s = bus.send(Frame(k));
    EXPECT_EQ(s, k < MemoryBus::kCapacity ? hal::IoStatus::kOk : hal::IoStatus::kEmpty) << k;
  }
  EXPECT_EQ(bus.queued(), MemoryBus::kCapacity);
  EXPECT_EQ(bus.stats().kernel_drops, kExtra);
  EXPECT_EQ(bus.stats().tx_frames, MemoryBus::kCapacity);
  hal::CanFrame f;
  for (std::uint32_t k = 0; k < MemoryBus::kCapacity; ++k) {
    ASSERT_EQ(bus.receive(f), hal::IoStatus::kOk);
    ASSERT_EQ(f.stamp_ns, k);  // the first frames, in order: the refused ones were the last
  }
  EXPECT_EQ(bus.receive(f), hal::IoStatus::kEmpty);
  EXPECT_EQ(bus.queued(), 0u);
  EXPECT_EQ(bus.stats().rx_frames, MemoryBus::kCapacity);
  // Room again: the ring wraps.
  EXPECT_EQ(bus.send(Frame(7)), hal::IoStatus::kOk);
  EXPECT_EQ(bus.queued(), 1u);
}

// Fails if bus-off does not queue its error frame for the reader, lets frames through before
// restart(), or a down bus still delivers.
TEST(MemoryBus, BusOffQueuesItsErrorFrameAndRefusesFramesUntilRestart) {
  MemoryBus bus("can0");
  ASSERT_EQ(bus.send(Frame(1)), hal::IoStatus::kOk);
  EXPECT_TRUE(bus.EnterBusOff(2));
  EXPECT_FALSE(bus.EnterBusOff(3));  // already off
  EXPECT_EQ(bus.send(Frame(4)), hal::IoStatus::kDown);
  hal::CanFrame f;
  ASSERT_EQ(bus.receive(f), hal::IoStatus::kOk);  // what came before still drains
  EXPECT_EQ(f.stamp_ns, 1);
  ASSERT_EQ(bus.receive(f), hal::IoStatus::kOk);
  EXPECT_TRUE(f.is_error());
  EXPECT_NE(f.id & kErrBusOff, 0u);
  EXPECT_EQ(bus.stats().bus_off, 1u);
  EXPECT_FALSE(bus.stats().up);
  EXPECT_TRUE(bus.restart());
  EXPECT_EQ(bus.send(Frame(5)), hal::IoStatus::kOk);
  bus.set_down(true);
  EXPECT_EQ(bus.receive(f), hal::IoStatus::kDown);
}

}  // namespace
}  // namespace heft::drivers

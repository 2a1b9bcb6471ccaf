// The in-memory bus between two real threads (producer: a simulated device node; consumer: a driver
// thread): every frame arrives once, in order, untorn. Also run under ThreadSanitizer.
#include <gtest/gtest.h>

#include <thread>

#include "heft/drivers/memory_bus.hpp"

namespace heft::drivers {
namespace {

TEST(MemoryBus, SpscBetweenThreadsKeepsOrderAndContent) {
  MemoryBus bus("can0");
  constexpr std::uint32_t kFrames = 200000;
  std::thread producer([&] {
    for (std::uint32_t k = 0; k < kFrames;) {
      hal::CanFrame f;
      f.id = k % 2048;
      f.len = 8;
      for (int i = 0; i < 8; ++i) f.data[i] = static_cast<std::uint8_t>(k >> (i % 4 * 8));
      f.stamp_ns = k;
      if (bus.send(f) == hal::IoStatus::kOk)
        ++k;
      else
        std::this_thread::yield();  // full: the consumer catches up
    }
  });
  std::uint32_t expected = 0;
  while (expected < kFrames) {
    hal::CanFrame f;
    if (bus.receive(f) != hal::IoStatus::kOk) continue;
    ASSERT_EQ(f.stamp_ns, expected);
    ASSERT_EQ(f.id, expected % 2048);
    for (int i = 0; i < 8; ++i)
      ASSERT_EQ(f.data[i], static_cast<std::uint8_t>(expected >> (i % 4 * 8)));
    ++expected;
  }
  producer.join();
  EXPECT_EQ(bus.stats().rx_frames, kFrames);
}

}  // namespace
}  // namespace heft::drivers

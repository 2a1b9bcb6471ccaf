// The in-memory bus between two real threads (producer: a simulated device node; consumer: a driver
// thread): every frame arrives once, in order, untorn. The candump writer's queue between a
// producer and its writer thread: every frame logged once, in order. Also run under
// ThreadSanitizer.
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "heft/drivers/candump.hpp"
#include "heft/drivers/candump_writer.hpp"
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

TEST(CandumpWriter, AProducerThreadLogsEveryFrameInOrderThroughTheWriterThread) {
  const std::string path = testing::TempDir() + "/candump_writer_threads.log";
  constexpr std::uint32_t kFrames = 3 * CandumpWriter::kQueueFrames;  // the queue fills up
  std::uint64_t written = 0;
  {
    CandumpWriter writer(path, {"can0", "can1"}, /*wait_when_full=*/true, 1'000'000'000);
    std::thread producer([&] {
      for (std::uint32_t k = 0; k < kFrames; ++k) {
        hal::CanFrame f;
        f.id = k % 2048;
        f.len = 4;
        for (int i = 0; i < 4; ++i) f.data[i] = static_cast<std::uint8_t>(k >> (8 * i));
        f.stamp_ns = static_cast<std::int64_t>(k) * 1000;
        ASSERT_TRUE(writer.Log(static_cast<int>(k % 2), f));
      }
    });
    producer.join();
    writer.Close();
    written = writer.written();
    EXPECT_EQ(writer.dropped(), 0u);
  }
  EXPECT_EQ(written, kFrames);
  std::ifstream in(path);
  std::vector<CandumpError> errors;
  const auto records = ReadCandump(in, errors);
  ASSERT_TRUE(errors.empty());
  ASSERT_EQ(records.size(), kFrames);
  for (std::uint32_t k = 0; k < kFrames; ++k) {
    const CandumpRecord& r = records[k];
    ASSERT_EQ(r.bus, k % 2 ? "can1" : "can0");
    ASSERT_EQ(r.stamp_ns, 1'000'000'000 + static_cast<std::int64_t>(k) * 1000);
    ASSERT_EQ(r.frame.id, k % 2048);
    for (int i = 0; i < 4; ++i) ASSERT_EQ(r.frame.data[i], static_cast<std::uint8_t>(k >> (8 * i)));
  }
  std::remove(path.c_str());
}

TEST(CandumpWriter, WithoutWaitingAFullQueueLeavesFramesOutAndCountsThem) {
  const std::string path = testing::TempDir() + "/candump_writer_drops.log";
  CandumpWriter writer(path, {"can0"}, /*wait_when_full=*/false);
  hal::CanFrame f;
  f.id = 0x100;
  f.len = 1;
  std::uint64_t accepted = 0;
  for (std::size_t k = 0; k < 8 * CandumpWriter::kQueueFrames; ++k) accepted += writer.Log(0, f);
  writer.Close();
  EXPECT_EQ(writer.written(), accepted);
  EXPECT_EQ(writer.written() + writer.dropped(), 8 * CandumpWriter::kQueueFrames);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace heft::drivers

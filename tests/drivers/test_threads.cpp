// The in-memory bus between two real threads (producer: a simulated device node; consumer: a driver
// thread): every frame arrives once, in order, untorn. The candump writer's queue between a
// producer and its writer thread: every frame logged once, in order. Also run under
// ThreadSanitizer.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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

// The writer thread is held up: its file is a FIFO nobody reads until the producer is done, so
// once the pipe and stdio's buffer are full it blocks in write. The queue then fills and every
// further frame must be left out and counted. Fails if no frame is dropped, if more frames are
// accepted than the queue plus what the pipe and stdio can hold, or if written + dropped misses
// any frame or the reader sees another count than written().
TEST(CandumpWriter, WithoutWaitingAFullQueueLeavesFramesOutAndCountsThem) {
  const std::string path = testing::TempDir() + "/candump_writer_drops.fifo";
  std::remove(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  // Opened first (non-blocking) so that the writer's fopen(path, "w") does not wait for a reader.
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  const long pipe_bytes = fcntl(fd, F_GETPIPE_SZ);
  ASSERT_GT(pipe_bytes, 0);
  hal::CanFrame f;
  f.id = 0x100;
  f.len = 1;
  const std::size_t line_bytes = FormatCandumpLine(CandumpRecord{0, "can0", f}).size() + 1;
  constexpr std::size_t kFrames = 8 * CandumpWriter::kQueueFrames;
  std::uint64_t accepted = 0, lines = 0;
  {
    CandumpWriter writer(path, {"can0"}, /*wait_when_full=*/false);
    for (std::size_t k = 0; k < kFrames; ++k) accepted += writer.Log(0, f);
    // Held-up writer: at most the queue, one frame in its hands, the pipe's capacity and a stdio
    // buffer (BUFSIZ is larger than the 4 KiB glibc gives a pipe) of lines.
    const std::size_t bound = CandumpWriter::kQueueFrames + 1 +
                              (static_cast<std::size_t>(pipe_bytes) + BUFSIZ) / line_bytes + 1;
    EXPECT_LE(accepted, bound);
    EXPECT_GE(accepted, CandumpWriter::kQueueFrames);  // an empty queue takes a full queue's worth
    std::thread drain([&] {  // now read everything, so that Close() can finish
      ASSERT_EQ(fcntl(fd, F_SETFL, 0), 0);
      char buffer[4096];
      for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        ASSERT_GT(n, 0) << std::strerror(errno);
        lines += static_cast<std::uint64_t>(std::count(buffer, buffer + n, '\n'));
      }
    });
    writer.Close();
    drain.join();
    EXPECT_EQ(writer.written(), accepted);
    EXPECT_GE(writer.dropped(), kFrames - bound);
    EXPECT_EQ(writer.written() + writer.dropped(), kFrames);
  }
  EXPECT_EQ(lines, accepted);
  close(fd);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace heft::drivers

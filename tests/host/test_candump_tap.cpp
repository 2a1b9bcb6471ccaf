// heftd's candump log of received frames (host.candump) on in-memory buses: every frame the driver
// thread receives reaches a `candump -l` file (rotated by size) through the lock-free queue; the
// receive path never allocates or waits, and frames that find the queue full are counted.
#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "heft/drivers/candump.hpp"
#include "heft/drivers/memory_bus.hpp"
#include "heft/host/candump_tap.hpp"
#include "heft/test/alloc_counter.hpp"

namespace heft::host {
namespace {

namespace fs = std::filesystem;

std::string Fresh(const std::string& name) {
  const std::string path = testing::TempDir() + "/" + name;
  for (int n = 0; n <= 8; ++n) fs::remove(n == 0 ? path : path + "." + std::to_string(n));
  return path;
}

hal::CanFrame Frame(std::uint32_t id, std::uint8_t byte) {
  hal::CanFrame f;
  f.id = id;
  f.len = 2;
  f.data[0] = byte;
  f.data[1] = 0xAB;
  return f;
}

std::int64_t WallNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Fails if a received frame is missing from the log, lands under the wrong bus, is stamped with
// anything but the wall clock at receipt, if the receive path allocates, or if the log does not
// rotate at max_bytes.
TEST(CandumpTap, EveryReceivedFrameIsLoggedWithTheWallClockAndTheFileRotates) {
  const std::string path = Fresh("tap.log");
  drivers::MemoryBus can0("can0"), can1("can1");
  std::vector<hal::CanTransport*> buses{&can0, &can1};
  constexpr int kFrames = 1500;
  const std::int64_t before = WallNs();
  std::uint64_t allocations = 0;
  {
    CandumpTap tap(buses, {"can0", "can1"}, path, drivers::RotationPolicy{16 * 1024, 20, true});
    const std::vector<hal::CanTransport*> tapped = tap.buses();
    ASSERT_EQ(tapped.size(), 2u);
    EXPECT_EQ(tapped[1]->name(), "can1");
    int received = 0;
    for (int i = 0; i < kFrames; ++i) {
      ASSERT_EQ(can0.send(Frame(0x100 + i % 16, static_cast<std::uint8_t>(i))), hal::IoStatus::kOk);
      ASSERT_EQ(can1.send(Frame(0x200, static_cast<std::uint8_t>(i))), hal::IoStatus::kOk);
      hal::CanFrame f;
      heft::test::AllocationScope scope;
      for (hal::CanTransport* bus : tapped)
        while (bus->receive(f) == hal::IoStatus::kOk) ++received;
      allocations += scope.count();
      if (i % 500 == 499) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_EQ(received, 2 * kFrames);
    tap.Close();
    EXPECT_EQ(tap.written() + tap.dropped(), 2u * kFrames);
    EXPECT_EQ(tap.dropped(), 0u);  // the queue holds 32768 frames
    EXPECT_GE(tap.rotations(), 2u);
  }
  EXPECT_EQ(allocations, 0u);
  const std::int64_t after = WallNs();
  // Read the files oldest first: every frame once, in order per bus, stamps within the test.
  std::vector<std::string> files;
  for (int n = 20; n >= 1; --n)
    if (fs::exists(path + "." + std::to_string(n))) files.push_back(path + "." + std::to_string(n));
  files.push_back(path);
  int next0 = 0, next1 = 0;
  for (const std::string& file : files) {
    EXPECT_LE(fs::file_size(file), 16u * 1024u) << file;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
      drivers::CandumpRecord r;
      ASSERT_EQ(drivers::ParseCandumpLine(line, r), "") << line;
      EXPECT_GE(r.stamp_ns, before / 1000 * 1000);  // candump writes microseconds
      EXPECT_LE(r.stamp_ns, after);
      int& next = r.bus == "can0" ? next0 : next1;
      EXPECT_EQ(r.frame.data[0], static_cast<std::uint8_t>(next)) << line;
      EXPECT_EQ(r.frame.id, r.bus == "can0" ? 0x100u + next % 16 : 0x200u) << line;
      ++next;
    }
  }
  EXPECT_EQ(next0, kFrames);
  EXPECT_EQ(next1, kFrames);
}

// The driver thread never waits for the writer: with the queue full, frames are left out of the
// log and counted. Fails if receive() blocked (the test would hang) or a frame went uncounted.
TEST(CandumpTap, AFullQueueDropsAndCountsInsteadOfBlocking) {
  const std::string path = Fresh("tap_full.log");
  drivers::MemoryBus bus("can0");
  std::vector<hal::CanTransport*> buses{&bus};
  CandumpTap tap(buses, {"can0"}, path, drivers::RotationPolicy{0, 0, false});
  hal::CanTransport* tapped = tap.buses()[0];
  const std::uint64_t total = 4 * drivers::CandumpWriter::kQueueFrames;
  std::uint64_t received = 0;
  for (std::uint64_t i = 0; i < total; i += 1024) {
    for (int k = 0; k < 1024; ++k) (void)bus.send(Frame(0x123, static_cast<std::uint8_t>(k)));
    hal::CanFrame f;
    while (tapped->receive(f) == hal::IoStatus::kOk) ++received;
  }
  tap.Close();
  EXPECT_EQ(received, total);
  EXPECT_EQ(tap.written() + tap.dropped(), total);
  std::ifstream in(path);
  std::uint64_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, tap.written());
}

}  // namespace
}  // namespace heft::host

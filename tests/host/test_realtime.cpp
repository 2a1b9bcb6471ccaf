// The real-time set-up's parts (heft/host/realtime.hpp): the CPU latency request and the
// pre-faulting; the control thread's schedule after it was starved (schedule.hpp). The whole set-up
// on a running heft-sim: tests/plugin/test_heftd.cpp.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "heft/host/realtime.hpp"
#include "heft/host/schedule.hpp"

namespace heft::host {
namespace {

// The request is the kernel's binary 32-bit integer, written once and held while the object
// lives. A regular file stands in for the device. Fails if the value is not written as 4 native
// bytes, or if the file is not open (held) until the destructor.
TEST(CpuLatencyRequest, WritesTheBinaryValueAndHoldsTheFile) {
  const std::string path = testing::TempDir() + "/heft_dma_" + std::to_string(getpid());
  std::ofstream(path).close();
  {
    const CpuLatencyRequest request(7, path.c_str());
    ASSERT_TRUE(request.ok()) << request.error();
    std::ifstream in(path, std::ios::binary);
    std::int32_t value = -1;
    in.read(reinterpret_cast<char*>(&value), sizeof value);
    EXPECT_EQ(in.gcount(), 4);
    EXPECT_EQ(value, 7);
    EXPECT_EQ(in.get(), EOF);  // nothing else written
  }
  std::filesystem::remove(path);
}

// A device that cannot be opened is not fatal: ok() is false and the error names the device and
// the reason. Fails on a silent failure or a message without them.
TEST(CpuLatencyRequest, AnUnopenableDeviceIsReportedWithItsReason) {
  const std::string path = testing::TempDir() + "/no_such_dir_" + std::to_string(getpid()) + "/dev";
  const CpuLatencyRequest request(0, path.c_str());
  EXPECT_FALSE(request.ok());
  EXPECT_NE(request.error().find(path), std::string::npos) << request.error();
  EXPECT_NE(request.error().find("No such file or directory"), std::string::npos)
      << request.error();
}

// The real device (as root, or with the package's udev rule): while held, the kernel's aggregate
// request (what reading the device returns) is at most ours. Fails if the request does not reach
// the kernel. Skipped where the device cannot be opened (containers without it, no permission).
TEST(CpuLatencyRequest, TheKernelHonoursTheRequestWhileHeld) {
  if (access("/dev/cpu_dma_latency", R_OK | W_OK) != 0)
    GTEST_SKIP() << "/dev/cpu_dma_latency not accessible here";
  const CpuLatencyRequest request(3);
  ASSERT_TRUE(request.ok()) << request.error();
  const int fd = open("/dev/cpu_dma_latency", O_RDONLY);
  ASSERT_GE(fd, 0);
  std::int32_t current = -1;
  ASSERT_EQ(read(fd, &current, sizeof current), static_cast<ssize_t>(sizeof current));
  close(fd);
  EXPECT_GE(current, 0);
  EXPECT_LE(current, 3);
}

// Pre-faulting touches the memory it says it does (no crash on a thread's default 8 MB stack with
// the largest request, and the heap's block is usable afterwards). Fails by crashing.
TEST(Prefault, StackAndHeapAreTouchedWithoutHarm) {
  PrefaultStack(kPrefaultStackBytes);
  PrefaultStack(64 * 1024 * 1024);  // clamped to what the function allows
  PrefaultHeap(1024 * 1024);
  SUCCEED();
}

// A control thread on time goes on with k + 3; one that finished tick k a period or more late
// (starved by a CPU hog) resumes at the first period still ahead and counts the periods it passed
// over, instead of running them back to back on the same driver samples (before: always k + 3,
// 166 catch-up ticks after a 500 ms hog, one sample fed to the filter up to 35 times). Fails if a
// starved thread is given a past tick, an on-time one loses a tick, or the count is off.
TEST(NextControlTick, AStarvedThreadResumesOnTheScheduleAndCountsWhatItSkipped) {
  std::uint64_t skipped = 0;
  EXPECT_EQ(NextControlTick(300, 300'050'000, skipped), 303);  // 50 µs after its wake-up
  EXPECT_EQ(NextControlTick(300, 302'999'999, skipped), 303);  // late, but 303 is still ahead
  EXPECT_EQ(skipped, 0u);
  // Tick 300 done at 303.0 ms: 303 is due now, not ahead; the next period is 306.
  EXPECT_EQ(NextControlTick(300, 303'000'000, skipped), 306);
  EXPECT_EQ(skipped, 1u);
  // Tick 300 done 500 ms late (800.2 ms): 303 … 798 passed over (166 periods), next 801.
  skipped = 0;
  const std::int64_t next = NextControlTick(300, 800'200'000, skipped);
  EXPECT_EQ(next, 801);
  EXPECT_EQ(next % 3, 0);
  EXPECT_GT(next * 1'000'000, 800'200'000);
  EXPECT_EQ(skipped, 166u);
  // At a 2 ms period (estimator.control_period 0.002) the same on its own grid: tick 300 done at
  // 800.2 ms resumes at 802, 250 periods (302 … 800) passed over.
  skipped = 0;
  EXPECT_EQ(NextControlTick(300, 301'000'000, skipped, 2), 302);
  EXPECT_EQ(NextControlTick(300, 800'200'000, skipped, 2), 802);
  EXPECT_EQ(skipped, 250u);
}

}  // namespace
}  // namespace heft::host

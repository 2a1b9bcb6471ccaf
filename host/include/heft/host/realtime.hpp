// What a real-time service does for its threads besides SCHED_FIFO (schedule.cpp): hold a CPU
// latency request on /dev/cpu_dma_latency for the life of the process (the kernel keeps the CPUs
// out of deep idle states while the file is open, as cyclictest does), and pre-fault memory so that
// the first touch of a page never happens in a real-time loop: the heap once (with mlockall, glibc
// told to keep what it has), each real-time thread's stack on its start. Set-up only (may allocate
// and return errors); nothing here runs in a loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace heft::host {

// /dev/cpu_dma_latency held at `microseconds` while this object lives (the kernel drops the request
// when the file is closed, also when the process dies). Never throws: ok() is false and error()
// says why (typically the device's permission: heftd's group needs rw, see systemd/).
class CpuLatencyRequest {
 public:
  explicit CpuLatencyRequest(std::int32_t microseconds,
                             const char* device = "/dev/cpu_dma_latency") noexcept;
  ~CpuLatencyRequest();
  CpuLatencyRequest(const CpuLatencyRequest&) = delete;
  CpuLatencyRequest& operator=(const CpuLatencyRequest&) = delete;
  bool ok() const noexcept { return fd_ >= 0; }
  const std::string& error() const noexcept { return error_; }

 private:
  int fd_ = -1;
  std::string error_;
};

// Touches `bytes` of the calling thread's stack below the current frame, so that those pages are
// mapped (and, after mlockall, locked) before the thread's loop starts.
void PrefaultStack(std::size_t bytes) noexcept;

// After mlockall(MCL_CURRENT | MCL_FUTURE): stops glibc from returning freed heap to the kernel
// (M_TRIM_THRESHOLD) or serving large blocks from fresh mappings (M_MMAP_MAX), then allocates and
// touches `bytes` and frees them, so that later allocations of other threads reuse locked pages.
void PrefaultHeap(std::size_t bytes);

inline constexpr std::size_t kPrefaultStackBytes = 256 * 1024;       // per real-time thread
inline constexpr std::size_t kPrefaultHeapBytes = 16 * 1024 * 1024;  // once, with lock_memory

}  // namespace heft::host

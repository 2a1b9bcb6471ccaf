#include "heft/host/realtime.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace heft::host {

CpuLatencyRequest::CpuLatencyRequest(std::int32_t microseconds, const char* device) noexcept {
  try {
    fd_ = open(device, O_RDWR | O_CLOEXEC);
    if (fd_ < 0) {
      error_ = std::string("open ") + device + ": " + std::strerror(errno);
      return;
    }
    // The kernel takes the request as a binary 32-bit integer (PM QoS, cpu_dma_latency).
    if (write(fd_, &microseconds, sizeof microseconds) !=
        static_cast<ssize_t>(sizeof microseconds)) {
      error_ = std::string("write ") + device + ": " + std::strerror(errno);
      close(fd_);
      fd_ = -1;
    }
  } catch (...) {  // std::string's allocation: fd_ tells
  }
}

CpuLatencyRequest::~CpuLatencyRequest() {
  if (fd_ >= 0) close(fd_);
}

void PrefaultStack(std::size_t bytes) noexcept {
  // A fixed upper bound (no VLA in C++) keeps the frame's size known: 1 MiB of the default 8 MiB.
  constexpr std::size_t kMax = 1024 * 1024;
  unsigned char buffer[kMax];
  volatile unsigned char* const top = buffer + kMax - 1;  // volatile: the stores stay
  const std::size_t n = bytes < kMax ? bytes : kMax;
  const long page = sysconf(_SC_PAGESIZE);
  const std::size_t step = page > 0 ? static_cast<std::size_t>(page) : 4096;
  for (std::size_t i = 0; i < n; i += step) *(top - i) = 0;
}

void PrefaultHeap(std::size_t bytes) {
  mallopt(M_TRIM_THRESHOLD, -1);
  mallopt(M_MMAP_MAX, 0);
  const std::unique_ptr<unsigned char[]> block(new unsigned char[bytes]);
  const long page = sysconf(_SC_PAGESIZE);
  const std::size_t step = page > 0 ? static_cast<std::size_t>(page) : 4096;
  volatile unsigned char* p = block.get();
  for (std::size_t i = 0; i < bytes; i += step) p[i] = 0;
}

}  // namespace heft::host

#include "heft/host/shared_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>

#include "heft/hal/shared_hand_off.h"  // heft_handoff_process_start, heft_handoff_now_ns

namespace heft::host {
namespace {

constexpr const char* kShmDir = "/dev/shm/";  // where Linux's shm_open keeps its segments

[[noreturn]] void Fail(const std::string& path, const char* what, int err) {
  throw std::runtime_error("shared memory " + path + ": " + what + ": " + std::strerror(err));
}

}  // namespace

SharedHandOffSegment::SharedHandOffSegment(const std::string& name, std::int64_t control_period_ns)
    : name_(name) {
  const std::string path = kShmDir + name;
  if (name.empty() || name.find('/') != std::string::npos || name.size() > 200)
    throw std::invalid_argument("shared memory '" + name +
                                "': a name has 1..200 characters without '/'");
  // Built under a temporary name nobody reads, then renamed over the real one.
  const std::string tmp = name + ".new-" + std::to_string(getpid());
  shm_unlink(("/" + tmp).c_str());  // left by an earlier process with this pid
  const int fd = shm_open(("/" + tmp).c_str(), O_CREAT | O_EXCL | O_RDWR, 0640);
  if (fd < 0) Fail(kShmDir + tmp, "shm_open", errno);
  auto fail = [&](const char* what) {
    const int err = errno;
    close(fd);
    shm_unlink(("/" + tmp).c_str());
    Fail(kShmDir + tmp, what, err);
  };
  // The umask (UMask=0077 in the unit) may have narrowed the mode: heftd's group must read.
  if (fchmod(fd, 0640) != 0) fail("fchmod 0640");
  if (ftruncate(fd, sizeof(hal::SharedHandOff)) != 0) fail("ftruncate");
  struct stat st {};
  if (fstat(fd, &st) != 0) fail("fstat");
  void* p = mmap(nullptr, sizeof(hal::SharedHandOff), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) fail("mmap");
  close(fd);
  inode_ = static_cast<std::uint64_t>(st.st_ino);
  shared_ = new (p) hal::SharedHandOff();
  hal::SharedHandOffHeader& h = shared_->header;
  h.writer_pid = static_cast<std::uint32_t>(getpid());
  h.writer_start_time = heft_handoff_process_start(h.writer_pid, nullptr);
  h.control_period_ns = static_cast<std::uint32_t>(control_period_ns);
  // relaxed: the rename below publishes the whole segment (a reader can only open it after).
  h.writer_state.store(hal::kWriterRunning, std::memory_order_relaxed);
  h.heartbeat_ns.store(heft_handoff_now_ns(), std::memory_order_relaxed);
  if (std::rename((kShmDir + tmp).c_str(), path.c_str()) != 0) {
    const int err = errno;
    munmap(p, sizeof(hal::SharedHandOff));
    shm_unlink(("/" + tmp).c_str());
    Fail(path, "rename into place", err);
  }
}

SharedHandOffSegment::~SharedHandOffSegment() {
  // release: whoever sees "stopped" sees everything published before it.
  shared_->header.writer_state.store(hal::kWriterStopped, std::memory_order_release);
  munmap(shared_, sizeof(hal::SharedHandOff));
  // Unlink the name only if it still holds this segment (another heftd may have replaced it).
  struct stat st {};
  if (stat((kShmDir + name_).c_str(), &st) == 0 && static_cast<std::uint64_t>(st.st_ino) == inode_)
    shm_unlink(("/" + name_).c_str());
}

}  // namespace heft::host

#include "shared_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>

namespace heft::host {

SharedHandOffSegment::SharedHandOffSegment(const std::string& name) : name_(name) {
  const std::string path = "/" + name;
  const int fd = shm_open(path.c_str(), O_CREAT | O_RDWR, 0644);
  if (fd < 0) throw std::runtime_error("shared memory " + path + ": " + std::strerror(errno));
  if (ftruncate(fd, sizeof(hal::SharedHandOff)) != 0) {
    const int err = errno;
    close(fd);
    throw std::runtime_error("shared memory " + path + ": " + std::strerror(err));
  }
  void* p = mmap(nullptr, sizeof(hal::SharedHandOff), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED)
    throw std::runtime_error("shared memory " + path + ": mmap: " + std::strerror(errno));
  shared_ = new (p) hal::SharedHandOff();
  shared_->header.writer_pid = static_cast<std::uint32_t>(getpid());
}

SharedHandOffSegment::~SharedHandOffSegment() {
  munmap(shared_, sizeof(hal::SharedHandOff));
  shm_unlink(("/" + name_).c_str());
}

}  // namespace heft::host

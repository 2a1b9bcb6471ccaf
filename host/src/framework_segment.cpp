#include "heft/host/framework_segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace heft::host {

FrameworkSegment::FrameworkSegment(const char* what, const std::string& name, std::size_t bytes,
                                   bool create, unsigned layout_version)
    : bytes_(bytes) {
  if (name.empty() || name.find('/') != std::string::npos || name.size() > 200)
    throw std::invalid_argument(std::string(what) + ": shared-memory name '" + name +
                                "' must be 1..200 characters without '/'");
  const std::string path = std::string(what) + " /dev/shm/" + name;
  const int fd = shm_open(("/" + name).c_str(), create ? (O_CREAT | O_RDWR) : O_RDWR, 0660);
  if (fd < 0) {
    const int err = errno;
    throw std::runtime_error(
        path + ": " + std::strerror(err) +
        (create ? std::string()
                : std::string(err == ENOENT ? " (is heftd running with this segment name?)"
                                            : " (is this user in heftd's group?)")));
  }
  auto fail = [&](const char* step) {
    const int err = errno;
    close(fd);
    throw std::runtime_error(path + ": " + step + ": " + std::strerror(err));
  };
  struct stat st {};
  if (fstat(fd, &st) != 0) fail("fstat");
  if (create) {
    // The umask may have narrowed shm_open's mode: the framework's user (group heft) must write.
    if (fchmod(fd, 0660) != 0) fail("fchmod 0660");
    if (static_cast<std::size_t>(st.st_size) != bytes) {
      if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) fail("ftruncate");
      resized_ = true;  // new (size 0) or another layout
    }
  } else if (static_cast<std::size_t>(st.st_size) != bytes) {
    close(fd);
    throw std::runtime_error(path + ": " + std::to_string(st.st_size) +
                             " bytes, this build expects " + std::to_string(bytes) + " (layout " +
                             std::to_string(layout_version) + ")");
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) fail("mmap");
  close(fd);
  memory_ = p;
}

FrameworkSegment::~FrameworkSegment() {
  if (memory_ != nullptr) munmap(memory_, bytes_);
}

void FrameworkSegment::Unlink(const std::string& name) noexcept {
  shm_unlink(("/" + name).c_str());
}

}  // namespace heft::host

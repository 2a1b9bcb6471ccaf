// heft-handoff-reader NAME [--once]: an example whole-body-controller side of the shared-memory
// hand-off. Maps /dev/shm/NAME read-only, checks its layout, and prints the latest estimate (every
// 100 ms, or once).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "heft/hal/shared_hand_off.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: heft-handoff-reader NAME [--once]\n");
    return 2;
  }
  const std::string name = std::string("/") + argv[1];
  const bool once = argc > 2 && std::strcmp(argv[2], "--once") == 0;
  const int fd = shm_open(name.c_str(), O_RDONLY, 0);
  if (fd < 0) {
    std::fprintf(
        stderr,
        "heft-handoff-reader: no shared hand-off %s (%s); is heftd running with host.shm?\n",
        name.c_str(), std::strerror(errno));
    return 1;
  }
  void* p = mmap(nullptr, sizeof(heft::hal::SharedHandOff), PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    std::fprintf(stderr, "heft-handoff-reader: mmap failed: %s\n", std::strerror(errno));
    return 1;
  }
  const auto* shared = static_cast<const heft::hal::SharedHandOff*>(p);
  if (!shared->compatible()) {
    std::fprintf(stderr,
                 "heft-handoff-reader: %s has layout %u (estimate %u bytes, depth %u); this reader "
                 "speaks %u\n",
                 name.c_str(), shared->header.layout_version, shared->header.estimate_size,
                 shared->header.depth, heft::hal::kSharedHandOffLayout);
    return 1;
  }
  heft::hal::InertialEstimate e;
  do {
    if (shared->ring.read_latest(e)) {
      std::printf("seq %llu state %d model %d updates gated %llu:",
                  static_cast<unsigned long long>(e.sequence), static_cast<int>(e.status.state),
                  static_cast<int>(e.status.model),
                  static_cast<unsigned long long>(e.status.gated));
      for (std::size_t k = 0; k < e.num_links; ++k)
        std::printf(" %s m=%.3f kg", e.links[k].name.data(), e.links[k].parameters[0]);
      std::printf("\n");
      std::fflush(stdout);
    }
    if (!once) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (!once);
  munmap(p, sizeof(heft::hal::SharedHandOff));
  return 0;
}

// heft-handoff-reader [--once] NAME: an example whole-body-controller side of the shared-memory
// hand-off. Maps /dev/shm/NAME read-only, checks its layout, and prints the latest estimate (every
// 100 ms, or once). --help lists the exit codes.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "heft/hal/shared_hand_off.hpp"

namespace {

constexpr const char* kUsage = R"(usage: heft-handoff-reader [--once] NAME
       heft-handoff-reader --help | --version

Maps heftd's shared-memory hand-off /dev/shm/NAME (heftd's host.shm) read-only, checks its layout
and prints the latest estimate every 100 ms until interrupted, or once with --once.

  --once       print one estimate and exit
  -h, --help   this text
  --version    heft's version and the hand-off layout this reader speaks

Exit codes:
  0  printed one estimate (--once); without --once it prints until stopped by a signal
  1  no such shared hand-off (is heftd running with host.shm?), it cannot be mapped, or its layout
     is not the one this reader speaks
  2  usage error: unknown option, no NAME or more than one
)";

}  // namespace

int main(int argc, char** argv) {
  std::string arg_name;
  bool once = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::printf("%s", kUsage);
      return 0;
    } else if (a == "--version") {
      std::printf("heft-handoff-reader %s (hand-off layout %u)\n", HEFT_VERSION,
                  heft::hal::kSharedHandOffLayout);
      return 0;
    } else if (a == "--once") {
      once = true;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "heft-handoff-reader: unknown option %s (heft-handoff-reader --help)\n",
                   a.c_str());
      return 2;
    } else if (!arg_name.empty()) {
      std::fprintf(stderr, "heft-handoff-reader: one NAME only (got %s and %s)\n", arg_name.c_str(),
                   a.c_str());
      return 2;
    } else {
      arg_name = a;
    }
  }
  if (arg_name.empty()) {
    std::fprintf(stderr, "heft-handoff-reader: no NAME given (heft-handoff-reader --help)\n");
    return 2;
  }
  const std::string name = arg_name[0] == '/' ? arg_name : "/" + arg_name;
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

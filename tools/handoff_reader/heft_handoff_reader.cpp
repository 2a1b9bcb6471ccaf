// heft-handoff-reader [--once] [--max-age-ms MS] NAME: an example whole-body-controller side of
// the shared-memory hand-off, through the readers' C API (hal/shared_hand_off.h). Maps
// /dev/shm/NAME read-only, checks its layout, and prints the latest estimate of a live heftd every
// 100 ms (or once); says when heftd is stale or gone instead of printing its last estimate, and
// follows a restarted heftd. --help lists the exit codes.
#include <signal.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "heft/hal/shared_hand_off.h"
#include "tool_args.hpp"

namespace {

constexpr const char* kUsage = R"(usage: heft-handoff-reader [--once] [--max-age-ms MS] NAME
       heft-handoff-reader --help | --version

Maps heftd's shared-memory hand-off /dev/shm/NAME (heftd's host.shm) read-only, checks its layout
and prints the latest estimate every 100 ms until interrupted, or once with --once. An estimate is
printed only while heftd is live: its heartbeat (every control tick) at most MS old. Otherwise it
prints that heftd is stale (alive, not ticking) or gone (stopped, or its process ended), and
follows the next heftd that creates NAME.

  --once            print one estimate and exit
  --max-age-ms MS   a heartbeat older than MS milliseconds is stale (default 50, 1..60000)
  -h, --help        this text
  --version         heft's version and the hand-off layout this reader speaks

Exit codes:
  0  printed one estimate of a live heftd (--once); without --once it prints until stopped by a
     signal
  1  no such shared hand-off (is heftd running with host.shm?), it cannot be mapped, or its layout
     is not the one this reader speaks
  2  usage error: unknown option, a bad MS, no NAME or more than one
  3  (--once) the hand-off's heftd is stale or gone: its last estimate is not printed
)";

volatile std::sig_atomic_t g_stop = 0;
void OnSignal(int) {
  g_stop = 1;
}

void Print(const heft_inertial_estimate& e) {
  std::printf("seq %llu state %u model %u nominal model %08x updates gated %llu:",
              static_cast<unsigned long long>(e.sequence), static_cast<unsigned>(e.status.state),
              static_cast<unsigned>(e.status.model), static_cast<unsigned>(e.nominal_model),
              static_cast<unsigned long long>(e.status.gated));
  for (unsigned k = 0; k < e.num_links; ++k)
    std::printf(" %.*s m=%.3f kg", static_cast<int>(HEFT_HANDOFF_LINK_NAME), e.links[k].name,
                e.links[k].parameters[0]);
  std::printf("\n");
}

// The command line into name, once and max_age_ms. Returns the exit code to leave with, or -1 to go
// on (heft::tools::ParseToolCommandLine).
int ParseCommandLine(int argc, char** argv, std::string& name, bool& once, double& max_age_ms) {
  using heft::tools::Option;
  return heft::tools::ParseToolCommandLine(
      argc, argv,
      {"heft-handoff-reader", kUsage,
       std::string("heft-handoff-reader ") + HEFT_VERSION + " (hand-off layout " +
           std::to_string(HEFT_HANDOFF_LAYOUT_VERSION) + ")",
       "NAME"},
      name, [&](const std::string& a, int& i) {
        if (a == "--once") {
          once = true;
          return Option::kTaken;
        }
        if (a != "--max-age-ms") return Option::kNotMine;
        char* end = nullptr;
        const char* v = i + 1 < argc ? argv[++i] : "";
        max_age_ms = std::strtod(v, &end);
        if (*v == '\0' || *end != '\0' || !(max_age_ms >= 1.0 && max_age_ms <= 60000.0)) {
          std::fprintf(stderr,
                       "heft-handoff-reader: --max-age-ms expects milliseconds from 1 to 60000, "
                       "not '%s'\n",
                       v);
          return Option::kRefused;
        }
        return Option::kTaken;
      });
}

// First contact: the segment must exist and speak this layout. False (said on stderr) when not.
bool FirstContact(const std::string& name, const std::string& shown) {
  const heft_handoff_segment* first = heft_handoff_open(name.c_str(), nullptr);
  if (first == nullptr) {
    std::fprintf(stderr,
                 "heft-handoff-reader: no shared hand-off %s (%s); is heftd running with "
                 "host.shm?\n",
                 shown.c_str(), std::strerror(errno));
    return false;
  }
  if (!heft_handoff_compatible(first)) {
    std::fprintf(stderr,
                 "heft-handoff-reader: %s has layout %u (estimate %u bytes, depth %u); this reader "
                 "speaks %u\n",
                 shown.c_str(), first->header.layout_version, first->header.estimate_size,
                 first->header.depth, HEFT_HANDOFF_LAYOUT_VERSION);
    heft_handoff_close(first);
    return false;
  }
  heft_handoff_close(first);
  return true;
}

// Polls the hand-off until a signal (or, with `once`, until one answer): prints each estimate of a
// live heftd and each change of state once. The exit code.
int Follow(const std::string& name, const std::string& shown, bool once, std::int64_t max_age_ns) {
  heft_handoff_reader reader;
  heft_handoff_reader_init(&reader, name.c_str(), max_age_ns);
  heft_inertial_estimate e;
  int last = -1;
  std::uint32_t last_pid = 0;
  for (int attempt = 0; g_stop == 0; ++attempt) {
    const int r = heft_handoff_reader_poll(&reader, heft_handoff_now_ns(), &e);
    const std::uint32_t pid = reader.seg != nullptr ? reader.seg->header.writer_pid : 0;
    if (r == HEFT_HANDOFF_OK) {
      if (pid != last_pid && last_pid != 0)
        std::printf("%s: following heftd pid %u\n", shown.c_str(), pid);
      Print(e);
    } else if (r != last || pid != last_pid) {
      // A state change, once: stale / gone / empty / ...
      std::printf("%s: heftd pid %u %s\n", shown.c_str(), pid, heft_handoff_result_name(r));
    }
    std::fflush(stdout);
    last = r;
    last_pid = pid;
    if (once) {
      // A read that overlapped a write or a heftd that has not published yet: try again briefly.
      if ((r == HEFT_HANDOFF_TORN || r == HEFT_HANDOFF_EMPTY) && attempt < 20) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      heft_handoff_reader_close(&reader);
      return r == HEFT_HANDOFF_OK ? 0 : r == HEFT_HANDOFF_STALE || r == HEFT_HANDOFF_GONE ? 3 : 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  heft_handoff_reader_close(&reader);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string name;
  bool once = false;
  double max_age_ms = 50.0;
  const int exit_code = ParseCommandLine(argc, argv, name, once, max_age_ms);
  if (exit_code >= 0) return exit_code;
  const std::string shown = "/dev/shm/" + (name[0] == '/' ? name.substr(1) : name);
  const auto max_age_ns = static_cast<std::int64_t>(max_age_ms * 1e6);
  if (!FirstContact(name, shown)) return 1;

  signal(SIGINT, OnSignal);
  signal(SIGTERM, OnSignal);
  return Follow(name, shown, once, max_age_ns);
}

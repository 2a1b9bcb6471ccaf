// The shared-memory hand-off's writer (heft/host/shared_memory.hpp) and the readers' C API
// (hal/shared_hand_off.h): a reader never takes a dead or hung heftd's last estimate for a live
// one. A writer process killed with SIGKILL mid-run is reported gone within the heartbeat's age
// bound, never with a torn or non-finite estimate, and the reader follows the next writer; a
// writer stopped by SIGSTOP is stale, then live again; every liveness rule on a segment in memory.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "heft/hal/shared_hand_off.h"
#include "heft/host/shared_memory.hpp"

namespace heft::host {
namespace {

constexpr std::int64_t kMaxAge = 50'000'000;  // the readers' default: 50 ms

std::string UniqueName(const char* what) {
  return std::string("heft_test_handoff_") + what + "_" + std::to_string(getpid());
}

// Every number of estimate `i` is i: a copy mixing two estimates shows as unequal numbers.
hal::InertialEstimate Estimate(std::uint64_t i) {
  hal::InertialEstimate e;
  e.sequence = i;
  e.stamp_ns = static_cast<std::int64_t>(i);
  e.num_links = 2;
  for (std::size_t k = 0; k < 2; ++k) {
    std::snprintf(e.links[k].name.data(), e.links[k].name.size(), "link%zu", k);
    e.links[k].parameters.fill(static_cast<double>(i));
    e.links[k].covariance.fill(static_cast<double>(i));
  }
  return e;
}

// True if `e` is one whole estimate of the writer below (nothing torn, all finite).
bool Whole(const heft_inertial_estimate& e) {
  if (e.num_links != 2) return false;
  const auto v = static_cast<double>(e.sequence);
  for (unsigned k = 0; k < 2; ++k) {
    const heft_link_estimate& l = e.links[k];
    for (double x : l.parameters)
      if (x != v || !std::isfinite(x)) return false;
    for (double x : l.covariance)
      if (x != v || !std::isfinite(x)) return false;
  }
  return true;
}

volatile sig_atomic_t g_term = 0;

// A writer process: heftd's segment, an estimate and a heartbeat every millisecond (faster than
// heftd's 3 ms, so that overlapping copies are likelier), numbered from `first`. Exits cleanly
// on SIGTERM (the segment marked stopped and unlinked). Returns its pid once the segment exists.
pid_t StartWriter(const std::string& name, std::uint64_t first) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(ready[0]);
    signal(SIGTERM, [](int) { g_term = 1; });
    {
      SharedHandOffSegment segment(name);
      const char ok = 1;
      if (write(ready[1], &ok, 1) != 1) _exit(3);
      for (std::uint64_t i = first; g_term == 0; ++i) {
        segment.Publish(Estimate(i));
        segment.Heartbeat(heft_handoff_now_ns());
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    _exit(0);
  }
  close(ready[1]);
  char ok = 0;
  const bool started = read(ready[0], &ok, 1) == 1;
  close(ready[0]);
  return started ? pid : -1;
}

struct Polled {
  int result = -1;
  std::int64_t now = 0;
};

// A reader of the hand-off `name` and the last estimate it read; every estimate it returns is
// checked whole.
struct Watch {
  explicit Watch(const std::string& name) {
    heft_handoff_reader_init(&reader, name.c_str(), kMaxAge);
  }
  Polled Poll() {
    Polled p;
    p.now = heft_handoff_now_ns();
    p.result = heft_handoff_reader_poll(&reader, p.now, &e);
    if (p.result == HEFT_HANDOFF_OK) {
      EXPECT_TRUE(Whole(e)) << "torn or non-finite: " << e.sequence;
    }
    return p;
  }
  heft_handoff_reader reader;
  heft_inertial_estimate e;
};

// Waits for the writer's first estimate, then reads for 200 ms. Returns the live reads and the
// torn retries.
std::pair<int, int> ReadWhileLive(Watch& watch) {
  // The writer's first estimate (it may not have made its segment yet on a loaded machine).
  for (const auto end = heft_handoff_now_ns() + 5'000'000'000;
       heft_handoff_now_ns() < end && watch.Poll().result != HEFT_HANDOFF_OK;)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // Live: estimates come, each whole.
  int ok = 0, torn = 0;
  for (const auto end = heft_handoff_now_ns() + 200'000'000; heft_handoff_now_ns() < end;) {
    const Polled p = watch.Poll();
    ok += p.result == HEFT_HANDOFF_OK;
    torn += p.result == HEFT_HANDOFF_TORN;
    // Stale only if this loaded machine kept the writer off the CPU for more than 50 ms.
    EXPECT_TRUE(p.result == HEFT_HANDOFF_OK || p.result == HEFT_HANDOFF_TORN ||
                p.result == HEFT_HANDOFF_STALE)
        << heft_handoff_result_name(p.result);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return {ok, torn};
}

// Polls for 400 ms after a writer was killed at `killed`: never its estimate later than the age
// bound, and once gone always gone. Returns when the reader first said gone (0: never).
std::int64_t PollAfterTheKill(Watch& watch, std::int64_t killed) {
  std::int64_t gone_at = 0;
  for (const auto end = killed + 400'000'000; heft_handoff_now_ns() < end;) {
    const Polled p = watch.Poll();
    if (p.result == HEFT_HANDOFF_OK) {
      // Its heartbeat is at most `killed`: an estimate after killed + max age is the bug.
      EXPECT_LE(p.now - killed, kMaxAge) << "a dead writer's estimate handed on as live";
    } else if (p.result == HEFT_HANDOFF_STALE && gone_at == 0) {
      // SIGKILL is delivered asynchronously: on a loaded machine the writer, off the CPU for more
      // than the age bound already, can still exist (not yet a zombie) for a few polls after
      // kill() returned. Stale is right then; the bound on gone_at below still holds.
    } else if (p.result != HEFT_HANDOFF_TORN) {
      // Once gone, always gone: the process is a zombie (not reaped yet) or no more.
      EXPECT_EQ(p.result, HEFT_HANDOFF_GONE) << heft_handoff_result_name(p.result);
      if (gone_at == 0) gone_at = p.now;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  return gone_at;
}

// Fails if a reader returns an estimate of a writer killed with SIGKILL later than the age bound
// after the kill, returns a torn or non-finite one at any time, calls the killed writer (a zombie,
// then reaped) anything but gone, or does not follow the next writer of the same name. (Before
// this layout a reader kept returning the dead writer's last estimate: every check after the kill
// failed.)
TEST(SharedHandOff, WriterKilledMidRunIsGoneWithinTheBoundAndTheNextOneIsFollowed) {
  const std::string name = UniqueName("kill");
  const pid_t first = StartWriter(name, 1);
  ASSERT_GT(first, 0);
  Watch watch(name);
  const auto poll = [&] { return watch.Poll(); };
  heft_inertial_estimate& e = watch.e;
  const auto [ok, torn] = ReadWhileLive(watch);
  EXPECT_GT(ok, 100);

  // SIGKILL mid-run: no destructor, the segment stays as the writer left it.
  const std::int64_t killed = heft_handoff_now_ns();
  ASSERT_EQ(kill(first, SIGKILL), 0);
  const std::int64_t gone_at = PollAfterTheKill(watch, killed);
  ASSERT_NE(gone_at, 0) << "never said gone";
  EXPECT_LE(gone_at - killed, kMaxAge + 10'000'000);  // the bound, plus the polling period
  std::printf("[   info   ] %d live reads (%d torn retries), gone %.1f ms after SIGKILL\n", ok,
              torn, 1e-6 * static_cast<double>(gone_at - killed));
  int status = 0;
  ASSERT_EQ(waitpid(first, &status, 0), first);  // reaped: no such process any more
  EXPECT_EQ(poll().result, HEFT_HANDOFF_GONE);

  // A new writer of the same name: the reader re-opens and follows it.
  const pid_t second = StartWriter(name, 1'000'000);
  ASSERT_GT(second, 0);
  const std::int64_t started = heft_handoff_now_ns();
  Polled p;
  while ((p = poll()).result != HEFT_HANDOFF_OK && p.now - started < 1'000'000'000)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(p.result, HEFT_HANDOFF_OK) << heft_handoff_result_name(p.result);
  EXPECT_GE(e.sequence, 1'000'000U);
  EXPECT_EQ(watch.reader.switches, 1U);
  EXPECT_EQ(watch.reader.seg->header.writer_pid, static_cast<std::uint32_t>(second));
  EXPECT_LE(p.now - started, 2 * HEFT_HANDOFF_REOPEN_NS);

  // A clean stop is gone at once, and removes the name.
  ASSERT_EQ(kill(second, SIGTERM), 0);
  ASSERT_EQ(waitpid(second, &status, 0), second);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(poll().result, HEFT_HANDOFF_GONE);
  struct stat st {};
  EXPECT_NE(stat(("/dev/shm/" + name).c_str(), &st), 0);
  heft_handoff_reader_close(&watch.reader);
}

// Fails if a writer that lives but does not tick (SIGSTOP: what a hung heftd looks like) is
// handed on as live or called gone, or if it is not live again once it ticks.
TEST(SharedHandOff, AWriterThatStopsTickingIsStaleThenLiveAgain) {
  const std::string name = UniqueName("stop");
  const pid_t writer = StartWriter(name, 1);
  ASSERT_GT(writer, 0);
  const heft_handoff_segment* seg = heft_handoff_open(name.c_str(), nullptr);
  ASSERT_NE(seg, nullptr);
  heft_inertial_estimate e;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(heft_handoff_read(seg, heft_handoff_now_ns(), kMaxAge, &e), HEFT_HANDOFF_OK);
  ASSERT_EQ(kill(writer, SIGSTOP), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  EXPECT_EQ(heft_handoff_read(seg, heft_handoff_now_ns(), kMaxAge, &e), HEFT_HANDOFF_STALE);
  ASSERT_EQ(kill(writer, SIGCONT), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(heft_handoff_read(seg, heft_handoff_now_ns(), kMaxAge, &e), HEFT_HANDOFF_OK);
  heft_handoff_close(seg);
  kill(writer, SIGTERM);
  int status = 0;
  waitpid(writer, &status, 0);
}

// A pid that belonged to a process that has exited and been reaped.
pid_t DeadPid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

// Fails if any liveness rule of heft_handoff_read is wrong on a segment in this process's memory:
// fresh → ok; old heartbeat of a live writer → stale; of a dead pid, a reused pid (same pid,
// another start time) or a stopped writer → gone; a heartbeat far in the future is not fresh;
// non-finite numbers or too many links → invalid; another layout → incompatible.
TEST(SharedHandOff, LivenessRulesOnASegmentInMemory) {
  auto shared = std::make_unique<hal::SharedHandOff>();
  auto* seg = reinterpret_cast<const heft_handoff_segment*>(shared.get());
  hal::SharedHandOffHeader& h = shared->header;
  h.writer_pid = static_cast<std::uint32_t>(getpid());
  h.writer_start_time = heft_handoff_process_start(h.writer_pid, nullptr);
  ASSERT_NE(h.writer_start_time, 0U);
  h.writer_state = hal::kWriterRunning;
  const std::int64_t now = heft_handoff_now_ns();
  heft_inertial_estimate e;

  h.heartbeat_ns = now;
  EXPECT_EQ(heft_handoff_read(seg, now, kMaxAge, &e), HEFT_HANDOFF_EMPTY);
  shared->ring.publish(Estimate(7));
  ASSERT_EQ(heft_handoff_read(seg, now + kMaxAge, kMaxAge, &e), HEFT_HANDOFF_OK);
  EXPECT_TRUE(Whole(e));
  EXPECT_EQ(heft_handoff_read(seg, now + kMaxAge + 1, kMaxAge, &e), HEFT_HANDOFF_STALE);
  EXPECT_EQ(heft_handoff_read(seg, now + 1'000'000'000, 0, &e), HEFT_HANDOFF_STALE);  // default
  EXPECT_EQ(heft_handoff_read(seg, now - kMaxAge - 1, kMaxAge, &e), HEFT_HANDOFF_STALE);
  h.heartbeat_ns = std::numeric_limits<std::int64_t>::min();  // garbage: no overflow, not fresh
  EXPECT_EQ(heft_handoff_read(seg, now, kMaxAge, &e), HEFT_HANDOFF_STALE);
  h.heartbeat_ns = now - 2 * kMaxAge;

  h.writer_start_time += 1;  // this pid, but a process that started at another time
  EXPECT_EQ(heft_handoff_read(seg, now, kMaxAge, &e), HEFT_HANDOFF_GONE);
  h.writer_start_time -= 1;
  h.writer_pid = static_cast<std::uint32_t>(DeadPid());
  EXPECT_EQ(heft_handoff_read(seg, now, kMaxAge, &e), HEFT_HANDOFF_GONE);
  h.writer_pid = 1;  // init: alive, another user's (kill says EPERM unless root), other start
  h.writer_start_time = 0;  // unknown start time: kill's answer stands
  EXPECT_EQ(heft_handoff_read(seg, now, kMaxAge, &e), HEFT_HANDOFF_STALE);
  h.writer_pid = static_cast<std::uint32_t>(getpid());
  h.heartbeat_ns = now;
  h.writer_state = hal::kWriterStopped;
  EXPECT_EQ(heft_handoff_read(seg, now, kMaxAge, &e), HEFT_HANDOFF_GONE);
  h.writer_state = hal::kWriterRunning;

  hal::InertialEstimate bad = Estimate(8);
  bad.links[1].covariance[57] = std::numeric_limits<double>::quiet_NaN();
  shared->ring.publish(bad);
  EXPECT_EQ(heft_handoff_read(seg, now, kMaxAge, &e), HEFT_HANDOFF_INVALID);
  bad = Estimate(9);
  bad.links[0].parameters[0] = std::numeric_limits<double>::infinity();
  shared->ring.publish(bad);
  EXPECT_EQ(heft_handoff_read(seg, now, kMaxAge, &e), HEFT_HANDOFF_INVALID);
  bad = Estimate(10);
  bad.num_links = 5;
  shared->ring.publish(bad);
  EXPECT_EQ(heft_handoff_read(seg, now, kMaxAge, &e), HEFT_HANDOFF_INVALID);
  e.sequence = 0;
  shared->ring.publish(Estimate(11));
  EXPECT_EQ(heft_handoff_read(seg, now, kMaxAge, &e), HEFT_HANDOFF_OK);
  EXPECT_EQ(e.sequence, 11U);
  h.layout_version = 1;
  EXPECT_EQ(heft_handoff_read(seg, now, kMaxAge, &e), HEFT_HANDOFF_INCOMPATIBLE);
}

// Fails if the segment is readable or writable by others (it holds heftd's estimates for its
// group's controllers), is not heftd's group's to read despite a umask of 0077 (the unit's), or
// keeps a temporary file behind.
TEST(SharedHandOff, SegmentIsOwnerWritableGroupReadableOnly) {
  const std::string name = UniqueName("mode");
  const mode_t old = umask(0077);
  {
    SharedHandOffSegment segment(name);
    struct stat st {};
    ASSERT_EQ(stat(("/dev/shm/" + name).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640U);
    EXPECT_NE(stat(("/dev/shm/" + name + ".new-" + std::to_string(getpid())).c_str(), &st), 0);
    const heft_handoff_segment* seg = heft_handoff_open(name.c_str(), nullptr);
    ASSERT_NE(seg, nullptr);
    EXPECT_TRUE(heft_handoff_compatible(seg));
    EXPECT_EQ(seg->header.writer_pid, static_cast<std::uint32_t>(getpid()));
    EXPECT_EQ(seg->header.writer_state, HEFT_HANDOFF_WRITER_RUNNING);
    heft_handoff_close(seg);
  }
  umask(old);
}

}  // namespace
}  // namespace heft::host

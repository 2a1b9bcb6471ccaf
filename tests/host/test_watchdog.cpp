// heftd's systemd notifications (heft/host/watchdog.hpp) against a notify socket of the test's
// own (NOTIFY_SOCKET: an AF_UNIX datagram socket the test created): READY=1 once, WATCHDOG=1 while
// the control thread ticks and none while it hangs — the logic alone, then the whole host
// (heft-sim in real time) whose control thread hangs in the plugin's update() for a second.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "heft/host/schedule.hpp"  // Now()
#include "heft/host/watchdog.hpp"
#include "heft/test/config_builder.hpp"
#include "heft/test/heftd_run.hpp"

namespace heft::host {
namespace {

// A datagram socket bound to a path: systemd's side of sd_notify.
class NotifySocket {
 public:
  NotifySocket() : path_(testing::TempDir() + "heft_notify_" + std::to_string(getpid())) {
    unlink(path_.c_str());
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path_.c_str());
    bound_ = bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  }
  ~NotifySocket() {
    close(fd_);
    unlink(path_.c_str());
  }
  [[nodiscard]] bool bound() const { return bound_; }
  [[nodiscard]] const std::string& path() const { return path_; }
  // Every message that arrives within `ms`.
  std::vector<std::string> Collect(int ms) {
    std::vector<std::string> got;
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    for (auto now = std::chrono::steady_clock::now(); now < end;
         now = std::chrono::steady_clock::now()) {
      pollfd p{fd_, POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - now).count();
      if (poll(&p, 1, static_cast<int>(left) + 1) != 1) continue;
      char buf[512];
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n > 0) got.emplace_back(buf, static_cast<std::size_t>(n));
    }
    return got;
  }
  // Waits up to `ms` for a message containing `what`; the messages seen meanwhile go to `seen`.
  bool WaitFor(const std::string& what, int ms, std::vector<std::string>& seen) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
      for (const auto& m : Collect(50)) {
        seen.push_back(m);
        if (m.find(what) != std::string::npos) return true;
      }
    }
    return false;
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool bound_ = false;
};

int Count(const std::vector<std::string>& messages, const std::string& what) {
  int n = 0;
  for (const auto& m : messages) n += m.find(what) != std::string::npos;
  return n;
}

// Fails if READY=1 is sent twice, if a keep-alive goes out while the control thread's heartbeat is
// older than the stall bound (or before the interval half of WATCHDOG_USEC), or if keep-alives do
// not resume once it ticks again.
TEST(ServiceNotifier, KeepAlivesOnlyWhileTheControlThreadTicks) {
  NotifySocket sock;
  ASSERT_TRUE(sock.bound());
  setenv("NOTIFY_SOCKET", sock.path().c_str(), 1);
  setenv("WATCHDOG_USEC", "200000", 1);  // 200 ms: keep-alives every 100 ms
  setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
  ServiceNotifier n(100'000'000);
  EXPECT_EQ(n.interval_ns(), 100'000'000);
  const std::int64_t t0 = 1'000'000'000'000;
  n.Ready(t0);
  n.Ready(t0 + 1);
  EXPECT_TRUE(n.Poll(t0 + 50'000'000, 0));  // no tick yet, but only 50 ms since READY
  EXPECT_FALSE(n.Poll(t0 + 100'000'000, t0 + 95'000'000));  // 50 ms after the last: too soon
  EXPECT_TRUE(n.Poll(t0 + 200'000'000, t0 + 190'000'000));
  EXPECT_FALSE(n.Poll(t0 + 300'000'000, t0 + 190'000'000));  // 110 ms without a tick: hung
  EXPECT_TRUE(n.stalled());
  EXPECT_FALSE(n.Poll(t0 + 900'000'000, t0 + 190'000'000));
  EXPECT_TRUE(n.Poll(t0 + 920'000'000, t0 + 915'000'000));  // ticks again
  EXPECT_FALSE(n.stalled());
  n.Stopping();
  const auto got = sock.Collect(100);
  EXPECT_EQ(Count(got, "READY=1"), 1);
  EXPECT_EQ(Count(got, "WATCHDOG=1"), 3);
  EXPECT_EQ(Count(got, "STOPPING=1"), 1);
  EXPECT_EQ(n.keep_alives(), 3U);
  EXPECT_EQ(n.withheld(), 2U);
  unsetenv("WATCHDOG_USEC");
  unsetenv("WATCHDOG_PID");
  // Without a watchdog (heft-sim, heftd by hand): no keep-alives, nothing watched.
  ServiceNotifier off(100'000'000);
  EXPECT_FALSE(off.enabled());
  off.Ready(t0);
  EXPECT_FALSE(off.Poll(t0 + 1'000'000'000, t0));
  EXPECT_FALSE(off.stalled());
  EXPECT_EQ(Count(sock.Collect(100), "WATCHDOG=1"), 0);
  unsetenv("NOTIFY_SOCKET");
}

// Fails if the host (heft-sim in real time: heftd's threads) sends no READY=1 or more than one,
// keeps sending WATCHDOG=1 while its control thread hangs in the plugin's update() (which is what
// heftd did before: the main thread's keep-alives did not look at the control thread), or does
// not resume them when the control thread ticks again.
TEST(HostWatchdog, KeepAlivesStopWhileTheControlThreadHangs) {
  NotifySocket sock;
  ASSERT_TRUE(sock.bound());
  const std::string config =
      heft::test::ConfigBuilder(std::string(HEFT_CONFIG_DIR) + "/sim/forearm-load.yaml")
          .Set("host.plugin", HEFT_HANGING_PLUGIN)
          .Write("watchdog.yaml");
  const std::string hang = config + ".hang";
  unlink(hang.c_str());
  const std::string log = config + ".log";
  const pid_t pid = fork();
  if (pid == 0) {
    std::FILE* f = std::freopen(log.c_str(), "w", stdout);
    (void)f;
    dup2(fileno(stdout), fileno(stderr));
    setenv("NOTIFY_SOCKET", sock.path().c_str(), 1);
    setenv("WATCHDOG_USEC", "200000", 1);
    execl(HEFT_HEFT_SIM, HEFT_HEFT_SIM, "--config", config.c_str(), "--realtime", "--duration",
          "60", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::vector<std::string> start;
  ASSERT_TRUE(sock.WaitFor("READY=1", 30'000, start)) << heft::test::Slurp(log);
  const auto running = sock.Collect(1000);
  { std::ofstream(hang.c_str()) << "hang\n"; }
  const auto entering = sock.Collect(300);  // the stall bound (100 ms) and one interval
  const auto hung = sock.Collect(1000);
  unlink(hang.c_str());
  const auto resumed = sock.Collect(1000);
  kill(pid, SIGTERM);
  std::vector<std::string> end;
  sock.WaitFor("STOPPING=1", 10'000, end);
  int status = 0;
  waitpid(pid, &status, 0);
  const std::string output = heft::test::Slurp(log);

  std::printf("[   info   ] WATCHDOG=1 per second: running %d, hung %d, resumed %d\n",
              Count(running, "WATCHDOG=1"), Count(hung, "WATCHDOG=1"),
              Count(resumed, "WATCHDOG=1"));
  std::fflush(stdout);
  EXPECT_GE(Count(running, "WATCHDOG=1"), 5) << output;  // every 100 ms: ~10
  EXPECT_EQ(Count(hung, "WATCHDOG=1"), 0) << output;
  EXPECT_GE(Count(resumed, "WATCHDOG=1"), 5) << output;
  std::vector<std::string> all = start;
  for (const std::vector<std::string>* part :
       {&running, &entering, &hung, &resumed, static_cast<const std::vector<std::string>*>(&end)})
    all.insert(all.end(), part->begin(), part->end());
  EXPECT_EQ(Count(all, "READY=1"), 1);
  EXPECT_EQ(Count(end, "STOPPING=1"), 1);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  // Judged by the datagrams systemd acts on, not by the log's sentences about them.
}

}  // namespace
}  // namespace heft::host

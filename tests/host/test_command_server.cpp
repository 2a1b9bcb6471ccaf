// heftd's command socket (heft/host/command_server.hpp): each command delivered, the status reply,
// malformed and oversized requests, the socket file's mode, a second server and a stale socket,
// clients that do not read or are too many; and heftctl end to end against a server in this
// process. The status snapshot and its JSON (status.hpp, json.hpp) are in test_status_json.cpp.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "example_status.hpp"
#include "heft/host/command_server.hpp"
#include "heft/host/json.hpp"
#include "heft/host/status.hpp"

namespace heft::host {
namespace {

using test::ExampleStatus;

std::string SocketPath(const char* what) {
  return testing::TempDir() + "heft_cmd_" + what + "_" + std::to_string(getpid()) + ".sock";
}

// A client of the command socket.
class Client {
 public:
  explicit Client(const std::string& path) {
    fd_ = UniqueFd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
    connected_ = connect(fd_.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  }
  [[nodiscard]] bool connected() const { return connected_; }
  [[nodiscard]] int fd() const { return fd_.get(); }
  bool Send(const std::string& m) {
    return send(fd_.get(), m.data(), m.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(m.size());
  }
  // The next reply, or "" after 5 s.
  std::string Receive() {
    pollfd p{fd_.get(), POLLIN, 0};
    if (poll(&p, 1, 5000) <= 0) return {};
    std::vector<char> buf(1 << 16);
    const ssize_t n = recv(fd_.get(), buf.data(), buf.size(), 0);
    return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : std::string();
  }
  std::string Ask(const std::string& m) { return Send(m) ? Receive() : std::string(); }

 private:
  UniqueFd fd_;
  bool connected_ = false;
};

// A server on a thread, recording the commands it receives.
struct ServerThread {
  explicit ServerThread(const std::string& path, bool fail_commands = false)
      : server(
            CommandServerOptions{path},
            [this, fail_commands](plugin::Command c) {
              if (fail_commands) throw std::runtime_error("plugin refused");
              std::lock_guard<std::mutex> lock(mutex);
              received.push_back(c);
            },
            [] { return ExampleStatus(); }),
        thread([this] { server.Run(stop); }) {}
  ~ServerThread() {
    stop.store(true, std::memory_order_release);
    thread.join();
  }
  std::vector<plugin::Command> Received() {
    std::lock_guard<std::mutex> lock(mutex);
    return received;
  }
  std::mutex mutex;
  std::vector<plugin::Command> received;
  std::atomic<bool> stop{false};
  CommandServer server;
  std::thread thread;
};

bool IsError(const std::string& reply) {
  const auto doc = ParseJson(reply);
  const Json* ok = doc ? doc->Find("ok") : nullptr;
  return ok != nullptr && ok->type == Json::Type::kBool && !ok->boolean &&
         !doc->String("error").empty();
}

// Fails if a command word is not delivered, delivered as another command, or not acknowledged.
TEST(CommandServer, EachCommandReachesTheCallback) {
  const std::string path = SocketPath("commands");
  ServerThread st(path);
  Client c(path);
  ASSERT_TRUE(c.connected());
  const std::vector<std::pair<std::string, plugin::Command>> words{
      {"walking", plugin::Command::kRobotWalking},
      {"stopped\n", plugin::Command::kRobotStopped},
      {"enable", plugin::Command::kEnable},
      {"disable\r\n", plugin::Command::kDisable},
      {"reset", plugin::Command::kReset}};
  std::vector<plugin::Command> expected;
  for (const auto& [word, command] : words) {
    const std::string reply = c.Ask(word);
    EXPECT_NE(reply.find("\"ok\":true"), std::string::npos) << word << ": " << reply;
    expected.push_back(command);
  }
  EXPECT_EQ(st.Received(), expected);
}

TEST(CommandServer, StatusReplyParses) {
  const std::string path = SocketPath("status");
  ServerThread st(path);
  Client c(path);
  const std::string reply = c.Ask("status");
  std::string error;
  StatusSnapshot got;
  ASSERT_TRUE(DecodeStatusJson(reply, got, &error)) << error << "\n" << reply;
  const StatusSnapshot want = ExampleStatus();
  EXPECT_TRUE(got.have_estimate);
  EXPECT_EQ(got.sequence, 42U);
  EXPECT_EQ(got.stamp_ns, want.stamp_ns);
  EXPECT_EQ(got.estimator.state, hal::EstimatorState::kHolding);
  EXPECT_EQ(got.estimator.model, hal::MeasurementModel::kFullWrench);
  EXPECT_EQ(got.estimator.hold_reason, want.estimator.hold_reason);
  EXPECT_EQ(got.estimator.gated, 7U);
  EXPECT_EQ(got.estimator.rate_limited, 30U);
  EXPECT_EQ(got.drivers.lost, 5U);
  EXPECT_EQ(got.input.rejected, 10U);
  ASSERT_EQ(got.links.size(), 2U);
  EXPECT_EQ(got.links[1].name, "left_forearm");
  EXPECT_NEAR(got.links[1].mass, 3.0, 1e-9);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(got.links[0].com[i], want.links[0].com[i], 1e-9);
    EXPECT_NEAR(got.links[0].com_sigma[i], want.links[0].com_sigma[i], 1e-9);
  }
  const auto doc = ParseJson(reply);
  ASSERT_TRUE(doc);
  const Json* names = doc->Find("hold_reason")->Find("names");
  ASSERT_NE(names, nullptr);
  ASSERT_EQ(names->array.size(), 2U);
  EXPECT_EQ(names->array[0].string, "base");
  EXPECT_EQ(names->array[1].string, "history");
}

// Malformed and oversized requests are answered with an error, and the server goes on serving.
// Fails if the server crashes, stays silent, or treats one as a command.
TEST(CommandServer, MalformedAndOversizedRequestsGetAnError) {
  const std::string path = SocketPath("malformed");
  ServerThread st(path);
  Client c(path);
  const std::vector<std::string> bad{"",
                                     "\n",
                                     "walk",
                                     "WALKING",
                                     "walking now",
                                     std::string("reset\0x", 7),
                                     "\x01\x02",
                                     "status\tjson",
                                     std::string(65, 'a'),
                                     std::string(4000, 'w')};
  for (const auto& m : bad) {
    const std::string reply = c.Ask(m);
    EXPECT_TRUE(IsError(reply)) << "request of " << m.size() << " bytes: " << reply;
  }
  EXPECT_NE(c.Ask(std::string(4000, 'x')).find("longer than 64 bytes"), std::string::npos);
  EXPECT_TRUE(st.Received().empty());
  EXPECT_NE(c.Ask("status").find("\"ok\":true"), std::string::npos);  // still serving
  EXPECT_GE(st.server.counters().errors, bad.size());
}

// Who may command is the socket file's group: it must be 0660 even under UMask=0077.
TEST(CommandServer, SocketFileIsMode0660) {
  const std::string path = SocketPath("mode");
  const mode_t old = umask(0077);
  {
    CommandServer server(
        CommandServerOptions{path}, [](plugin::Command) {}, [] { return StatusSnapshot{}; });
    umask(old);
    struct stat st {};
    ASSERT_EQ(lstat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0660U);
  }
  struct stat st {};
  EXPECT_NE(lstat(path.c_str(), &st), 0);  // removed on destruction
}

// A second heftd on a live socket is refused; a socket file left by a dead one is replaced; a
// non-socket file at the path is never deleted.
TEST(CommandServer, SecondServerRefusedStaleSocketReplaced) {
  const std::string path = SocketPath("second");
  auto noop = [](plugin::Command) {};
  auto none = [] { return StatusSnapshot{}; };
  {
    CommandServer first(CommandServerOptions{path}, noop, none);
    try {
      CommandServer second(CommandServerOptions{path}, noop, none);
      FAIL() << "two servers on one path";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("another server"), std::string::npos) << e.what();
    }
    Client c(path);
    EXPECT_TRUE(c.connected());  // the first one still serves
  }
  {
    // A dead server's socket file: bound, never unlinked.
    UniqueFd dead(socket(AF_UNIX, SOCK_SEQPACKET, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
    ASSERT_EQ(bind(dead.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
  }
  {
    CommandServer replacement(CommandServerOptions{path}, noop, none);
    Client c(path);
    EXPECT_TRUE(c.connected());
  }
  { std::ofstream(path) << "not a socket"; }
  EXPECT_THROW(CommandServer(CommandServerOptions{path}, noop, none), std::runtime_error);
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  unlink(path.c_str());
}

// A client that floods requests and never reads its replies is dropped; the server (polled on this
// thread: it would hang here if a send blocked) keeps serving others.
TEST(CommandServer, ClientThatDoesNotReadDoesNotBlockTheServer) {
  const std::string path = SocketPath("slow");
  CommandServer server(
      CommandServerOptions{path}, [](plugin::Command) {}, [] { return ExampleStatus(); });
  Client slow(path);
  Client good(path);
  ASSERT_TRUE(slow.connected());
  server.Poll(0);  // accept both
  bool slow_open = true;
  for (int round = 0; round < 2000 && slow_open; ++round) {
    for (int k = 0; k < 20; ++k)
      if (send(slow.fd(), "status", 6, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) break;
    server.Poll(0);
    // The server closed its end when the slow client's replies no longer fit.
    pollfd p{slow.fd(), POLLRDHUP, 0};
    slow_open = !(poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP)) != 0);
  }
  EXPECT_FALSE(slow_open);
  EXPECT_GE(server.counters().dropped, 1U);
  ASSERT_TRUE(good.Send("status"));
  server.Poll(100);
  EXPECT_NE(good.Receive().find("\"ok\":true"), std::string::npos);
}

TEST(CommandServer, TooManyClientsAreToldBusy) {
  const std::string path = SocketPath("busy");
  CommandServerOptions options{path};
  options.max_clients = 2;
  CommandServer server(
      options, [](plugin::Command) {}, [] { return StatusSnapshot{}; });
  Client a(path), b(path), c(path);
  server.Poll(0);
  server.Poll(0);
  const std::string reply = c.Receive();
  EXPECT_TRUE(IsError(reply)) << reply;
  EXPECT_NE(reply.find("busy"), std::string::npos);
}

// ---- heftctl end to end ----------------------------------------------------------------------

struct CtlRun {
  int code = -1;
  std::string output;
};

CtlRun Heftctl(const std::string& args) {
  CtlRun r;
  std::FILE* p = popen((std::string(HEFTCTL) + " " + args + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Fails if heftctl does not deliver a command, cannot print the status table or JSON, or returns
// other exit codes than --help documents.
TEST(Heftctl, EndToEnd) {
  const std::string path = SocketPath("ctl");
  ServerThread st(path);
  const std::string sock = "--socket " + path;

  CtlRun r = Heftctl(sock + " walking");
  EXPECT_EQ(r.code, 0) << r.output;
  r = Heftctl("reset " + sock);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(st.Received(), (std::vector<plugin::Command>{plugin::Command::kRobotWalking,
                                                         plugin::Command::kReset}));

  r = Heftctl(sock + " status");
  EXPECT_EQ(r.code, 0) << r.output;
  std::printf("%s", r.output.c_str());  // the table, for a reader of the test log
  EXPECT_NE(r.output.find("holding"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("base, history"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("left_forearm"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("3.000 ±"), std::string::npos) << r.output;  // mass of left_forearm
  EXPECT_NE(r.output.find("100.0 ±"), std::string::npos) << r.output;  // c_z of left_forearm, mm

  r = Heftctl(sock + " status --json");
  EXPECT_EQ(r.code, 0) << r.output;
  StatusSnapshot s;
  std::string error;
  EXPECT_TRUE(DecodeStatusJson(r.output, s, &error)) << error;

  r = Heftctl("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("exit status"), std::string::npos);
  EXPECT_EQ(Heftctl("--version").code, 0);
  EXPECT_EQ(Heftctl("").code, 2);
  EXPECT_EQ(Heftctl(sock + " dance").code, 2);
  EXPECT_EQ(Heftctl(sock + " walking --json").code, 2);
  EXPECT_EQ(Heftctl(sock + " watch --interval 0").code, 2);

  r = Heftctl("--socket " + path + ".missing status");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.output.find("is heftd running"), std::string::npos) << r.output;
}

TEST(Heftctl, RefusedCommandExitsOne) {
  const std::string path = SocketPath("ctl_refused");
  ServerThread st(path, /*fail_commands=*/true);
  const CtlRun r = Heftctl("--socket " + path + " enable");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("plugin refused"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace heft::host

// heftctl: commands and status for a running heftd through its command socket
// (heft/host/command_server.hpp; protocol in config/README.md).
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "heft/host/command_server.hpp"
#include "heft/host/json.hpp"
#include "heft/host/status.hpp"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitService = 1;
constexpr int kExitUsage = 2;
constexpr int kExitConnect = 3;
constexpr int kReplyTimeoutMs = 3000;

volatile std::sig_atomic_t g_interrupted = 0;
void OnSigint(int /*signal*/) {
  g_interrupted = 1;
}

const char* kUsage =
    "usage: heftctl [--socket PATH] COMMAND\n"
    "\n"
    "Commands and status for a running heftd through its command socket.\n"
    "\n"
    "commands:\n"
    "  walking            the robot is on the ground and walking: estimation may start\n"
    "  stopped            back to waiting (e.g. hoisted)\n"
    "  enable | disable   estimate / hand on nominal parameters only\n"
    "  reset              restart from nominal parameters and recalibrate\n"
    "  status [--json]    estimator state, hold reasons, counters, per link m ± σ and c ± σ\n"
    "                     (--json: heftd's reply as it is, for scripts)\n"
    "  watch [--interval S]  the status table, refreshed every S seconds (default 1) until Ctrl-C\n"
    "\n"
    "options:\n"
    "  --socket PATH      heftd's command socket (default /run/heft/heftd.sock)\n"
    "  --help, --version\n"
    "\n"
    "exit status:\n"
    "  0  done\n"
    "  1  heftd refused the request or did not answer\n"
    "  2  usage error\n"
    "  3  cannot connect to the socket (is heftd running? permission: are you in its group?)\n";

class Connection {
 public:
  // Returns false and prints why if the socket cannot be reached.
  bool Open(const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
      std::fprintf(stderr, "heftctl: socket path '%s' is too long\n", path.c_str());
      return false;
    }
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    fd_ = heft::host::UniqueFd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (!fd_.valid() ||
        connect(fd_.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      std::fprintf(stderr, "heftctl: cannot connect to %s: %s (is heftd running? permission?)\n",
                   path.c_str(), std::strerror(errno));
      fd_ = heft::host::UniqueFd();
      return false;
    }
    return true;
  }
  [[nodiscard]] bool open() const { return fd_.valid(); }

  // Sends one request and waits for its reply; false (and a message in `reply`) on failure.
  bool Request(const std::string& request, std::string& reply) {
    if (send(fd_.get(), request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
      reply = std::string("sending failed: ") + std::strerror(errno);
      fd_ = heft::host::UniqueFd();
      return false;
    }
    pollfd p{fd_.get(), POLLIN, 0};
    const int r = poll(&p, 1, kReplyTimeoutMs);
    if (r <= 0) {
      reply = r == 0 ? "no reply within 3 s" : std::string("poll: ") + std::strerror(errno);
      fd_ = heft::host::UniqueFd();
      return false;
    }
    std::vector<char> buf(1 << 16);
    const ssize_t n = recv(fd_.get(), buf.data(), buf.size(), 0);
    if (n <= 0) {
      reply = n == 0 ? "heftd closed the connection" : std::string("recv: ") + std::strerror(errno);
      fd_ = heft::host::UniqueFd();
      return false;
    }
    reply.assign(buf.data(), static_cast<std::size_t>(n));
    return true;
  }

 private:
  heft::host::UniqueFd fd_;
};

std::string PlusMinusMm(double v, double sigma) {
  char buf[64];
  if (std::isfinite(sigma))
    std::snprintf(buf, sizeof buf, "%8.1f ± %-6.1f", v * 1e3, sigma * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%8.1f ± %-6s", v * 1e3, "inf");
  return buf;
}

void PrintTable(const heft::host::StatusSnapshot& s) {
  using heft::host::HoldReasonNames;
  const auto& e = s.estimator;
  if (s.have_estimate)
    std::printf("estimate #%llu of the state at %.3f s\n",
                static_cast<unsigned long long>(s.sequence),
                static_cast<double>(s.stamp_ns) * 1e-9);
  else
    std::printf("no estimate published yet\n");
  std::printf("  %-17s %s (measurement %s)\n", "state", heft::host::EstimatorStateName(e.state),
              heft::host::MeasurementModelName(e.model));
  std::string holds;
  for (const auto& n : HoldReasonNames(e.hold_reason)) holds += (holds.empty() ? "" : ", ") + n;
  std::printf("  %-17s %s\n", "hold reasons", holds.empty() ? "none" : holds.c_str());
  std::printf("  %-17s ticks %llu, updates %llu, gated %llu, gate releases %llu,\n", "estimator",
              static_cast<unsigned long long>(e.ticks), static_cast<unsigned long long>(e.updates),
              static_cast<unsigned long long>(e.gated),
              static_cast<unsigned long long>(e.gate_releases));
  std::printf("  %-17s numeric rejects %llu, rate limited %llu, last NIS %.2f\n", "",
              static_cast<unsigned long long>(e.numeric_rejects),
              static_cast<unsigned long long>(e.rate_limited), e.last_nis);
  std::printf("  %-17s published %llu, rejected %llu, lost %llu, stale %llu\n", "drivers",
              static_cast<unsigned long long>(s.drivers.published),
              static_cast<unsigned long long>(s.drivers.rejected),
              static_cast<unsigned long long>(s.drivers.lost),
              static_cast<unsigned long long>(s.drivers.stale));
  if (s.input.present)
    std::printf("  %-17s %s, accepted %llu, rejected %llu, commands %llu\n", "framework input",
                heft::host::ChannelStateName(s.input.state),
                static_cast<unsigned long long>(s.input.accepted),
                static_cast<unsigned long long>(s.input.rejected),
                static_cast<unsigned long long>(s.input.commands));
  if (s.links.empty()) return;
  std::printf("\n  %-16s %-19s %-17s %-17s %-17s\n", "link", "mass [kg]", "com x [mm]",
              "com y [mm]", "com z [mm]");
  for (const auto& l : s.links) {
    char mass[64];
    std::snprintf(mass, sizeof mass, "%7.3f ± %-7.3f", l.mass, l.mass_sigma);
    std::printf("  %-16s %-19s %s %s %s\n", l.name.c_str(), mass,
                PlusMinusMm(l.com[0], l.com_sigma[0]).c_str(),
                PlusMinusMm(l.com[1], l.com_sigma[1]).c_str(),
                PlusMinusMm(l.com[2], l.com_sigma[2]).c_str());
  }
}

// One request; prints the outcome. Returns the exit status.
int RunOnce(Connection& c, const std::string& request, bool json) {
  std::string reply;
  if (!c.Request(request, reply)) {
    std::fprintf(stderr, "heftctl: %s: %s\n", request.c_str(), reply.c_str());
    return kExitService;
  }
  const auto doc = heft::host::ParseJson(reply);
  const heft::host::Json* ok = doc ? doc->Find("ok") : nullptr;
  if (ok == nullptr || ok->type != heft::host::Json::Type::kBool) {
    std::fprintf(stderr, "heftctl: unexpected reply: %s\n", reply.c_str());
    return kExitService;
  }
  if (!ok->boolean) {
    std::fprintf(stderr, "heftctl: heftd refused '%s': %s\n", request.c_str(),
                 doc->String("error", "(no reason)").c_str());
    if (json) std::printf("%s\n", reply.c_str());
    return kExitService;
  }
  if (json) {
    std::printf("%s\n", reply.c_str());
    return kExitOk;
  }
  if (request != "status") {
    std::printf("heftd: %s\n", request.c_str());
    return kExitOk;
  }
  heft::host::StatusSnapshot s;
  std::string error;
  if (!heft::host::DecodeStatusJson(reply, s, &error)) {
    std::fprintf(stderr, "heftctl: status reply: %s\n", error.c_str());
    return kExitService;
  }
  PrintTable(s);
  return kExitOk;
}

int Watch(const std::string& path, double interval) {
  struct sigaction sa {};
  sa.sa_handler = OnSigint;  // no SA_RESTART: the sleep ends at Ctrl-C
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  Connection c;
  while (g_interrupted == 0) {
    std::printf("\033[H\033[2J");  // home + clear, as watch(1) does
    const std::time_t now = std::time(nullptr);
    char when[64];
    std::strftime(when, sizeof when, "%F %T", std::localtime(&now));
    std::printf("Every %.1fs: heftctl status (%s)    %s\n\n", interval, path.c_str(), when);
    if (!c.open() && !c.Open(path)) {
      std::printf("(not connected; retrying)\n");
    } else {
      RunOnce(c, "status", false);
    }
    std::fflush(stdout);
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(interval);
    ts.tv_nsec = static_cast<long>((interval - static_cast<double>(ts.tv_sec)) * 1e9);
    nanosleep(&ts, nullptr);
  }
  std::printf("\n");
  return kExitOk;
}

int Usage(const char* problem) {
  std::fprintf(stderr, "heftctl: %s\n\n%s", problem, kUsage);
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = heft::host::kDefaultCommandSocket;
  std::string command;
  bool json = false;
  double interval = 1.0;
  bool interval_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      return kExitOk;
    }
    if (a == "--version") {
      std::printf("heftctl %s\n", HEFT_VERSION);
      return kExitOk;
    }
    if (a == "--socket") {
      if (++i >= argc) return Usage("--socket needs a PATH");
      path = argv[i];
    } else if (a == "--json") {
      json = true;
    } else if (a == "--interval") {
      if (++i >= argc) return Usage("--interval needs seconds");
      char* end = nullptr;
      interval = std::strtod(argv[i], &end);
      if (end == argv[i] || *end != '\0' || !(interval >= 0.1 && interval <= 3600.0))
        return Usage("--interval takes seconds in [0.1, 3600]");
      interval_given = true;
    } else if (!a.empty() && a[0] == '-') {
      return Usage(("unknown option " + a).c_str());
    } else if (command.empty()) {
      command = a;
    } else {
      return Usage(("unexpected argument " + a).c_str());
    }
  }
  if (command.empty()) return Usage("no command given");
  heft::plugin::Command parsed{};
  const bool is_command = heft::host::ParseCommand(command, parsed);
  if (!is_command && command != "status" && command != "watch")
    return Usage(("unknown command '" + command + "'").c_str());
  if (json && command != "status") return Usage("--json goes with status");
  if (interval_given && command != "watch") return Usage("--interval goes with watch");
  if (command == "watch") return Watch(path, interval);
  Connection c;
  if (!c.Open(path)) return kExitConnect;
  return RunOnce(c, command, json);
}

#include "heft/host/command_server.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "heft/host/json.hpp"

namespace heft::host {
namespace {

constexpr std::array<std::pair<const char*, plugin::Command>, 5> kCommands{{
    {"walking", plugin::Command::kRobotWalking},
    {"stopped", plugin::Command::kRobotStopped},
    {"enable", plugin::Command::kEnable},
    {"disable", plugin::Command::kDisable},
    {"reset", plugin::Command::kReset},
}};

long long NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string ErrorReply(const std::string& message) {
  std::string o = "{\"ok\":false,\"error\":";
  AppendJsonString(o, message);
  o += '}';
  return o;
}

sockaddr_un Address(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(a.sun_path))
    throw std::runtime_error("command socket path '" + path + "' must be 1.." +
                             std::to_string(sizeof(a.sun_path) - 1) + " characters");
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

[[noreturn]] void Fail(const std::string& path, const char* what, int err) {
  throw std::runtime_error("command socket " + path + ": " + what + ": " + std::strerror(err));
}

// True if a server accepts connections on `path` (then the path is in use, not stale).
bool SomeoneListens(const sockaddr_un& addr) {
  UniqueFd probe(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!probe.valid()) return false;
  return connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
}

}  // namespace

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) close(fd_);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.release();
  }
  return *this;
}

bool ParseCommand(const std::string& word, plugin::Command& out) {
  for (const auto& [name, command] : kCommands) {
    if (word == name) {
      out = command;
      return true;
    }
  }
  return false;
}

const char* CommandName(plugin::Command command) {
  for (const auto& [name, c] : kCommands)
    if (c == command) return name;
  return "unknown";
}

CommandServer::CommandServer(CommandServerOptions options, CommandFn on_command, StatusFn on_status)
    : options_(std::move(options)),
      on_command_(std::move(on_command)),
      on_status_(std::move(on_status)) {
  if (!on_command_ || !on_status_)
    throw std::invalid_argument("command server: both callbacks are required");
  if (options_.max_clients == 0) throw std::invalid_argument("command server: max_clients >= 1");
  const std::string& path = options_.path;
  const sockaddr_un addr = Address(path);
  listen_ = UniqueFd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listen_.valid()) Fail(path, "socket", errno);
  // The file takes the socket inode's mode minus the umask: set 0660 first so that the file is
  // never wider than 0660, and chmod after bind so that it is not narrower (UMask=0077).
  if (fchmod(listen_.get(), 0660) != 0) Fail(path, "fchmod", errno);
  if (bind(listen_.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    if (err != EADDRINUSE) Fail(path, "bind", err);
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) Fail(path, "bind", err);
    if (!S_ISSOCK(st.st_mode))
      throw std::runtime_error("command socket " + path +
                               ": the path exists and is not a socket; refusing to replace it");
    if (SomeoneListens(addr))
      throw std::runtime_error("command socket " + path +
                               ": another server (heftd) is listening on it");
    // A socket file nobody accepts on: left by a heftd that died. Replace it.
    if (unlink(path.c_str()) != 0) Fail(path, "unlink stale socket", errno);
    if (bind(listen_.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
      Fail(path, "bind", errno);
  }
  if (chmod(path.c_str(), 0660) != 0) {
    const int err = errno;
    unlink(path.c_str());
    Fail(path, "chmod 0660", err);
  }
  if (listen(listen_.get(), 16) != 0) {
    const int err = errno;
    unlink(path.c_str());
    Fail(path, "listen", err);
  }
}

CommandServer::~CommandServer() {
  clients_.clear();
  listen_ = UniqueFd();
  unlink(options_.path.c_str());
}

CommandServerCounters CommandServer::counters() const noexcept {
  // relaxed: plain statistics.
  return {requests_.load(std::memory_order_relaxed), commands_.load(std::memory_order_relaxed),
          errors_.load(std::memory_order_relaxed), dropped_.load(std::memory_order_relaxed)};
}

std::string CommandServer::Handle(const char* data, std::size_t size, bool truncated) {
  requests_.fetch_add(1, std::memory_order_relaxed);  // relaxed: statistics
  auto error = [&](const std::string& message) {
    errors_.fetch_add(1, std::memory_order_relaxed);  // relaxed: statistics
    return ErrorReply(message);
  };
  if (truncated || size > kMaxRequest)
    return error("request longer than " + std::to_string(kMaxRequest) + " bytes");
  std::string word(data, size);
  while (!word.empty() && (word.back() == '\n' || word.back() == '\r' || word.back() == ' '))
    word.pop_back();
  if (word.empty())
    return error("empty request; expected walking|stopped|enable|disable|reset|status");
  for (const char c : word)
    if (c < 0x21 || c > 0x7E)
      return error(
          "request has non-printable characters or spaces; expected "
          "walking|stopped|enable|disable|reset|status");
  try {
    if (word == "status") return EncodeStatusJson(on_status_());
    plugin::Command command{};
    if (ParseCommand(word, command)) {
      on_command_(command);
      commands_.fetch_add(1, std::memory_order_relaxed);  // relaxed: statistics
      std::string o = "{\"ok\":true,\"command\":";
      AppendJsonString(o, word);
      o += '}';
      return o;
    }
  } catch (const std::exception& e) {
    return error(std::string("the host failed: ") + e.what());
  }
  return error("unknown request '" + word +
               "'; expected walking|stopped|enable|disable|reset|status");
}

void CommandServer::Accept() {
  while (true) {
    UniqueFd fd(accept4(listen_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd.valid()) return;  // EAGAIN (no more) or a transient error: next poll
    if (clients_.size() >= options_.max_clients) {
      const std::string busy = ErrorReply("busy: too many clients");
      (void)send(fd.get(), busy.data(), busy.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      dropped_.fetch_add(1, std::memory_order_relaxed);  // relaxed: statistics
      continue;                                          // fd closes
    }
    clients_.push_back(Client{std::move(fd), NowMs()});
  }
}

bool CommandServer::Serve(Client& client) {
  std::array<char, kMaxRequest + 1> buf;
  while (true) {
    // MSG_TRUNC: SOCK_SEQPACKET returns the message's real length, so an oversized request is
    // recognised (and its rest discarded) rather than read as two.
    const ssize_t n = recv(client.fd.get(), buf.data(), buf.size(), MSG_DONTWAIT | MSG_TRUNC);
    if (n == 0) {
      // SOCK_SEQPACKET: 0 is either the end of the connection or an empty message.
      pollfd p{client.fd.get(), POLLRDHUP, 0};
      if (poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) return false;
    }
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    client.last_active_ms = NowMs();
    const auto size = static_cast<std::size_t>(n);
    const std::string reply = Handle(buf.data(), std::min(size, buf.size()), size > kMaxRequest);
    const ssize_t sent =
        send(client.fd.get(), reply.data(), reply.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent != static_cast<ssize_t>(reply.size())) {
      // EAGAIN: the client does not read its replies; anything else: it is gone.
      dropped_.fetch_add(1, std::memory_order_relaxed);  // relaxed: statistics
      return false;
    }
  }
}

void CommandServer::Poll(int timeout_ms) {
  std::vector<pollfd> fds;
  fds.reserve(clients_.size() + 1);
  fds.push_back({listen_.get(), POLLIN, 0});
  for (const Client& c : clients_) fds.push_back({c.fd.get(), POLLIN, 0});
  const int r = poll(fds.data(), fds.size(), timeout_ms);
  if (r < 0) return;  // EINTR: the caller polls again
  const long long now = NowMs();
  // Clients first (indices match fds[1..]), then new connections.
  std::vector<Client> kept;
  kept.reserve(clients_.size());
  for (std::size_t i = 0; i < clients_.size(); ++i) {
    Client& c = clients_[i];
    const short ev = fds[i + 1].revents;
    bool keep = true;
    if ((ev & POLLIN) != 0) {
      keep = Serve(c);
    } else if ((ev & (POLLHUP | POLLERR | POLLNVAL)) != 0) {
      keep = false;
    } else if (now - c.last_active_ms > options_.idle_timeout_ms) {
      dropped_.fetch_add(1, std::memory_order_relaxed);  // relaxed: statistics
      keep = false;
    }
    if (keep) kept.push_back(std::move(c));
  }
  clients_ = std::move(kept);
  if ((fds[0].revents & POLLIN) != 0) Accept();
}

void CommandServer::Run(const std::atomic<bool>& stop) {
  // acquire: pairs with the host's release store of `stop`.
  while (!stop.load(std::memory_order_acquire)) Poll(100);
}

}  // namespace heft::host

// heftd's command socket: a local AF_UNIX SOCK_SEQPACKET server (one request per message, one reply
// per request) on a non-real-time thread. Requests (ASCII, a trailing newline is ignored):
//   walking | stopped | enable | disable | reset   → the host's CommandFn, reply {"ok":true,...}
//   status                                       → the host's StatusFn, reply status JSON
// Anything else, or a request longer than kMaxRequest bytes, gets {"ok":false,"error":"..."}.
//
// Who may command is decided by the socket file: it is created with mode 0660 (owner heftd's user,
// group its group, e.g. heft), so members of that group may connect and others may not (connect()
// needs write permission on the file). The parent directory (default /run/heft, systemd's
// RuntimeDirectory) must exist.
//
// The server never blocks on a client: it polls with a timeout, sends with MSG_DONTWAIT, and drops
// a client whose receive buffer is full (one that does not read) or that stays idle too long.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "heft/host/host_defaults.hpp"  // kDefaultCommandSocket
#include "heft/host/status.hpp"
#include "heft/plugin/controller_interface.hpp"

namespace heft::host {

/// Owns a file descriptor (closed on destruction).
class UniqueFd {
 public:
  UniqueFd() noexcept = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  [[nodiscard]] int get() const noexcept { return fd_; }
  [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
  int release() noexcept {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

struct CommandServerOptions {
  std::string path = kDefaultCommandSocket;
  std::size_t max_clients = 8;   ///< more are answered "busy" and closed
  int idle_timeout_ms = 60'000;  ///< a connected client that sends nothing this long is closed
};

struct CommandServerCounters {
  std::uint64_t requests = 0;
  std::uint64_t commands = 0;
  std::uint64_t errors = 0;   ///< malformed / oversized / unknown requests
  std::uint64_t dropped = 0;  ///< clients closed because they did not read, were idle or too many
};

class CommandServer {
 public:
  using CommandFn = std::function<void(plugin::Command)>;
  using StatusFn = std::function<StatusSnapshot()>;

  static constexpr std::size_t kMaxRequest = 64;

  /// Binds the socket (mode 0660). A stale socket file (nobody accepts on it) is replaced; a live
  /// server on the path, or a path that is not a socket, is refused with std::runtime_error.
  CommandServer(CommandServerOptions options, CommandFn on_command, StatusFn on_status);
  /// Closes every connection and removes the socket file.
  ~CommandServer();
  CommandServer(const CommandServer&) = delete;
  CommandServer& operator=(const CommandServer&) = delete;

  /// Waits up to timeout_ms for activity and serves it (one thread).
  void Poll(int timeout_ms);
  /// Polls (100 ms) until `stop` becomes true.
  void Run(const std::atomic<bool>& stop);

  [[nodiscard]] const std::string& path() const noexcept { return options_.path; }
  [[nodiscard]] CommandServerCounters counters() const noexcept;

  /// The reply to one request (exposed for tests; Poll uses it).
  std::string Handle(const char* data, std::size_t size, bool truncated);

 private:
  struct Client {
    UniqueFd fd;
    long long last_active_ms = 0;
  };
  void Accept();
  bool Serve(Client& client);  // false: close the client

  CommandServerOptions options_;
  CommandFn on_command_;
  StatusFn on_status_;
  UniqueFd listen_;
  std::vector<Client> clients_;
  std::atomic<std::uint64_t> requests_{0}, commands_{0}, errors_{0}, dropped_{0};
};

/// Parses a command word ("walking", ...) into a Command; false if it is none.
bool ParseCommand(const std::string& word, plugin::Command& out);
const char* CommandName(plugin::Command command);

}  // namespace heft::host

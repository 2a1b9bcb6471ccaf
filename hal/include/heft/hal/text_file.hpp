// A text input (URDF, YAML) read whole, but never more than a limit: `--config /dev/zero`, a FIFO
// or a runaway generated file is refused with its size instead of filling the memory. Not for
// real-time paths (it allocates); callers turn Describe() into their own exception with the path.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <string>

namespace heft::hal {

struct TextFile {
  enum class Status { kOk, kCannotOpen, kTooLarge, kReadError };
  std::string text;
  Status status = Status::kOk;
  std::string reason;  // the system's (strerror) or the limit's

  [[nodiscard]] bool ok() const noexcept { return status == Status::kOk; }
  /// Why it was not read, naming the input as `what` ("the configuration file"); no path.
  [[nodiscard]] std::string Describe(const std::string& what) const {
    switch (status) {
      case Status::kOk:
        return {};
      case Status::kCannotOpen:
        return "cannot open " + what + ": " + reason;
      case Status::kTooLarge:
        return what + " is " + reason;
      case Status::kReadError:
        break;
    }
    return "cannot read " + what + ": " + reason;
  }
};

/// The limit for a configuration or a robot description: a humanoid's URDF is ~100 kB.
inline constexpr std::size_t kMaxTextFileBytes = std::size_t{64} << 20;

inline TextFile ReadTextFile(const std::string& path, std::size_t max_bytes = kMaxTextFileBytes) {
  TextFile out;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    out.status = TextFile::Status::kCannotOpen;
    out.reason = std::strerror(errno);
    return out;
  }
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    out.text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (out.text.size() > max_bytes) {
      out.text.clear();
      out.text.shrink_to_fit();
      out.status = TextFile::Status::kTooLarge;
      out.reason = "larger than " + std::to_string(max_bytes >> 20) +
                   " MiB, the limit for a text input (is it the right file?)";
      return out;
    }
  }
  if (in.bad()) {
    out.status = TextFile::Status::kReadError;
    out.reason = std::strerror(errno);
    out.text.clear();
  }
  return out;
}

}  // namespace heft::hal

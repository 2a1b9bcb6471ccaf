#include "heft/drivers/rotating_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace heft::drivers {
namespace {

std::uint64_t FileSize(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// A writer killed in the middle of a line (the watchdog's SIGKILL) leaves a partial last line:
// cut it off so that appended lines start on a line of their own and every line is whole.
void CutPartialLastLine(const std::string& path, std::uint64_t size) {
  constexpr std::uint64_t kTail = 1 << 16;
  std::ifstream in(path, std::ios::binary);
  const std::uint64_t from = size > kTail ? size - kTail : 0;
  in.seekg(static_cast<std::streamoff>(from));
  std::string tail(static_cast<std::size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  if (!in || tail.empty() || tail.back() == '\n') return;
  const std::size_t nl = tail.rfind('\n');
  const std::uint64_t keep = nl == std::string::npos ? from : from + nl + 1;
  if (truncate(path.c_str(), static_cast<off_t>(keep)) != 0)
    throw std::runtime_error("cannot cut the partial last line of " + path + ": " +
                             std::string(std::strerror(errno)));
}

}  // namespace

RotatingFile::RotatingFile(std::string path, RotationPolicy policy, std::string header)
    : path_(std::move(path)), policy_(policy), header_(std::move(header)) {
  if (policy_.keep < 0) throw std::invalid_argument(path_ + ": rotation keep must be ≥ 0");
  const std::uint64_t existing = FileSize(path_);
  if (existing > 0) {
    const bool other_layout = !header_.empty() && FirstLine(path_) != header_;
    const bool full = policy_.max_bytes > 0 && existing >= policy_.max_bytes;
    if (!policy_.append || other_layout || full)
      Rotate();
    else
      CutPartialLastLine(path_, existing);
  }
  Open(false);
}

RotatingFile::~RotatingFile() {
  Close();
}

void RotatingFile::Open(bool fresh) {
  file_ = std::fopen(path_.c_str(), fresh ? "w" : "a");
  if (!file_)
    throw std::runtime_error("cannot write " + path_ + ": " + std::string(std::strerror(errno)));
  bytes_ = fresh ? 0 : FileSize(path_);
  if (bytes_ == 0 && !header_.empty()) {
    if (std::fprintf(file_, "%s\n", header_.c_str()) < 0) failed_ = true;
    bytes_ = header_.size() + 1;
  }
}

// "<path>.<keep>" is deleted, ".<n>" becomes ".<n+1>", the file itself ".1". With keep = 0 the
// file is deleted.
void RotatingFile::Rotate() {
  if (policy_.keep == 0) {
    std::remove(path_.c_str());
  } else {
    std::remove(Rotated(policy_.keep).c_str());
    for (int n = policy_.keep - 1; n >= 1; --n)
      std::rename(Rotated(n).c_str(), Rotated(n + 1).c_str());
    if (std::rename(path_.c_str(), Rotated(1).c_str()) != 0 && errno != ENOENT)
      throw std::runtime_error("cannot rotate " + path_ + " to " + Rotated(1) + ": " +
                               std::string(std::strerror(errno)));
  }
}

bool RotatingFile::Write(std::string_view text) {
  if (!file_) return false;
  const std::uint64_t header_bytes = header_.empty() ? 0 : header_.size() + 1;
  if (policy_.max_bytes > 0 && bytes_ > header_bytes && bytes_ + text.size() > policy_.max_bytes) {
    const bool closed = std::fclose(file_) == 0;
    file_ = nullptr;
    failed_ = failed_ || !closed;
    try {
      Rotate();
      Open(true);
    } catch (const std::exception&) {
      failed_ = true;
      return false;
    }
    ++rotations_;
  }
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
    failed_ = true;
    return false;
  }
  bytes_ += text.size();
  return true;
}

bool RotatingFile::Flush() {
  if (file_ && std::fflush(file_) != 0) failed_ = true;
  return !failed_;
}

bool RotatingFile::Close() {
  if (file_) {
    if (std::fclose(file_) != 0) failed_ = true;
    file_ = nullptr;
  }
  return !failed_;
}

}  // namespace heft::drivers

#include "heft/drivers/rotating_file.hpp"

#include <sys/stat.h>

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

}  // namespace

RotatingFile::RotatingFile(std::string path, RotationPolicy policy, std::string header)
    : path_(std::move(path)), policy_(policy), header_(std::move(header)) {
  if (policy_.keep < 0) throw std::invalid_argument(path_ + ": rotation keep must be ≥ 0");
  const std::uint64_t existing = FileSize(path_);
  if (existing > 0) {
    const bool other_layout = !header_.empty() && FirstLine(path_) != header_;
    const bool full = policy_.max_bytes > 0 && existing >= policy_.max_bytes;
    if (!policy_.append || other_layout || full) Rotate();
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

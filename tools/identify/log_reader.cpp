#include "log_reader.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <istream>
#include <stdexcept>
#include <streambuf>

#include "progress.hpp"

namespace heft::identify {
namespace {

std::string Megabytes(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g MB", static_cast<double>(bytes) / 1e6);
  return text;
}

// Reads at most `limit` bytes of `in`, reporting how far to `progress`.
class BoundedBuf final : public std::streambuf {
 public:
  BoundedBuf(std::streambuf& in, std::uint64_t limit, Progress& progress)
      : in_(in), left_(limit), total_(limit), progress_(progress) {}

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (left_ == 0) return traits_type::eof();
    const auto want = static_cast<std::streamsize>(std::min<std::uint64_t>(left_, sizeof(block_)));
    const std::streamsize got = in_.sgetn(block_, want);
    if (got <= 0) return traits_type::eof();
    left_ -= static_cast<std::uint64_t>(got);
    progress_.Update(total_ - left_, total_);
    setg(block_, block_, block_ + got);
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::streambuf& in_;
  std::uint64_t left_, total_;
  Progress& progress_;
  char block_[1 << 16];
};

}  // namespace

LogRead ReadLogBounded(const std::string& path, std::uint64_t budget) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    throw std::runtime_error(path + ": cannot read: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw std::runtime_error(path +
                             ": not a regular file (a candump log is a file: candump -l writes "
                             "one; a device or a pipe has no end to convert)");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > budget)
    throw std::runtime_error(path + ": " + Megabytes(size) + ", beyond the " + Megabytes(budget) +
                             " left of the logs' limit (--max-log-size MB raises it; the "
                             "conversion holds the logs in memory, about three times their size)");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error(path + ": cannot read: " + std::strerror(errno));
  Progress progress("reading " + path);
  BoundedBuf bounded(*file.rdbuf(), size, progress);
  std::istream in(&bounded);
  LogRead out;
  out.records = drivers::ReadCandump(in, out.errors);
  out.bytes = size;
  progress.Finish();
  return out;
}

}  // namespace heft::identify

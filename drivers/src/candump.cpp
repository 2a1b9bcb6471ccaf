#include "heft/drivers/candump.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <istream>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

namespace heft::drivers {
namespace {

constexpr std::uint32_t kErrFlag = 0x20000000u;

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsFdLength(int n) {
  return n <= 8 || n == 12 || n == 16 || n == 20 || n == 24 || n == 32 || n == 48 || n == 64;
}

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

// "seconds.fraction" (without the parentheses) → nanoseconds; "" or why it is refused.
std::string ParseStamp(std::string_view stamp, std::int64_t& ns) {
  const std::string digits_only = "the time stamp must be (seconds.fraction), digits only";
  const std::string overflow = "the time stamp is beyond 2262-04-11 (int64 nanoseconds overflow)";
  const auto dot = stamp.find('.');
  if (dot == std::string_view::npos || dot == 0) return digits_only;
  const std::string_view sec = stamp.substr(0, dot), frac = stamp.substr(dot + 1);
  if (!std::all_of(sec.begin(), sec.end(), IsDigit) ||
      !std::all_of(frac.begin(), frac.end(), IsDigit))
    return digits_only;
  if (frac.empty() || frac.size() > 9)
    return "the fraction of a second must have 1 to 9 digits (candump writes 6)";
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t s = 0;
  for (char c : sec) {
    if (s > (kMax - (c - '0')) / 10) return overflow;
    s = s * 10 + (c - '0');
  }
  std::int64_t f = 0;
  for (std::size_t i = 0; i < 9; ++i) f = f * 10 + (i < frac.size() ? frac[i] - '0' : 0);
  if (s > (kMax - f) / 1'000'000'000) return overflow;
  ns = s * 1'000'000'000 + f;
  return "";
}

// Why `r` is refused after `previous` of the same bus.
std::string BackInTime(const CandumpRecord& previous, const CandumpRecord& r) {
  // In double: the difference of two int64 may overflow; µs is what is shown.
  const double back =
      (static_cast<double>(previous.stamp_ns) - static_cast<double>(r.stamp_ns)) * 1e-9;
  char text[48];
  std::snprintf(text, sizeof(text), "%.6f", back);
  return r.bus + " goes back in time by " + text + " s (after line " +
         std::to_string(previous.line) + ")";
}

}  // namespace

std::string ParseCandumpLine(std::string_view line, CandumpRecord& out) {
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())))
    line.remove_suffix(1);
  if (line.size() < 3 || line[0] != '(') return "expected '(seconds.micros)' at the start";
  const auto close = line.find(')');
  if (close == std::string_view::npos) return "unterminated timestamp";
  std::int64_t stamp_ns = 0;
  if (std::string why = ParseStamp(line.substr(1, close - 1), stamp_ns); !why.empty()) return why;
  std::string_view rest = line.substr(close + 1);
  if (rest.empty() || rest[0] != ' ') return "expected a space after the timestamp";
  rest.remove_prefix(1);
  const auto space = rest.find(' ');
  if (space == std::string_view::npos || space == 0) return "expected '<interface> <id>#<data>'";
  const std::string_view bus = rest.substr(0, space);
  // A Linux interface name: at most IFNAMSIZ - 1 = 15 characters, printable, no spaces.
  if (bus.size() > 15 ||
      !std::all_of(bus.begin(), bus.end(), [](char c) { return c > ' ' && c <= '~'; }))
    return "the interface name must be 1 to 15 printable characters";
  out.bus = std::string(bus);
  std::string_view frame = rest.substr(space + 1);
  const auto hash = frame.find('#');
  if (hash == std::string_view::npos) return "expected '#' between identifier and data";
  const std::string_view id = frame.substr(0, hash);
  if (id.size() != 3 && id.size() != 8)
    return "identifier must have 3 (standard) or 8 (extended) hex digits";
  std::uint32_t value = 0;
  for (char c : id) {
    if (Hex(c) < 0) return "identifier is not hexadecimal";
    value = value << 4 | static_cast<std::uint32_t>(Hex(c));
  }
  hal::CanFrame f;
  if (id.size() == 8) {
    if (value & kErrFlag) {
      f.flags |= hal::CanFrame::kError;
      value &= ~kErrFlag;
    } else {
      f.flags |= hal::CanFrame::kExtended;
    }
    if (value > 0x1FFFFFFF) return "extended identifier beyond 29 bits";
  } else if (value > 0x7FF) {
    return "standard identifier beyond 0x7FF";
  }
  f.id = value;
  std::string_view data = frame.substr(hash + 1);
  if (!data.empty() && data[0] == '#') {  // CAN FD
    f.flags |= hal::CanFrame::kFd;
    if (data.size() < 2 || Hex(data[1]) < 0) return "CAN FD frame needs a flags digit after '##'";
    const int fd_flags = Hex(data[1]);
    if (fd_flags & 1) f.flags |= hal::CanFrame::kBrs;
    if (fd_flags & 2) f.flags |= hal::CanFrame::kEsi;
    data.remove_prefix(2);
  } else if (!data.empty() && (data[0] == 'R' || data[0] == 'r')) {
    f.flags |= hal::CanFrame::kRemote;
    f.len = 0;
    if (data.size() == 2 && data[1] >= '0' && data[1] <= '8')
      f.len = static_cast<std::uint8_t>(data[1] - '0');
    else if (data.size() != 1)
      return "malformed remote frame";
    f.stamp_ns = stamp_ns;
    out.frame = f;
    out.stamp_ns = stamp_ns;
    return "";
  }
  if (data.size() % 2) return "odd number of data hex digits";
  const int len = static_cast<int>(data.size() / 2);
  if (len > (f.is_fd() ? 64 : 8) || (f.is_fd() && !IsFdLength(len)))
    return "data length not allowed";
  for (int i = 0; i < len; ++i) {
    const int hi = Hex(data[2 * i]), lo = Hex(data[2 * i + 1]);
    if (hi < 0 || lo < 0) return "data is not hexadecimal";
    f.data[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  f.len = static_cast<std::uint8_t>(len);
  f.stamp_ns = stamp_ns;
  out.frame = f;
  out.stamp_ns = f.stamp_ns;
  return "";
}

std::string FormatCandumpLine(const CandumpRecord& r) {
  // The bus name is appended as a string: it has no length limit here (a fixed buffer overflowed).
  char buf[64];
  const std::int64_t sec = r.stamp_ns / 1'000'000'000, usec = (r.stamp_ns % 1'000'000'000) / 1000;
  std::snprintf(buf, sizeof(buf), "(%lld.%06lld) ", static_cast<long long>(sec),
                static_cast<long long>(usec));
  std::string line = buf + r.bus + ' ';
  const hal::CanFrame& f = r.frame;
  std::snprintf(buf, sizeof(buf), f.is_error() || f.is_extended() ? "%08X#" : "%03X#",
                f.is_error() ? f.id | kErrFlag : f.id);
  line += buf;
  if (f.is_remote()) {  // candump writes the length of a remote frame when it has one
    line += 'R';
    if (f.len > 0 && f.len <= 8) line += static_cast<char>('0' + f.len);
    return line;
  }
  if (f.is_fd()) {
    line += '#';
    line += "0123456789ABCDEF"[((f.flags & hal::CanFrame::kBrs) ? 1 : 0) |
                               ((f.flags & hal::CanFrame::kEsi) ? 2 : 0)];
  }
  for (int i = 0; i < f.len && i < hal::CanFrame::kMaxData; ++i) {
    line += "0123456789ABCDEF"[f.data[i] >> 4];
    line += "0123456789ABCDEF"[f.data[i] & 0xF];
  }
  return line;
}

namespace {

// One line into `line`, at most `max` characters of it (the rest is dropped and `too_long` set), so
// that a file with no newline (/dev/zero, a binary file) cannot grow one string without bound.
// False at the end of the stream with nothing read.
bool ReadBoundedLine(std::istream& in, std::string& line, std::size_t max, bool& too_long) {
  line.clear();
  too_long = false;
  std::streambuf* buf = in.rdbuf();
  bool any = false;
  for (;;) {
    const int c = buf ? buf->sbumpc() : std::char_traits<char>::eof();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      return any;
    }
    any = true;
    if (c == '\n') return true;
    if (line.size() < max)
      line.push_back(static_cast<char>(c));
    else
      too_long = true;
  }
}

}  // namespace

std::vector<CandumpRecord> ReadCandump(std::istream& in, std::vector<CandumpError>& errors) {
  std::vector<CandumpRecord> out;
  std::string line;
  bool too_long = false;
  int number = 0;
  long long dropped = 0;  // errors past kMaxCandumpErrors, counted only
  while (ReadBoundedLine(in, line, kMaxCandumpLine, too_long)) {
    if (number < std::numeric_limits<int>::max()) ++number;
    if (line.empty() && !too_long) continue;
    CandumpRecord r;
    std::string why = too_long ? "longer than " + std::to_string(kMaxCandumpLine) +
                                     " characters: not a candump line"
                               : ParseCandumpLine(line, r);
    r.line = number;
    if (why.empty())
      out.push_back(std::move(r));
    else if (errors.size() < kMaxCandumpErrors)
      errors.push_back({number, std::move(why)});
    else
      ++dropped;
  }
  if (dropped > 0)
    errors.push_back({number, "and " + std::to_string(dropped) +
                                  " more malformed lines (only the first " +
                                  std::to_string(kMaxCandumpErrors) + " are listed)"});
  return out;
}

CandumpError FindTimeReversal(const std::vector<CandumpRecord>& records) {
  std::map<std::string_view, const CandumpRecord*> last;  // views into `records`
  for (const CandumpRecord& r : records) {
    const CandumpRecord*& previous = last[r.bus];
    if (previous && r.stamp_ns < previous->stamp_ns) return {r.line, BackInTime(*previous, r)};
    previous = &r;
  }
  return {};
}

CandumpReplay::CandumpReplay(std::string bus, const std::vector<CandumpRecord>& records)
    : bus_(std::move(bus)) {
  const CandumpRecord* previous = nullptr;
  for (const CandumpRecord& r : records) {
    if (r.bus != bus_) continue;
    if (previous && r.stamp_ns < previous->stamp_ns)
      throw std::invalid_argument("candump replay: line " + std::to_string(r.line) + ": " +
                                  BackInTime(*previous, r));
    previous = &r;
    frames_.push_back(r.frame);
    // The log's stamp is the frame's receive time in the replay's clock (AdvanceTo, the ticks).
    frames_.back().stamp_ns = r.stamp_ns;
    frames_.back().flags |= hal::CanFrame::kRxStamp;
  }
}

hal::IoStatus CandumpReplay::receive(hal::CanFrame& frame) noexcept {
  if (next_ >= frames_.size() || frames_[next_].stamp_ns > now_) return hal::IoStatus::kEmpty;
  frame = frames_[next_++];
  return hal::IoStatus::kOk;
}

hal::CanBusStats CandumpReplay::stats() const noexcept {
  hal::CanBusStats s;
  s.rx_frames = next_;
  s.up = true;
  return s;
}

}  // namespace heft::drivers

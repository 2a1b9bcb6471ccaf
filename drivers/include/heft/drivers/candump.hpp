// can-utils' `candump -l` log format, read and written, so that traffic recorded on a robot replays
// through the same drivers and simulated traffic can be inspected with can-utils (canplayer,
// cansniffer via vcan, ...). One line per frame:
//   (1700000000.123456) can0 123#DEADBEEF          classic data frame (3 hex digits: standard id)
//   (1700000000.123456) can0 12345678#00           extended identifier (8 hex digits)
//   (1700000000.123456) can0 123##1DEADBEEF        CAN FD: '##', one hex digit of FD flags, data
//   (1700000000.123456) can0 123#R                 remote frame (optionally R<len>)
//   (1700000000.123456) can0 20000040#0000000000000000   error frame (CAN_ERR_FLAG 0x20000000 |
//   class)
// The time stamp is read whole: seconds and fraction in decimal digits only, 1 to 9 fraction digits
// (candump writes 6), within int64 nanoseconds (up to 2262-04-11); anything else is refused.
// Frames of one bus never go back in time in a log candump wrote (one socket per interface); frames
// of different buses may interleave out of order (candump reads its sockets in turn). Code that
// replays a log refuses a bus going back in time instead of re-sorting it (FindTimeReversal).
// Set-up / tooling code: allocates and throws; the replay transport's receive() does not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "heft/hal/can.hpp"

namespace heft::drivers {

struct CandumpRecord {
  std::int64_t stamp_ns = 0;
  std::string bus;
  hal::CanFrame frame;
  int line = 0;  // line in its log (ReadCandump), for messages; 0 when not read from a log
};

// One line → record. Returns an empty string on success, else why the line is malformed.
std::string ParseCandumpLine(std::string_view line, CandumpRecord& out);
// Record → one line (no newline).
std::string FormatCandumpLine(const CandumpRecord& record);

struct CandumpError {
  int line = 0;
  std::string reason;
};
// A candump line is at most ~170 characters (CAN FD's 64 bytes in hex); longer is not one.
inline constexpr std::size_t kMaxCandumpLine = 4096;
// Errors listed one by one, at most; the rest are counted in one last entry.
inline constexpr std::size_t kMaxCandumpErrors = 1000;
// Reads a whole log. Malformed lines (and lines over kMaxCandumpLine characters) are skipped and
// reported one by one in `errors`, the first kMaxCandumpErrors of them, then one entry saying how
// many more; so neither an endless line nor a log of garbage can exhaust the memory through them.
std::vector<CandumpRecord> ReadCandump(std::istream& in, std::vector<CandumpError>& errors);

// The first record whose bus goes back in time (earlier than that bus's previous record), as its
// line and e.g. "can0 goes back in time by 0.000050 s (after line 3)"; line 0 and no reason when
// every bus is in time order.
CandumpError FindTimeReversal(const std::vector<CandumpRecord>& records);

// Replays one bus of a log as a transport: receive() returns the frames whose time has come
// (AdvanceTo sets the replay clock, in the log's time base), each stamped with its line's time as
// its receive time (hal::CanFrame::kRxStamp): the driver loop ages samples from the log's stamps.
class CandumpReplay final : public hal::CanTransport {
 public:
  // Throws std::invalid_argument (naming the line) if the bus goes back in time: a replay in
  // another order than the log's would be wrong, and a silent re-sort would hide a damaged log.
  CandumpReplay(std::string bus, const std::vector<CandumpRecord>& records);
  void AdvanceTo(std::int64_t log_time_ns) noexcept { now_ = log_time_ns; }
  bool done() const noexcept { return next_ >= frames_.size(); }
  std::string_view name() const noexcept override { return bus_; }
  [[nodiscard]] hal::IoStatus receive(hal::CanFrame& frame) noexcept override;
  [[nodiscard]] hal::IoStatus send(const hal::CanFrame&) noexcept override {
    return hal::IoStatus::kOk;
  }
  [[nodiscard]] bool wait(std::int64_t) noexcept override {
    return !done() && frames_[next_].stamp_ns <= now_;
  }
  hal::CanBusStats stats() const noexcept override;
  bool restart() noexcept override { return true; }

 private:
  std::string bus_;
  std::vector<hal::CanFrame> frames_;
  std::size_t next_ = 0;
  std::int64_t now_ = 0;
};

}  // namespace heft::drivers

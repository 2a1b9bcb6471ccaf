// A text log file that appends and rotates by size, as logrotate would but from inside the writer:
// `telemetry.csv` grows to `max_bytes`, then becomes `telemetry.csv.1` (the older `.1` becomes
// `.2`,
// ..., `.<keep>` is deleted) and a new `telemetry.csv` starts with the header line again. Used by
// the host's telemetry CSV and by the candump logs (drivers/candump_writer.hpp).
//
// Opening an existing file appends to it when its first line is this writer's header (or when the
// writer has no header); a file that starts with another header (another configuration's columns)
// is rotated away first, so one file never mixes two layouts. A partial last line (a writer killed
// mid-line) is cut off before appending. `append = false` rotates any
// existing file away: every run starts a file of its own and nothing is deleted beyond `keep`.
//
// Not for real-time threads: Write() may rename files and allocate. Set-up throws (naming the
// path and the reason); Write() reports a failure through its return value and failed().
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace heft::drivers {

struct RotationPolicy {
  std::uint64_t max_bytes = 0;  // rotate before a write would take the file past this; 0: never
  int keep = 5;                 // rotated files kept (`.1` newest ... `.<keep>` oldest); 0: none
  bool append = true;           // false: an existing file is rotated away at open
};

class RotatingFile {
 public:
  // `header` (without its newline) starts every new file; empty: no header.
  RotatingFile(std::string path, RotationPolicy policy, std::string header = {});
  ~RotatingFile();
  RotatingFile(const RotatingFile&) = delete;
  RotatingFile& operator=(const RotatingFile&) = delete;

  // Writes `text` (whole lines, newline included), rotating first when the file would grow past
  // max_bytes (a file holds at least one write, however long). False if the write failed.
  bool Write(std::string_view text);
  bool Flush();
  // Flushes and closes (idempotent); false if anything written since open failed.
  bool Close();

  const std::string& path() const { return path_; }
  std::uint64_t bytes() const { return bytes_; }          // in the current file
  std::uint64_t rotations() const { return rotations_; }  // since open
  bool failed() const { return failed_; }
  // The name of the n-th rotated file (n ≥ 1): "<path>.<n>".
  std::string Rotated(int n) const { return path_ + "." + std::to_string(n); }

 private:
  void Open(bool fresh);
  void Rotate();

  std::string path_;
  RotationPolicy policy_;
  std::string header_;
  std::FILE* file_ = nullptr;
  std::uint64_t bytes_ = 0;
  std::uint64_t rotations_ = 0;
  bool failed_ = false;
};

}  // namespace heft::drivers

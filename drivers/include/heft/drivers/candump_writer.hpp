// A `candump -l` log written while frames flow: real-time producers hand frames to a lock-free
// SPSC queue (Log() never allocates, locks, blocks or touches a file unless asked to wait), and a
// writer thread of its own drains the queue into the file, one line per frame (FormatCandumpLine).
// Used by the simulated robot (`simulation.candump`) to log every frame it puts on its buses, and
// by the host (`host.candump`) to log every frame its driver thread receives. The file may rotate
// by size (rotating_file.hpp). Set-up and Close() allocate, block and throw.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "heft/drivers/rotating_file.hpp"
#include "heft/hal/can.hpp"
#include "heft/hal/spsc_queue.hpp"

namespace heft::drivers {

class CandumpWriter {
 public:
  static constexpr std::size_t kQueueFrames = 1u << 15;

  // Opens `path` (by default truncated: `rotation` {0, 0, false}); `buses` names the interfaces
  // by index. With `wait_when_full` a
  // producer that finds the queue full waits for the writer (simulated time can wait: no frame is
  // ever missing from the log); without it the frame is left out of the log and counted.
  // `stamp_offset_ns` is added to every frame's stamp (e.g. the wall-clock time of a simulation's
  // start: can-utils expect absolute times).
  CandumpWriter(const std::string& path, std::vector<std::string> buses, bool wait_when_full,
                std::int64_t stamp_offset_ns = 0,
                RotationPolicy rotation = RotationPolicy{0, 0, false});
  ~CandumpWriter();
  CandumpWriter(const CandumpWriter&) = delete;
  CandumpWriter& operator=(const CandumpWriter&) = delete;

  // Producer side (one thread): queues one frame of bus `bus`, stamped with frame.stamp_ns.
  [[nodiscard]] bool Log(int bus, const hal::CanFrame& frame) noexcept;
  // Writes everything queued, stops the writer thread and closes the file (idempotent). Throws if
  // the file could not be written.
  void Close();

  const std::string& path() const { return path_; }
  std::uint64_t written() const { return written_.load(std::memory_order_relaxed); }
  std::uint64_t dropped() const { return queue_->drops(); }
  std::int64_t stamp_offset_ns() const { return stamp_offset_ns_; }
  // Files rotated since open (writer thread's count; read it after Close()).
  std::uint64_t rotations() const { return file_ ? file_->rotations() : 0; }

 private:
  struct Entry {
    std::int32_t bus;
    hal::CanFrame frame;
  };
  void Drain();

  std::string path_;
  std::vector<std::string> buses_;
  bool wait_when_full_;
  std::int64_t stamp_offset_ns_;
  std::unique_ptr<hal::SpscQueue<Entry, kQueueFrames>> queue_;
  std::unique_ptr<RotatingFile> file_;
  bool closed_ = false;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> written_{0};
  bool write_failed_ = false;
  std::thread thread_;
};

}  // namespace heft::drivers

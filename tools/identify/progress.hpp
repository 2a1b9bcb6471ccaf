// Progress of a long step of heft-identify, on stderr: a bar redrawn in place when stderr is a
// terminal, otherwise one line every 10 s (logs, CI, pipes stay readable). A step of unknown
// length (the SDP: CSDP reports nothing while it runs) shows the time elapsed, from a thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

namespace heft::identify {

class Progress {
 public:
  explicit Progress(std::string label);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  // `total` 0: unknown length (elapsed time only).
  void Update(std::size_t done, std::size_t total);
  // Clears the bar (a terminal) or prints the final line (otherwise). Idempotent.
  void Finish();

 private:
  double Elapsed() const;
  std::string label_;
  bool tty_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_, last_;
  std::mutex mutex_;
};

// Progress with an unknown length, updated from its own thread every 0.2 s until destroyed.
class ElapsedTicker {
 public:
  explicit ElapsedTicker(std::string label);
  ~ElapsedTicker();  // not copyable: its Progress, mutex and thread are not

 private:
  Progress progress_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace heft::identify

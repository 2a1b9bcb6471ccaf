#include "heft/drivers/candump_writer.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "heft/drivers/candump.hpp"

namespace heft::drivers {

CandumpWriter::CandumpWriter(const std::string& path, std::vector<std::string> buses,
                             bool wait_when_full, std::int64_t stamp_offset_ns,
                             RotationPolicy rotation)
    : path_(path),
      buses_(std::move(buses)),
      wait_when_full_(wait_when_full),
      stamp_offset_ns_(stamp_offset_ns),
      queue_(std::make_unique<hal::SpscQueue<Entry, kQueueFrames>>()) {
  try {
    file_ = std::make_unique<RotatingFile>(path, rotation);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("the candump log: ") + e.what());
  }
  thread_ = std::thread([this] {
    while (!stop_.load(std::memory_order_acquire)) {
      Drain();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    Drain();
  });
}

CandumpWriter::~CandumpWriter() {
  try {
    Close();
  } catch (const std::exception&) {  // reported by an explicit Close(); a destructor stays quiet
  }
}

bool CandumpWriter::Log(int bus, const hal::CanFrame& frame) noexcept {
  const Entry e{static_cast<std::int32_t>(bus), frame};
  if (!wait_when_full_) return queue_->push(e);
  // Lockstep: the producer runs on simulated time and may wait for the writer thread.
  while (queue_->full()) {
    if (stop_.load(std::memory_order_acquire)) return false;
    std::this_thread::yield();
  }
  return queue_->push(e);
}

void CandumpWriter::Drain() {
  Entry e;
  CandumpRecord r;
  while (queue_->pop(e)) {
    r.stamp_ns = e.frame.stamp_ns + stamp_offset_ns_;
    r.bus = e.bus >= 0 && static_cast<std::size_t>(e.bus) < buses_.size() ? buses_[e.bus] : "?";
    r.frame = e.frame;
    r.frame.stamp_ns = r.stamp_ns;
    std::string line = FormatCandumpLine(r);
    line += '\n';
    if (!file_->Write(line)) write_failed_ = true;
    written_.fetch_add(1, std::memory_order_relaxed);
  }
}

void CandumpWriter::Close() {
  if (closed_) return;
  closed_ = true;
  stop_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
  Drain();  // anything a producer queued after the thread's last pass
  const bool failed = !file_->Close() || write_failed_;
  if (failed) throw std::runtime_error("writing the candump log " + path_ + " failed");
}

}  // namespace heft::drivers

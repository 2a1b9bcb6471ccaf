// heftd's state recorder: every driver-loop sample (q, v, τ_obs, foot wrenches, validity, time) at
// 1 kHz into a .heftrec recording (recording/: heft/recording/recording.hpp) for heft-identify.
//
// The driver thread only calls OnDriverTick() with the sample its loop just published: a wait-free
// copy into a lock-free queue (no allocation, lock, I/O or logging; a full queue drops and counts).
// A non-real-time thread of the recorder drains the queue and streams the records to disk.
#pragma once

#include <spdlog/logger.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "heft/hal/spsc_queue.hpp"
#include "heft/hal/state_buffer.hpp"
#include "heft/host/host_config.hpp"
#include "heft/plugin/plugin_config.hpp"
#include "heft/recording/recording.hpp"

namespace heft::host {

class StateRecorder {
 public:
  static constexpr std::size_t kQueue = 1024;  // samples: 1 s of slack for the disk
  // Opens the file (throws recording::RecordingError) and starts the writer thread.
  StateRecorder(const std::string& path, const recording::RecordingInfo& info,
                std::shared_ptr<spdlog::logger> log);
  ~StateRecorder();  // drains the queue, flushes, joins
  StateRecorder(const StateRecorder&) = delete;
  StateRecorder& operator=(const StateRecorder&) = delete;

  // Driver thread, after each tick, with the loop's published sample: real-time safe.
  void OnDriverTick(const hal::RobotStateSample& sample) noexcept;

  std::uint64_t records() const { return records_.load(std::memory_order_relaxed); }
  std::uint64_t drops() const { return queue_->drops(); }

 private:
  void Run();
  std::shared_ptr<spdlog::logger> log_;
  recording::RecordingWriter writer_;
  std::unique_ptr<hal::SpscQueue<hal::RobotStateSample, kQueue>> queue_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> records_{0};
  std::thread thread_;
};

// The recorder heftd's configuration asks for (host.recording), or null. Joint and F/T channels in
// the drivers' order, named by URDF joint and frame. Throws when the file cannot be created.
std::unique_ptr<StateRecorder> MakeRecorder(const RecordingConfig& recording,
                                            const plugin::PluginConfig& config, bool floating_base,
                                            std::shared_ptr<spdlog::logger> log);

}  // namespace heft::host

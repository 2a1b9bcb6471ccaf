#include "heft/host/recorder.hpp"

#include <chrono>

#include "heft/recording/candump_convert.hpp"

namespace heft::host {

StateRecorder::StateRecorder(const std::string& path, const recording::RecordingInfo& info,
                             std::shared_ptr<spdlog::logger> log)
    : log_(std::move(log)),
      writer_(path, info),
      queue_(std::make_unique<hal::SpscQueue<hal::RobotStateSample, kQueue>>()) {
  thread_ = std::thread([this] { Run(); });
}

StateRecorder::~StateRecorder() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void StateRecorder::OnDriverTick(const hal::RobotStateSample& sample) noexcept {
  (void)queue_->push(sample);  // a full queue drops the sample (counted in drops())
}

void StateRecorder::Run() {
  auto sample = std::make_unique<hal::RobotStateSample>();
  std::uint64_t reported_drops = 0;
  auto drain = [&] {
    bool any = false;
    while (queue_->pop(*sample)) {
      writer_.Write(*sample);
      records_.fetch_add(1, std::memory_order_relaxed);
      any = true;
    }
    return any;
  };
  try {
    while (!stop_.load()) {
      if (!drain()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      if (queue_->drops() != reported_drops) {
        reported_drops = queue_->drops();
        log_->warn("recording: {} samples dropped so far (disk too slow)", reported_drops);
      }
    }
    drain();
    writer_.Flush();
    log_->info("recording: {} records written", records_.load());
  } catch (const std::exception& e) {
    log_->error("recording stopped: {}", e.what());
  }
}

std::unique_ptr<StateRecorder> MakeRecorder(const RecordingConfig& rc,
                                            const plugin::PluginConfig& config, bool floating_base,
                                            std::shared_ptr<spdlog::logger> log) {
  if (!rc.enabled) return nullptr;
  const recording::RecordingInfo info = recording::InfoFromDrivers(config.drivers, floating_base);
  log->info("recording the robot state at 1 kHz to {} ({} joints, {} F/T cells)", rc.path,
            info.joints.size(), info.wrench_frames.size());
  return std::make_unique<StateRecorder>(rc.path, info, std::move(log));
}

}  // namespace heft::host

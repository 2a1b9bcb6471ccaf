#include "heft/host/schedule.hpp"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include "heft/host/realtime.hpp"

namespace heft::host {
namespace {

// Lockstep hand-over between the host's threads: spin briefly, then yield in short sleeps. (Not
// std::atomic::wait: GCC 12's libstdc++ loses wake-ups there under this pattern.)
template <typename Stop>
bool WaitFor(const std::atomic<std::int64_t>& value, std::int64_t target, Stop stop) {
  for (int i = 0; value.load(std::memory_order_acquire) < target; ++i) {
    if (stop()) return false;
    if (i < 64)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  return true;
}

void SleepUntil(std::int64_t t) {
  timespec ts{static_cast<time_t>(t / 1'000'000'000), static_cast<long>(t % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace

std::int64_t Now() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

double Percentile(std::vector<std::int64_t> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(
      std::min<double>(static_cast<double>(v.size() - 1), p * static_cast<double>(v.size())));
  return static_cast<double>(v[i]);
}

std::int64_t NextControlTick(std::int64_t k, std::int64_t elapsed_ns, std::uint64_t& skipped,
                             std::int64_t period_ms) noexcept {
  const std::int64_t next = k + period_ms;
  if (elapsed_ns < next * 1'000'000) return next;
  const std::int64_t ahead = period_ms * (elapsed_ns / (period_ms * 1'000'000) + 1);
  skipped += static_cast<std::uint64_t>((ahead - next) / period_ms);
  return ahead;
}

Schedule::Schedule(Backend& backend, drivers::DriverLoop& loop, plugin::ControllerInterface& plugin,
                   plugin::HandOffMailbox& hand_off, StateRecorder* recorder,
                   SharedHandOffSegment* shared, FrameworkInput* input, bool input_base,
                   ThreadSettings settings, std::shared_ptr<spdlog::logger> log)
    : backend_(backend),
      loop_(loop),
      plugin_(plugin),
      hand_off_(hand_off),
      recorder_(recorder),
      shared_(shared),
      input_(input),
      input_base_(input != nullptr && input_base),
      settings_(std::move(settings)),
      log_(std::move(log)),
      lockstep_(backend.steps() && backend.lockstep()),
      total_ms_(static_cast<std::int64_t>(std::llround(backend.duration() * 1000.0))) {
  // A bounded run keeps every tick; an open-ended one (heftd) the last 10 minutes (200 000 ticks,
  // 3.2 MB), overwritten in a ring.
  const auto capacity = static_cast<std::size_t>(total_ms_ > 0 ? total_ms_ / 3 + 16 : 200'000);
  stats_.compute_ns.reserve(capacity);
  stats_.lateness_ns.reserve(capacity);
  for (int b = 0; b < loop_.num_buses(); ++b)
    bus_counters_.push_back(std::make_unique<hal::SeqlockRing<drivers::BusCounters, 2>>());
}

Schedule::~Schedule() {
  Stop();
}

void Schedule::Start(const std::atomic<bool>& stop) {
  stop_ = &stop;
  driver_ = std::thread([this] { DriverThread(); });
  control_ = std::thread([this] { ControlThread(); });
  int threads = 2;
  if (backend_.steps()) {
    stepper_ = std::thread([this] { StepperThread(); });
    ++threads;
  }
  // The clock starts once every thread is set up (stack mapped and locked, scheduling and affinity
  // set): started before, the first ticks were due while the threads were still being created and
  // woke tens of milliseconds "late" (every overrun of a real-time run was one of them).
  while (threads_ready_.load(std::memory_order_acquire) < threads)
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  t0_ = Now();
  started_.store(true, std::memory_order_release);  // publishes t0_
}

void Schedule::WaitForStart() {
  threads_ready_.fetch_add(1, std::memory_order_release);
  while (!started_.load(std::memory_order_acquire))
    std::this_thread::sleep_for(std::chrono::microseconds(20));
}

bool Schedule::stopping() const noexcept {
  return (stop_ && stop_->load()) || done_.load();
}

void Schedule::Stop() {
  done_.store(true);
  if (stepper_.joinable()) stepper_.join();
  if (driver_.joinable()) driver_.join();
  if (control_.joinable()) control_.join();
}

// Real-time set-up: says clearly what it could not get.
void Schedule::RealtimeSetup(const char* thread, const std::vector<int>& cpus) {
  if (settings_.prefault_stack_bytes > 0) PrefaultStack(settings_.prefault_stack_bytes);
  sched_param sp{};
  sp.sched_priority = settings_.priority;
  if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0)
    log_->warn(
        "{}: SCHED_FIFO priority {} refused ({}); running with normal scheduling — give the "
        "service "
        "CAP_SYS_NICE / LimitRTPRIO for real-time behaviour",
        thread, settings_.priority, std::strerror(errno));
  if (!cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus) CPU_SET(c, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
      log_->warn("{}: CPU affinity refused ({})", thread, std::strerror(errno));
  }
}

void Schedule::DriverThread() {
  if (!lockstep_) RealtimeSetup("driver thread", settings_.driver_cpus);
  WaitForStart();
  const auto stopping = [this] { return this->stopping(); };
  for (std::int64_t k = 1; !stopping(); ++k) {
    if (lockstep_) {
      if (!WaitFor(ms_ready_, k, stopping)) return;
    } else {
      SleepUntil(t0_ + k * 1'000'000);
    }
    const std::int64_t now = lockstep_ ? k * 1'000'000 : Now();
    // The floating base comes from the buses (the base IMU's frames, drivers.imu) or from the
    // framework's input segment (host.framework_input.base): nothing else reaches the drivers.
    const hal::BaseSample* base = nullptr;
    if (input_) {
      // The framework's input: validated commands to the plugin (as edges: none lost, none
      // repeated), its base state to the drivers when the configuration takes it from there.
      CommandEdges edges;
      input_->Read(now, input_sample_, edges);
      edges.ForEach([this](plugin::Command c) { plugin_.command(c); });
      if (input_base_) base = &input_sample_;
    }
    const hal::RobotStateSample* framework = nullptr;
    if (joints_) {
      joints_->Read(now, joints_sample_);
      framework = &joints_sample_;
    }
    loop_.Tick(now, base, framework);
    driver_counters_.publish(loop_.counters());
    for (std::size_t b = 0; b < bus_counters_.size(); ++b)
      bus_counters_[b]->publish(loop_.bus(static_cast<int>(b)));
    if (recorder_) recorder_->OnDriverTick(loop_.last_sample());
    ms_driven_.store(k, std::memory_order_release);
  }
}

void Schedule::ControlThread() {
  if (!lockstep_) RealtimeSetup("control thread", settings_.control_cpus);
  WaitForStart();
  const auto stopping = [this] { return this->stopping(); };
  ControlCounters& counters = stats_.control;
  std::int64_t driven_before = -1;  // the driver's millisecond at the previous tick
  const std::int64_t period_ms = settings_.control_period_ms, period_ns = period_ms * 1'000'000;
  for (std::int64_t k = period_ms;;) {
    std::int64_t wake = 0;
    if (lockstep_) {
      if (!WaitFor(ms_driven_, k, stopping)) return;
    } else {
      if (stopping()) return;
      SleepUntil(t0_ + k * 1'000'000);
      wake = Now() - (t0_ + k * 1'000'000);
    }
    const std::int64_t start = Now();
    // Real time: no new driver sample since the previous tick (the driver thread starved) leaves
    // the estimator's input as it was; update() would take the same measurement again.
    const std::int64_t driven = ms_driven_.load(std::memory_order_acquire);
    if (lockstep_ || driven != driven_before)
      plugin_.update(lockstep_ ? k * 1'000'000 : Now(), period_ns);
    else
      ++counters.stale;
    driven_before = driven;
    const std::int64_t done = Now();
    if (shared_) {
      hal::InertialEstimate latest;
      if (hand_off_.read_latest(latest)) shared_->Publish(latest);
      shared_->Heartbeat(done);  // readers: heftd is alive and ticking
    }
    // release: the watchdog (main thread) reads it; nothing else is ordered by it.
    control_heartbeat_ns_.store(done, std::memory_order_release);
    const std::int64_t spent = Now() - start;
    if (stats_.compute_ns.size() < stats_.compute_ns.capacity()) {
      stats_.compute_ns.push_back(spent);
      stats_.lateness_ns.push_back(wake);
    } else if (!stats_.compute_ns.empty()) {  // open-ended run: the ring of the latest ticks
      const std::size_t i = stats_.ticks % stats_.compute_ns.size();
      stats_.compute_ns[i] = spent;
      stats_.lateness_ns[i] = wake;
    }
    ++stats_.ticks;
    if (spent > period_ns || wake > period_ns) ++counters.late;
    stats_.overruns = counters.late;
    counters.longest_ns = std::max(counters.longest_ns, wake);
    ms_controlled_.store(k, std::memory_order_release);
    // Lockstep: every tick in turn. Real time: the next period still ahead.
    k = lockstep_ ? k + period_ms : NextControlTick(k, Now() - t0_, counters.skipped, period_ms);
    control_counters_.publish(counters);
  }
}

void Schedule::StepperThread() {
  WaitForStart();
  StepContext context{hand_off_, settings_.control_period_ms};
  // Only a stop request (or Stop()) interrupts it; it ends the run itself after its duration.
  const auto interrupted = [this] { return this->stopping(); };
  for (std::int64_t k = 1; k <= total_ms_ && !interrupted(); ++k) {
    if (!lockstep_) SleepUntil(t0_ + k * 1'000'000 - 200'000);  // frames land before the tick
    backend_.Step(k, context);
    ms_ready_.store(k, std::memory_order_release);
    if (lockstep_) {
      // Wait for the driver (and, at every control tick, the controller) before the next step.
      if (!WaitFor(ms_driven_, k, interrupted)) break;
      if (k % context.control_period_ms == 0 && !WaitFor(ms_controlled_, k, interrupted)) break;
    }
  }
  done_.store(true);
}

}  // namespace heft::host

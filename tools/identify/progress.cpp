#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace heft::identify {

Progress::Progress(std::string label)
    : label_(std::move(label)),
      tty_(isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

Progress::~Progress() {
  Finish();
}

double Progress::Elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::Update(std::size_t done, std::size_t total) {
  const std::lock_guard lock(mutex_);
  if (finished_) return;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_).count();
  if (since < (tty_ ? 0.1 : 10.0)) return;
  last_ = now;
  const double t = Elapsed();
  if (total == 0) {
    if (tty_)
      std::fprintf(stderr, "\r\033[K  %s ... %.0f s", label_.c_str(), t);
    else
      std::fprintf(stderr, "  %s: running for %.0f s\n", label_.c_str(), t);
    std::fflush(stderr);
    return;
  }
  const double f = static_cast<double>(done) / static_cast<double>(total);
  if (tty_) {
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(f * kWidth);
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(kWidth, '.');
    const double left = f > 0.02 ? t * (1.0 - f) / f : -1.0;
    std::fprintf(stderr, "\r\033[K  %s [%s] %3.0f %%  %.1f s", label_.c_str(), bar.c_str(), 100 * f,
                 t);
    if (left >= 0) std::fprintf(stderr, ", ~%.0f s left", left);
  } else {
    std::fprintf(stderr, "  %s: %.0f %% (%zu of %zu) after %.0f s\n", label_.c_str(), 100 * f, done,
                 total, t);
  }
  std::fflush(stderr);
}

void Progress::Finish() {
  const std::lock_guard lock(mutex_);
  if (finished_) return;
  finished_ = true;
  // A terminal's bar is erased (the caller logs the result); a log got its lines already.
  if (tty_) std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

ElapsedTicker::ElapsedTicker(std::string label) : progress_(std::move(label)) {
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stop_; }))
      progress_.Update(0, 0);
  });
}

ElapsedTicker::~ElapsedTicker() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  progress_.Finish();
}

}  // namespace heft::identify

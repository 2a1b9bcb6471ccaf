// Persistence of the last settled estimate (host.persistence, config/README.md): heftd keeps what
// it has learned across a restart (a crash, SIGKILL, a service restart) instead of starting from
// the nominal model.
//
// Writing: EstimatePersister's own thread (never the real-time ones) looks at the hand-off every
// 100 ms, keeps the last *settled* estimate — the estimator estimating, not holding, the handed
// parameters not rate-limited and the filter updating since the previous look, every number
// finite — and writes it at most every `interval` seconds when it changed, and once more on a
// clean stop. A write is atomic: a temporary file next to the target, fsync, rename over the
// target, fsync of the directory; a reader (or a heftd killed during the write) sees the old file
// or the new one, never a part.
//
// Reading, at start: the file is used only if it is recent enough (max_age), for the same links
// in the same order and the same nominal model (a hash of the model's structure and nominal
// parameters); otherwise the reason is logged and the estimator starts from nominal. The plugin
// then starts from it with its covariance inflated (ControllerInterface::start_from).
//
// The file (YAML, written by heftd, not meant to be edited):
//   format: 1
//   written_unix: <seconds since 1970, CLOCK_REALTIME>   written_utc: <ISO 8601, for people>
//   model_hash: fnv1a64:<16 hex digits>
//   links:
//     - {name: <link>, parameters: [10 numbers], covariance: [100 numbers, row-major]}
#pragma once

#include <spdlog/logger.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "heft/dynamics/model.hpp"
#include "heft/hal/inertial_estimate.hpp"
#include "heft/host/host_config.hpp"  // PersistenceConfig
#include "heft/plugin/controller_interface.hpp"
#include "heft/plugin/plugin_config.hpp"

namespace heft::host {

struct PersistedEstimate {
  double written_unix = 0.0;  // s since 1970 (CLOCK_REALTIME)
  std::string model_hash;
  hal::InertialEstimate estimate;  // names, parameters, covariance (status not kept)
};

// FNV-1a (64 bit) over what the estimate depends on in the nominal model: every body's name,
// parent, joint (name, type, axis, placement) and nominal π, the base (fixed or floating) and
// gravity. "fnv1a64:" + 16 hex digits.
std::string ModelHash(const dynamics::Model& model);

// ModelHash of the nominal model the plugin estimates against: the configuration's URDF with
// robot.parameters applied. Throws like the plugin's own loading.
std::string NominalModelHash(const plugin::PluginConfig& config);

// Writes `e` to `path` atomically (temporary file, fsync, rename, fsync of the directory).
// Throws std::runtime_error naming the file and the failed step.
void WriteEstimateFile(const std::string& path, const PersistedEstimate& e);
// Reads a file WriteEstimateFile wrote. Throws config::ConfigError naming the file, line and key
// (or std::runtime_error when it cannot be read).
PersistedEstimate ReadEstimateFile(const std::string& path);

// Why `e` must not be used (empty: it may): too old (or from the future: the clock changed), for
// other links than `links` (in order), or another nominal model than `model_hash`.
std::string RefuseReason(const PersistedEstimate& e, double now_unix, double max_age,
                         const std::vector<std::string>& links, const std::string& model_hash);

// At start: reads the file and, when it may be used, starts the plugin from it. Logs which, and
// why not (file missing, unreadable, refused by RefuseReason or by the plugin). True if used.
bool RestorePersistedEstimate(const PersistenceConfig& config, const std::string& model_hash,
                              plugin::ControllerInterface& plugin, spdlog::logger& log);

// True if `e` is a settled estimate: estimating, not holding, finite, and against the previous
// look `before`: not rate-limited since (the handed parameters are the filter's) and updated.
bool Settled(const hal::InertialEstimate& e, const hal::InertialEstimate& before) noexcept;

class EstimatePersister {
 public:
  // Starts the thread; it reads `hand_off` (any number of readers may).
  EstimatePersister(PersistenceConfig config, std::string model_hash,
                    const plugin::HandOffMailbox& hand_off, std::shared_ptr<spdlog::logger> log);
  // Stop() without the final write (a set-up failure unwinding).
  ~EstimatePersister();
  EstimatePersister(const EstimatePersister&) = delete;
  EstimatePersister& operator=(const EstimatePersister&) = delete;

  // Clean stop: ends the thread and writes the last settled estimate if it was not written yet.
  void Stop();
  std::uint64_t writes() const noexcept { return writes_.load(std::memory_order_relaxed); }

 private:
  void Run();
  void Look();
  void Write();

  PersistenceConfig config_;
  std::string model_hash_;
  const plugin::HandOffMailbox& hand_off_;
  std::shared_ptr<spdlog::logger> log_;
  // Persister thread only (and Stop() after the join).
  std::optional<hal::InertialEstimate> previous_, settled_;
  std::uint64_t written_sequence_ = 0;
  std::int64_t last_write_ns_ = 0;
  bool write_failed_ = false;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> writes_{0};
  std::thread thread_;
};

}  // namespace heft::host

#include "heft/host/telemetry.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "heft/estimator/inertial_estimator.hpp"
#include "heft/estimator/sample_mapping.hpp"
#include "heft/hal/enum_name.hpp"
#include "heft/host/status.hpp"

namespace heft::host {

namespace {

// In estimator::TickStatus's declaration order
// (estimator/include/heft/estimator/inertial_estimator.hpp).
constexpr std::array<const char*, 6> kTickStatusNames{
    "calibrating", "updated", "gated", "released", "rejected_numeric", "invalid_input"};
static_assert(kTickStatusNames.size() == hal::EnumCount(estimator::TickStatus::kInvalidInput));

// What a gated hold means and where to look (config/README.md, "Estimator: gating and its
// release").
constexpr const char* kGatedHoldText =
    ": the gate has refused every measurement for estimator.gating.hold_after; the data disagree "
    "with the model beyond what the estimated links explain (an uncalibrated torque offset, a "
    "drifting sensor, a load on a link heft does not estimate?)";

}  // namespace

const char* TickStatusName(std::uint8_t status) {
  return hal::EnumName(static_cast<estimator::TickStatus>(status), kTickStatusNames, "unknown");
}

std::string HoldReasonText(std::uint32_t bits) {
  std::string text;
  for (const std::string& name : HoldReasonNames(bits)) text += (text.empty() ? "" : "+") + name;
  return text.empty() ? "none" : text;
}

Telemetry::Telemetry(const std::string& path, drivers::RotationPolicy rotation,
                     plugin::ControllerInterface& plugin, Backend& backend,
                     std::shared_ptr<spdlog::logger> log)
    : path_(path), plugin_(plugin), backend_(backend), log_(std::move(log)) {
  if (path_.empty()) return;
  const std::vector<std::string> per_link = backend_.LinkColumns();
  const std::vector<std::string> extra = backend_.ExtraColumns();
  link_columns_ = per_link.size();
  extra_columns_ = extra.size();
  link_values_.assign(link_columns_ * plugin_.num_links(), 0.0);
  extra_values_.assign(extra_columns_, 0.0);
  for (const char* c : kTickColumns) {
    if (!header_.empty()) header_.push_back(',');
    header_.append(c);
  }
  for (std::size_t k = 0; k < plugin_.num_links(); ++k) {
    const std::string n = plugin_.link_name(k);
    for (const char* q : kInertialColumns) header_ += "," + n + "_" + q;
    for (const char* q : kInertialColumns) header_ += "," + n + "_est_" + q;
    for (const char* q : kInertialColumns) header_ += "," + n + "_sd_" + q;
    for (const std::string& c : per_link) header_ += "," + n + "_" + c;
  }
  for (const std::string& c : extra) header_ += "," + c;
  try {
    file_ = std::make_unique<drivers::RotatingFile>(path_, rotation, header_);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("telemetry: ") + e.what());
  }
}

void Telemetry::LogCalibration(const plugin::TelemetryRecord& rec) const {
  if (rec.calibration_timed_out) {
    // Worth a warning: the bias is not this start's (journalctl -p warning shows it).
    log_->warn(
        "estimator: calibration timed out with {} samples in its last window: the robot never "
        "held still (every joint under estimator.calibration.max_speed) for a whole window "
        "within estimator.calibration.timeout; the bias of the last finished calibration is kept "
        "(zero if there was none)",
        rec.calibration_samples);
    return;
  }
  if (rec.calibration_samples == 0) return;  // left before a window finished (disabled, reset)
  std::string line =
      fmt::format("estimator: calibration averaged {} samples", rec.calibration_samples);
  for (std::size_t k = 0; k < rec.num_links && k < rec.calibration_load.size(); ++k)
    if (rec.calibration_load[k] != 0.0)
      line += fmt::format("; {} {:+.2f} kg the estimate did not hold, left to the filter",
                          plugin_.link_name(k), rec.calibration_load[k]);
  if (rec.calibration_held_joints > 0)
    line += fmt::format(
        "; {} of {} friction joints held still while averaging: the static friction (up to "
        "±F_c) went into the bias with the torque sensors' offsets (docs/estimator.md, "
        "\"Stiction\")",
        rec.calibration_held_joints, rec.calibration_friction_joints);
  log_->info("{}", line);
}

bool Telemetry::GatedHoldQuiet(std::int64_t time_ns, bool gated) {
  constexpr std::int64_t kGatedLogPeriodNs = 60'000'000'000;
  if (gated) {  // a gated hold begins: loud once a minute, its end as loud as it was
    gated_quiet_ = gated_logged_once_ && time_ns - gated_logged_ns_ < kGatedLogPeriodNs;
    if (gated_quiet_) {
      ++gated_quieted_;
    } else {
      gated_logged_ns_ = time_ns;
      gated_logged_once_ = true;
    }
  }
  const bool quiet = (gated || gated_hold_) && gated_quiet_;
  gated_hold_ = gated;
  return quiet;
}

void Telemetry::Drain() {
  plugin::TelemetryRecord& rec = record_;
  fmt::memory_buffer row;
  while (plugin_.pop_telemetry(rec)) {
    if (rec.status.state != last_state_) {
      const bool holding = rec.status.state == hal::EstimatorState::kHolding;
      holds_ += holding;
      // Holding because a sensor failed is worth a warning (journalctl -p warning); the start-up
      // hold while the differencing history fills is not.
      const bool sensor_hold = holding && (rec.status.hold_reason & ~estimator::kHoldHistory) != 0;
      const bool gated = holding && (rec.status.hold_reason & estimator::kHoldGated) != 0;
      const spdlog::level::level_enum level =
          GatedHoldQuiet(rec.time_ns, gated)
              ? spdlog::level::debug
              : (sensor_hold ? spdlog::level::warn : spdlog::level::info);
      std::string why;
      if (holding)
        why = fmt::format(" (hold reason 0x{:x}: {}){}", rec.status.hold_reason,
                          HoldReasonText(rec.status.hold_reason), gated ? kGatedHoldText : "");
      if (gated && level == spdlog::level::warn && gated_quieted_ > 0)
        why += fmt::format(" [{} more gated holds in the minute before, logged at debug level]",
                           std::exchange(gated_quieted_, 0));
      log_->log(level, "estimator: {} → {} at t = {:.3f} s{}", EstimatorStateName(last_state_),
                EstimatorStateName(rec.status.state), 1e-9 * static_cast<double>(rec.time_ns), why);
      if (last_state_ == hal::EstimatorState::kCalibratingBias) LogCalibration(rec);
      last_state_ = rec.status.state;
    }
    if (!file_) continue;
    if (link_columns_ + extra_columns_ > 0)
      backend_.TelemetryValues(rec.time_ns, link_values_, extra_values_);
    row.clear();
    auto out = std::back_inserter(row);
    // kTickColumns, in that order.
    fmt::format_to(out, "{},{},{},{},{},{},{:.9g},{:.9g},{:d},{:d},{:.9g},{:.3f}", rec.time_ns,
                   rec.stamp_ns, EstimatorStateName(rec.status.state),
                   MeasurementModelName(rec.status.model), TickStatusName(rec.tick_status),
                   HoldReasonText(rec.status.hold_reason), rec.status.last_nis, rec.gamma,
                   static_cast<int>(rec.estimate_consistent), static_cast<int>(rec.rate_limited),
                   rec.calibration_progress, 1e-3 * static_cast<double>(rec.compute_ns));
    for (std::size_t k = 0; k < rec.num_links; ++k) {
      for (double v : rec.handed[k]) fmt::format_to(out, ",{:.9g}", v);
      for (double v : rec.estimate[k]) fmt::format_to(out, ",{:.9g}", v);
      for (double v : rec.handed_sd[k]) fmt::format_to(out, ",{:.9g}", v);
      for (std::size_t i = 0; i < link_columns_; ++i) {
        const std::size_t at = link_columns_ * k + i;
        fmt::format_to(out, ",{:.9g}", at < link_values_.size() ? link_values_[at] : 0.0);
      }
    }
    for (double v : extra_values_) fmt::format_to(out, ",{:.9g}", v);
    row.push_back('\n');
    if (!file_->Write(std::string_view(row.data(), row.size())) && !write_failed_) {
      write_failed_ = true;
      log_->error("telemetry: writing {} failed; rows are lost until it works again", path_);
    }
    ++rows_;
  }
  if (file_) file_->Flush();
}

}  // namespace heft::host

#include "telemetry.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace heft::host {

Telemetry::Telemetry(const std::string& path, plugin::ControllerInterface& plugin, Backend& backend,
                     std::shared_ptr<spdlog::logger> log)
    : path_(path), plugin_(plugin), backend_(backend), log_(std::move(log)) {
  if (path_.empty()) return;
  csv_.open(path_);
  if (!csv_) throw std::runtime_error("cannot write the telemetry file " + path_);
  const std::vector<std::string> per_link = backend_.LinkColumns();
  const std::vector<std::string> extra = backend_.ExtraColumns();
  link_columns_ = per_link.size();
  extra_columns_ = extra.size();
  link_values_.assign(link_columns_ * plugin_.num_links(), 0.0);
  extra_values_.assign(extra_columns_, 0.0);
  csv_ << "t,stamp,state,model,tick_status,nis,gamma,consistent,rate_limited,hold_reason,"
          "calibration,compute_us";
  for (std::size_t k = 0; k < plugin_.num_links(); ++k) {
    const std::string n = plugin_.link_name(k);
    for (const char* q : {"m", "hx", "hy", "hz", "ixx", "ixy", "ixz", "iyy", "iyz", "izz"})
      csv_ << ',' << n << "_" << q;
    for (const char* q : {"m", "hx", "hy", "hz", "ixx", "ixy", "ixz", "iyy", "iyz", "izz"})
      csv_ << ',' << n << "_est_" << q;
    for (const std::string& c : per_link) csv_ << ',' << n << "_" << c;
  }
  for (const std::string& c : extra) csv_ << ',' << c;
  csv_ << '\n';
}

void Telemetry::Drain() {
  plugin::TelemetryRecord& rec = record_;
  while (plugin_.pop_telemetry(rec)) {
    if (rec.status.state != last_state_) {
      static const char* names[] = {"inactive", "wait-for-walking", "calibrating-bias",
                                    "estimating", "holding"};
      log_->info("estimator: {} → {} at t = {:.3f} s{}", names[static_cast<int>(last_state_)],
                 names[static_cast<int>(rec.status.state)], 1e-9 * static_cast<double>(rec.time_ns),
                 rec.status.state == hal::EstimatorState::kHolding
                     ? fmt::format(" (hold reason 0x{:x})", rec.status.hold_reason)
                     : "");
      last_state_ = rec.status.state;
    }
    if (!csv_.is_open()) continue;
    if (link_columns_ + extra_columns_ > 0)
      backend_.TelemetryValues(rec.time_ns, link_values_, extra_values_);
    csv_ << 1e-9 * static_cast<double>(rec.time_ns) << ','
         << 1e-9 * static_cast<double>(rec.stamp_ns) << ',' << static_cast<int>(rec.status.state)
         << ',' << static_cast<int>(rec.status.model) << ',' << static_cast<int>(rec.tick_status)
         << ',' << rec.status.last_nis << ',' << rec.gamma << ',' << rec.estimate_consistent << ','
         << rec.rate_limited << ',' << rec.status.hold_reason << ',' << rec.calibration_progress
         << ',' << 1e-3 * static_cast<double>(rec.compute_ns);
    for (std::size_t k = 0; k < rec.num_links; ++k) {
      for (double v : rec.handed[k]) csv_ << ',' << v;
      for (double v : rec.estimate[k]) csv_ << ',' << v;
      for (std::size_t i = 0; i < link_columns_; ++i) {
        const std::size_t at = link_columns_ * k + i;
        csv_ << ',' << (at < link_values_.size() ? link_values_[at] : 0.0);
      }
    }
    for (double v : extra_values_) csv_ << ',' << v;
    csv_ << '\n';
    ++rows_;
  }
}

}  // namespace heft::host

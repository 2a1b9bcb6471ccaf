#include "heft/host/run_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace heft::host {
namespace {

Json Count(std::uint64_t n) {
  return Json::Of(static_cast<double>(n));
}

}  // namespace

Json SummarizeDrivers(spdlog::logger& log, const drivers::DriverLoop& loop,
                      const plugin::PluginConfig& pcfg,
                      const std::vector<hal::CanTransport*>& buses) {
  Json summary;
  const auto& c = loop.counters();
  log.info("drivers: {} samples published, {} frames rejected, {} lost samples, {} stale events",
           c.published, c.rejected_total(), c.lost_samples, c.stale_events);
  Json& d = summary["drivers"];
  d["published"] = Count(c.published);
  d["rejected"] = Count(c.rejected_total());
  d["lost_samples"] = Count(c.lost_samples);
  d["stale_events"] = Count(c.stale_events);
  // The devices' own fault reports (a CiA 402 drive's EMCY and heartbeat; any channel's faults).
  d["fault_events"] = Count(c.fault_events);
  d["emcy_errors"] = Count(c.emcy_errors);
  d["heartbeat_faults"] = Count(c.heartbeat_faults);
  d["heartbeat_timeouts"] = Count(c.heartbeat_timeouts);
  if (c.fault_events + c.emcy_errors + c.heartbeat_faults + c.heartbeat_timeouts > 0)
    log.warn(
        "drivers: {} channel faults, {} EMCY errors, {} heartbeats out of operational, {} "
        "heartbeats overdue",
        c.fault_events, c.emcy_errors, c.heartbeat_faults, c.heartbeat_timeouts);
  struct Lost {
    std::uint32_t n;
    std::string channel;
  };
  std::vector<Lost> lost;
  int not_ok = 0;
  const hal::RobotStateSample& last_sample = loop.last_sample();
  auto add = [&](const hal::ChannelHealth& health, const std::string& channel) {
    if (health.lost_samples > 0) lost.push_back({health.lost_samples, channel});
    not_ok += !health.ok();
  };
  for (std::size_t i = 0; i < pcfg.drivers.joints.size(); ++i) {
    add(last_sample.joints[i].encoder, pcfg.drivers.joints[i].joint + " encoder");
    add(last_sample.joints[i].torque_sensor, pcfg.drivers.joints[i].joint + " torque");
  }
  for (std::size_t k = 0; k < pcfg.drivers.ft_cells.size(); ++k)
    add(last_sample.wrenches[k].health, pcfg.drivers.ft_cells[k].frame);
  std::sort(lost.begin(), lost.end(), [](const Lost& a, const Lost& b) { return a.n > b.n; });
  std::string most;
  for (std::size_t i = 0; i < std::min<std::size_t>(lost.size(), 3); ++i)
    most += fmt::format("{}{} {}", i ? ", " : "", lost[i].channel, lost[i].n);
  log.info("channels: {} not ok at the end, {} with lost samples{}", not_ok, lost.size(),
           lost.empty() ? std::string() : "; most: " + most);
  Json& ch = summary["channels"];
  ch["not_ok"] = Count(static_cast<std::uint64_t>(not_ok));
  ch["with_lost_samples"] = Count(lost.size());
  Json& lost_by_channel = ch["lost_samples"];  // every channel that lost any, most first
  lost_by_channel.type = Json::Type::kObject;
  for (const Lost& l : lost) lost_by_channel[l.channel] = Count(l.n);
  for (int b = 0; b < loop.num_buses(); ++b) {
    const drivers::BusCounters& bc = loop.bus(b);
    const std::uint64_t restarts = buses[b]->stats().restarts;
    log.info(
        "bus {}: {} frames, {} error frames ({} bus-off), {} ticks down, {} restart requests, {} "
        "restarts",
        pcfg.drivers.buses[b], bc.frames, bc.error_frames, bc.bus_off, bc.down_ticks,
        bc.restart_requests, restarts);
    Json& bus = summary["buses"][pcfg.drivers.buses[b]];
    bus["frames"] = Count(bc.frames);
    bus["error_frames"] = Count(bc.error_frames);
    bus["bus_off"] = Count(bc.bus_off);
    bus["down_ticks"] = Count(bc.down_ticks);
    bus["restart_requests"] = Count(bc.restart_requests);
    bus["restarts"] = Count(restarts);
    bus["degraded_events"] = Count(bc.degraded_events);
    if (bc.degraded_events > 0)
      log.warn("bus {}: degraded {} times by error-frame storms", pcfg.drivers.buses[b],
               bc.degraded_events);
  }
  summary["drivers"]["torque_stuck_events"] = Count(c.torque_stuck_events);
  summary["drivers"]["ft_saturated_samples"] = Count(c.ft_saturated_samples);
  if (c.torque_stuck_events > 0 || c.ft_saturated_samples > 0)
    log.warn("drivers: {} stuck torque sensors, {} saturated F/T samples", c.torque_stuck_events,
             c.ft_saturated_samples);
  return summary;
}

bool WriteSummary(spdlog::logger& log, const std::string& path, const Json& summary) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << WriteJson(summary) << '\n';
    out.flush();
    if (!out) {
      log.error("run summary: cannot write {}", tmp);
      return false;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    log.error("run summary: cannot rename {} to {}: {}", tmp, path, ec.message());
    return false;
  }
  log.info("run summary: {}", path);
  return true;
}

}  // namespace heft::host

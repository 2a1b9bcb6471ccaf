#include <spdlog/spdlog.h>

#include <string>

#include "heft/host/json.hpp"
#include "heft/host/run_summary.hpp"
#include "service.hpp"

namespace heft::host {
namespace {

// The last hand-off's estimate per link.
void LogLastHandOff(Service& s) {
  hal::InertialEstimate last;
  if (s.hand_off.read_latest(last)) {
    for (std::size_t k = 0; k < last.num_links; ++k)
      s.log->info(
          "hand-off {}: m = {:.3f} kg, c = ({:.4f}, {:.4f}, {:.4f}) m; updates gated {}, gate "
          "releases {}",
          last.links[k].name.data(), last.links[k].parameters[0],
          last.links[k].parameters[1] / last.links[k].parameters[0],
          last.links[k].parameters[2] / last.links[k].parameters[0],
          last.links[k].parameters[3] / last.links[k].parameters[0], last.status.gated,
          last.status.gate_releases);
  }
}

// The framework joint-state segment's counters in the log (a warning when anything was refused)
// and in the summary's JSON ("framework_joints").
void LogFrameworkJoints(spdlog::logger& log, const FrameworkJointsCounters& c, Json& summary) {
  std::string reasons;
  for (std::size_t i = 1; i < kNumJointsRejects; ++i)
    if (c.rejected[i] > 0)
      reasons +=
          fmt::format(" {} {}", JointsRejectName(static_cast<JointsReject>(i)), c.rejected[i]);
  for (std::size_t i = 0; i < kNumChannelRejects; ++i)
    if (c.channel_rejected[i] > 0)
      reasons += fmt::format(" channel {} {}", ChannelRejectName(static_cast<ChannelReject>(i)),
                             c.channel_rejected[i]);
  log.log(c.rejected_total() + c.channel_rejected_total() > 0 ? spdlog::level::warn
                                                              : spdlog::level::info,
          "framework joint state: {} reads, {} accepted, {} empty, {} refused{}", c.reads,
          c.accepted, c.empty, c.rejected_total(), reasons.empty() ? "" : ":" + reasons);
  Json& j = summary["framework_joints"];
  j["reads"] = Json::Of(static_cast<double>(c.reads));
  j["accepted"] = Json::Of(static_cast<double>(c.accepted));
  j["empty"] = Json::Of(static_cast<double>(c.empty));
  for (std::size_t i = 1; i < kNumJointsRejects; ++i)
    j[JointsRejectName(static_cast<JointsReject>(i))] =
        Json::Of(static_cast<double>(c.rejected[i]));
  for (std::size_t i = 0; i < kNumChannelRejects; ++i)
    j[std::string("channel_") + ChannelRejectName(static_cast<ChannelReject>(i))] =
        Json::Of(static_cast<double>(c.channel_rejected[i]));
}

}  // namespace

// The run's length and the control thread's timing.
void LogTiming(const Service& s, double wall) {
  spdlog::logger& log = *s.log;
  const Backend& backend = *s.backend;
  const Schedule& schedule = *s.schedule;
  const TickStats& stats = schedule.stats();
  log.info("stopped after {:.2f} s wall{}", wall,
           backend.steps() ? fmt::format(", {:.2f} s simulated ({:.1f}× real time)", backend.time(),
                                         backend.time() / wall)
                           : "");
  log.info(
      "control tick compute: median {:.1f} µs, 99.9th percentile {:.1f} µs, worst {:.1f} µs; "
      "overruns {}",
      1e-3 * Percentile(stats.compute_ns, 0.5), 1e-3 * Percentile(stats.compute_ns, 0.999),
      1e-3 * Percentile(stats.compute_ns, 1.0), stats.overruns);
  // The line tools/heft rt-check puts beside cyclictest's (same percentiles, same units).
  if (!schedule.lockstep())
    log.info(
        "control wake-up lateness: median {:.1f} µs, 99th {:.1f} µs, 99.9th {:.1f} µs, worst "
        "{:.1f} "
        "µs over {} ticks; overruns {} (CPU latency request: {})",
        1e-3 * Percentile(stats.lateness_ns, 0.5), 1e-3 * Percentile(stats.lateness_ns, 0.99),
        1e-3 * Percentile(stats.lateness_ns, 0.999), 1e-3 * Percentile(stats.lateness_ns, 1.0),
        stats.lateness_ns.size(), stats.overruns,
        s.cpu_latency && s.cpu_latency->ok() ? fmt::format("{} µs", s.host.cpu_dma_latency_us)
                                             : std::string("none"));
  if (!schedule.lockstep()) {
    const ControlCounters& c = stats.control;
    log.log(c.late > 0 || c.stale > 0 ? spdlog::level::warn : spdlog::level::info,
            "control thread starved: {} late ticks (a {} ms period or more; longest {:.1f} ms), "
            "{} periods skipped, {} ticks without a new driver sample (update() not called)",
            c.late, s.period_ms, 1e-6 * static_cast<double>(c.longest_ns), c.skipped, c.stale);
  }
}

// The summary: drivers, backend, hand-off, outputs and framework input in the log, and beside the
// telemetry in JSON.
void Summarize(Service& s) {
  spdlog::logger& log = *s.log;
  const Telemetry& telemetry = *s.telemetry;
  const CandumpTap* tap = s.tap.get();
  Json summary = SummarizeDrivers(log, *s.loop, s.pcfg, s.buses);
  s.backend->LogSummary(log, s.pcfg.drivers.buses);
  s.backend->Summarize(summary, s.pcfg.drivers.buses);
  LogLastHandOff(s);
  if (telemetry.writing())
    log.info("telemetry: {} rows in {} ({} rotations)", telemetry.rows(), s.host.telemetry,
             telemetry.rotations());
  if (tap)
    log.log(tap->dropped() > 0 ? spdlog::level::warn : spdlog::level::info,
            "candump log of the received frames: {} frames in {} ({} left out: queue full; {} "
            "rotations)",
            tap->written(), tap->path(), tap->dropped(), tap->rotations());
  if (tap) {
    Json& t = summary["candump_tap"];
    t["path"] = Json::Of(tap->path());
    t["written"] = Json::Of(static_cast<double>(tap->written()));
    t["left_out"] = Json::Of(static_cast<double>(tap->dropped()));
    t["rotations"] = Json::Of(static_cast<double>(tap->rotations()));
  }
  if (telemetry.writing()) {
    summary["telemetry"]["rows"] = Json::Of(static_cast<double>(telemetry.rows()));
    summary["telemetry"]["holds"] = Json::Of(static_cast<double>(telemetry.holds()));
    (void)WriteSummary(log, SummaryPath(s.host.telemetry), summary);
  }
  if (s.input) {
    const FrameworkInputCounters ic = s.input->counters();
    log.info("framework input: {} reads, {} accepted, {} refused, {} commands", ic.reads,
             ic.accepted, ic.rejected_total(), ic.commands);
  }
  if (s.joints) LogFrameworkJoints(log, s.joints->counters(), summary);
}

}  // namespace heft::host

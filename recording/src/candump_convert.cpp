#include "heft/recording/candump_convert.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>

#include "heft/drivers/driver_loop.hpp"
#include "heft/hal/state_buffer.hpp"

namespace heft::recording {

RecordingInfo InfoFromDrivers(const drivers::DriverConfig& config, bool floating_base) {
  RecordingInfo info;
  for (const auto& j : config.joints) info.joints.push_back(j.joint);
  for (const auto& f : config.ft_cells) info.wrench_frames.push_back(f.frame);
  info.floating_base = floating_base;
  info.nominal_rate = 1000.0;
  return info;
}

RecordSample ToRecord(const hal::RobotStateSample& in, std::size_t nj, std::size_t nw,
                      bool floating_base) {
  RecordSample s;
  s.stamp_ns = in.stamp_ns;
  for (int k = 0; k < 3; ++k) {
    s.base[k] = in.base.position[k];
    s.base[7 + k] = in.base.linear_velocity[k];
    s.base[10 + k] = in.base.angular_velocity[k];
  }
  for (int k = 0; k < 4; ++k) s.base[3 + k] = in.base.orientation[k];
  s.has_specific_force = floating_base && in.base.has_specific_force;
  for (int k = 0; k < 3; ++k) {
    s.specific_force[k] = in.base.specific_force[k];
    s.specific_force[3 + k] = in.base.specific_force_point[k];
  }
  s.base_valid = !floating_base || (in.has_base && in.base.health.ok());
  s.q.resize(nj);
  s.v.resize(nj);
  s.tau.resize(nj);
  s.encoder_valid.resize(nj);
  s.torque_valid.resize(nj);
  for (std::size_t i = 0; i < nj; ++i) {
    const bool present = i < in.num_joints;
    const hal::JointSample& js = in.joints[i];
    s.q[i] = js.position;
    s.v[i] = js.velocity;
    s.tau[i] = js.torque;
    s.encoder_valid[i] = present && js.encoder.ok();
    s.torque_valid[i] = present && js.torque_sensor.ok();
  }
  s.wrenches.resize(nw);
  s.wrench_valid.resize(nw);
  for (std::size_t i = 0; i < nw; ++i) {
    for (int k = 0; k < 6; ++k) s.wrenches[i][k] = in.wrenches[i].wrench[k];
    s.wrench_valid[i] = i < in.num_wrenches && in.wrenches[i].health.ok();
  }
  return s;
}

RecordingInfo ConvertCandump(const drivers::DriverConfig& config,
                             const std::vector<drivers::CandumpRecord>& log, bool floating_base,
                             const std::string& source, const ConvertOptions& options,
                             const std::function<void(const RecordSample&)>& sink) {
  constexpr std::int64_t kMs = 1'000'000;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  auto fail = [&](int line, const std::string& what) {
    return RecordingError(source + ":" + std::to_string(line) + ": " + what);
  };
  // The configured buses' frames: each bus in time order (as it will be replayed), and every
  // frame's time for the gap check across buses.
  struct Stamp {
    std::int64_t ns;
    int line;
  };
  std::vector<Stamp> stamps;
  std::vector<const drivers::CandumpRecord*> previous(config.buses.size(), nullptr);
  for (const auto& r : log) {
    const auto bus = std::find(config.buses.begin(), config.buses.end(), r.bus);
    if (bus == config.buses.end()) continue;
    const drivers::CandumpRecord*& prev = previous[bus - config.buses.begin()];
    if (prev && r.stamp_ns < prev->stamp_ns) {
      const drivers::CandumpError e = drivers::FindTimeReversal({*prev, r});
      throw fail(r.line, e.reason + "; frames are replayed in the log's order, not re-sorted");
    }
    prev = &r;
    stamps.push_back({r.stamp_ns, r.line});
  }
  if (stamps.empty()) throw RecordingError(source + ": no frames on the configured buses");
  std::stable_sort(stamps.begin(), stamps.end(),
                   [](const Stamp& a, const Stamp& b) { return a.ns < b.ns; });
  for (std::size_t i = 1; i < stamps.size(); ++i) {
    // Exact: b >= a, so b - a fits in uint64 even where it would overflow int64.
    const std::uint64_t gap =
        static_cast<std::uint64_t>(stamps[i].ns) - static_cast<std::uint64_t>(stamps[i - 1].ns);
    if (gap > static_cast<std::uint64_t>(options.max_gap_ns)) {
      char text[96];
      std::snprintf(
          text, sizeof(text), "%.3f s without frames on the configured buses (limit %.3f s)",
          static_cast<double>(gap) * 1e-9, static_cast<double>(options.max_gap_ns) * 1e-9);
      throw fail(stamps[i].line,
                 std::string(text) + " since line " + std::to_string(stamps[i - 1].line) +
                     ": a damaged time stamp, or a pause (--max-gap raises the limit)");
    }
  }
  const std::int64_t first = stamps.front().ns, last = stamps.back().ns;
  if (last > kMax - 2 * kMs)
    throw fail(stamps.back().line, "time stamp too close to the int64 limit");

  std::vector<std::unique_ptr<drivers::CandumpReplay>> replays;
  std::vector<hal::CanTransport*> buses;
  for (const auto& name : config.buses) {
    replays.push_back(std::make_unique<drivers::CandumpReplay>(name, log));
    buses.push_back(replays.back().get());
  }
  auto state = std::make_unique<hal::StateBuffer>();
  drivers::DriverLoop loop(config, buses, *state);
  const RecordingInfo info = InfoFromDrivers(config, floating_base);
  const std::size_t nj = info.joints.size(), nw = info.wrench_frames.size();
  // Driver ticks on whole milliseconds after the first frame, until every frame is consumed:
  // at most (last - first) / 1 ms + 2 ticks, which the gap limit bounds by the number of frames.
  for (std::int64_t now = (first / kMs + 1) * kMs;; now += kMs) {
    for (auto& r : replays) r->AdvanceTo(now);
    loop.Tick(now);
    sink(ToRecord(loop.last_sample(), nj, nw, floating_base));
    if (now > last) break;
  }
  return info;
}

Recording ConvertCandump(const drivers::DriverConfig& config,
                         const std::vector<drivers::CandumpRecord>& log, bool floating_base,
                         const std::string& source, const ConvertOptions& options) {
  Recording rec;
  rec.source = source;
  rec.info = ConvertCandump(config, log, floating_base, source, options,
                            [&](const RecordSample& s) { rec.samples.push_back(s); });
  return rec;
}

}  // namespace heft::recording

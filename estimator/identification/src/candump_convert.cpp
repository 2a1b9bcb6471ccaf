#include "heft/identification/candump_convert.hpp"

#include <algorithm>
#include <memory>

#include "heft/drivers/driver_loop.hpp"
#include "heft/hal/state_buffer.hpp"

namespace heft::ident {

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

Recording ConvertCandump(const drivers::DriverConfig& config,
                         const std::vector<drivers::CandumpRecord>& log, bool floating_base,
                         const std::string& source) {
  std::int64_t first = 0, last = 0;
  bool any = false;
  for (const auto& r : log) {
    if (std::find(config.buses.begin(), config.buses.end(), r.bus) == config.buses.end()) continue;
    first = any ? std::min(first, r.frame.stamp_ns) : r.frame.stamp_ns;
    last = any ? std::max(last, r.frame.stamp_ns) : r.frame.stamp_ns;
    any = true;
  }
  if (!any) throw RecordingError(source + ": no frames on the configured buses");
  std::vector<std::unique_ptr<drivers::CandumpReplay>> replays;
  std::vector<hal::CanTransport*> buses;
  for (const auto& name : config.buses) {
    replays.push_back(std::make_unique<drivers::CandumpReplay>(name, log));
    buses.push_back(replays.back().get());
  }
  auto state = std::make_unique<hal::StateBuffer>();
  drivers::DriverLoop loop(config, buses, *state);
  Recording rec;
  rec.source = source;
  rec.info = InfoFromDrivers(config, floating_base);
  const std::size_t nj = rec.info.joints.size(), nw = rec.info.wrench_frames.size();
  // Driver ticks on whole milliseconds after the first frame, until every frame is consumed.
  const std::int64_t start = (first / 1'000'000 + 1) * 1'000'000;
  for (std::int64_t now = start; now <= last + 1'000'000; now += 1'000'000) {
    for (auto& r : replays) r->AdvanceTo(now);
    loop.Tick(now);
    rec.samples.push_back(ToRecord(loop.last_sample(), nj, nw, floating_base));
  }
  return rec;
}

}  // namespace heft::ident

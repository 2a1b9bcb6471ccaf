#include "heft/drivers/driver_loop.hpp"

#include <cmath>
#include <stdexcept>

#include "heft/drivers/error_frames.hpp"

namespace heft::drivers {

DriverLoop::DriverLoop(const DriverConfig& config, std::span<hal::CanTransport* const> buses,
                       hal::StateBuffer& out)
    : config_(config), buses_(buses.begin(), buses.end()), out_(out) {
  if (buses_.size() != config.buses.size())
    throw std::invalid_argument("driver loop: " + std::to_string(config.buses.size()) +
                                " buses configured, " + std::to_string(buses_.size()) +
                                " transports given");
  if (config.joints.size() > hal::kMaxJoints || config.ft_cells.size() > hal::kMaxWrenchSensors)
    throw std::invalid_argument("driver loop: too many joints or F/T cells for a state sample");
  ids_.resize(buses_.size());
  auto claim = [&](int bus, std::uint32_t id, Kind kind, std::size_t index) {
    if (bus < 0 || bus >= static_cast<int>(buses_.size()))
      throw std::invalid_argument("driver loop: a device on bus " + std::to_string(bus) + " of " +
                                  std::to_string(buses_.size()));
    if (id >= 2048) throw std::invalid_argument("driver loop: identifier beyond 11 bits");
    Slot& s = ids_[bus][id];
    if (s.kind != Kind::kNone)
      throw std::invalid_argument("driver loop: identifier clash on bus " + config.buses[bus]);
    s = Slot{kind, static_cast<std::uint16_t>(index)};
  };
  mit_motors_.resize(buses_.size());
  for (std::size_t i = 0; i < config.joints.size() && !config.joints_from_framework; ++i) {
    const JointDevice& j = config.joints[i];
    if (j.protocol == JointProtocol::kHeft) {
      claim(j.bus, j.encoder.id(), Kind::kEncoder, i);
      claim(j.bus, j.torque.id(), Kind::kTorque, i);
    } else {
      if (j.bus < 0 || j.bus >= static_cast<int>(buses_.size()))
        throw std::invalid_argument("driver loop: a device on bus " + std::to_string(j.bus) +
                                    " of " + std::to_string(buses_.size()));
      ClaimJoint(i);
    }
  }
  for (std::size_t i = 0; i < config.ft_cells.size() && !config.ft_cells_from_framework; ++i) {
    claim(config.ft_cells[i].bus, config.ft_cells[i].ft.base_id, Kind::kFtA, i);
    claim(config.ft_cells[i].bus, config.ft_cells[i].ft.base_id + 1, Kind::kFtB, i);
  }
  if (config.imu) {
    const std::uint32_t id = config.imu->imu.base_id;
    for (std::uint32_t k = 0; k < 3; ++k) claim(config.imu->bus, id + k, Kind::kImu, 0);
    q_BI_ = Eigen::Quaterniond(config.imu->R_BI).normalized();
    sample_.has_base = true;
    for (int k = 0; k < 3; ++k) sample_.base.specific_force_point[k] = config.imu->p_BI[k];
    sample_.base.has_specific_force = true;
  }
  drives_.resize(config.joints.size());
  status_fault_.resize(config.joints.size());
  encoders_.resize(config.joints.size());
  torques_.resize(config.joints.size());
  torque_tracks_.resize(config.joints.size());
  error_windows_.resize(buses_.size());
  cells_.resize(config.ft_cells.size());
  assemblers_.resize(config.ft_cells.size());
  bus_counters_.resize(buses_.size());
  restart_ = std::make_unique<std::atomic<bool>[]>(buses_.size());
  sample_.num_joints = static_cast<std::uint16_t>(config.joints.size());
  sample_.num_wrenches = static_cast<std::uint16_t>(config.ft_cells.size());
}

void DriverLoop::CountError(int bus, std::uint32_t classes) noexcept {
  BusCounters& c = bus_counters_[bus];
  ++c.error_frames;
  ++error_windows_[bus].errors;
  if (classes & kErrBusOff) {
    ++c.bus_off;
    if (!restart_[bus].exchange(true, std::memory_order_acq_rel)) ++c.restart_requests;
  }
  if (classes & kErrController) ++c.controller_errors;
  if (classes & (kErrProtocol | kErrBusError)) ++c.protocol_errors;
  if (classes & kErrAck) ++c.ack_errors;
  if (!(classes & (kErrBusOff | kErrController | kErrProtocol | kErrBusError | kErrAck)))
    ++c.other_errors;
}

void DriverLoop::Gap(Channel& ch, std::uint8_t counter, std::int64_t now_ns,
                     hal::ChannelHealth& health) noexcept {
  if (ch.last_counter >= 0) {
    const auto step =
        static_cast<std::uint8_t>(counter - static_cast<std::uint8_t>(ch.last_counter));
    std::uint64_t lost = step > 1 ? step - 1u : 0u;  // step 0 is a repeat, not a loss
    // The 8-bit counter wraps every 256 samples: after a longer silence (a bus off for a while)
    // the time since the device's last sample at its nominal 1 ms period says how many turns.
    const std::int64_t periods = (now_ns - ch.last_seen_ns + 500'000) / 1'000'000;
    if (periods > 256) {
      lost = static_cast<std::uint8_t>(step - 1u);
      const std::int64_t turns =
          (periods - 1 - static_cast<std::int64_t>(lost) + 128) / 256;  // nearest
      if (turns > 0) lost += 256u * static_cast<std::uint64_t>(turns);
    }
    counters_.lost_samples += lost;
    health.lost_samples += static_cast<std::uint32_t>(lost);
  }
  ch.last_counter = counter;
  ch.last_seen_ns = now_ns;
}

void DriverLoop::Dropped(Channel& ch, std::uint8_t counter, std::int64_t now_ns,
                         hal::ChannelHealth& health) noexcept {
  Gap(ch, counter, now_ns, health);
  ++counters_.lost_samples;
  ++health.lost_samples;
}

bool DriverLoop::TorqueStuck(std::size_t j, std::int32_t raw, std::int64_t now_ns) noexcept {
  TorqueTrack& t = torque_tracks_[j];
  // Only samples with the joint moving count: a still joint may well hold a constant torque.
  const hal::JointSample& js = sample_.joints[j];
  const bool moving =
      js.encoder.ok() && std::abs(js.velocity) > config_.plausibility.torque_stuck_velocity;
  const bool changed = t.last_ns < 0 || raw != t.last_raw;
  // How often the value changes while moving (exponential average over ~256 samples): a sensor
  // with noise changes nearly every sample; a noise-free one (an ideal simulated sensor on a slow
  // joint) rarely, and is not checked: an unchanged value says nothing there.
  if (moving) t.change_rate += ((changed ? 1.0 : 0.0) - t.change_rate) * (1.0 / 256.0);
  if (changed) {
    t.last_raw = raw;
    t.last_ns = now_ns;
    t.unchanged_moving_ns = 0;
    t.stuck = false;
    return false;
  }
  if (moving) t.unchanged_moving_ns += now_ns - t.last_ns;
  t.last_ns = now_ns;
  const auto limit_ns = static_cast<std::int64_t>(config_.plausibility.torque_stuck_time * 1e9);
  if (!t.stuck && t.unchanged_moving_ns >= limit_ns && t.change_rate > 0.5) {
    t.stuck = true;
    ++counters_.torque_stuck_events;
  }
  return t.stuck;
}

void DriverLoop::ErrorRate(int b, std::int64_t now_ns) noexcept {
  // Called before the bus is drained: w.errors holds the error frames of the ticks since
  // w.start_ns, this one's not yet.
  ErrorWindow& w = error_windows_[b];
  BusCounters& c = bus_counters_[b];
  if (w.start_ns < 0) w.start_ns = now_ns;
  const bool over = w.errors > config_.plausibility.error_frame_limit;
  if (over && !c.degraded) ++c.degraded_events;  // at once, not at the window's end
  const auto window_ns = static_cast<std::int64_t>(config_.plausibility.error_frame_window * 1e9);
  if (now_ns - w.start_ns >= window_ns) {
    c.degraded = over;
    w.start_ns = now_ns;
    w.errors = 0;
  } else if (over) {
    c.degraded = true;
  }
}

void DriverLoop::StoreImu(const ImuReading& r) noexcept {
  const ImuDevice& imu = *config_.imu;
  hal::BaseSample& b = sample_.base;
  // R_WB = R_WI R_IB; ω and f rotate from I into B; f is measured at the IMU's origin p_BI.
  const Eigen::Quaterniond q_WB = (r.attitude * q_BI_.conjugate()).normalized();
  b.orientation = {q_WB.w(), q_WB.x(), q_WB.y(), q_WB.z()};
  const Eigen::Vector3d w_B = imu.R_BI * r.angular_velocity;
  const Eigen::Vector3d f_B = imu.R_BI * r.specific_force;
  for (int k = 0; k < 3; ++k) {
    b.angular_velocity[k] = w_B[k];
    b.specific_force[k] = f_B[k];
    b.specific_force_point[k] = imu.p_BI[k];
  }
  b.has_specific_force = true;
  b.has_linear_velocity = false;
}

void DriverLoop::Handle(int bus, const hal::CanFrame& f, std::int64_t tick_ns) noexcept {
  // The frame's time: its receive stamp when the transport gives one on the loop's clock, so that a
  // sample's age counts from its arrival, not from the tick that drained it; never later than this
  // tick (a stamp ahead of it is not on the loop's clock). Else the tick itself.
  const std::int64_t now_ns =
      (f.flags & hal::CanFrame::kRxStamp) != 0 && f.stamp_ns <= tick_ns ? f.stamp_ns : tick_ns;
  auto reject = [&](Reject r, hal::ChannelHealth* health) {
    ++counters_.rejected[static_cast<std::size_t>(r)];
    if (health) ++health->rejected_frames;
  };
  if (f.is_error()) {
    CountError(bus, f.id);
    return;
  }
  ++bus_counters_[bus].frames;
  bus_counters_[bus].last_frame_ns = now_ns;
  if (f.is_extended()) return reject(Reject::kExtended, nullptr);
  if (f.id >= 2048 || ids_[bus][f.id].kind == Kind::kNone)
    return reject(Reject::kUnknownId, nullptr);
  const Slot slot = ids_[bus][f.id];
  switch (slot.kind) {
    case Kind::kEncoder: {
      hal::JointSample& js = sample_.joints[slot.index];
      EncoderReading r;
      const Reject why = DecodeEncoder(f, config_.joints[slot.index].encoder, r);
      if (why != Reject::kNone) return reject(why, &js.encoder);
      return Accept(encoders_[slot.index], js.encoder, r.counter, r.status, r.usable, now_ns, [&] {
        js.position = r.position;
        js.velocity = r.velocity;
      });
    }
    case Kind::kTorque: {
      hal::JointSample& js = sample_.joints[slot.index];
      TorqueReading r;
      const Reject why = DecodeTorque(f, config_.joints[slot.index].torque, r);
      if (why != Reject::kNone) return reject(why, &js.torque_sensor);
      const bool stuck = TorqueStuck(slot.index, r.raw, now_ns);
      return Accept(torques_[slot.index], js.torque_sensor, r.counter, r.status, r.usable && !stuck,
                    now_ns, [&] { js.torque = r.torque; });
    }
    case Kind::kFtA:
    case Kind::kFtB: {
      hal::WrenchSample& ws = sample_.wrenches[slot.index];
      FtReading r;
      Reject why = Reject::kNone;
      // An abandoned frame A (its frame B never came) is a lost sample, counted when the next
      // frame A reveals it; the next complete sample's counter then continues from it.
      bool dropped = false;
      FtAssembler& assembler = assemblers_[slot.index];
      const auto result = assembler.Feed(f, config_.ft_cells[slot.index].ft, r, why, dropped);
      if (dropped) Dropped(cells_[slot.index], assembler.dropped_counter(), now_ns, ws.health);
      if (result == FtAssembler::Result::kRejected) return reject(why, &ws.health);
      if (result != FtAssembler::Result::kComplete) return;
      if (r.saturated) ++counters_.ft_saturated_samples;
      return Accept(cells_[slot.index], ws.health, r.counter, r.status, r.usable, now_ns, [&] {
        for (int i = 0; i < 6; ++i) ws.wrench[i] = r.wrench[i];
      });
    }
    case Kind::kImu: {
      hal::ChannelHealth& health = sample_.base.health;
      ImuReading r;
      Reject why = Reject::kNone;
      bool dropped = false;
      const auto result = imu_assembler_.Feed(f, config_.imu->imu, r, why, dropped);
      if (dropped) Dropped(imu_, imu_assembler_.dropped_counter(), now_ns, health);
      if (result == ImuAssembler::Result::kRejected) return reject(why, &health);
      if (result != ImuAssembler::Result::kComplete) return;
      return Accept(imu_, health, r.counter, r.status, r.usable, now_ns, [&] { StoreImu(r); });
    }
    case Kind::kMit:
    case Kind::kTpdo:
    case Kind::kHeartbeat:
    case Kind::kEmcy:
      return HandleStandard(bus, slot, f, now_ns);
    case Kind::kNone:
      return;
  }
}

void DriverLoop::Age(Channel& ch, double timeout, std::int64_t now_ns,
                     hal::ChannelHealth& health) noexcept {
  const auto timeout_ns = static_cast<std::int64_t>(timeout * 1e9);
  if (ch.last_usable_ns < 0) {
    health.state = ch.fault ? hal::ChannelState::kFault : hal::ChannelState::kNeverSeen;
    health.age_us = 0;
  } else {
    const std::int64_t age = now_ns - ch.last_usable_ns;
    health.age_us = static_cast<std::uint32_t>(std::min<std::int64_t>(age / 1000, 0xFFFFFFFF));
    if (ch.fault)
      health.state = hal::ChannelState::kFault;
    else if (age > timeout_ns)
      health.state = hal::ChannelState::kStale;
    else
      health.state = hal::ChannelState::kOk;
  }
  if (ch.last_state == hal::ChannelState::kOk && health.state == hal::ChannelState::kStale)
    ++counters_.stale_events;
  if (ch.last_state != hal::ChannelState::kFault && health.state == hal::ChannelState::kFault)
    ++counters_.fault_events;
  ch.last_state = health.state;
}

void DriverLoop::Tick(std::int64_t now_ns, const hal::BaseSample* base,
                      const hal::RobotStateSample* framework) noexcept {
  for (int b = 0; b < static_cast<int>(buses_.size()); ++b) {
    ErrorRate(b, now_ns);
    hal::CanFrame frame;
    for (int n = 0; n < kMaxFramesPerTick; ++n) {
      const hal::IoStatus s = buses_[b]->receive(frame);
      if (s == hal::IoStatus::kOk) {
        Handle(b, frame, now_ns);
        continue;
      }
      if (s == hal::IoStatus::kDown || s == hal::IoStatus::kError) {
        ++bus_counters_[b].down_ticks;
        if (!restart_[b].exchange(true, std::memory_order_acq_rel))
          ++bus_counters_[b].restart_requests;
      }
      break;
    }
  }
  if (config_.joints_from_framework) {
    FromFramework(framework, sample_.joints, encoders_.size());
  } else {
    CheckHeartbeats(now_ns);
    for (std::size_t i = 0; i < encoders_.size(); ++i) {
      Age(encoders_[i], config_.joints[i].timeout, now_ns, sample_.joints[i].encoder);
      Age(torques_[i], config_.joints[i].timeout, now_ns, sample_.joints[i].torque_sensor);
    }
  }
  if (config_.ft_cells_from_framework) {
    FromFramework(framework, sample_.wrenches, cells_.size());
  } else {
    for (std::size_t i = 0; i < cells_.size(); ++i)
      Age(cells_[i], config_.ft_cells[i].timeout, now_ns, sample_.wrenches[i].health);
  }
  if (config_.imu) {
    Age(imu_, config_.imu->timeout, now_ns, sample_.base.health);  // `base` is ignored
  } else {
    sample_.has_base = base != nullptr;
    if (base) sample_.base = *base;
  }
  sample_.stamp_ns = now_ns;
  sample_.sequence = ++counters_.published;
  out_.publish(sample_);
}

bool DriverLoop::Silent(int bus, std::int64_t now_ns, std::int64_t silence_ns) const {
  const std::int64_t last = bus_counters_[bus].last_frame_ns;
  return last < 0 || now_ns - last > silence_ns;
}

bool DriverLoop::TakeRestartRequest(int bus) noexcept {
  return restart_[bus].exchange(false, std::memory_order_acq_rel);
}

int BusSupervisor::Poll() noexcept {
  int done = 0;
  for (int b = 0; b < static_cast<int>(buses_.size()); ++b) {
    if (!loop_.TakeRestartRequest(b)) continue;
    if (buses_[b]->restart()) {
      ++restarts_;
      ++done;
    } else {
      ++failed_;
    }
  }
  return done;
}

}  // namespace heft::drivers

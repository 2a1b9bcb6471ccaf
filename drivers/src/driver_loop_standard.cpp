// The driver loop's standard actuators (drivers/README.md, "Standard actuators"): MIT-mode
// replies and CiA 402 drives, read passively. Each reply or TPDO is a sample of the joint's
// channels without a rolling counter (no gap count); a CiA 402 drive's heartbeat in another NMT
// state than operational or missing beyond the consumer heartbeat time, an EMCY error or a
// statusword with its fault bit puts both of the joint's channels in fault until it clears.
// Real-time path: no allocation, lock, throw or log.
#include <cmath>
#include <stdexcept>

#include "heft/drivers/driver_loop.hpp"

namespace heft::drivers {

void DriverLoop::ClaimJoint(std::size_t i) {
  const JointDevice& j = config_.joints[i];
  std::array<Slot, 2048>& ids = ids_[j.bus];
  auto claim = [&](std::uint32_t id, Slot s) {
    if (id >= 2048) throw std::invalid_argument("driver loop: identifier beyond 11 bits");
    Slot& cur = ids[id];
    const bool shared_mit = cur.kind == Kind::kMit && s.kind == Kind::kMit;
    if (cur.kind != Kind::kNone && !shared_mit)
      throw std::invalid_argument("driver loop: identifier clash on bus " + config_.buses[j.bus]);
    cur = s;
  };
  const auto index = static_cast<std::uint16_t>(i);
  if (j.protocol == JointProtocol::kMit) {
    claim(j.mit.reply_id, Slot{Kind::kMit, 0, 0});
    std::vector<std::uint16_t>& motors = mit_motors_[j.bus];
    motors.resize(256, 0);
    if (motors[j.mit.motor_id] != 0)
      throw std::invalid_argument("driver loop: MIT motor id " + std::to_string(j.mit.motor_id) +
                                  " twice on bus " + config_.buses[j.bus]);
    motors[j.mit.motor_id] = static_cast<std::uint16_t>(index + 1);
    return;
  }
  const Cia402Config& c = j.cia402;
  for (int t = 0; t < c.num_tpdos; ++t)
    claim(c.tpdos[t].cob_id, Slot{Kind::kTpdo, index, static_cast<std::uint8_t>(t)});
  claim(c.heartbeat_id(), Slot{Kind::kHeartbeat, index, 0});
  claim(c.emcy_id(), Slot{Kind::kEmcy, index, 0});
}

void DriverLoop::HandleStandard(int bus, Slot slot, const hal::CanFrame& f,
                                std::int64_t now_ns) noexcept {
  auto reject = [&](Reject r, std::size_t joint) {
    ++counters_.rejected[static_cast<std::size_t>(r)];
    ++sample_.joints[joint].encoder.rejected_frames;
  };
  switch (slot.kind) {
    case Kind::kMit:
      return HandleMit(bus, f, now_ns);
    case Kind::kTpdo:
      return HandleTpdo(slot, f, now_ns);
    case Kind::kHeartbeat: {
      NmtState state = NmtState::kOperational;
      if (const Reject why = DecodeHeartbeat(f, state); why != Reject::kNone)
        return reject(why, slot.index);
      DriveState& d = drives_[slot.index];
      const bool operational = state == NmtState::kOperational;
      if (!operational && !d.not_operational) ++counters_.heartbeat_faults;
      d.not_operational = !operational;
      d.last_heartbeat_ns = now_ns;
      d.heartbeat_lost = false;
      return DriveFault(slot.index, d.fault());
    }
    case Kind::kEmcy: {
      std::uint16_t code = 0;
      std::uint8_t error_register = 0;
      if (const Reject why = DecodeEmcy(f, code, error_register); why != Reject::kNone)
        return reject(why, slot.index);
      DriveState& d = drives_[slot.index];
      if (code != 0) ++counters_.emcy_errors;
      d.emcy = code != 0;
      return DriveFault(slot.index, d.fault());
    }
    default:
      return;
  }
}

void DriverLoop::HandleMit(int bus, const hal::CanFrame& f, std::int64_t now_ns) noexcept {
  const int motor = MitMotorId(f);
  const std::vector<std::uint16_t>& motors = mit_motors_[bus];
  if (motor < 0 || motors.empty() || motors[motor] == 0) {
    // A remote or empty frame, or another controller's actuator on the shared identifier.
    const Reject why = f.is_remote() ? Reject::kRemote
                       : f.len < 1   ? Reject::kWrongLength
                                     : Reject::kUnknownId;
    ++counters_.rejected[static_cast<std::size_t>(why)];
    return;
  }
  const std::size_t j = motors[motor] - 1u;
  hal::JointSample& js = sample_.joints[j];
  MitReading r;
  if (const Reject why = DecodeMitReply(f, config_.joints[j].mit, r); why != Reject::kNone) {
    ++counters_.rejected[static_cast<std::size_t>(why)];
    ++js.encoder.rejected_frames;
    ++js.torque_sensor.rejected_frames;
    return;
  }
  AcceptUncounted(encoders_[j], js.encoder, 0, true, now_ns, [&] {
    js.position = r.position;
    js.velocity = r.velocity;
  });
  const bool stuck = TorqueStuck(j, r.t_int, now_ns);
  AcceptUncounted(torques_[j], js.torque_sensor, 0, !stuck, now_ns, [&] { js.torque = r.torque; });
}

void DriverLoop::HandleTpdo(Slot slot, const hal::CanFrame& f, std::int64_t now_ns) noexcept {
  const std::size_t j = slot.index;
  const Cia402Config& cfg = config_.joints[j].cia402;
  hal::JointSample& js = sample_.joints[j];
  Cia402Reading r;
  if (const Reject why = DecodeCia402Tpdo(f, cfg.tpdos[slot.sub], cfg, r); why != Reject::kNone) {
    ++counters_.rejected[static_cast<std::size_t>(why)];
    ++js.encoder.rejected_frames;
    ++js.torque_sensor.rejected_frames;
    return;
  }
  DriveState& d = drives_[j];
  // The statusword is the channels' status bits; its fault bit holds until a statusword without
  // it.
  if (r.has_statusword) {
    const bool fault = (r.statusword & CiaStatusword::kFault) != 0;
    js.encoder.status_bits = js.torque_sensor.status_bits = r.statusword;
    status_fault_[j] = fault;
    if (!r.has_position && !r.has_torque) {
      encoders_[j].fault = torques_[j].fault = fault || d.fault();
      if (fault) ++counters_.fault_samples;
    }
  }
  const bool usable = !status_fault_[j] && !d.fault();
  const std::uint16_t status = js.encoder.status_bits;
  if (r.has_position || r.has_velocity)
    AcceptUncounted(encoders_[j], js.encoder, status, usable, now_ns, [&] {
      if (r.has_position) js.position = r.position;
      if (r.has_velocity) js.velocity = r.velocity;
    });
  if (r.has_torque) {
    const bool stuck = usable && TorqueStuck(j, r.torque_raw, now_ns);
    AcceptUncounted(torques_[j], js.torque_sensor, status, usable && !stuck, now_ns,
                    [&] { js.torque = r.torque; });
  }
}

void DriverLoop::CheckHeartbeats(std::int64_t now_ns) noexcept {
  for (std::size_t j = 0; j < drives_.size(); ++j) {
    DriveState& d = drives_[j];
    const std::int64_t timeout = config_.joints[j].cia402.heartbeat_timeout_ns;
    if (config_.joints[j].protocol != JointProtocol::kCia402 || timeout <= 0 ||
        d.last_heartbeat_ns < 0 || d.heartbeat_lost || now_ns - d.last_heartbeat_ns <= timeout)
      continue;
    d.heartbeat_lost = true;
    ++counters_.heartbeat_timeouts;
    DriveFault(j, true);
  }
}

void DriverLoop::DriveFault(std::size_t j, bool fault) noexcept {
  // In fault at once (Age reports it this tick); out of it with the next usable sample.
  if (fault) encoders_[j].fault = torques_[j].fault = true;
}

}  // namespace heft::drivers

#include "heft/drivers/canopen_codec.hpp"

#include <cmath>
#include <limits>
#include <numbers>

namespace heft::drivers {
namespace {

double VelocityLsb(const Cia402Config& cfg) noexcept {
  return cfg.velocity_lsb > 0.0 ? cfg.velocity_lsb : 2.0 * std::numbers::pi / cfg.counts_per_rev;
}

// N·m at the joint per per-mille unit of 0x6077 (or of 0x6078 through the current).
double TorquePerMille(const Cia402Config& cfg) noexcept {
  return cfg.current.enabled ? cfg.current.Torque(cfg.rated_current * 1e-3)
                             : cfg.rated_torque * 1e-3 * cfg.gear_ratio;
}

std::uint32_t LeRead(const std::uint8_t* p, int bytes) noexcept {
  std::uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void LeWrite(std::uint8_t* p, std::uint32_t v, int bytes) noexcept {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

template <typename T>
T Clamp(double x) {
  const double lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  if (!(x >= lo)) return std::numeric_limits<T>::min();
  if (x > hi) return std::numeric_limits<T>::max();
  return static_cast<T>(std::llround(x));
}

bool DataFrame(const hal::CanFrame& f, Reject& why) noexcept {
  if (f.is_remote())
    why = Reject::kRemote;
  else if (f.is_extended())
    why = Reject::kExtended;
  else
    return true;
  return false;
}

}  // namespace

int Cia402ObjectBytes(Cia402Object o) noexcept {
  switch (o) {
    case Cia402Object::kUnused8:
      return 1;
    case Cia402Object::kStatusword:
    case Cia402Object::kTorque:
    case Cia402Object::kCurrent:
    case Cia402Object::kUnused16:
      return 2;
    case Cia402Object::kPosition:
    case Cia402Object::kVelocity:
    case Cia402Object::kUnused32:
      return 4;
  }
  return 0;
}

int Cia402Tpdo::Bytes() const noexcept {
  int n = 0;
  for (int i = 0; i < count; ++i) n += Cia402ObjectBytes(map[i]);
  return n;
}

Reject DecodeCia402Tpdo(const hal::CanFrame& f, const Cia402Tpdo& tpdo, const Cia402Config& cfg,
                        Cia402Reading& out) noexcept {
  Reject why = Reject::kNone;
  if (!DataFrame(f, why)) return why;
  if (f.len != tpdo.Bytes()) return Reject::kWrongLength;
  out = Cia402Reading{};
  const std::uint8_t* p = f.data.data();
  for (int i = 0; i < tpdo.count; ++i) {
    const Cia402Object o = tpdo.map[i];
    const int n = Cia402ObjectBytes(o);
    const std::uint32_t v = LeRead(p, n);
    p += n;
    switch (o) {
      case Cia402Object::kStatusword:
        out.has_statusword = true;
        out.statusword = static_cast<std::uint16_t>(v);
        break;
      case Cia402Object::kPosition:
        out.has_position = true;
        out.position_raw = static_cast<std::int32_t>(v);
        out.position =
            cfg.direction *
            static_cast<double>(static_cast<std::int64_t>(out.position_raw) - cfg.zero_offset) *
            2.0 * std::numbers::pi / cfg.counts_per_rev / cfg.gear_ratio;
        break;
      case Cia402Object::kVelocity:
        out.has_velocity = true;
        out.velocity_raw = static_cast<std::int32_t>(v);
        out.velocity = cfg.direction * static_cast<double>(out.velocity_raw) * VelocityLsb(cfg) /
                       cfg.gear_ratio;
        break;
      case Cia402Object::kTorque:
      case Cia402Object::kCurrent:
        // The one the configuration reads (torque, or current when converted); the other is
        // mapped but not used.
        if ((o == Cia402Object::kCurrent) != cfg.current.enabled) break;
        out.has_torque = true;
        out.torque_raw = static_cast<std::int16_t>(static_cast<std::uint16_t>(v));
        out.torque = cfg.direction * static_cast<double>(out.torque_raw) * TorquePerMille(cfg);
        break;
      case Cia402Object::kUnused8:
      case Cia402Object::kUnused16:
      case Cia402Object::kUnused32:
        break;
    }
  }
  return Reject::kNone;
}

Reject DecodeHeartbeat(const hal::CanFrame& f, NmtState& state) noexcept {
  Reject why = Reject::kNone;
  if (!DataFrame(f, why)) return why;
  if (f.len != 1) return Reject::kWrongLength;
  const std::uint8_t s = f.data[0];
  if (s != 0x00 && s != 0x04 && s != 0x05 && s != 0x7F) return Reject::kBadNmtState;
  state = static_cast<NmtState>(s);
  return Reject::kNone;
}

Reject DecodeEmcy(const hal::CanFrame& f, std::uint16_t& code,
                  std::uint8_t& error_register) noexcept {
  Reject why = Reject::kNone;
  if (!DataFrame(f, why)) return why;
  if (f.len != 8) return Reject::kWrongLength;
  code = static_cast<std::uint16_t>(LeRead(f.data.data(), 2));
  error_register = f.data[2];
  return Reject::kNone;
}

hal::CanFrame EncodeCia402Tpdo(const Cia402Tpdo& tpdo, const Cia402Config& cfg,
                               std::uint16_t statusword, double position, double velocity,
                               double torque) noexcept {
  hal::CanFrame f;
  f.id = tpdo.cob_id;
  f.len = static_cast<std::uint8_t>(tpdo.Bytes());
  std::uint8_t* p = f.data.data();
  for (int i = 0; i < tpdo.count; ++i) {
    const Cia402Object o = tpdo.map[i];
    const int n = Cia402ObjectBytes(o);
    std::uint32_t v = 0;
    switch (o) {
      case Cia402Object::kStatusword:
        v = statusword;
        break;
      case Cia402Object::kPosition:
        v = static_cast<std::uint32_t>(
            Clamp<std::int32_t>(cfg.direction * position * cfg.gear_ratio * cfg.counts_per_rev /
                                    (2.0 * std::numbers::pi) +
                                static_cast<double>(cfg.zero_offset)));
        break;
      case Cia402Object::kVelocity:
        v = static_cast<std::uint32_t>(
            Clamp<std::int32_t>(cfg.direction * velocity * cfg.gear_ratio / VelocityLsb(cfg)));
        break;
      case Cia402Object::kTorque:
      case Cia402Object::kCurrent:
        v = static_cast<std::uint16_t>(
            Clamp<std::int16_t>(cfg.direction * torque / TorquePerMille(cfg)));
        break;
      case Cia402Object::kUnused8:
      case Cia402Object::kUnused16:
      case Cia402Object::kUnused32:
        break;
    }
    LeWrite(p, v, n);
    p += n;
  }
  return f;
}

hal::CanFrame EncodeHeartbeat(const Cia402Config& cfg, NmtState state) noexcept {
  hal::CanFrame f;
  f.id = cfg.heartbeat_id();
  f.len = 1;
  f.data[0] = static_cast<std::uint8_t>(state);
  return f;
}

hal::CanFrame EncodeEmcy(const Cia402Config& cfg, std::uint16_t code,
                         std::uint8_t error_register) noexcept {
  hal::CanFrame f;
  f.id = cfg.emcy_id();
  f.len = 8;
  LeWrite(f.data.data(), code, 2);
  f.data[2] = error_register;
  return f;
}

}  // namespace heft::drivers

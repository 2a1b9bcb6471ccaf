#include "heft/drivers/mit_codec.hpp"

#include <cmath>

namespace heft::drivers {

double MitUintToFloat(std::uint32_t x, double max, int bits) noexcept {
  const double codes = static_cast<double>((1u << bits) - 1u);
  return static_cast<double>(x) * (2.0 * max) / codes - max;
}

std::uint32_t MitFloatToUint(double x, double max, int bits) noexcept {
  const std::uint32_t top = (1u << bits) - 1u;
  const double code = (x + max) * static_cast<double>(top) / (2.0 * max);
  if (!(code >= 0.0)) return 0;  // NaN too
  if (code >= static_cast<double>(top)) return top;
  return static_cast<std::uint32_t>(code);  // truncated, as the firmware's (int) cast
}

int MitMotorId(const hal::CanFrame& f) noexcept {
  if (f.is_error() || f.is_remote() || f.len < 1) return -1;
  return f.data[0];
}

Reject DecodeMitReply(const hal::CanFrame& f, const MitConfig& cfg, MitReading& out) noexcept {
  if (f.is_remote()) return Reject::kRemote;
  if (f.is_extended()) return Reject::kExtended;
  if (f.len < 6 || f.len > 8) return Reject::kWrongLength;
  const std::uint8_t* d = f.data.data();
  if (d[0] != cfg.motor_id) return Reject::kUnknownId;
  out.motor_id = d[0];
  out.p_int = static_cast<std::uint16_t>((d[1] << 8) | d[2]);
  out.v_int = static_cast<std::uint16_t>((d[3] << 4) | (d[4] >> 4));
  out.t_int = static_cast<std::uint16_t>(((d[4] & 0x0F) << 8) | d[5]);
  const double p = MitUintToFloat(out.p_int, cfg.p_max, 16);
  const double v = MitUintToFloat(out.v_int, cfg.v_max, 12);
  const double t = MitUintToFloat(out.t_int, cfg.t_max, 12);
  out.position = cfg.direction * (p - cfg.zero_offset);
  out.velocity = cfg.direction * v;
  out.torque = cfg.direction * (cfg.current.enabled ? cfg.current.Torque(t) : t);
  return Reject::kNone;
}

hal::CanFrame EncodeMitReply(const MitConfig& cfg, double position, double velocity,
                             double torque) noexcept {
  const double p = cfg.direction * position + cfg.zero_offset;
  const double v = cfg.direction * velocity;
  double t = cfg.direction * torque;
  if (cfg.current.enabled) t /= cfg.current.torque_constant * cfg.current.gear_ratio;
  const std::uint32_t p_int = MitFloatToUint(p, cfg.p_max, 16);
  const std::uint32_t v_int = MitFloatToUint(v, cfg.v_max, 12);
  const std::uint32_t t_int = MitFloatToUint(t, cfg.t_max, 12);
  hal::CanFrame f;
  f.id = cfg.reply_id;
  f.len = 6;
  f.data[0] = cfg.motor_id;
  f.data[1] = static_cast<std::uint8_t>(p_int >> 8);
  f.data[2] = static_cast<std::uint8_t>(p_int & 0xFF);
  f.data[3] = static_cast<std::uint8_t>(v_int >> 4);
  f.data[4] = static_cast<std::uint8_t>(((v_int & 0x0F) << 4) | (t_int >> 8));
  f.data[5] = static_cast<std::uint8_t>(t_int & 0xFF);
  return f;
}

}  // namespace heft::drivers

// The MIT-mode reply decoder (drivers/include/heft/drivers/mit_codec.hpp) on fuzzed frames with a
// fuzzed configuration inside the parser's ranges (drivers/src/standard_actuator_config.cpp).
// Checks beyond "no crash, no UB": an accepted reply has 6 to 8 bytes and the configured motor id,
// every decoded value is finite and within its range (scaled by direction, offset and the current's
// conversion), and re-encoding the decoded values gives the same 12-bit and 16-bit codes.
//
// Input: an 18-byte configuration (motor id, p_max, v_max, t_max as u16 ·0.01 + 0.01, direction,
// zero offset, current flag, Kt, gear), then frames of 12 bytes: flags, length, 8 data bytes,
// identifier (u16).
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "fuzz_bytes.hpp"
#include "heft/drivers/mit_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace heft::drivers;
  heft::fuzz::Bytes in(data, size);
  MitConfig cfg;
  cfg.motor_id = static_cast<std::uint8_t>(in.Take(1));
  cfg.p_max = static_cast<double>(in.Take(2)) * 0.01 + 0.01;
  cfg.v_max = static_cast<double>(in.Take(2)) * 0.01 + 0.01;
  cfg.t_max = static_cast<double>(in.Take(2)) * 0.01 + 0.01;
  cfg.direction = (in.Take(1) & 1) ? -1 : 1;
  cfg.zero_offset = (static_cast<double>(in.Take(2)) - 32768.0) * 1e-3;
  cfg.current.enabled = (in.Take(1) & 1) != 0;
  cfg.current.torque_constant = static_cast<double>(in.Take(2)) * 1e-4 + 1e-6;
  cfg.current.gear_ratio = static_cast<double>(in.Take(2)) * 0.01 + 1e-3;
  while (in.left() > 0) {
    heft::hal::CanFrame f;
    f.flags = static_cast<std::uint8_t>(in.Take(1) & 0x3F);
    f.len = static_cast<std::uint8_t>(in.Take(1) % 65);
    in.Copy(f.data.data(), 8);
    f.id = static_cast<std::uint32_t>(in.Take(2) & 0x7FF);
    MitReading r;
    if (DecodeMitReply(f, cfg, r) != Reject::kNone) continue;
    if (f.len < 6 || f.len > 8 || r.motor_id != cfg.motor_id || f.is_remote()) std::abort();
    const double t_scale =
        cfg.current.enabled ? cfg.current.torque_constant * cfg.current.gear_ratio : 1.0;
    const double eps = 1e-9;
    if (!std::isfinite(r.position) || !std::isfinite(r.velocity) || !std::isfinite(r.torque))
      std::abort();
    if (std::abs(r.position) > cfg.p_max + std::abs(cfg.zero_offset) + eps ||
        std::abs(r.velocity) > cfg.v_max + eps || std::abs(r.torque) > cfg.t_max * t_scale + eps)
      std::abort();
    MitReading back;
    if (DecodeMitReply(EncodeMitReply(cfg, r.position, r.velocity, r.torque), cfg, back) !=
        Reject::kNone)
      std::abort();
    // Truncating encoder: the same code, or one below from rounding in the float round trip.
    if (r.p_int - back.p_int > 1 || r.v_int - back.v_int > 1 || r.t_int - back.t_int > 1 ||
        back.p_int > r.p_int || back.v_int > r.v_int || back.t_int > r.t_int)
      std::abort();
  }
  return 0;
}

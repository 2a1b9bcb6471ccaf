// The CiA 402 / CANopen decoders (drivers/include/heft/drivers/canopen_codec.hpp) on fuzzed frames
// with a fuzzed TPDO mapping and scaling inside the parser's ranges. Checks beyond "no crash, no
// UB": a TPDO is accepted only at its mapping's exact length and says it carries exactly the
// objects mapped, its values are finite, and re-encoding them gives the same raw values; a
// heartbeat is accepted only as one byte holding an NMT state; an EMCY only as 8 bytes.
//
// Input: a 12-byte configuration (the mapping's object count and objects, counts per turn, gear,
// rated torque and current, current flag, direction), then frames of 12 bytes: kind (TPDO,
// heartbeat, EMCY), flags, length, 8 data bytes, unused.
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "fuzz_bytes.hpp"
#include "heft/drivers/canopen_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace heft::drivers;
  heft::fuzz::Bytes in(data, size);
  Cia402Config cfg;
  Cia402Tpdo tpdo;
  tpdo.cob_id = 0x185;
  const int count = static_cast<int>(in.Take(1) % 8) + 1;
  const std::uint64_t objects = in.Take(3);
  bool has_position = false, has_velocity = false, has_torque = false;
  cfg.current.enabled = (in.Take(1) & 1) != 0;
  for (int i = 0; i < count && tpdo.Bytes() < 8; ++i) {
    const auto o = static_cast<Cia402Object>((objects >> (3 * i)) & 7);
    if (tpdo.Bytes() + Cia402ObjectBytes(o) > 8) break;
    tpdo.map[tpdo.count++] = o;
    has_position = has_position || o == Cia402Object::kPosition;
    has_velocity = has_velocity || o == Cia402Object::kVelocity;
    has_torque =
        has_torque || o == (cfg.current.enabled ? Cia402Object::kCurrent : Cia402Object::kTorque);
  }
  cfg.counts_per_rev = static_cast<double>(in.Take(2)) + 1.0;
  cfg.gear_ratio = static_cast<double>(in.Take(1)) + 1.0;
  cfg.rated_torque = static_cast<double>(in.Take(1)) * 0.1 + 1e-3;
  cfg.rated_current = static_cast<double>(in.Take(1)) * 0.1 + 1e-3;
  cfg.current.torque_constant = 0.05;
  cfg.current.gear_ratio = cfg.gear_ratio;
  cfg.direction = (in.Take(1) & 1) ? -1 : 1;
  while (in.left() > 0) {
    const auto kind = in.Take(1) % 3;
    heft::hal::CanFrame f;
    f.flags = static_cast<std::uint8_t>(in.Take(1) & 0x3F);
    f.len = static_cast<std::uint8_t>(in.Take(1) % 65);
    in.Copy(f.data.data(), 8);
    in.Take(1);
    if (kind == 0) {
      Cia402Reading r;
      if (DecodeCia402Tpdo(f, tpdo, cfg, r) != Reject::kNone) continue;
      if (f.len != tpdo.Bytes() || f.is_remote()) std::abort();
      if (r.has_position != has_position || r.has_velocity != has_velocity ||
          r.has_torque != has_torque)
        std::abort();
      if (!std::isfinite(r.position) || !std::isfinite(r.velocity) || !std::isfinite(r.torque))
        std::abort();
      Cia402Reading back;
      if (DecodeCia402Tpdo(
              EncodeCia402Tpdo(tpdo, cfg, r.statusword, r.position, r.velocity, r.torque), tpdo,
              cfg, back) != Reject::kNone)
        std::abort();
      if (std::llabs(static_cast<long long>(back.position_raw) - r.position_raw) > 1 ||
          std::llabs(static_cast<long long>(back.velocity_raw) - r.velocity_raw) > 1 ||
          std::abs(back.torque_raw - r.torque_raw) > 1 ||
          (r.has_statusword && back.statusword != r.statusword))
        std::abort();
    } else if (kind == 1) {
      NmtState s = NmtState::kBootUp;
      if (DecodeHeartbeat(f, s) != Reject::kNone) continue;
      const auto v = static_cast<std::uint8_t>(s);
      if (f.len != 1 || f.data[0] != v || (v != 0 && v != 4 && v != 5 && v != 0x7F)) std::abort();
    } else {
      std::uint16_t code = 0;
      std::uint8_t reg = 0;
      if (DecodeEmcy(f, code, reg) != Reject::kNone) continue;
      if (f.len != 8 || code != (f.data[0] | (f.data[1] << 8)) || reg != f.data[2]) std::abort();
    }
  }
  return 0;
}

// drivers.joints[] entries of the standard actuators (device: mit, device: cia402) and the
// identifiers every joint's device sends on (JointIdentifiers). The heft devices' entries are
// read in driver_config.cpp.
#include "standard_actuator_config.hpp"

#include <string>

#include "heft/drivers/driver_config.hpp"

namespace heft::drivers {
namespace {

// Keys only one device kind reads: any of them on another kind's entry is refused, naming it.
struct KindKeys {
  const char* key;
  const char* kinds;  // the devices that take it, as the message says
  bool heft, mit, cia402;
};
constexpr KindKeys kKindKeys[] = {
    {"encoder_node", "heft", true, false, false},
    {"torque_node", "heft", true, false, false},
    {"torque_offset", "heft", true, false, false},
    {"nm_per_count", "heft", true, false, false},
    {"torque_direction", "heft", true, false, false},
    {"node", "heft, cia402", true, false, true},
    {"counts_per_rev", "heft, cia402", true, false, true},
    {"velocity_lsb", "heft, cia402", true, false, true},
    {"motor_id", "mit", false, true, false},
    {"reply_id", "mit", false, true, false},
    {"p_max", "mit", false, true, false},
    {"v_max", "mit", false, true, false},
    {"t_max", "mit", false, true, false},
    {"tpdos", "cia402", false, false, true},
    {"rated_torque", "cia402", false, false, true},
    {"rated_current", "cia402", false, false, true},
    {"heartbeat_timeout_ms", "cia402", false, false, true},
    {"torque_constant", "mit, cia402", false, true, true},
    {"gear_ratio", "mit, cia402", false, true, true},
    {"torque_uncertainty", "mit, cia402", false, true, true},
};

const char* const kDeviceNames[] = {"heft", "mit", "cia402"};

// The torque-from-current conversion when `torque_constant` is given (and its uncertainty).
void ParseCurrent(const config::Node& j, CurrentToTorque& c, double& uncertainty) {
  c.enabled = j.Has("torque_constant");
  c.gear_ratio = j.Get<double>("gear_ratio", 1.0, {1e-3, 1e4});
  if (c.enabled) c.torque_constant = j.Get<double>("torque_constant", {1e-6, 100.0});
  c.uncertainty = j.Get<double>("torque_uncertainty", c.enabled ? 0.1 : 0.0, {0.0, 0.5});
  uncertainty = j.Has("torque_uncertainty") || c.enabled ? c.uncertainty : -1.0;
}

void ParseMit(const config::Node& j, JointDevice& d) {
  MitConfig& m = d.mit;
  m.motor_id = static_cast<std::uint8_t>(j.Get<int>("motor_id", {0, 255}));
  m.reply_id = static_cast<std::uint32_t>(j.Get<int>("reply_id", 0, {0, 0x7FF}));
  m.p_max = j.Get<double>("p_max", {1e-3, 1e4});
  m.v_max = j.Get<double>("v_max", {1e-3, 1e4});
  m.t_max = j.Get<double>("t_max", {1e-3, 1e4});
  m.zero_offset = j.Get<double>("zero_offset", 0.0, {-1e4, 1e4});
  m.direction = j.Get<int>("direction", 1, {-1, 1});
  if (m.direction == 0) j["direction"].Fail("direction must be 1 or -1");
  ParseCurrent(j, m.current, d.torque_scale_uncertainty);
}

// One element of `tpdos`: its COB-ID and the mapped objects in order.
Cia402Tpdo ParseTpdo(const config::Node& t) {
  t.AllowOnly(config::schema::kDriversJointTpdo);
  Cia402Tpdo tpdo;
  tpdo.cob_id = static_cast<std::uint32_t>(t.Get<int>("cob_id", {0x181, 0x57F}));
  static constexpr const char* kObjects[] = {"statusword", "position", "velocity", "torque",
                                             "current",    "u8",       "u16",      "u32"};
  const std::vector<config::Node> map = t["map"].Elements();
  if (map.empty() || map.size() > tpdo.map.size())
    t["map"].Fail(
        "1 to 8 mapped objects; allowed: statusword, position, velocity, torque, "
        "current, u8, u16, u32 (an unused object of that size)");
  for (const config::Node& o : map) {
    const std::string name = o.As<std::string>();
    int k = 0;
    while (k < 8 && name != kObjects[k]) ++k;
    if (k == 8)
      o.Fail("'" + name +
             "' is not allowed; allowed: statusword, position, velocity, torque, "
             "current, u8, u16, u32");
    tpdo.map[tpdo.count++] = static_cast<Cia402Object>(k);
  }
  if (tpdo.Bytes() > 8)
    t["map"].Fail("the mapped objects take " + std::to_string(tpdo.Bytes()) +
                  " bytes; a TPDO carries at most 8");
  return tpdo;
}

void ParseCia402(const config::Node& j, JointDevice& d) {
  Cia402Config& c = d.cia402;
  c.node = static_cast<std::uint8_t>(j.Get<int>("node", {1, 127}));
  const std::vector<config::Node> tpdos = j["tpdos"].Elements();
  if (tpdos.empty() || tpdos.size() > c.tpdos.size())
    j["tpdos"].Fail("1 to 4 TPDOs (cob_id and map each)");
  bool position = false, torque = false;
  for (const config::Node& t : tpdos) {
    c.tpdos[c.num_tpdos] = ParseTpdo(t);
    for (int k = 0; k < c.tpdos[c.num_tpdos].count; ++k) {
      position = position || c.tpdos[c.num_tpdos].map[k] == Cia402Object::kPosition;
      torque =
          torque || c.tpdos[c.num_tpdos].map[k] ==
                        (j.Has("torque_constant") ? Cia402Object::kCurrent : Cia402Object::kTorque);
    }
    ++c.num_tpdos;
  }
  if (!position) j["tpdos"].Fail("no TPDO maps position (0x6064): the joint's angle is needed");
  if (!torque)
    j["tpdos"].Fail(j.Has("torque_constant")
                        ? "no TPDO maps current (0x6078), which torque_constant converts"
                        : "no TPDO maps torque (0x6077); with torque_constant, current (0x6078)");
  c.counts_per_rev = j.Get<double>("counts_per_rev", c.counts_per_rev, {1.0, 1e12});
  c.velocity_lsb = j.Get<double>("velocity_lsb", 0.0, {0.0, 1e3});
  c.zero_offset =
      static_cast<std::int64_t>(j.Get<double>("zero_offset", 0.0, {-2147483648.0, 2147483647.0}));
  c.direction = j.Get<int>("direction", 1, {-1, 1});
  if (c.direction == 0) j["direction"].Fail("direction must be 1 or -1");
  c.rated_torque = j.Get<double>("rated_torque", c.rated_torque, {1e-6, 1e4});
  c.rated_current = j.Get<double>("rated_current", c.rated_current, {1e-6, 1e4});
  ParseCurrent(j, c.current, d.torque_scale_uncertainty);
  c.gear_ratio = c.current.gear_ratio;
  // The consumer heartbeat time in ms as CiA 301's 0x1016 holds it (16 bits; 0: not monitored).
  c.heartbeat_timeout_ns =
      static_cast<std::int64_t>(j.Get<int>("heartbeat_timeout_ms", 1500, {0, 65535})) * 1'000'000;
}

}  // namespace

JointProtocol ParseJointProtocol(const config::Node& j) {
  const auto kind = static_cast<JointProtocol>(j.Enum("device", {"heft", "mit", "cia402"}, "heft"));
  for (const KindKeys& k : kKindKeys) {
    const bool allowed = kind == JointProtocol::kHeft  ? k.heft
                         : kind == JointProtocol::kMit ? k.mit
                                                       : k.cia402;
    if (!allowed && j.Has(k.key))
      j[k.key].Fail(std::string("only for device: ") + k.kinds + " (this joint's device is " +
                    kDeviceNames[static_cast<int>(kind)] + ")");
  }
  return kind;
}

void ParseStandardActuator(const config::Node& j, JointDevice& d) {
  if (d.protocol == JointProtocol::kMit) ParseMit(j, d);
  if (d.protocol == JointProtocol::kCia402) ParseCia402(j, d);
}

std::vector<IdClaim> JointIdentifiers(const JointDevice& j) {
  const std::string who = "'" + j.joint + "'";
  switch (j.protocol) {
    case JointProtocol::kHeft:
      return {{j.encoder.id(), "the encoder of " + who, false},
              {j.torque.id(), "the torque sensor of " + who, false}};
    case JointProtocol::kMit:
      return {{j.mit.reply_id, "the MIT replies of " + who, true}};
    case JointProtocol::kCia402: {
      std::vector<IdClaim> ids;
      for (int t = 0; t < j.cia402.num_tpdos; ++t)
        ids.push_back({j.cia402.tpdos[t].cob_id,
                       "TPDO " + std::to_string(t + 1) + " of the drive of " + who, false});
      ids.push_back({j.cia402.heartbeat_id(), "the heartbeat of the drive of " + who, false});
      ids.push_back({j.cia402.emcy_id(), "the EMCY of the drive of " + who, false});
      return ids;
    }
  }
  return {};
}

}  // namespace heft::drivers

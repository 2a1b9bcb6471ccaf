#include "heft/drivers/driver_config.hpp"

#include <Eigen/Geometry>
#include <map>
#include <set>
#include <string_view>

#include "heft/config/schema.hpp"
#include "standard_actuator_config.hpp"

namespace heft::drivers {

namespace {

// A `timeout_ms` key (of the section or of one device) in seconds; `default_ms` when absent.
double TimeoutSeconds(const config::Node& node, double default_ms) {
  return node.Get<double>("timeout_ms", default_ms, {0.5, 1000.0}) * 1e-3;
}

// The bus of each device by name (the `buses` list's index).
using BusIndex = std::map<std::string, int>;

// The plausibility checks' thresholds (drivers.torque_stuck_ms, ...), into `p`.
void ParsePlausibility(const config::Node& node, PlausibilityConfig& p) {
  p.torque_stuck_time =
      node.Get<double>("torque_stuck_ms", p.torque_stuck_time * 1e3, {5.0, 10000.0}) * 1e-3;
  p.torque_stuck_velocity =
      node.Get<double>("torque_stuck_velocity", p.torque_stuck_velocity, {0.001, 100.0});
  p.error_frame_window =
      node.Get<double>("error_frame_window_ms", p.error_frame_window * 1e3, {1.0, 10000.0}) * 1e-3;
  p.error_frame_limit = node.Get<int>("error_frame_limit", p.error_frame_limit, {0, 1000000});
}

// drivers.buses into cfg.buses: distinct Linux interface names. Returns each name's index.
BusIndex ParseBuses(const config::Node& node, DriverConfig& cfg) {
  BusIndex bus_index;
  for (const config::Node& b : node["buses"].Elements()) {
    const std::string name = b.As<std::string>();
    if (bus_index.count(name)) b.Fail("bus '" + name + "' is listed twice");
    if (name.empty() || name.size() > kMaxBusNameLength)
      b.Fail("bus name '" + name + "' has " + std::to_string(name.size()) +
             " characters; allowed: 1 to " + std::to_string(kMaxBusNameLength) +
             " (a Linux interface name, IFNAMSIZ - 1)");
    bus_index[name] = static_cast<int>(cfg.buses.size());
    cfg.buses.push_back(name);
  }
  return bus_index;
}

// A device's `bus`: the index of a listed bus (the list's names when it is none of them).
int BusOf(const config::Node& entry, const BusIndex& bus_index,
          const std::vector<std::string>& buses) {
  const config::Node b = entry["bus"];
  const std::string name = b.As<std::string>();
  auto it = bus_index.find(name);
  if (it == bus_index.end()) {
    std::string known;
    for (const auto& n : buses) known += (known.empty() ? "" : ", ") + n;
    b.Fail("unknown bus '" + name + "'; allowed: " + known);
  }
  return it->second;
}

// drivers.joints_from / ft_cells_from: true for `framework`.
bool FromFramework(const config::Node& node, const char* key) {
  return node.Enum(key, {"can", "framework"}, "can") == 1;
}

// An entry of drivers.joints or drivers.ft_cells whose values come from the framework: its name
// alone (the CAN keys would describe a device heft does not read).
std::string ParseFrameworkDevice(const config::Node& entry, const char* name_key,
                                 const char* source_key) {
  for (const auto& key : entry.Keys())
    if (key != name_key)
      entry[key].Fail(
          std::string("drivers.") + source_key + " is framework: an entry has only '" + name_key +
          "' (the framework's joint-state segment carries its values); allowed: " + name_key);
  return entry.Get<std::string>(name_key);
}

// One entry of drivers.joints: its encoder and torque sensor.
JointDevice ParseJoint(const config::Node& j, const BusIndex& bus_index,
                       const std::vector<std::string>& buses, double default_timeout) {
  j.AllowOnly(config::schema::kDriversJoint);
  JointDevice d;
  d.joint = j.Get<std::string>("name");
  d.bus = BusOf(j, bus_index, buses);
  d.protocol = ParseJointProtocol(j);
  d.timeout = TimeoutSeconds(j, default_timeout * 1e3);
  if (d.protocol != JointProtocol::kHeft) {
    ParseStandardActuator(j, d);
    return d;
  }
  const int node_id = j.Get<int>("node", -1, {-1, 127});
  d.encoder.node = static_cast<std::uint32_t>(j.Get<int>("encoder_node", node_id, {0, 127}));
  d.torque.node = static_cast<std::uint32_t>(j.Get<int>("torque_node", node_id, {0, 127}));
  if (!j.Has("encoder_node") && node_id < 0)
    j.Fail("missing required key 'node' (or encoder_node and torque_node)");
  if (!j.Has("torque_node") && node_id < 0) j.Fail("missing required key 'node' (or torque_node)");
  d.encoder.counts_per_rev = j.Get<double>("counts_per_rev", d.encoder.counts_per_rev, {1.0, 1e12});
  d.encoder.zero_offset =
      static_cast<std::int64_t>(j.Get<double>("zero_offset", 0.0, {-2147483648.0, 2147483647.0}));
  d.encoder.direction = j.Get<int>("direction", 1, {-1, 1});
  if (d.encoder.direction == 0) j["direction"].Fail("direction must be 1 or -1");
  d.encoder.velocity_lsb = j.Get<double>("velocity_lsb", d.encoder.velocity_lsb, {1e-9, 1.0});
  d.torque.offset = j.Get<int>("torque_offset", 0, {-8388607, 8388607});
  d.torque.nm_per_count = j.Get<double>("nm_per_count", d.torque.nm_per_count, {1e-9, 1.0});
  d.torque.direction = j.Get<int>("torque_direction", 1, {-1, 1});
  if (d.torque.direction == 0) j["torque_direction"].Fail("torque_direction must be 1 or -1");
  return d;
}

// One entry of drivers.ft_cells: a six-axis force/torque cell.
FtDevice ParseFtCell(const config::Node& c, const BusIndex& bus_index,
                     const std::vector<std::string>& buses, double default_timeout) {
  c.AllowOnly(config::schema::kDriversFtCell);
  FtDevice d;
  d.frame = c.Get<std::string>("frame");
  d.bus = BusOf(c, bus_index, buses);
  d.ft.base_id = static_cast<std::uint32_t>(c.Get<int>("base_id", {0, 0x7FE}));
  const std::vector<double> cal = c["calibration"].Numbers(36);
  for (int r = 0; r < 6; ++r)
    for (int k = 0; k < 6; ++k) d.ft.calibration(r, k) = cal[6 * r + k];
  if (auto tare = c.Optional("tare")) {
    const std::vector<double> t = tare->Numbers(6);
    for (int k = 0; k < 6; ++k) d.ft.tare[k] = t[k];
  }
  d.timeout = TimeoutSeconds(c, default_timeout * 1e3);
  return d;
}

// drivers.imu: the base IMU.
ImuDevice ParseImu(const config::Node& imu, const BusIndex& bus_index,
                   const std::vector<std::string>& buses, double default_timeout) {
  imu.AllowOnly(config::schema::kDriversImu);
  ImuDevice d;
  d.bus = BusOf(imu, bus_index, buses);
  d.imu.base_id = static_cast<std::uint32_t>(imu.Get<int>(
      "base_id", static_cast<int>(d.imu.base_id), {0, 0x7FD}));  // base_id + 2 in 11 bits
  d.frame = imu.Get<std::string>("frame", d.frame, {});
  d.where = imu.Has("frame") ? imu["frame"].Where() : imu.Where() + " (frame: default)";
  if (d.frame.empty()) imu["frame"].Fail("an empty frame name; allowed: a link of the URDF");
  d.imu.gyro_lsb = imu.Get<double>("gyro_lsb", d.imu.gyro_lsb, {1e-9, 1.0});
  d.imu.accel_lsb = imu.Get<double>("accel_lsb", d.imu.accel_lsb, {1e-9, 10.0});
  d.timeout = TimeoutSeconds(imu, default_timeout * 1e3);
  return d;
}

}  // namespace

DriverConfig ParseDriverConfig(const config::Node& node) {
  node.AllowOnly(config::schema::kDrivers);
  DriverConfig cfg;
  const double default_timeout = TimeoutSeconds(node, 3.0);
  ParsePlausibility(node, cfg.plausibility);
  cfg.joints_from_framework = FromFramework(node, "joints_from");
  cfg.ft_cells_from_framework = FromFramework(node, "ft_cells_from");
  const BusIndex bus_index = node.Has("buses") ? ParseBuses(node, cfg) : BusIndex{};
  for (const config::Node& j : node["joints"].Elements()) {
    if (!cfg.joints_from_framework) {
      cfg.joints.push_back(ParseJoint(j, bus_index, cfg.buses, default_timeout));
      continue;
    }
    JointDevice d;
    d.joint = ParseFrameworkDevice(j, "name", "joints_from");
    d.bus = -1;
    cfg.joints.push_back(d);
  }
  if (auto cells = node.Optional("ft_cells")) {
    for (const config::Node& c : cells->Elements()) {
      if (!cfg.ft_cells_from_framework) {
        cfg.ft_cells.push_back(ParseFtCell(c, bus_index, cfg.buses, default_timeout));
        continue;
      }
      FtDevice d;
      d.frame = ParseFrameworkDevice(c, "frame", "ft_cells_from");
      d.bus = -1;
      cfg.ft_cells.push_back(d);
    }
  }
  if (auto imu = node.Optional("imu"))
    cfg.imu = ParseImu(*imu, bus_index, cfg.buses, default_timeout);
  const bool on_can = !cfg.joints_from_framework || cfg.imu ||
                      (!cfg.ft_cells_from_framework && !cfg.ft_cells.empty());
  if (on_can && cfg.buses.empty())
    (node.Has("buses") ? node["buses"] : node)
        .Fail(
            "drivers.buses lists no bus, and devices are read from CAN; list at least one bus "
            "(or take joints_from and ft_cells_from the framework)");
  return cfg;
}

DriverConfig ReferenceDriverConfig(const std::vector<std::string>& joints,
                                   const std::vector<std::string>& ft_frames) {
  DriverConfig cfg;
  cfg.buses = {"can0", "can1"};
  for (std::size_t i = 0; i < joints.size(); ++i) {
    JointDevice d;
    d.joint = joints[i];
    d.bus = i < joints.size() / 2 ? 0 : 1;
    d.encoder.node = d.torque.node = static_cast<std::uint32_t>(i);
    cfg.joints.push_back(d);
  }
  for (std::size_t k = 0; k < ft_frames.size(); ++k) {
    FtDevice d;
    d.frame = ft_frames[k];
    d.bus = static_cast<int>(k % 2);
    d.ft.base_id = 0x300u + 0x10u * static_cast<std::uint32_t>(k);
    // A plausible factory matrix: 0.05 N and 0.002 N·m per count with small cross-coupling.
    d.ft.calibration.setZero();
    for (int r = 0; r < 6; ++r) {
      d.ft.calibration(r, r) = r < 3 ? 0.05 : 0.002;
      d.ft.calibration(r, (r + 1) % 6) = r < 3 ? 0.001 : 0.00005;
    }
    cfg.ft_cells.push_back(d);
  }
  return cfg;
}

}  // namespace heft::drivers

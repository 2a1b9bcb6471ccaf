#include "heft/drivers/driver_config.hpp"

#include <urdf_parser/urdf_parser.h>

#include <Eigen/Geometry>
#include <map>
#include <set>
#include <string_view>

namespace heft::drivers {

DriverConfig ParseDriverConfig(const config::Node& node) {
  node.AllowOnly({"timeout_ms", "buses", "joints", "ft_cells", "imu", "torque_stuck_ms",
                  "torque_stuck_velocity", "error_frame_window_ms", "error_frame_limit"});
  DriverConfig cfg;
  const double default_timeout = node.Get<double>("timeout_ms", 3.0, {0.5, 1000.0}) * 1e-3;
  PlausibilityConfig& p = cfg.plausibility;
  p.torque_stuck_time =
      node.Get<double>("torque_stuck_ms", p.torque_stuck_time * 1e3, {5.0, 10000.0}) * 1e-3;
  p.torque_stuck_velocity =
      node.Get<double>("torque_stuck_velocity", p.torque_stuck_velocity, {0.001, 100.0});
  p.error_frame_window =
      node.Get<double>("error_frame_window_ms", p.error_frame_window * 1e3, {1.0, 10000.0}) * 1e-3;
  p.error_frame_limit = node.Get<int>("error_frame_limit", p.error_frame_limit, {0, 1000000});
  std::map<std::string, int> bus_index;
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
  if (cfg.buses.empty()) node["buses"].Fail("at least one bus is needed");
  auto bus_of = [&](const config::Node& entry) {
    const config::Node b = entry["bus"];
    const std::string name = b.As<std::string>();
    auto it = bus_index.find(name);
    if (it == bus_index.end()) {
      std::string known;
      for (const auto& n : cfg.buses) known += (known.empty() ? "" : ", ") + n;
      b.Fail("unknown bus '" + name + "'; allowed: " + known);
    }
    return it->second;
  };
  for (const config::Node& j : node["joints"].Elements()) {
    j.AllowOnly({"name", "bus", "node", "encoder_node", "torque_node", "counts_per_rev",
                 "zero_offset", "direction", "velocity_lsb", "torque_offset", "nm_per_count",
                 "torque_direction", "timeout_ms"});
    JointDevice d;
    d.joint = j.Get<std::string>("name");
    d.bus = bus_of(j);
    const int node_id = j.Get<int>("node", -1, {-1, 127});
    d.encoder.node = static_cast<std::uint32_t>(j.Get<int>("encoder_node", node_id, {0, 127}));
    d.torque.node = static_cast<std::uint32_t>(j.Get<int>("torque_node", node_id, {0, 127}));
    if (!j.Has("encoder_node") && node_id < 0)
      j.Fail("missing required key 'node' (or encoder_node and torque_node)");
    if (!j.Has("torque_node") && node_id < 0)
      j.Fail("missing required key 'node' (or torque_node)");
    d.encoder.counts_per_rev =
        j.Get<double>("counts_per_rev", d.encoder.counts_per_rev, {1.0, 1e12});
    d.encoder.zero_offset =
        static_cast<std::int64_t>(j.Get<double>("zero_offset", 0.0, {-2147483648.0, 2147483647.0}));
    d.encoder.direction = j.Get<int>("direction", 1, {-1, 1});
    if (d.encoder.direction == 0) j["direction"].Fail("direction must be 1 or -1");
    d.encoder.velocity_lsb = j.Get<double>("velocity_lsb", d.encoder.velocity_lsb, {1e-9, 1.0});
    d.torque.offset = j.Get<int>("torque_offset", 0, {-8388607, 8388607});
    d.torque.nm_per_count = j.Get<double>("nm_per_count", d.torque.nm_per_count, {1e-9, 1.0});
    d.torque.direction = j.Get<int>("torque_direction", 1, {-1, 1});
    if (d.torque.direction == 0) j["torque_direction"].Fail("torque_direction must be 1 or -1");
    d.timeout = j.Get<double>("timeout_ms", default_timeout * 1e3, {0.5, 1000.0}) * 1e-3;
    cfg.joints.push_back(d);
  }
  if (auto cells = node.Optional("ft_cells")) {
    for (const config::Node& c : cells->Elements()) {
      c.AllowOnly({"frame", "bus", "base_id", "calibration", "tare", "timeout_ms"});
      FtDevice d;
      d.frame = c.Get<std::string>("frame");
      d.bus = bus_of(c);
      d.ft.base_id = static_cast<std::uint32_t>(c.Get<int>("base_id", {0, 0x7FE}));
      const std::vector<double> cal = c["calibration"].Numbers(36);
      for (int r = 0; r < 6; ++r)
        for (int k = 0; k < 6; ++k) d.ft.calibration(r, k) = cal[6 * r + k];
      if (auto tare = c.Optional("tare")) {
        const std::vector<double> t = tare->Numbers(6);
        for (int k = 0; k < 6; ++k) d.ft.tare[k] = t[k];
      }
      d.timeout = c.Get<double>("timeout_ms", default_timeout * 1e3, {0.5, 1000.0}) * 1e-3;
      cfg.ft_cells.push_back(d);
    }
  }
  if (auto imu = node.Optional("imu")) {
    imu->AllowOnly({"bus", "base_id", "frame", "gyro_lsb", "accel_lsb", "timeout_ms"});
    ImuDevice d;
    d.bus = bus_of(*imu);
    d.imu.base_id = static_cast<std::uint32_t>(imu->Get<int>(
        "base_id", static_cast<int>(d.imu.base_id), {0, 0x7FD}));  // base_id + 2 in 11 bits
    d.frame = imu->Get<std::string>("frame", d.frame, {});
    d.where = imu->Has("frame") ? (*imu)["frame"].Where() : imu->Where() + " (frame: default)";
    if (d.frame.empty()) (*imu)["frame"].Fail("an empty frame name; allowed: a link of the URDF");
    d.imu.gyro_lsb = imu->Get<double>("gyro_lsb", d.imu.gyro_lsb, {1e-9, 1.0});
    d.imu.accel_lsb = imu->Get<double>("accel_lsb", d.imu.accel_lsb, {1e-9, 10.0});
    d.timeout = imu->Get<double>("timeout_ms", default_timeout * 1e3, {0.5, 1000.0}) * 1e-3;
    cfg.imu = d;
  }
  return cfg;
}

namespace {

// The IMU frame's pose in the floating base's link: up the fixed joints from `frame` to the base.
void ResolveImuPose(const urdf::ModelInterface& urdf, const std::string& urdf_path,
                    const std::string& where, ImuDevice& imu) {
  const std::string what = (imu.where.empty() ? where + "drivers.imu.frame" : imu.where) +
                           ": frame '" + imu.frame + "' ";
  const urdf::LinkConstSharedPtr root = urdf.getRoot();
  if (!root) throw config::ConfigError(urdf_path + ": the URDF has no root link");
  urdf::LinkConstSharedPtr base = root;  // a URDF without a floating joint: its root link
  for (const auto& j : root->child_joints)
    if (j->type == urdf::Joint::FLOATING) base = urdf.getLink(j->child_link_name);
  urdf::LinkConstSharedPtr link = urdf.getLink(imu.frame);
  if (!link) throw config::ConfigError(what + "is not a link of " + urdf_path);
  Eigen::Isometry3d X_BI = Eigen::Isometry3d::Identity();
  while (link != base) {
    const urdf::JointConstSharedPtr joint = link->parent_joint;
    if (!joint)
      throw config::ConfigError(what + "is not on the floating base '" + base->name + "' of " +
                                urdf_path + " (it is above it in the tree)");
    if (joint->type != urdf::Joint::FIXED)
      throw config::ConfigError(what + "is not rigidly attached to the floating base '" +
                                base->name + "' of " + urdf_path + ": joint '" + joint->name +
                                "' between them is not fixed");
    const urdf::Pose& o = joint->parent_to_joint_origin_transform;
    double x = 0, y = 0, z = 0, w = 1;
    o.rotation.getQuaternion(x, y, z, w);
    Eigen::Isometry3d X_PC = Eigen::Isometry3d::Identity();
    X_PC.linear() = Eigen::Quaterniond(w, x, y, z).normalized().toRotationMatrix();
    X_PC.translation() = Eigen::Vector3d(o.position.x, o.position.y, o.position.z);
    X_BI = X_PC * X_BI;
    link = urdf.getLink(joint->parent_link_name);
  }
  imu.R_BI = X_BI.linear();
  imu.p_BI = X_BI.translation();
}

// `drivers`, when given, is the section `config` was read from: each message then starts with the
// offending entry's file:line:column and key path; otherwise with `config_file`.
void Check(DriverConfig& cfg, const std::string& urdf_path, const std::string& config_file,
           const config::Node* drivers) {
  const std::string where = config_file.empty() ? "" : config_file + ": ";
  // The error at drivers.<list>[index].<key> (the first of `keys` present), or at the list: thrown
  // from here when the section is at hand, else returned for the caller to throw.
  auto fail = [&](const char* list, std::size_t index, std::initializer_list<const char*> keys,
                  const std::string& what) -> config::ConfigError {
    if (drivers) {
      const config::Node section = (*drivers)[list];
      if (std::string_view(list) == "imu") {  // a map, not a list
        for (const char* k : keys)
          if (section.Has(k)) section[k].Fail(what);
        section.Fail(what);
      }
      if (index >= section.Elements().size()) section.Fail(what);
      const config::Node entry = section.Elements()[index];
      for (const char* k : keys)
        if (entry.Has(k)) entry[k].Fail(what);
      entry.Fail(what);
    }
    return config::ConfigError(where + "drivers." + list + ": " + what);
  };
  constexpr std::size_t kList = static_cast<std::size_t>(-1);
  urdf::ModelInterfaceSharedPtr urdf = urdf::parseURDFFile(urdf_path);
  if (!urdf) throw config::ConfigError(urdf_path + ": cannot read the URDF");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < cfg.joints.size(); ++i) {
    const JointDevice& j = cfg.joints[i];
    const auto joint = urdf->getJoint(j.joint);
    if (!joint) throw fail("joints", i, {"name"}, "joint '" + j.joint + "' is not in " + urdf_path);
    if (joint->type == urdf::Joint::FIXED || joint->type == urdf::Joint::FLOATING)
      throw fail("joints", i, {"name"},
                 "joint '" + j.joint + "' of " + urdf_path + " does not have one DoF");
    if (!seen.insert(j.joint).second)
      throw fail("joints", i, {"name"}, "joint '" + j.joint + "' listed twice");
  }
  for (const auto& [name, joint] : urdf->joints_) {
    const bool moving = joint->type == urdf::Joint::REVOLUTE ||
                        joint->type == urdf::Joint::CONTINUOUS ||
                        joint->type == urdf::Joint::PRISMATIC;
    if (moving && !seen.count(name))
      throw fail("joints", kList, {},
                 "joint '" + name + "' of " + urdf_path + " has no sensors configured");
  }
  for (std::size_t k = 0; k < cfg.ft_cells.size(); ++k)
    if (!urdf->getLink(cfg.ft_cells[k].frame))
      throw fail("ft_cells", k, {"frame"},
                 "frame '" + cfg.ft_cells[k].frame + "' is not a link of " + urdf_path);
  if (cfg.imu) ResolveImuPose(*urdf, urdf_path, where, *cfg.imu);
  // Identifier clashes per bus; the message sits at the second claimant's identifier.
  std::map<std::pair<int, std::uint32_t>, std::string> ids;
  auto claim = [&](int bus, std::uint32_t id, const std::string& who, const char* list,
                   std::size_t index, std::initializer_list<const char*> keys) {
    auto [it, fresh] = ids.emplace(std::make_pair(bus, id), who);
    if (!fresh) {
      char hex[16];
      std::snprintf(hex, sizeof(hex), "0x%03X", id);
      throw fail(list, index, keys,
                 "identifier " + std::string(hex) + " on bus '" + cfg.buses[bus] +
                     "' is used by both " + it->second + " and " + who);
    }
  };
  for (std::size_t i = 0; i < cfg.joints.size(); ++i) {
    const JointDevice& j = cfg.joints[i];
    claim(j.bus, j.encoder.id(), "the encoder of '" + j.joint + "'", "joints", i,
          {"encoder_node", "node"});
    claim(j.bus, j.torque.id(), "the torque sensor of '" + j.joint + "'", "joints", i,
          {"torque_node", "node"});
  }
  for (std::size_t k = 0; k < cfg.ft_cells.size(); ++k) {
    const FtDevice& c = cfg.ft_cells[k];
    claim(c.bus, c.ft.base_id, "the F/T cell '" + c.frame + "'", "ft_cells", k, {"base_id"});
    claim(c.bus, c.ft.base_id + 1, "the F/T cell '" + c.frame + "' (frame B)", "ft_cells", k,
          {"base_id"});
  }
  if (const auto& imu = cfg.imu) {
    const std::uint32_t id = imu->imu.base_id;
    claim(imu->bus, id, "the IMU '" + imu->frame + "' (frame A)", "imu", kList, {"base_id"});
    claim(imu->bus, id + 1, "the IMU '" + imu->frame + "' (frame B)", "imu", kList, {"base_id"});
    claim(imu->bus, id + 2, "the IMU '" + imu->frame + "' (frame C)", "imu", kList, {"base_id"});
  }
}

}  // namespace

void CheckDriverConfig(DriverConfig& cfg, const std::string& urdf_path,
                       const std::string& config_file) {
  Check(cfg, urdf_path, config_file, nullptr);
}

void CheckDriverConfig(DriverConfig& cfg, const std::string& urdf_path,
                       const config::Node& drivers) {
  Check(cfg, urdf_path, drivers.file(), &drivers);
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

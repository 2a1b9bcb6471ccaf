#include "heft/plugin/driver_check.hpp"

#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string_view>

namespace heft::plugin {
using drivers::DriverConfig;
using drivers::FtDevice;
using drivers::ImuDevice;
using drivers::JointDevice;
namespace {

// The frame (URDF link) of that name, or -1.
int FrameIndex(const dynamics::Model& model, const std::string& name) {
  for (std::size_t f = 0; f < model.frames.size(); ++f)
    if (model.frames[f].name == name) return static_cast<int>(f);
  return -1;
}

// The IMU frame's pose in the floating base's link B: the model loader has composed the fixed
// joints' origins into every frame's pose in its body, so the frame must sit in B's body (the
// child of the root's floating joint, else the root link, welded to the world).
void ResolveImuPose(const dynamics::Model& model, const std::string& urdf_path,
                    const std::string& where, ImuDevice& imu) {
  const std::string what = (imu.where.empty() ? where + "drivers.imu.frame" : imu.where) +
                           ": frame '" + imu.frame + "' ";
  const int f = FrameIndex(model, imu.frame);
  if (f < 0) throw config::ConfigError(what + "is not a link of " + urdf_path);
  const dynamics::Frame& frame = model.frames[static_cast<std::size_t>(f)];
  const int base = model.floating_base ? 0 : dynamics::kWorld;
  const std::string base_name = model.floating_base ? model.bodies.front().name : "the root link";
  if (frame.body != base) {
    if (frame.body == dynamics::kWorld)
      throw config::ConfigError(what + "is not on the floating base '" + base_name + "' of " +
                                urdf_path + " (it is above it in the tree)");
    throw config::ConfigError(what + "is not rigidly attached to the floating base '" + base_name +
                              "' of " + urdf_path + ": joint '" +
                              model.bodies[static_cast<std::size_t>(frame.body)].joint.name +
                              "' between them is not fixed");
  }
  imu.R_BI = frame.R;
  imu.p_BI = frame.p;
}

// The index of an error at a list (or the imu map) rather than at one of its entries.
constexpr std::size_t kList = static_cast<std::size_t>(-1);

// The error at drivers.<list>[index].<key>, as Check's `fail` makes it.
using FailAt = std::function<config::ConfigError(
    const char*, std::size_t, std::initializer_list<const char*>, const std::string&)>;

// Identifier clashes per bus (the MIT actuators of one controller share their reply identifier,
// their motor ids must differ); the message sits at the second claimant's identifier.
void CheckIdentifiers(const DriverConfig& cfg, const FailAt& fail) {
  std::map<std::pair<int, std::uint32_t>, std::string> ids;
  std::set<std::pair<int, std::uint32_t>> shared;  // MIT reply identifiers (several actuators)
  auto claim = [&](int bus, std::uint32_t id, const std::string& who, const char* list,
                   std::size_t index, std::initializer_list<const char*> keys,
                   bool is_shared = false) {
    auto [it, fresh] = ids.emplace(std::make_pair(bus, id), who);
    if (fresh && is_shared) shared.insert({bus, id});
    if (!fresh && !(is_shared && shared.count({bus, id}))) {
      char hex[16];
      std::snprintf(hex, sizeof(hex), "0x%03X", id);
      throw fail(list, index, keys,
                 "identifier " + std::string(hex) + " on bus '" + cfg.buses[bus] +
                     "' is used by both " + it->second + " and " + who);
    }
  };
  std::map<std::pair<int, int>, std::string> mit_motors;  // (bus, motor id) → joint
  // Devices that come from the framework (drivers.joints_from, ft_cells_from) have no identifiers.
  for (std::size_t i = 0; i < cfg.joints.size() && !cfg.joints_from_framework; ++i) {
    const JointDevice& j = cfg.joints[i];
    for (const drivers::IdClaim& c : drivers::JointIdentifiers(j))
      claim(j.bus, c.id, c.what, "joints", i,
            {"encoder_node", "torque_node", "node", "reply_id", "tpdos"}, c.shared);
    if (j.protocol != drivers::JointProtocol::kMit) continue;
    const auto [it, fresh] = mit_motors.emplace(std::make_pair(j.bus, j.mit.motor_id), j.joint);
    if (!fresh)
      throw fail("joints", i, {"motor_id"},
                 "MIT motor id " + std::to_string(j.mit.motor_id) + " on bus '" + cfg.buses[j.bus] +
                     "' is used by both '" + it->second + "' and '" + j.joint + "'");
  }
  for (std::size_t k = 0; k < cfg.ft_cells.size() && !cfg.ft_cells_from_framework; ++k) {
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

// `drivers`, when given, is the section `config` was read from: each message then starts with the
// offending entry's file:line:column and key path; otherwise with `config_file`.
void Check(DriverConfig& cfg, const dynamics::Model& model, const std::string& urdf_path,
           const std::string& config_file, const config::Node* drivers) {
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
  // The URDF's 1-DoF joints (a fixed joint is merged away, the floating one has six).
  std::set<std::string> moving;
  for (const dynamics::Body& b : model.bodies)
    if (b.joint.type != dynamics::JointType::kFree) moving.insert(b.joint.name);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < cfg.joints.size(); ++i) {
    const JointDevice& j = cfg.joints[i];
    if (!moving.count(j.joint))
      throw fail("joints", i, {"name"},
                 "joint '" + j.joint + "' is not in " + urdf_path + " as a joint with one DoF");
    if (!seen.insert(j.joint).second)
      throw fail("joints", i, {"name"}, "joint '" + j.joint + "' listed twice");
  }
  for (const std::string& name : moving)
    if (!seen.count(name))
      throw fail("joints", kList, {},
                 "joint '" + name + "' of " + urdf_path + " has no sensors configured");
  for (std::size_t k = 0; k < cfg.ft_cells.size(); ++k)
    if (FrameIndex(model, cfg.ft_cells[k].frame) < 0)
      throw fail("ft_cells", k, {"frame"},
                 "frame '" + cfg.ft_cells[k].frame + "' is not a link of " + urdf_path);
  if (cfg.imu) ResolveImuPose(model, urdf_path, where, *cfg.imu);
  CheckIdentifiers(cfg, fail);
}

}  // namespace

void CheckDriverConfig(DriverConfig& cfg, const dynamics::Model& model,
                       const std::string& urdf_path, const config::Node& drivers) {
  Check(cfg, model, urdf_path, drivers.file(), &drivers);
}

void CheckDriverConfig(DriverConfig& cfg, const std::string& urdf_path,
                       const std::string& config_file) {
  Check(cfg, dynamics::LoadModelFromUrdfFile(urdf_path, dynamics::ModelOptions{}), urdf_path,
        config_file, nullptr);
}

std::vector<double> JointTorqueScales(const DriverConfig& cfg, double common,
                                      const dynamics::Model& model) {
  bool any = false;
  for (const auto& j : cfg.joints) any = any || j.torque_scale_uncertainty >= 0.0;
  if (!any) return {};
  const int first = model.floating_base ? 6 : 0;
  std::vector<double> scales(static_cast<std::size_t>(model.nv - first), common);
  for (const auto& j : cfg.joints) {
    if (j.torque_scale_uncertainty < 0.0) continue;
    const int v = model.bodies[static_cast<std::size_t>(model.joint_body_index(j.joint))].v_index;
    scales[static_cast<std::size_t>(v - first)] = j.torque_scale_uncertainty;
  }
  return scales;
}

}  // namespace heft::plugin

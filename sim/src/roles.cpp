#include "heft/sim/roles.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "heft/config/schema.hpp"
#include "heft/dynamics/model.hpp"
#include "heft/sim/mujoco_model.hpp"

namespace heft::sim {
namespace {

constexpr const char* kSides[] = {"left", "right"};
// The role map's own keys (simulation.roles), which the reference humanoid's links happen to share
// (scripts/check_robot_names.py leaves a line marked `role key` alone).
constexpr const char* kPelvis = "pelvis";  // role key
constexpr const char* kTorso = "torso";    // role key

// A name of the map: a non-empty string, its place remembered for the errors against the URDF.
std::string Name(const config::Node& parent, const std::string& key, const std::string& role,
                 RoleMap& map) {
  const config::Node node = parent[key];
  auto name = node.As<std::string>();
  if (name.empty()) node.Fail("expected the name of a link or joint of robot.urdf");
  map.where[role] = node.Where();
  return name;
}

// What an error says about role `key`: where it was written, or its key path.
std::string Role(const RoleMap& map, const std::string& key) {
  const auto it = map.where.find(key);
  return it != map.where.end() ? it->second : "simulation.roles." + key;
}

// The names of objects first..count-1 (joints: the revolute ones only).
std::string Names(const mjModel* m, mjtObj type, int first, int count) {
  std::string out;
  for (int i = first; i < count; ++i) {
    if (type == mjOBJ_JOINT && m->jnt_type[i] != mjJNT_HINGE) continue;
    const char* name = mj_id2name(m, type, i);
    if (name != nullptr) out += (out.empty() ? "" : ", ") + std::string(name);
  }
  return out;
}

// The moving body of link role `key`.
int Body(const RoleMap& map, const std::string& key, const std::string& link, const mjModel* m,
         const std::string& urdf) {
  const int id = mj_name2id(m, mjOBJ_BODY, link.c_str());
  if (id <= 0)
    throw std::invalid_argument(Role(map, key) + ": '" + link + "' is not a moving link of '" +
                                urdf + "' (links on fixed joints are merged into their parent); " +
                                "moving links: " + Names(m, mjOBJ_BODY, 1, m->nbody));
  return id;
}

// The pelvis: a moving body, or on a fixed-base robot the world, when the URDF welds the pelvis to
// it (MuJoCo merges such a link into the world, so its name is looked up in the URDF itself).
int Pelvis(const RoleMap& map, const mjModel* m, const std::string& urdf) {
  const bool fixed = m->njnt == 0 || m->jnt_type[0] != mjJNT_FREE;
  if (fixed && mj_name2id(m, mjOBJ_BODY, map.pelvis.c_str()) < 0) {
    try {
      const dynamics::Model model = dynamics::LoadModelFromUrdfFile(urdf, {});
      if (model.frames[model.frame_index(map.pelvis)].body == dynamics::kWorld) return 0;
    } catch (const std::exception&) {  // not a link: the error below names the moving ones
    }
  }
  return Body(map, kPelvis, map.pelvis, m, urdf);
}

// The hinge of joint role `key`.
int Hinge(const RoleMap& map, const std::string& key, const std::string& joint, const mjModel* m,
          const std::string& urdf) {
  const int id = mj_name2id(m, mjOBJ_JOINT, joint.c_str());
  if (id < 0 || m->jnt_type[id] != mjJNT_HINGE)
    throw std::invalid_argument(Role(map, key) + ": '" + joint + "' is not a revolute joint of '" +
                                urdf + "'; revolute joints: " + Names(m, mjOBJ_JOINT, 0, m->njnt));
  return id;
}

// Whether body `b` is `top` or below it.
bool AtOrBelow(const mjModel* m, int b, int top) {
  for (; b > 0; b = m->body_parentid[b])
    if (b == top) return true;
  return b == top;
}

// The body below `from` on the way to `to` (`to` below `from`); -1 when `to` is `from`.
int NextOnTheWay(const mjModel* m, int from, int to) {
  int b = to;
  while (b > 0 && m->body_parentid[b] != from) b = m->body_parentid[b];
  return b > 0 && b != from ? b : -1;
}

// The joints from body `top` (exclusive) down to body `bottom` (inclusive), top first; false when
// `bottom` is not below `top`.
bool Chain(const mjModel* m, int top, int bottom, std::vector<std::string>& joints) {
  std::vector<std::string> up;
  int b = bottom;
  for (; b > 0 && b != top; b = m->body_parentid[b]) {
    for (int j = m->body_jntadr[b] + m->body_jntnum[b] - 1; j >= m->body_jntadr[b]; --j)
      if (m->jnt_type[j] == mjJNT_HINGE || m->jnt_type[j] == mjJNT_SLIDE)
        up.emplace_back(mj_id2name(m, mjOBJ_JOINT, j));
  }
  if (b != top) return false;
  joints.assign(up.rbegin(), up.rend());
  return true;
}

std::vector<std::string> ChainOf(const RoleMap& map, const std::string& key, int top, int bottom,
                                 const std::string& top_name, const mjModel* m,
                                 const std::string& urdf) {
  std::vector<std::string> joints;
  if (!Chain(m, top, bottom, joints))
    throw std::invalid_argument(Role(map, key) + ": '" + mj_id2name(m, mjOBJ_BODY, bottom) +
                                "' is not below '" + top_name + "' in '" + urdf + "'");
  return joints;
}

// Joint role `key` must lie on `chain`, after the index `after`; returns its index.
std::size_t OnChain(const RoleMap& map, const std::string& key, const std::string& joint,
                    const std::vector<std::string>& chain, std::ptrdiff_t after,
                    const std::string& what) {
  const auto it = std::find(chain.begin(), chain.end(), joint);
  if (it == chain.end() || it - chain.begin() <= after) {
    std::string names;
    for (const auto& j : chain) names += (names.empty() ? "" : ", ") + j;
    throw std::invalid_argument(Role(map, key) + ": '" + joint + "' is not on " + what +
                                (it == chain.end() ? "" : " after the joints before it") + " (" +
                                names + ")");
  }
  return static_cast<std::size_t>(it - chain.begin());
}

// ±1: the sense of a joint whose axis must be ±e_axis within 25° (world axes, every joint at zero;
// a tilted hip or shoulder keeps its role).
double Sense(const RoleMap& map, const std::string& key, int joint, const mjData* d, int axis,
             const char* what) {
  const Eigen::Vector3d a(d->xaxis[3 * joint], d->xaxis[3 * joint + 1], d->xaxis[3 * joint + 2]);
  if (!(std::abs(a[axis]) > 0.9))
    throw std::invalid_argument(Role(map, key) + ": the joint turns about (" +
                                std::to_string(a.x()) + ", " + std::to_string(a.y()) + ", " +
                                std::to_string(a.z()) +
                                ") with every joint at zero; it must turn " + what);
  return a[axis] > 0.0 ? 1.0 : -1.0;
}

void ResolveLeg(RobotRoles& r, int side, int pelvis, const mjModel* m, const mjData* d,
                const std::string& urdf) {
  const RoleMap& map = r.map;
  const LegRoles& leg = map.legs[side];
  const std::string k = std::string(kSides[side]) + "_leg.";
  const int foot = Body(map, k + "foot", leg.foot, m, urdf);
  r.leg_joints[side] = ChainOf(map, k + "foot", pelvis, foot, map.pelvis, m, urdf);
  const std::string what = "the chain from '" + map.pelvis + "' to '" + leg.foot + "'";
  const std::string* joints[] = {&leg.hip_pitch, &leg.knee, &leg.ankle_pitch};
  const char* keys[] = {"hip_pitch", "knee", "ankle_pitch"};
  std::ptrdiff_t after = -1;
  for (int i = 0; i < 3; ++i) {
    const int j = Hinge(map, k + keys[i], *joints[i], m, urdf);
    after = static_cast<std::ptrdiff_t>(
        OnChain(map, k + keys[i], *joints[i], r.leg_joints[side], after, what));
    r.leg_sense[side][i] =
        Sense(map, k + keys[i], j, d, 1, "about the lateral axis (y), a pitch joint");
  }
}

void ResolveArm(RobotRoles& r, int side, int torso, const mjModel* m, const mjData* d,
                const std::string& urdf) {
  const RoleMap& map = r.map;
  const ArmRoles& arm = map.arms[side];
  const std::string k = std::string(kSides[side]) + "_arm.";
  const int hand = Body(map, k + "hand", arm.hand, m, urdf);
  r.arm_joints[side] = ChainOf(map, k + "hand", torso, hand, map.torso, m, urdf);
  const std::string what = "the chain from '" + map.torso + "' to '" + arm.hand + "'";
  const int roll = Hinge(map, k + "shoulder_roll", arm.shoulder_roll, m, urdf);
  const auto r_at = static_cast<std::ptrdiff_t>(
      OnChain(map, k + "shoulder_roll", arm.shoulder_roll, r.arm_joints[side], -1, what));
  r.shoulder_roll_sense[side] =
      Sense(map, k + "shoulder_roll", roll, d, 0, "about the forward axis (x), a roll joint");
  const int elbow = Hinge(map, k + "elbow", arm.elbow, m, urdf);
  (void)OnChain(map, k + "elbow", arm.elbow, r.arm_joints[side], r_at, what);
  r.elbow_sense[side] =
      Sense(map, k + "elbow", elbow, d, 1, "about the lateral axis (y), a pitch joint");
  // The forearm: the elbow's body or below it, the hand or above it.
  const int forearm = Body(map, k + "forearm", arm.forearm, m, urdf);
  if (!AtOrBelow(m, forearm, m->jnt_bodyid[elbow]) || !AtOrBelow(m, hand, forearm))
    throw std::invalid_argument(Role(map, k + "forearm") + ": '" + arm.forearm +
                                "' is not between '" + arm.elbow + "' and '" + arm.hand + "'");
  // The forearm's direction: from the elbow to the next body on the way to the hand (none: the
  // hand is the forearm, taken as hanging).
  const int wrist = NextOnTheWay(m, forearm, hand);
  if (wrist > 0) {
    const double* e = d->xanchor + 3 * elbow;
    const double* w = d->xpos + 3 * wrist;
    r.forearm_angle[side] = std::atan2(w[0] - e[0], e[2] - w[2]);
  }
}

// The payload arm's wrist: the origin of the next body on the way from the forearm to the hand.
Eigen::Vector3d Wrist(const RoleMap& map, const mjModel* m, const std::string& urdf) {
  const ArmRoles& arm = map.arms[map.payload_arm];
  const int forearm = mj_name2id(m, mjOBJ_BODY, arm.forearm.c_str());
  const int hand = mj_name2id(m, mjOBJ_BODY, arm.hand.c_str());
  const int b = NextOnTheWay(m, forearm, hand);
  if (b <= 0)
    throw std::invalid_argument(Role(map, std::string(kSides[map.payload_arm]) + "_arm.forearm") +
                                ": '" + arm.forearm + "' carries no wrist on the way to '" +
                                arm.hand + "' in '" + urdf + "' (the payload sits at the wrist)");
  return {m->body_pos[3 * b], m->body_pos[3 * b + 1], m->body_pos[3 * b + 2]};
}

}  // namespace

RoleMap ParseRoles(const config::Node& roles) {
  roles.AllowOnly(config::schema::kSimulationRoles);
  RoleMap map;
  map.pelvis = Name(roles, kPelvis, kPelvis, map);
  map.torso = Name(roles, kTorso, kTorso, map);
  for (int side = 0; side < 2; ++side) {
    const std::string leg_key = std::string(kSides[side]) + "_leg";
    const config::Node leg = roles[leg_key];
    leg.AllowOnly(config::schema::kSimulationRolesLeg);
    LegRoles& l = map.legs[side];
    l.hip_pitch = Name(leg, "hip_pitch", leg_key + ".hip_pitch", map);
    l.knee = Name(leg, "knee", leg_key + ".knee", map);
    l.ankle_pitch = Name(leg, "ankle_pitch", leg_key + ".ankle_pitch", map);
    l.foot = Name(leg, "foot", leg_key + ".foot", map);
    const std::string arm_key = std::string(kSides[side]) + "_arm";
    const config::Node arm = roles[arm_key];
    arm.AllowOnly(config::schema::kSimulationRolesArm);
    ArmRoles& a = map.arms[side];
    a.shoulder_roll = Name(arm, "shoulder_roll", arm_key + ".shoulder_roll", map);
    a.elbow = Name(arm, "elbow", arm_key + ".elbow", map);
    a.forearm = Name(arm, "forearm", arm_key + ".forearm", map);
    a.hand = Name(arm, "hand", arm_key + ".hand", map);
  }
  const config::Node payload = roles["payload"];
  payload.AllowOnly(config::schema::kSimulationRolesPayload);
  map.payload_arm = static_cast<int>(payload.Enum("arm", {"left", "right"}));
  return map;
}

RoleMap LoadRoles(const std::string& path) {
  return ParseRoles(config::Document::Load(path).root()["roles"]);
}

RobotRoles ResolveRoles(const RoleMap& map, const mjModel* m, const std::string& urdf) {
  if (map.empty())
    throw std::invalid_argument("no role map for '" + urdf +
                                "' (simulation.roles, config/README.md)");
  RobotRoles r;
  r.map = map;
  const MjDataPtr d(mj_makeData(m));
  mj_kinematics(m, d.get());
  const int pelvis = Pelvis(map, m, urdf);
  const int torso = Body(map, kTorso, map.torso, m, urdf);
  r.waist_joints = ChainOf(map, kTorso, pelvis, torso, map.pelvis, m, urdf);
  for (int side = 0; side < 2; ++side) {
    ResolveLeg(r, side, pelvis, m, d.get(), urdf);
    ResolveArm(r, side, torso, m, d.get(), urdf);
  }
  r.wrist = Wrist(map, m, urdf);
  return r;
}

}  // namespace heft::sim

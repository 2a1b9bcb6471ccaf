// The robot's role map (simulation.roles, config/README.md): which of its links are the pelvis,
// the torso, the feet and the hands, which joints are each leg's hip pitch, knee and ankle pitch
// and each arm's shoulder roll and elbow, which link is the forearm and which arm carries the arm
// scenarios' payload. The scenarios, the controllers and the excitation take every name of the
// robot from here; what else they need (each leg's and arm's whole chain of joints, the waist, the
// joints' senses, the wrist) they find on the URDF from these names. Set-up only: everything here
// allocates and throws.
#pragma once

#include <mujoco/mujoco.h>

#include <Eigen/Core>
#include <array>
#include <map>
#include <string>
#include <vector>

#include "heft/config/yaml.hpp"

namespace heft::sim {

/// One leg: its pitch joints (the standing pose bends them) and its foot (the link carrying the
/// sole: its box collision, and the foot's F/T cell when the robot has them).
struct LegRoles {
  std::string hip_pitch, knee, ankle_pitch, foot;
};

/// One arm: the shoulder's roll joint (the excitation holds the arms off the torso with it), the
/// elbow, the forearm (the elbow's side of the arm that carries a payload) and the hand (the arm's
/// last link).
struct ArmRoles {
  std::string shoulder_roll, elbow, forearm, hand;
};

struct RoleMap {
  std::string pelvis;            ///< the floating base's link (the fixed-base robot's root)
  std::string torso;             ///< torso-load's payload, the standing scenarios' estimated link
  std::array<LegRoles, 2> legs;  ///< [0] left, [1] right
  std::array<ArmRoles, 2> arms;  ///< [0] left, [1] right
  int payload_arm = 0;           ///< the arm whose forearm carries the arm scenarios' payload
  /// Where each role was written ("<file>:<line>:<col>: simulation.roles.left_leg.knee"), by its
  /// key ("left_leg.knee"); empty for a role map made in code. Errors against the URDF name it.
  std::map<std::string, std::string> where;
  [[nodiscard]] bool empty() const noexcept { return pelvis.empty(); }
};

/// The role map of a `roles:` map (simulation.roles, or a role-map file's `roles:`). Every key is
/// required; unknown keys, and names that are not strings, are refused naming file, line, key and
/// what is allowed.
RoleMap ParseRoles(const config::Node& roles);
/// A role-map file: its top-level `roles:` (scripts/gen_sim_configs.py writes
/// config/robots/<robot>_roles.yaml).
RoleMap LoadRoles(const std::string& path);

/// The role map resolved on the robot's MuJoCo model: the chains of joints and the joints' senses.
struct RobotRoles {
  RoleMap map;
  std::array<std::vector<std::string>, 2> leg_joints;  ///< pelvis → foot, in that order
  std::array<std::vector<std::string>, 2> arm_joints;  ///< torso → hand
  std::vector<std::string> waist_joints;               ///< pelvis → torso
  /// ±1: the sense of each leg's hip pitch, knee and ankle pitch (+1: about +y at the zero pose,
  /// the lateral axis pointing left), of each elbow (the same) and of each shoulder roll (+1: about
  /// +x, forward).
  std::array<std::array<double, 3>, 2> leg_sense{};
  std::array<double, 2> elbow_sense{}, shoulder_roll_sense{};
  /// Each forearm's direction with every joint at zero (elbow to wrist, in the x-z plane): its
  /// angle from straight down toward forward [rad] (the reference humanoid's hang: 0; a robot
  /// whose zero pose holds the forearms forward: about π/2).
  std::array<double, 2> forearm_angle{};
  /// Where the payload arm's wrist sits on its forearm (the forearm's frame): the origin of the
  /// next body on the way to the hand.
  Eigen::Vector3d wrist = Eigen::Vector3d::Zero();
  [[nodiscard]] const ArmRoles& payload_arm() const noexcept { return map.arms[map.payload_arm]; }
  /// The elbow angle that holds arm `side`'s forearm `from_down` [rad] forward of straight down.
  [[nodiscard]] double ElbowAt(int side, double from_down) const noexcept {
    return -(from_down - forearm_angle[side]) * elbow_sense[side];
  }
};

/// Checks the role map against the model loaded from `urdf` (every link a moving body, every joint
/// a hinge on its chain, the pitch joints about the lateral axis, the shoulder rolls about the
/// forward one) and derives the chains. Throws std::invalid_argument naming the role (where it was
/// written), the name and what the robot has.
RobotRoles ResolveRoles(const RoleMap& map, const mjModel* m, const std::string& urdf);

}  // namespace heft::sim

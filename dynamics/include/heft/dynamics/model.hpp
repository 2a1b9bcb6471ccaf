// The rigid-body model of a robot, loaded from URDF.
//
// Conventions (identical to MuJoCo's, so that heft, the simulator and the tests agree):
// - Floating base: q = [base position in world (3), base orientation quaternion (w, x, y, z),
//   base→world (4), joint positions]; v = [linear velocity of the base origin IN WORLD (3),
//   angular velocity IN THE BASE FRAME (3), joint velocities]; generalized forces in the same
//   frames (base force in world, base torque about the base origin in the base frame).
//   nq = nv + 1.
// - Fixed base: the root link is welded to the world; q and v hold the joints only.
// - Bodies are the links that move with a joint; a link on a fixed joint is merged into its
//   parent body (its inertia added, its frame kept). Body order is depth-first from the root with
//   siblings in alphabetical order of their joint's name, so a parent always precedes its
//   children. Joint k (k-th body with a 1-DoF joint) has q index `q_index` and v index `v_index`.
// - Every URDF link is a frame (frames of merged links sit in their parent body; frames of links
//   welded to the world have body = kWorld). Frame placements are poses in the body frame.
// - A body frame is its URDF link frame; π (see inertia.hpp) is expressed in it.
// - Spatial vectors are [linear; angular]: motions [v; ω], forces (wrenches) [f; n].
#pragma once

#include <Eigen/Core>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "heft/dynamics/inertia.hpp"

namespace heft::dynamics {

inline constexpr int kWorld = -1;

enum class JointType { kFree, kRevolute, kPrismatic };

struct JointInfo {
  std::string name;
  JointType type = JointType::kRevolute;
  bool continuous = false;               // a revolute joint without position limits
  double lower = 0.0, upper = 0.0;       // position limits (rad or m), when not continuous
  double effort = 0.0, velocity = 0.0;   // URDF <limit> effort and velocity (0 when absent)
  double damping = 0.0, friction = 0.0;  // URDF <dynamics>
};

struct Body {
  std::string name;     // URDF link name
  int parent = kWorld;  // parent body index, or kWorld
  JointInfo joint;
  int q_index = 0;  // first index of this body's joint in q
  int v_index = 0;  // first index of this body's joint in v
  // Pose of the joint frame J in the parent body frame P (world for the root): placement_R = R_PJ,
  // placement_p = p_PJ (x_P = R_PJ x_J + p_PJ). For the free root it is the identity.
  Eigen::Matrix3d placement_R = Eigen::Matrix3d::Identity();
  Eigen::Vector3d placement_p = Eigen::Vector3d::Zero();
  Eigen::Vector3d axis = Eigen::Vector3d::UnitZ();  // unit joint axis in the body frame
  Vector10 parameters = Vector10::Zero();           // π of the body with its merged links
  // The covariance of π (heft's order, body frame, at the body origin) when the parameters come
  // from an identification that states one (robot.parameters' `covariance`); none for the URDF's.
  std::optional<Eigen::Matrix<double, 10, 10>> covariance;
};

// A URDF <collision> box, cylinder or sphere as the box that bounds it (meshes are not kept):
// its half extents along its own axes C and its pose in the link's frame F (R_FC, p_FC).
struct CollisionBox {
  Eigen::Vector3d half = Eigen::Vector3d::Zero();
  Eigen::Matrix3d R_FC = Eigen::Matrix3d::Identity();
  Eigen::Vector3d p_FC = Eigen::Vector3d::Zero();
};

struct Frame {
  std::string name;  // URDF link name
  int body = kWorld;
  Eigen::Matrix3d R = Eigen::Matrix3d::Identity();  // R_BF: the frame F's pose in its body B
  Eigen::Vector3d p = Eigen::Vector3d::Zero();      // p_BF
  std::vector<CollisionBox> collisions;             // the link's collision geometry
};

struct Model {
  std::string name;
  bool floating_base = false;
  int nq = 0;
  int nv = 0;
  Eigen::Vector3d gravity{0.0, 0.0, -9.81};  // g_W [m/s²]
  std::vector<Body> bodies;
  std::vector<Frame> frames;
  // Problems that were repaired at load time (only when ModelOptions asked for repairs), and URDF
  // content that was ignored (a <mimic> on a fixed joint).
  std::vector<std::string> warnings;

  int num_bodies() const { return static_cast<int>(bodies.size()); }
  // Look-ups for set-up code; they throw ModelError naming the unknown name and the known ones.
  int body_index(std::string_view link_name) const;
  int frame_index(std::string_view link_name) const;
  // Body whose joint has this name (1-DoF joints and the floating joint).
  int joint_body_index(std::string_view joint_name) const;
  // Names of the 1-DoF joints in v order (the floating base excluded).
  std::vector<std::string> joint_names() const;
};

struct ModelOptions {
  // A URDF whose root is the robot's base link becomes floating when true. A URDF whose root is a
  // massless dummy link joined to the robot by a `floating` joint (MuJoCo's idiom) is floating
  // whatever this says.
  bool floating_base = false;
  // Repair inertias that are not positive definite or break the triangle inequality (clamping the
  // principal moments) instead of refusing them; each repair is recorded in Model::warnings.
  bool repair_inertia = false;
};

// Set-up errors (unsupported or unphysical URDF content, unknown names). The message names the
// URDF element.
class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

Model LoadModelFromUrdfFile(const std::string& path, const ModelOptions& options);
Model LoadModelFromUrdfString(const std::string& xml, const ModelOptions& options,
                              const std::string& source_name = "<string>");

// Parameters of a body in the paper's π order (inertia about the body origin, body frame).
inline Vector10 GetBodyParameters(const Model& model, int body) {
  return model.bodies[body].parameters;
}
// Between ticks or at set-up only: not thread-safe with algorithms running on the same model.
inline void SetBodyParameters(Model& model, int body, const Vector10& pi) {
  model.bodies[body].parameters = pi;
}
// Total mass of the model.
double TotalMass(const Model& model);

}  // namespace heft::dynamics

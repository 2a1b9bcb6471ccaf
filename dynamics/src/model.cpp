// URDF → Model with urdfdom: validation, fixed-joint merging, floating-base detection.
#include "heft/dynamics/model.hpp"

#include <urdf_parser/urdf_parser.h>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "heft/hal/text_file.hpp"
#include "urdf_inertial_check.hpp"

namespace heft::dynamics {
namespace {

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 40; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 40) out += ", … (" + std::to_string(names.size()) + " in all)";
  return out;
}

Eigen::Matrix3d ToRotation(const urdf::Rotation& r) {
  Eigen::Quaterniond quat(r.w, r.x, r.y, r.z);
  return quat.normalized().toRotationMatrix();
}

Eigen::Vector3d ToVector(const urdf::Vector3& v) {
  return {v.x, v.y, v.z};
}

// Offset of the first byte that does not start a well-formed UTF-8 sequence, or npos. TinyXML (the
// parser urdfdom and the inertial check use) steps over a multi-byte sequence by its lead byte
// alone, so a truncated one at the end of a name runs past the string's terminator.
std::size_t FirstInvalidUtf8(const std::string& text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned c = s[i];
    int len = 0;
    unsigned lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // no overlong forms
      if (c == 0xED) hi = 0x9F;  // no surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
    } else {
      return i;
    }
    if (i + static_cast<std::size_t>(len) > n || s[i + 1] < lo || s[i + 1] > hi) return i;
    for (int k = 2; k < len; ++k)
      if ((s[i + k] & 0xC0) != 0x80) return i;
    i += static_cast<std::size_t>(len);
  }
  return std::string::npos;
}

class Builder {
 public:
  Builder(const std::string& source, const ModelOptions& options)
      : source_(source), options_(options) {}

  Model Build(const urdf::ModelInterface& urdf) {
    urdf_ = &urdf;
    model_.name = urdf.getName();
    urdf::LinkConstSharedPtr root = urdf.getRoot();
    if (!root) Fail("the URDF has no root link");

    urdf::LinkConstSharedPtr base = root;
    bool floating = options_.floating_base;
    const auto& root_children = root->child_joints;
    const bool root_has_floating =
        std::any_of(root_children.begin(), root_children.end(),
                    [](const auto& j) { return j->type == urdf::Joint::FLOATING; });
    if (root_has_floating) {
      if (root_children.size() != 1)
        Fail("link '" + root->name +
             "': a floating joint must be the root link's only child joint");
      if (root->inertial && root->inertial->mass != 0.0)
        Fail("link '" + root->name + "': the dummy root of a floating joint must be massless");
      base = urdf.getLink(root_children[0]->child_link_name);
      floating = true;
      AddFrame(root->name, kWorld, Eigen::Matrix3d::Identity(), Eigen::Vector3d::Zero());
    }
    model_.floating_base = floating;

    if (floating) {
      Body body;
      body.name = base->name;
      body.parent = kWorld;
      body.joint.name = root_has_floating ? root_children[0]->name : std::string("root_free");
      body.joint.type = JointType::kFree;
      body.q_index = 0;
      body.v_index = 0;
      body.parameters = LinkParameters(*base);
      model_.bodies.push_back(body);
      nq_ = 7;
      nv_ = 6;
      AddFrame(base->name, 0, Eigen::Matrix3d::Identity(), Eigen::Vector3d::Zero());
      Visit(*base, 0, Eigen::Matrix3d::Identity(), Eigen::Vector3d::Zero());
    } else {
      // The root link is welded to the world; its inertia belongs to the world.
      AddFrame(base->name, kWorld, Eigen::Matrix3d::Identity(), Eigen::Vector3d::Zero());
      LinkParameters(*base);  // validated all the same
      Visit(*base, kWorld, Eigen::Matrix3d::Identity(), Eigen::Vector3d::Zero());
    }
    model_.nq = nq_;
    model_.nv = nv_;
    if (model_.nv == 0) Fail("the URDF has no moving joint");
    CheckComposedValuesFinite();
    return std::move(model_);
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const { throw ModelError(source_ + ": " + what); }

  // Each number in the URDF is finite (checked as read), but composing them (a huge mass times a
  // huge offset, two huge origins added) can overflow; such a model is refused, not handed on.
  void CheckComposedValuesFinite() const {
    for (const Body& b : model_.bodies)
      if (!b.parameters.allFinite() || !b.axis.allFinite() || !b.placement_R.allFinite() ||
          !b.placement_p.allFinite())
        Fail("link '" + b.name + "': its inertia or placement overflows (values too large)");
    for (const Frame& f : model_.frames)
      if (!f.R.allFinite() || !f.p.allFinite())
        Fail("link '" + f.name + "': its placement overflows (values too large)");
  }

  void AddFrame(const std::string& name, int body, const Eigen::Matrix3d& R,
                const Eigen::Vector3d& p) {
    Frame frame;
    frame.name = name;
    frame.body = body;
    frame.R = R;
    frame.p = p;
    if (const urdf::LinkConstSharedPtr link = urdf_->getLink(name)) frame.collisions = Boxes(*link);
    model_.frames.push_back(frame);
  }

  // The link's <collision> primitives as bounding boxes (identification's ellipsoids).
  static std::vector<CollisionBox> Boxes(const urdf::Link& link) {
    std::vector<CollisionBox> out;
    for (const auto& col : link.collision_array) {
      if (!col || !col->geometry) continue;
      CollisionBox box;
      switch (col->geometry->type) {
        case urdf::Geometry::BOX: {
          const auto& b = static_cast<const urdf::Box&>(*col->geometry);
          box.half = 0.5 * ToVector(b.dim);
          break;
        }
        case urdf::Geometry::CYLINDER: {
          const auto& c = static_cast<const urdf::Cylinder&>(*col->geometry);
          box.half = Eigen::Vector3d(c.radius, c.radius, 0.5 * c.length);
          break;
        }
        case urdf::Geometry::SPHERE: {
          const auto& sphere = static_cast<const urdf::Sphere&>(*col->geometry);
          box.half = Eigen::Vector3d::Constant(sphere.radius);
          break;
        }
        default:
          continue;  // meshes: not bounded here
      }
      box.R_FC = ToRotation(col->origin.rotation);
      box.p_FC = ToVector(col->origin.position);
      out.push_back(box);
    }
    return out;
  }

  // π of a link in its own frame, validated (and repaired when allowed).
  Vector10 LinkParameters(const urdf::Link& link) {
    if (!link.inertial) return Vector10::Zero();  // massless (sensor frames, dummy links)
    const urdf::Inertial& in = *link.inertial;
    const std::string where = "link '" + link.name + "' <inertial>";
    Eigen::Matrix3d Ic;
    Ic << in.ixx, in.ixy, in.ixz, in.ixy, in.iyy, in.iyz, in.ixz, in.iyz, in.izz;
    if (!std::isfinite(in.mass) || !Ic.allFinite()) Fail(where + ": non-finite value");
    if (in.mass < 0.0) Fail(where + ": negative mass " + std::to_string(in.mass));
    if (in.mass == 0.0) {
      if (Ic.norm() != 0.0) Fail(where + ": zero mass with a non-zero inertia");
      return Vector10::Zero();
    }
    if (Ic.isZero(0.0)) {
      // A point mass (MuJoCo accepts it): pseudo-inertia m [c; 1][c; 1]ᵀ, positive semidefinite,
      // fine for the dynamics; only a filter that needs it definite refuses to estimate it.
      RigidBodyInertia point;
      point.mass = in.mass;
      point.com = ToVector(in.origin.position);
      point.inertia_com.setZero();
      return ParametersFromInertia(point);
    }
    Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(Ic);
    Eigen::Vector3d d = eig.eigenvalues();
    const double scale = std::max(d.cwiseAbs().maxCoeff(), 1e-12);
    const double tol = 1e-9 * scale;
    const bool positive = d.minCoeff() > tol;
    const bool triangle =
        d[0] + d[1] >= d[2] - tol && d[0] + d[2] >= d[1] - tol && d[1] + d[2] >= d[0] - tol;
    if (!positive || !triangle) {
      std::ostringstream msg;
      msg << where << ": the inertia about the centre of mass "
          << (!positive ? "is not positive definite" : "breaks the triangle inequality")
          << " (principal moments " << d[0] << ", " << d[1] << ", " << d[2] << ")";
      if (!options_.repair_inertia)
        Fail(msg.str() + "; fix the URDF or set the option to repair inertias");
      // Repair: principal moments at least 1e-6 of the largest, and the largest no more than the
      // sum of the other two; the principal axes are kept.
      const double floor_value = 1e-6 * scale;
      for (int i = 0; i < 3; ++i) d[i] = std::max(d[i], floor_value);
      std::sort(d.data(), d.data() + 3);
      if (d[2] > d[0] + d[1]) d[2] = d[0] + d[1];
      Ic = eig.eigenvectors() * d.asDiagonal() * eig.eigenvectors().transpose();
      std::ostringstream fixed;
      fixed << msg.str() << "; repaired to " << d[0] << ", " << d[1] << ", " << d[2];
      model_.warnings.push_back(source_ + ": " + fixed.str());
    }
    RigidBodyInertia body;
    body.mass = in.mass;
    const Eigen::Matrix3d Ro = ToRotation(in.origin.rotation);
    body.com = ToVector(in.origin.position);
    body.inertia_com = Ro * Ic * Ro.transpose();
    return ParametersFromInertia(body);
  }

  // Depth-first over the children of `link`, which is rigidly attached to `body` at (R, p).
  void Visit(const urdf::Link& link, int body, const Eigen::Matrix3d& R, const Eigen::Vector3d& p) {
    std::vector<urdf::JointSharedPtr> joints = link.child_joints;
    std::sort(joints.begin(), joints.end(),
              [](const auto& x, const auto& y) { return x->name < y->name; });
    for (const auto& joint : joints) {
      const std::string where = "joint '" + joint->name + "'";
      if (joint->mimic) {
        // On a fixed joint (Talos's grippers) a mimic means nothing: nothing moves to follow.
        if (joint->type != urdf::Joint::FIXED) Fail(where + ": mimic joints are not supported");
        model_.warnings.push_back(source_ + ": " + where +
                                  ": <mimic> on a fixed joint ignored (nothing to follow)");
      }
      const urdf::Pose& origin = joint->parent_to_joint_origin_transform;
      const Eigen::Matrix3d Rj = R * ToRotation(origin.rotation);
      const Eigen::Vector3d pj = R * ToVector(origin.position) + p;
      urdf::LinkConstSharedPtr child;
      for (const auto& c : link.child_links)
        if (c->name == joint->child_link_name) child = c;
      if (!child) Fail(where + ": child link '" + joint->child_link_name + "' not found");

      switch (joint->type) {
        case urdf::Joint::FIXED: {
          const Vector10 pi = LinkParameters(*child);
          if (body != kWorld) model_.bodies[body].parameters += TransformParameters(pi, Rj, pj);
          AddFrame(child->name, body, Rj, pj);
          Visit(*child, body, Rj, pj);
          break;
        }
        case urdf::Joint::REVOLUTE:
        case urdf::Joint::CONTINUOUS:
        case urdf::Joint::PRISMATIC: {
          Body b;
          b.name = child->name;
          b.parent = body;
          b.joint.name = joint->name;
          b.joint.type =
              joint->type == urdf::Joint::PRISMATIC ? JointType::kPrismatic : JointType::kRevolute;
          b.joint.continuous = joint->type == urdf::Joint::CONTINUOUS;
          if (joint->limits) {
            b.joint.lower = joint->limits->lower;
            b.joint.upper = joint->limits->upper;
            b.joint.effort = joint->limits->effort;
            b.joint.velocity = joint->limits->velocity;
            if (!b.joint.continuous && b.joint.lower > b.joint.upper)
              Fail(where + " <limit>: lower " + std::to_string(b.joint.lower) + " above upper " +
                   std::to_string(b.joint.upper));
          } else if (!b.joint.continuous) {
            Fail(where + ": a " +
                 std::string(joint->type == urdf::Joint::PRISMATIC ? "prismatic" : "revolute") +
                 " joint needs a <limit> element");
          }
          if (joint->dynamics) {
            b.joint.damping = joint->dynamics->damping;
            b.joint.friction = joint->dynamics->friction;
          }
          const Eigen::Vector3d axis = ToVector(joint->axis);
          if (!axis.allFinite()) Fail(where + " <axis>: non-finite value");
          if (!(axis.stableNorm() > 1e-9)) Fail(where + " <axis>: zero axis");
          b.axis = axis.stableNormalized();  // no overflow on huge components
          b.placement_R = Rj;
          b.placement_p = pj;
          b.q_index = nq_++;
          b.v_index = nv_++;
          b.parameters = LinkParameters(*child);
          model_.bodies.push_back(b);
          const int index = model_.num_bodies() - 1;
          AddFrame(child->name, index, Eigen::Matrix3d::Identity(), Eigen::Vector3d::Zero());
          Visit(*child, index, Eigen::Matrix3d::Identity(), Eigen::Vector3d::Zero());
          break;
        }
        case urdf::Joint::FLOATING:
          Fail(where +
               ": a floating joint is only supported as the single child of a massless root link");
        case urdf::Joint::PLANAR:
          Fail(where + ": planar joints are not supported");
        default:
          Fail(where + ": unknown joint type");
      }
    }
  }

  std::string source_;
  ModelOptions options_;
  Model model_;
  const urdf::ModelInterface* urdf_ = nullptr;  // during Build
  int nq_ = 0;
  int nv_ = 0;
};

}  // namespace

Model LoadModelFromUrdfString(const std::string& xml, const ModelOptions& options,
                              const std::string& source_name) {
  if (const std::size_t bad = FirstInvalidUtf8(xml); bad != std::string::npos) {
    const auto line =
        1 + std::count(xml.begin(), xml.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(xml[bad]));
    throw ModelError(source_name + ":" + std::to_string(line) + ": not valid UTF-8 (byte " + byte +
                     " at offset " + std::to_string(bad) + "); save the URDF as UTF-8");
  }
  detail::CheckInertialNumbers(xml, source_name);
  urdf::ModelInterfaceSharedPtr urdf;
  try {
    urdf = urdf::parseURDF(xml);
  } catch (const std::exception& e) {
    throw ModelError(source_name + ": not a valid URDF: " + e.what());
  }
  if (!urdf) throw ModelError(source_name + ": not a valid URDF (urdfdom's message is on stderr)");
  return Builder(source_name, options).Build(*urdf);
}

Model LoadModelFromUrdfFile(const std::string& path, const ModelOptions& options) {
  const hal::TextFile file = hal::ReadTextFile(path);
  if (!file.ok()) throw ModelError(path + ": " + file.Describe("the URDF file"));
  return LoadModelFromUrdfString(file.text, options, path);
}

namespace {
int Find(const std::vector<std::string>& names, std::string_view what, std::string_view kind) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == what) return static_cast<int>(i);
  throw ModelError("unknown " + std::string(kind) + " '" + std::string(what) +
                   "'; known: " + JoinNames(names));
}
}  // namespace

int Model::body_index(std::string_view link_name) const {
  std::vector<std::string> names;
  for (const Body& b : bodies) names.push_back(b.name);
  for (const Frame& f : frames)
    if (f.name == link_name && f.body != kWorld && bodies[f.body].name != link_name)
      throw ModelError("link '" + std::string(link_name) + "' is merged into body '" +
                       bodies[f.body].name + "' by a fixed joint; estimate '" +
                       bodies[f.body].name + "' instead");
  return Find(names, link_name, "body (moving link)");
}

int Model::frame_index(std::string_view link_name) const {
  std::vector<std::string> names;
  for (const Frame& f : frames) names.push_back(f.name);
  return Find(names, link_name, "frame (link)");
}

int Model::joint_body_index(std::string_view joint_name) const {
  std::vector<std::string> names;
  for (const Body& b : bodies) names.push_back(b.joint.name);
  return Find(names, joint_name, "joint");
}

std::vector<std::string> Model::joint_names() const {
  std::vector<std::string> names;
  for (const Body& b : bodies)
    if (b.joint.type != JointType::kFree) names.push_back(b.joint.name);
  return names;
}

double TotalMass(const Model& model) {
  double m = 0.0;
  for (const Body& b : model.bodies) m += b.parameters[0];
  return m;
}

}  // namespace heft::dynamics

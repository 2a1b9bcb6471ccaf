// Loading the robot's URDF into MuJoCo, for the scenarios' plant and for the controllers' model.
// Set-up only: these functions allocate and throw.
#pragma once

#include <mujoco/mujoco.h>

#include <Eigen/Core>
#include <memory>
#include <string>

namespace heft::sim {

using Vector10 = Eigen::Matrix<double, 10, 1>;

struct MjModelDeleter {
  void operator()(mjModel* m) const noexcept { mj_deleteModel(m); }
};
struct MjDataDeleter {
  void operator()(mjData* d) const noexcept { mj_deleteData(d); }
};
using MjModelPtr = std::unique_ptr<mjModel, MjModelDeleter>;
using MjDataPtr = std::unique_ptr<mjData, MjDataDeleter>;

struct MujocoLoadOptions {
  bool add_floor = false;   ///< a plane at z = 0 (for the floating-base robot standing on it)
  double timestep = 0.001;  ///< [s]
};

/// Loads a URDF (MuJoCo's own URDF importer: links on fixed joints are fused into their parent,
/// body frames are the URDF link frames). Throws std::runtime_error naming the file on failure.
MjModelPtr LoadMujocoModel(const std::string& urdf_path, const MujocoLoadOptions& options);

/// MuJoCo body id of a URDF link; throws std::invalid_argument naming the link, the file and the
/// known bodies when unknown.
int MujocoBodyId(const mjModel* m, const std::string& link, const std::string& source);

/// π of a body (paper order [m, h, Ixx, Ixy, Ixz, Iyy, Iyz, Izz], inertia about the body origin,
/// body frame; off-diagonal entries are the tensor entries, i.e. -∫xy dm).
Vector10 MujocoBodyParameters(const mjModel* m, int body) noexcept;

/// Writes π into the model's body (mass, centre of mass, principal inertia and axes) and updates
/// the subtree masses. Returns false, leaving the model untouched, when π is not physically
/// consistent (mass <= 0, or an inertia about the centre of mass that is not positive definite or
/// breaks the triangle inequality). No allocation.
bool SetMujocoBodyParameters(mjModel* m, int body, const Vector10& pi) noexcept;

}  // namespace heft::sim

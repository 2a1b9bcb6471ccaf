// The condensed regressor of Foster et al. eq. (6)-(7):  Y(q, v, a) π = Y_est π_est + τ_nom.
//
// For k chosen bodies, Y_est (nv × 10k) holds the columns of the full regressor that multiply the
// chosen bodies' parameters (π order of eq. 3, body after body in the selection's order), and
// τ_nom is one RNEA pass with the chosen bodies' inertias taken as zero.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "heft/dynamics/dynamics.hpp"

namespace heft::dynamics {

class RegressorSelection {
 public:
  // Set-up: throws ModelError for an unknown body or a body chosen twice.
  RegressorSelection(const Model& model, const std::vector<std::string>& body_names);

  int size() const { return static_cast<int>(bodies_.size()); }
  const std::vector<int>& bodies() const { return bodies_; }
  // Per body of the model: 1 when chosen.
  const std::vector<unsigned char>& mask() const { return mask_; }
  // π of the chosen bodies stacked (10k) from / into the model.
  Eigen::VectorXd Gather(const Model& model) const;
  void Scatter(Model& model, const Eigen::Ref<const Eigen::VectorXd>& stacked) const;

 private:
  std::vector<int> bodies_;
  std::vector<unsigned char> mask_;
};

// The 6×10 matrix Φ with f = Φ(a, v) π for one body: its spatial force from its spatial
// acceleration and velocity (body frame, [linear; angular]).
Matrix6x10 BodyRegressor(const Vector6& a, const Vector6& v) noexcept;

void CondensedRegressor(const Model& model, Workspace& ws, const RegressorSelection& selection,
                        const Eigen::Ref<const Eigen::VectorXd>& q,
                        const Eigen::Ref<const Eigen::VectorXd>& v,
                        const Eigen::Ref<const Eigen::VectorXd>& a,
                        Eigen::Ref<Eigen::MatrixXd> Y_est,
                        Eigen::Ref<Eigen::VectorXd> tau_nom) noexcept;

// The sensitivity of the nominal torque to other bodies' mass and first moment, for a consider
// analysis of the nominal model's error (estimator::Measurement): column block k (4 columns) is
// ∂τ/∂(m, h)_b of body b = bodies[k] times factors[k], a 4×4 matrix (a Cholesky factor of that
// body's covariance of (m, h), so that the columns are the torques of its errors at one standard
// deviation). Reads the poses, velocities and accelerations that the last Rnea or
// CondensedRegressor left in `ws` (call it after one of them, at the same state). `out`:
// nv × 4·bodies.size().
void MassFirstMomentColumns(const Model& model, const Workspace& ws, std::span<const int> bodies,
                            std::span<const Eigen::Matrix4d> factors,
                            Eigen::Ref<Eigen::MatrixXd> out) noexcept;

}  // namespace heft::dynamics

// Physically consistent identification as a semidefinite program (solved by CSDP):
//
//   minimise   ‖W^½ (Y x − y)‖² + μ ‖P (x − x_prior)‖² + 10⁻⁶ ‖D (x − x_prior)‖²
//              (P: PriorPull, the change of m, h and the inertia about the CoM in plausible
//              sizes; D: the columns' norms)
//   subject to J(π_b) ⪰ ε_b 1 for every chosen body (pseudo-inertia, positive definite, with
//              ε_b = max(ε, κ λ_min(J(π_prior,b))): no body thinner than κ of the URDF's),
//              tr(J(π_b) Q_b) ≥ 0 for bodies with a bounding ellipsoid (mass inside it),
//              f_c ≥ 0, f_v ≥ 0 for friction unknowns.
//
// The least-squares term enters through its normal equations, reduced to an n × n triangular
// factor R (RᵀR = D⁻¹AD⁻¹ + μD⁻¹PᵀPD⁻¹ + 10⁻⁶, so the SDP's size depends on the unknowns only,
// never on the samples) and the Schur-complement LMI [[t, (Rζ − r)ᵀ], [Rζ − r, 1]] ⪰ 0 with the
// objective t; ζ = D(x − x_prior) are the column-scaled unknowns (D: the columns' norms, for
// conditioning).
//
// The pull toward the prior is what decides every direction the recording does not identify
// (masses regroup up a chain of revolute joints; links behind a held joint move as one): there
// the solution is the prior plus corrections shared in proportion to each unknown's plausible
// size. It holds each body's inertia about its CoM, not about its origin: where the data move a
// CoM and not the second moments, the origin's inertia follows the parallel-axis change instead
// of the central inertia absorbing it (docs/identification.md). Measured in the columns' norms
// instead, it moved the poorly excited links most, because their columns are small: on the deviated
// robot the wrist links came out at twice their mass and the torso 1.9 kg heavy, at the same fit
// (docs/identification.md). A body whose identified mass or first-moment component the data move by
// more than 3 plausible sizes from the prior (in the solution with the 10⁻⁶ floor alone: a payload
// on it when recorded) is released from the pull; it keeps the floor (SdpResult::released_bodies).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "heft/identification/identify.hpp"

namespace heft::identification {

// {x : (x − c)ᵀ R diag(1/a²) Rᵀ (x − c) ≤ 1} in the body frame.
struct Ellipsoid {
  Eigen::Vector3d center = Eigen::Vector3d::Zero();
  Eigen::Vector3d semi_axes = Eigen::Vector3d::Ones();
  Eigen::Matrix3d R = Eigen::Matrix3d::Identity();
};
// The 4×4 Q with tr(J(π) Q) = ∫ρ (1 − (x−c)ᵀ A (x−c)) ≥ 0 when the mass lies in the ellipsoid.
Eigen::Matrix4d EllipsoidMatrix(const Ellipsoid& e);
// Ellipsoid's content in a body with parameters π: tr(J(π) Q) / m ∈ (−∞, 1].
double EllipsoidMargin(const Eigen::Matrix<double, 10, 1>& pi, const Ellipsoid& e);

// How far (in plausible sizes) the data must identify a body from the prior to release it from
// the pull (above; SdpResult::released_bodies).
inline constexpr double kReleaseSizes = 3.0;

struct SdpOptions {
  // μ: the pull toward the prior, per plausible size squared, against the whitened rows' sum of
  // squares (one unit per row at the noise model's σ).
  double regularisation = 1e3;
  // σ_f: the friction unknowns' prior (N·m, N·m·s/rad; the pipeline sets it from
  // PriorUncertainty::friction, the posterior's), toward 0 with
  // the weight of one whitened row, not μ's: the URDF states no friction to pull toward, and μ's
  // pull shrank what the data fix (docs/identification.md, "The pull toward the URDF").
  double friction_sigma = 1.0;
  double epsilon = 1e-7;  // smallest eigenvalue of every pseudo-inertia
  // κ: every body's pseudo-inertia keeps at least this share of the prior's smallest eigenvalue
  // (ε_b above). With the absolute ε alone the SDP returned point masses (I_c ≈ 2ε ≈ 2e-7 kg·m²)
  // for poorly excited links on the deviated robot; the EKF cannot leave such a body (its
  // log-Cholesky coordinates sit at log ε, where π barely moves with θ) and hands rank-3
  // pseudo-inertias on (docs/identification.md, "An identified body keeps a margin from the
  // point mass"). 0: the absolute ε alone.
  double margin = 0.1;
  std::vector<std::optional<Ellipsoid>> ellipsoids;  // per chosen body, or empty for none
  bool friction_nonnegative = true;
  bool verbose = false;  // CSDP's iteration log on stdout
};

// P of the pull μ ‖P (x − x_prior)‖² (n × n, block diagonal): per chosen body the change of m, h
// and the inertia about the CoM (I_c = I_o − [h]ₓᵀ[h]ₓ / m, linearised at the prior) over
// PriorScale's plausible sizes; the friction unknowns 1 / (σ_f √μ) (SdpOptions::friction_sigma);
// every other unknown 1 / its plausible size.
Eigen::MatrixXd PriorPull(const Problem& problem, const SdpOptions& options);

struct SdpResult {
  Eigen::VectorXd x;
  int status = -1;  // CSDP's return code: 0 solved, 3 solved to reduced accuracy, else failure
  bool ok = false;
  double seconds = 0.0;
  std::string message;
  std::vector<double> body_epsilon;  // ε_b per chosen body, as constrained
  std::vector<int> released_bodies;  // chosen bodies (selection order) released from the pull
  // After the solve every body below J(π) ⪰ ½ε_b·1 is brought onto J ⪰ ε_b·1 (ProjectToConsistent):
  // CSDP's reduced accuracy stops with some LMIs violated. The bodies moved, those whose mass or
  // centre of mass had to move too, and the objective (above) at the
  // solver's x and at the returned (projected) x: what the projection cost the fit.
  Eigen::VectorXd x_solver;  // the solver's x, before the projection
  int projected_bodies = 0;
  int projected_mass_or_com = 0;
  double objective_solver = 0.0;
  double objective = 0.0;
};

SdpResult SolveSdp(const NormalEquations& ne, const Problem& problem, const SdpOptions& options);

// For an operator: what a failed SDP's status means here and what to try (several lines), given
// the options it ran with and the condition number of its rows (column-scaled; ≤ 0: unknown).
std::string ExplainSdpFailure(const SdpResult& result, const SdpOptions& options, double condition);

}  // namespace heft::identification

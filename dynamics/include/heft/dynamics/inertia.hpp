// Inertial parameters of one rigid body: the 10-vector π, its physical quantities and the
// physical-consistency test.
//
// π order (Foster et al. eq. 3): [m, hx, hy, hz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz], with h = m c the
// first moment and I the rotational inertia about the BODY FRAME ORIGIN (not the centre of mass),
// all expressed in the body frame (the URDF link frame).
#pragma once

#include <Eigen/Core>

namespace heft::dynamics {

using Vector10 = Eigen::Matrix<double, 10, 1>;
using Vector6 = Eigen::Matrix<double, 6, 1>;

// The same body described by mass, centre of mass and inertia about the centre of mass.
struct RigidBodyInertia {
  double mass = 0.0;
  Eigen::Vector3d com = Eigen::Vector3d::Zero();
  Eigen::Matrix3d inertia_com = Eigen::Matrix3d::Zero();
};

// Symmetric 3×3 from the six inertia entries of π (indices 4..9).
Eigen::Matrix3d InertiaFromParameters(const Vector10& pi) noexcept;

// π from mass, centre of mass and inertia about the centre of mass (parallel-axis theorem).
Vector10 ParametersFromInertia(const RigidBodyInertia& body) noexcept;

// Mass, centre of mass and inertia about the centre of mass from π. A zero mass gives com = 0.
RigidBodyInertia InertiaFromParameters10(const Vector10& pi) noexcept;

// Expresses π_B, given in a frame B, in a frame A where B's pose in A is R = R_AB, p = p_AB
// (x_A = R_AB x_B + p_AB): returns π_A. Linear in π, so it applies to a sum of bodies' π (a
// composite: Crba, the fixed links' merge) as to one body's.
Vector10 TransformParameters(const Vector10& pi_b, const Eigen::Matrix3d& R,
                             const Eigen::Vector3d& p) noexcept;

// The linear map of π under a translation: π_A = X π_B for a frame B whose origin sits at p in A
// (same orientation). Linear in π (m, h, I about the origin), so it applies to any 10-vector,
// covariance directions included; X(p)⁻¹ = X(−p).
Eigen::Matrix<double, 10, 10> TranslationMatrix(const Eigen::Vector3d& p) noexcept;

// The 4×4 pseudo-inertia J = [[Σ, h], [hᵀ, m]] with Σ = ½ tr(I) 1 − I (Wensing et al.).
Eigen::Matrix4d PseudoInertia(const Vector10& pi) noexcept;

// Physical consistency: the pseudo-inertia is positive definite, with its smallest eigenvalue
// above `tol` (absolute, in kg·m²-like units). Equivalent to m > 0 and an inertia about the centre
// of mass that is positive definite and obeys the triangle inequalities strictly. Bodies on the
// boundary (semidefinite: a point mass, a rod, a flat plate) are realisable and fine for the
// dynamics but not consistent in this strict sense, which the log-Cholesky parametrisation needs.
bool IsPhysicallyConsistent(const Vector10& pi, double tol = 0.0) noexcept;

// The margin from the point mass (and from rods and plates) that an ESTIMATED body keeps: its
// pseudo-inertia's smallest eigenvalue at least kConsistencyMargin times its largest. Why relative
// to λ_max(J): J's entries are at most of its order, so writing π with 9 significant digits moves
// λ_min(J) by at most ~1e-7 λ_max (5e-9 per entry through Σ = ½ tr(I) 1 − I); 1e-6 keeps a body
// 10× further from the boundary than that, and λ_min(J) − ε λ_max(J) is concave in π, so every
// set on the rate limiter's segment between two sets with the margin has it too. A body whose
// λ_max(J) ≈ m (smaller than 1 m about its origin) keeps an rms thickness ≥ 1 mm in its thinnest
// direction: no real link is thinner; a point mass (heft-identify's SDP without its margin:
// λ_min / λ_max ≈ 1e-7) is. The log-Cholesky map's Cholesky factor then has a condition number at
// most 1e3.
inline constexpr double kConsistencyMargin = 1e-6;
// A pseudo-inertia whose smallest eigenvalue is within this fraction of its largest of zero, of
// either sign, is on the boundary (a point mass, rod or plate) up to rounding, not inconsistent:
// URDF values written with 6–9 significant digits move λ_min(J) by ~1e-7 λ_max.
inline constexpr double kDegenerateTolerance = 1e-6;

// λ_min(J) and λ_max(J) of π's pseudo-inertia (ascending eigenvalues' ends); no allocation.
struct PseudoInertiaExtremes {
  double min = 0.0;
  double max = 0.0;
  // kConsistencyMargin · λ_max: the smallest λ_min an estimated body may have.
  double threshold() const noexcept { return kConsistencyMargin * max; }
};
PseudoInertiaExtremes PseudoInertiaEigenvalues(const Vector10& pi) noexcept;

// Consistent with the margin: finite, m > 0 and λ_min(J) > kConsistencyMargin · λ_max(J). The
// test the estimator applies to an estimated body's nominal, to a start_from estimate and to every
// set it hands on.
bool HasConsistencyMargin(const Vector10& pi) noexcept;

// π moved into the margin when it is consistent (λ_min(J) > 0) but too thin: J + δ·1, i.e. mass +δ
// and the inertia about the origin +2δ·1 (first moment kept), with δ the smallest that gives
// λ_min = 2 kConsistencyMargin λ_max (twice the margin: room for rounding). δ ≤ 2e-6 λ_max(J), so
// the mass moves by at most 2e-6 of J's scale. π unchanged when it has the margin; no allocation.
Vector10 InflateToMargin(const Vector10& pi) noexcept;

}  // namespace heft::dynamics

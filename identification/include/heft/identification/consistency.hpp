// Physical consistency after the fact: the nearest body with pseudo-inertia J ⪰ ε·1 to a body the
// SDP solver left slightly outside its cone (CSDP's "solved to reduced accuracy" stops before every
// LMI holds), and the cost such a projection adds to the fit.
#pragma once

#include <Eigen/Core>

#include "heft/dynamics/inertia.hpp"

namespace heft::identification {

struct ProjectedBody {
  dynamics::Vector10 pi;
  bool changed = false;           // J(π) had an eigenvalue below ε
  bool kept_mass_and_com = true;  // only the second moments moved
};

// With m > 2ε the mass and the first moment (so the centre of mass) are kept and only the second
// moments Σ move, by the smallest change in Frobenius norm: J − ε1 ⪰ 0 ⟺ m > ε and
// S = Σ − ε1 − h hᵀ/(m − ε) ⪰ 0, so S's negative eigenvalues are clamped to 0 (a body just
// below ε moves by as little: a bounding ellipsoid's margin stays as the solver left it). Otherwise
// (no positive mass to keep) J's eigenvalues are clamped to ≥ 2ε. The result has J ⪰ ε·1.
ProjectedBody ProjectToConsistent(const dynamics::Vector10& pi, double epsilon);

// π from a symmetric 4×4 pseudo-inertia J = [[Σ, h], [hᵀ, m]] (the inverse of
// dynamics::PseudoInertia).
dynamics::Vector10 ParametersFromPseudoInertia(const Eigen::Matrix4d& J);

}  // namespace heft::identification

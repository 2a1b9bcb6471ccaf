// The log-Cholesky parameterisation of a rigid body's inertial parameters (Foster et al. eq. 16-17,
// after Rucker & Wensing): every θ ∈ R¹⁰ maps to a fully physically consistent π, and back.
//
// θ = [α, d1, d2, d3, s12, s13, s23, t1, t2, t3] (eq. 16). With
//   U = e^α [[e^d1, s12, s13, t1], [0, e^d2, s23, t2], [0, 0, e^d3, t3], [0, 0, 0, 1]],
// the pseudo-inertia is J(π) = UᵀU (the form of eq. 17: m = e^{2α}(1 + |t|²)), where
// J = [[Σ, h], [hᵀ, m]] and Σ = ½ tr(I) 1 − I. π order is eq. 3 (see inertia.hpp).
#pragma once

#include "heft/dynamics/inertia.hpp"

namespace heft::dynamics {

using Matrix10 = Eigen::Matrix<double, 10, 10>;

// π = g(θ), eq. 17.
Vector10 LogCholeskyToParameters(const Vector10& theta) noexcept;

// The same with the exponentials of θ's first four states given, exps = (e^α, e^d1, e^d2, e^d3)
// (a caller evaluating g at many θ that share or shift them multiplies instead of exponentiating).
Vector10 LogCholeskyToParameters(const Vector10& theta, const Eigen::Vector4d& exps) noexcept;

// G = ∂g/∂θ at θ, in closed form.
Matrix10 LogCholeskyJacobian(const Vector10& theta) noexcept;

// θ = g⁻¹(π) for a physically consistent π (Cholesky factor of the pseudo-inertia). Returns false,
// leaving theta untouched, when π is not physically consistent.
bool ParametersToLogCholesky(const Vector10& pi, Vector10& theta) noexcept;

}  // namespace heft::dynamics

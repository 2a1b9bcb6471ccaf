// Whitening by a lower triangular factor L (R = L Lᵀ) of columns that are mostly zeros: the
// measurement's regressor and consider columns before whitening (docs/performance.md, "The shipped
// tick's cost"). A column of the regressor or of the other bodies' consider columns is non-zero
// only on the base's rows and on the joints that support its body, a torque sensor's scale column
// only on its own joint's row; a triangular solve on such a column fills it in from its first
// non-zero row on and costs m²/2 whatever it holds. With L⁻¹ formed once per tick (m³/6), each
// non-zero entry vᵣ adds vᵣ·L⁻¹(r:, r) to its column instead: (m − r) multiply-adds per entry.
// Equal to the triangular solve up to rounding. Internal to the estimator; allocates nothing.
#pragma once

#include <Eigen/Core>

namespace heft::estimator::detail {

// inverse ← L⁻¹ for the lower triangular L held in `lower`'s lower triangle (its strict upper
// triangle is not read); inverse's strict upper triangle is set to zero. Both m × m.
void LowerTriangularInverse(const Eigen::Ref<const Eigen::MatrixXd>& lower,
                            Eigen::Ref<Eigen::MatrixXd> inverse) noexcept;

// v ← L⁻¹ v, each column, from `inverse` = L⁻¹ (LowerTriangularInverse): only v's non-zero
// entries cost anything, except on its first `dense_rows` rows (a floating base's six, non-zero in
// nearly every column), which are one matrix product. `top` is scratch of at least dense_rows ×
// v.cols(), `column` of at least v.rows() entries.
void ApplyLowerInverse(const Eigen::Ref<const Eigen::MatrixXd>& inverse, Eigen::Index dense_rows,
                       Eigen::Ref<Eigen::MatrixXd> v, Eigen::Ref<Eigen::MatrixXd> top,
                       Eigen::Ref<Eigen::VectorXd> column) noexcept;

}  // namespace heft::estimator::detail

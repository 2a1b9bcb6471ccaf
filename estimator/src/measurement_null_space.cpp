// Measurement's null-space rows (a robot without foot F/T cells): Q₂ᵀ(...) with Q₂ spanning the
// complement of the contacts' range(J_cᵀ), from a Householder QR of J_cᵀ applied as one block
// reflector; and the projection x − Q₁Q₁ᵀx the calibration and the stiction band use.
#include <algorithm>
#include <cmath>

#include "heft/estimator/inertial_estimator.hpp"  // TickInput
#include "heft/estimator/measurement.hpp"

namespace heft::estimator {
namespace {

// Q of a Householder QR (the first k reflectors) as one block reflector, Q = H₀ ⋯ H_{k−1} =
// I − V T Vᵀ (the compact WY form, LAPACK's dlarft forward and columnwise): V holds the reflectors
// with their unit diagonal, T is upper triangular. No allocation: V is n × ≥k, T ≥k × ≥k, s ≥k.
void BuildBlockReflector(const Eigen::HouseholderQR<Eigen::MatrixXd>& qr, Eigen::Index k,
                         Eigen::MatrixXd& v, Eigen::MatrixXd& t, Eigen::VectorXd& s) noexcept {
  const Eigen::Index n = qr.matrixQR().rows();
  t.topLeftCorner(k, k).setZero();
  for (Eigen::Index i = 0; i < k; ++i) {
    v.col(i).head(i).setZero();
    v(i, i) = 1.0;
    v.col(i).tail(n - i - 1) = qr.matrixQR().col(i).tail(n - i - 1);
    const double tau = qr.hCoeffs()(i);
    t(i, i) = tau;
    if (i == 0) continue;
    // T(0:i, i) = −τᵢ T(0:i, 0:i) V(:, 0:i)ᵀ vᵢ
    s.head(i).noalias() = v.leftCols(i).transpose() * v.col(i);
    t.col(i).head(i).noalias() = -tau * (t.topLeftCorner(i, i) * s.head(i));
  }
}

// The bottom `rows` rows of Qᵀ x = x − V Tᵀ (Vᵀ x), in place (the rows above are left as they
// were): three small matrix products instead of k rank-1 updates of all of x, one per reflector.
// w and w2 are ≥k × x.cols().
void BottomOfQTransposeTimes(const Eigen::MatrixXd& v, const Eigen::MatrixXd& t, Eigen::Index k,
                             Eigen::Index rows, Eigen::Ref<Eigen::MatrixXd> x, Eigen::MatrixXd& w,
                             Eigen::MatrixXd& w2) noexcept {
  auto vk = v.leftCols(k);
  auto wk = w.topLeftCorner(k, x.cols());
  auto w2k = w2.topLeftCorner(k, x.cols());
  wk.noalias() = vk.transpose() * x;
  w2k.noalias() = t.topLeftCorner(k, k).transpose() * wk;
  x.bottomRows(rows).noalias() -= vk.bottomRows(rows) * w2k;
}

// The bottom-right rows × rows block of Qᵀ R Q (Q₂ᵀ R Q₂), in place in r, for a symmetric r.
// First the bottom rows A₂ of Qᵀ R, then A₂ Q₂ = A₂(:, right) − (A₂ V T) V₂ᵀ. u and u2 are
// ≥rows × ≥k; w and w2 as above.
void ProjectFromBothSides(const Eigen::MatrixXd& v, const Eigen::MatrixXd& t, Eigen::Index k,
                          Eigen::Index rows, Eigen::MatrixXd& r, Eigen::MatrixXd& w,
                          Eigen::MatrixXd& w2, Eigen::MatrixXd& u, Eigen::MatrixXd& u2) noexcept {
  BottomOfQTransposeTimes(v, t, k, rows, r, w, w2);
  auto a2 = r.bottomRows(rows);
  auto uk = u.topLeftCorner(rows, k);
  auto u2k = u2.topLeftCorner(rows, k);
  uk.noalias() = a2 * v.leftCols(k);
  u2k.noalias() = uk * t.topLeftCorner(k, k);
  r.bottomRightCorner(rows, rows).noalias() -= u2k * v.leftCols(k).bottomRows(rows).transpose();
}

}  // namespace

void Measurement::ProjectOntoNullSpace(Eigen::Ref<Eigen::MatrixXd> x) noexcept {
  const Eigen::Index k = null_k_;
  if (k == 0 || x.rows() != nv_ || x.cols() > wy_w_.cols()) return;
  // Q = I − V T Vᵀ (BuildBlockReflector), its first k columns Q₁: Q₁ᵀ x is the top k rows of
  // Qᵀ x = x − V Tᵀ (Vᵀ x), and Q₁ y = Q [y; 0] = [y; 0] − V T (Vᵀ [y; 0]).
  const Eigen::Index m = x.cols();
  auto vk = wy_v_.leftCols(k);
  auto t = wy_t_.topLeftCorner(k, k);
  auto w = wy_w_.topLeftCorner(k, m);
  auto w2 = wy_w2_.topLeftCorner(k, m);
  auto y = wy_p_.topLeftCorner(k, m);
  w.noalias() = vk.transpose() * x;
  w2.noalias() = t.transpose() * w;
  y = x.topRows(k);
  y.noalias() -= vk.topRows(k) * w2;  // Q₁ᵀ x
  w.noalias() = vk.topRows(k).transpose() * y;
  w2.noalias() = t * w;
  x.topRows(k) -= y;
  x.noalias() += vk * w2;  // x − Q₁ Q₁ᵀ x
}

// Rows Q₂ᵀ(...) with Q₂ spanning the complement of range(J_cᵀ).
bool Measurement::TorqueNullSpace(const TickInput& in, const Eigen::VectorXd* bias,
                                  const Eigen::VectorXd* estimate) noexcept {
  null_k_ = 0;
  Residual(in);
  if (bias != nullptr) r_ -= *bias;
  dynamics::ForwardKinematics(model_, ws_, in.q);
  // c contacts in contact: their J_cᵀ fill the 6c columns of jct_[c], the matrix factorised below.
  int c = 0;
  for (std::size_t k = 0; k < contact_frames_.size(); ++k)
    c += k < in.in_contact.size() && in.in_contact[k];
  int column = 0;
  for (std::size_t k = 0; k < contact_frames_.size() && c > 0; ++k) {
    if (!(k < in.in_contact.size() && in.in_contact[k])) continue;
    dynamics::FrameJacobian(model_, ws_, contact_frames_[k], jac_);
    jct_[c].middleCols<6>(6 * column) = jac_.transpose();
    ++column;
  }
  rows_ = nv_ - 6 * c;
  if (rows_ <= 0) return false;  // the contacts hold every joint: no null space to measure in
  if (c > 0) {
    qr_[c].compute(jct_[c]);
    null_k_ = std::min<Eigen::Index>(nv_, 6 * c);
    BuildBlockReflector(qr_[c], null_k_, wy_v_, wy_t_, wy_s_);
  }
  if (estimate != nullptr) StictionBand(*estimate, c > 0);
  const int cols = n_ + nc_;
  auto qy = qy_.leftCols(cols + 1);
  qy.leftCols(n_) = Y_;
  if (nc_ > 0 && bias != nullptr)
    qy.middleCols(n_, nc_) = C_ - consider_bias_;
  else if (nc_ > 0)
    qy.middleCols(n_, nc_) = C_;
  qy.col(cols) = r_;
  rfull_.setZero();
  SetRowVariances(in.tau);
  AddAccelerationNoise(in.q);
  DecoupleDropped();
  for (int i = 0; i < nv_; ++i) row_scale_[i] = std::sqrt(rfull_(i, i));  // Whiten's, row by row
  whitened_full_ = false;
  if (c > 0) {
    const Eigen::Index k = null_k_;
    BottomOfQTransposeTimes(wy_v_, wy_t_, k, rows_, qy, wy_w_, wy_w2_);
    ProjectFromBothSides(wy_v_, wy_t_, k, rows_, rfull_, wy_w_, wy_w2_, wy_u_, wy_u2_);
  }
  auto& llt = rllt_[c];
  llt.compute(rfull_.bottomRightCorner(rows_, rows_));
  if (llt.info() != Eigen::Success) return false;
  H_.topRows(rows_) = qy.bottomRows(rows_).leftCols(cols);
  z_.head(rows_) = qy.bottomRows(rows_).col(cols);
  llt.matrixL().solveInPlace(H_.topRows(rows_));
  llt.matrixL().solveInPlace(z_.head(rows_));
  return true;
}

}  // namespace heft::estimator

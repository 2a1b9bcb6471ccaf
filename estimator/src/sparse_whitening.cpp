#include "sparse_whitening.hpp"

#include <Eigen/Core>

namespace heft::estimator::detail {

void LowerTriangularInverse(const Eigen::Ref<const Eigen::MatrixXd>& lower,
                            Eigen::Ref<Eigen::MatrixXd> inverse) noexcept {
  // L X = 1 by forward substitution on every column of X at once, row k after row k: X(k, :) is
  // final once divided by L(k, k), and is then eliminated from the rows below it (a rank-1
  // update of the lower triangle's columns 0..k: m³/6 multiply-adds in all).
  const Eigen::Index m = lower.rows();
  inverse.setIdentity();
  for (Eigen::Index k = 0; k < m; ++k) {
    inverse.row(k).head(k + 1) /= lower(k, k);
    if (k + 1 < m)
      inverse.bottomLeftCorner(m - k - 1, k + 1).noalias() -=
          lower.col(k).tail(m - k - 1) * inverse.row(k).head(k + 1);
  }
}

void ApplyLowerInverse(const Eigen::Ref<const Eigen::MatrixXd>& inverse, Eigen::Index dense_rows,
                       Eigen::Ref<Eigen::MatrixXd> v, Eigen::Ref<Eigen::MatrixXd> top,
                       Eigen::Ref<Eigen::VectorXd> column) noexcept {
  const Eigen::Index m = v.rows(), h = dense_rows;
  auto head = top.topLeftCorner(h, v.cols());
  head = v.topRows(h);
  auto in = column.head(m);
  for (Eigen::Index c = 0; c < v.cols(); ++c) {
    auto out = v.col(c);
    in.tail(m - h) = out.tail(m - h);
    out.setZero();
    for (Eigen::Index r = h; r < m; ++r) {
      const double a = in[r];
      if (a == 0.0) continue;  // most entries: the rows that do not support the column's body
      out.tail(m - r) += a * inverse.col(r).tail(m - r);
    }
  }
  if (h > 0) v.noalias() += inverse.leftCols(h) * head;
}

}  // namespace heft::estimator::detail

#include "heft/dynamics/regressor.hpp"

#include "heft/hal/assert.hpp"
#include "spatial.hpp"

namespace heft::dynamics {
RegressorSelection::RegressorSelection(const Model& model,
                                       const std::vector<std::string>& body_names)
    : mask_(model.bodies.size(), 0) {
  for (const std::string& name : body_names) {
    const int index = model.body_index(name);
    if (mask_[index]) throw ModelError("body '" + name + "' is chosen twice for estimation");
    mask_[index] = 1;
    bodies_.push_back(index);
  }
}

Eigen::VectorXd RegressorSelection::Gather(const Model& model) const {
  Eigen::VectorXd out(10 * size());
  for (int k = 0; k < size(); ++k) out.segment<10>(10 * k) = model.bodies[bodies_[k]].parameters;
  return out;
}

void RegressorSelection::Scatter(Model& model,
                                 const Eigen::Ref<const Eigen::VectorXd>& stacked) const {
  for (int k = 0; k < size(); ++k)
    model.bodies[bodies_[k]].parameters = stacked.segment<10>(10 * k);
}

Matrix6x10 BodyRegressor(const Vector6& a, const Vector6& v) noexcept {
  // f = I a + v ×* (I v), linear in π. With a' = a_lin + ω × v_lin (the origin's classical
  // acceleration): f_lin = m a' + ([α]ₓ + [ω]ₓ²) h;  f_ang = (L(α) + [ω]ₓ L(ω)) I − [a']ₓ h.
  const Eigen::Vector3d w = v.tail<3>();
  const Eigen::Vector3d alpha = a.tail<3>();
  const Eigen::Vector3d acc = a.head<3>() + w.cross(v.head<3>());
  const Eigen::Matrix3d sw = Skew(w);
  Matrix6x10 Y = Matrix6x10::Zero();
  Y.block<3, 1>(0, 0) = acc;
  Y.block<3, 3>(0, 1) = Skew(alpha) + sw * sw;
  Y.block<3, 3>(3, 1) = -Skew(acc);
  // L(x) maps [Ixx, Ixy, Ixz, Iyy, Iyz, Izz] to I x.
  auto L = [](const Eigen::Vector3d& x) {
    Eigen::Matrix<double, 3, 6> l;
    l << x.x(), x.y(), x.z(), 0.0, 0.0, 0.0, 0.0, x.x(), 0.0, x.y(), x.z(), 0.0, 0.0, 0.0, x.x(),
        0.0, x.y(), x.z();
    return l;
  };
  Y.block<3, 6>(3, 4) = L(alpha) + sw * L(w);
  return Y;
}

void CondensedRegressor(const Model& model, Workspace& ws, const RegressorSelection& selection,
                        const Eigen::Ref<const Eigen::VectorXd>& q,
                        const Eigen::Ref<const Eigen::VectorXd>& v,
                        const Eigen::Ref<const Eigen::VectorXd>& a,
                        Eigen::Ref<Eigen::MatrixXd> Y_est,
                        Eigen::Ref<Eigen::VectorXd> tau_nom) noexcept {
  HEFT_ASSERT(Y_est.rows() == model.nv && Y_est.cols() == 10 * selection.size() &&
                  tau_nom.size() == model.nv,
              "Y_est is nv × 10·(selected bodies), tau_nom nv");
  detail::RelativePoses(model, ws, q);
  detail::ForwardPass(model, ws, v, a);
  const auto& mask = selection.mask();
  for (int i = 0; i < model.num_bodies(); ++i) {
    if (mask[i])
      ws.f[i].setZero();
    else
      ws.f[i] = BodyRegressor(ws.a[i], ws.v[i]) * model.bodies[i].parameters;
  }
  detail::BackwardPass(model, ws, tau_nom);

  Y_est.setZero();
  for (int k = 0; k < selection.size(); ++k) {
    int j = selection.bodies()[k];
    Matrix6x10 F = BodyRegressor(ws.a[j], ws.v[j]);
    while (true) {
      const Body& b = model.bodies[j];
      if (b.joint.type == JointType::kFree) {
        Y_est.block<3, 10>(0, 10 * k).noalias() = ws.R[j] * F.topRows<3>();
        Y_est.block<3, 10>(3, 10 * k) = F.bottomRows<3>();
      } else {
        Y_est.block<1, 10>(b.v_index, 10 * k).noalias() = MotionSubspace(b).transpose() * F;
      }
      if (b.parent == kWorld) break;
      ForceBlockToParent(ws.R[j], ws.p[j], F);
      j = b.parent;
    }
  }
}

void MassFirstMomentColumns(const Model& model, const Workspace& ws, std::span<const int> bodies,
                            std::span<const Eigen::Matrix4d> factors,
                            Eigen::Ref<Eigen::MatrixXd> out) noexcept {
  HEFT_ASSERT(out.rows() == model.nv &&
                  out.cols() == 4 * static_cast<Eigen::Index>(bodies.size()) &&
                  factors.size() == bodies.size(),
              "out is nv × 4·bodies, one factor per body");
  out.setZero();
  for (std::size_t k = 0; k < bodies.size(); ++k) {
    int j = bodies[k];
    const Eigen::Index col = 4 * static_cast<Eigen::Index>(k);
    Eigen::Matrix<double, 6, 4> F = BodyRegressor(ws.a[j], ws.v[j]).leftCols<4>() * factors[k];
    while (true) {
      const Body& b = model.bodies[j];
      if (b.joint.type == JointType::kFree) {
        out.block<3, 4>(0, col).noalias() = ws.R[j] * F.topRows<3>();
        out.block<3, 4>(3, col) = F.bottomRows<3>();
      } else {
        out.block<1, 4>(b.v_index, col).noalias() = MotionSubspace(b).transpose() * F;
      }
      if (b.parent == kWorld) break;
      ForceBlockToParent(ws.R[j], ws.p[j], F);
      j = b.parent;
    }
  }
}

}  // namespace heft::dynamics

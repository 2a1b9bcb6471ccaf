// Recursive algorithms in body coordinates (Featherstone), spatial vectors [linear; angular].
#include "heft/dynamics/dynamics.hpp"

#include <Eigen/Geometry>

#include "heft/dynamics/regressor.hpp"
#include "heft/hal/assert.hpp"
#include "spatial.hpp"

namespace heft::dynamics {

Workspace::Workspace(const Model& model) {
  const std::size_t n = model.bodies.size();
  R.assign(n, Eigen::Matrix3d::Identity());
  p.assign(n, Eigen::Vector3d::Zero());
  oR.assign(n, Eigen::Matrix3d::Identity());
  op.assign(n, Eigen::Vector3d::Zero());
  v.assign(n, Vector6::Zero());
  a.assign(n, Vector6::Zero());
  f.assign(n, Vector6::Zero());
  Ic.assign(n, Vector10::Zero());
}

namespace detail {

void RelativePoses(const Model& model, Workspace& ws,
                   const Eigen::Ref<const Eigen::VectorXd>& q) noexcept {
  const int nb = model.num_bodies();
  for (int i = 0; i < nb; ++i) {
    const Body& b = model.bodies[i];
    switch (b.joint.type) {
      case JointType::kFree: {
        ws.R[i] = Eigen::Quaterniond(q[3], q[4], q[5], q[6]).normalized().toRotationMatrix();
        ws.p[i] = q.head<3>();
        break;
      }
      case JointType::kRevolute:
        ws.R[i].noalias() =
            b.placement_R * Eigen::AngleAxisd(q[b.q_index], b.axis).toRotationMatrix();
        ws.p[i] = b.placement_p;
        break;
      case JointType::kPrismatic:
        ws.R[i] = b.placement_R;
        ws.p[i] = b.placement_p + b.placement_R * (b.axis * q[b.q_index]);
        break;
    }
  }
}

void ForwardPass(const Model& model, Workspace& ws, const Eigen::Ref<const Eigen::VectorXd>& v,
                 const Eigen::Ref<const Eigen::VectorXd>& a) noexcept {
  const int nb = model.num_bodies();
  // Gravity as a fictitious upward acceleration of the world.
  Vector6 a_world = Vector6::Zero();
  a_world.head<3>() = -model.gravity;
  for (int i = 0; i < nb; ++i) {
    const Body& b = model.bodies[i];
    if (b.joint.type == JointType::kFree) {
      // v = [Rᵀ ṗ; ω_body]; a = d/dt v (body coordinates) + gravity = [Rᵀ(p̈ − g) − ω × Rᵀṗ; ω̇].
      const Eigen::Matrix3d& R = ws.R[i];
      const Eigen::Vector3d w = v.segment<3>(3);
      const Eigen::Vector3d vl = R.transpose() * v.head<3>();
      ws.v[i] << vl, w;
      ws.a[i] << R.transpose() * (a.head<3>() - model.gravity) - w.cross(vl), a.segment<3>(3);
      continue;
    }
    const int k = b.v_index;
    const Vector6 s = MotionSubspace(b);
    if (b.parent == kWorld) {
      ws.v[i] = s * v[k];
      ws.a[i] = MotionToChild(ws.R[i], ws.p[i], a_world) + s * a[k];
    } else {
      ws.v[i] = MotionToChild(ws.R[i], ws.p[i], ws.v[b.parent]) + s * v[k];
      ws.a[i] = MotionToChild(ws.R[i], ws.p[i], ws.a[b.parent]) + s * a[k] +
                MotionCross(ws.v[i], s * v[k]);
    }
  }
}

void BackwardPass(const Model& model, Workspace& ws, Eigen::Ref<Eigen::VectorXd> tau) noexcept {
  for (int i = model.num_bodies() - 1; i >= 0; --i) {
    const Body& b = model.bodies[i];
    if (b.joint.type == JointType::kFree) {
      tau.head<3>() = ws.R[i] * ws.f[i].head<3>();
      tau.segment<3>(3) = ws.f[i].tail<3>();
    } else {
      tau[b.v_index] = MotionSubspace(b).dot(ws.f[i]);
    }
    if (b.parent != kWorld) ws.f[b.parent] += ForceToParent(ws.R[i], ws.p[i], ws.f[i]);
  }
}

}  // namespace detail

void ForwardKinematics(const Model& model, Workspace& ws,
                       const Eigen::Ref<const Eigen::VectorXd>& q) noexcept {
  HEFT_ASSERT(q.size() == model.nq, "q has the model's nq coordinates");
  detail::RelativePoses(model, ws, q);
  for (int i = 0; i < model.num_bodies(); ++i) {
    const int parent = model.bodies[i].parent;
    if (parent == kWorld) {
      ws.oR[i] = ws.R[i];
      ws.op[i] = ws.p[i];
    } else {
      ws.oR[i].noalias() = ws.oR[parent] * ws.R[i];
      ws.op[i].noalias() = ws.oR[parent] * ws.p[i];
      ws.op[i] += ws.op[parent];
    }
  }
}

Pose FramePose(const Model& model, const Workspace& ws, int frame) noexcept {
  const Frame& fr = model.frames[frame];
  if (fr.body == kWorld) return {fr.R, fr.p};
  return {ws.oR[fr.body] * fr.R, ws.oR[fr.body] * fr.p + ws.op[fr.body]};
}

void Rnea(const Model& model, Workspace& ws, const Eigen::Ref<const Eigen::VectorXd>& q,
          const Eigen::Ref<const Eigen::VectorXd>& v, const Eigen::Ref<const Eigen::VectorXd>& a,
          Eigen::Ref<Eigen::VectorXd> tau) noexcept {
  HEFT_ASSERT(q.size() == model.nq && v.size() == model.nv && a.size() == model.nv &&
                  tau.size() == model.nv,
              "q, v, a and tau sized to the model");
  detail::RelativePoses(model, ws, q);
  detail::ForwardPass(model, ws, v, a);
  for (int i = 0; i < model.num_bodies(); ++i)
    ws.f[i] = BodyRegressor(ws.a[i], ws.v[i]) * model.bodies[i].parameters;
  detail::BackwardPass(model, ws, tau);
}

void Crba(const Model& model, Workspace& ws, const Eigen::Ref<const Eigen::VectorXd>& q,
          Eigen::Ref<Eigen::MatrixXd> M) noexcept {
  HEFT_ASSERT(M.rows() == model.nv && M.cols() == model.nv, "M is nv × nv");
  detail::RelativePoses(model, ws, q);
  const int nb = model.num_bodies();
  // The composite inertias as π, moved into each parent's frame by π's own linear map.
  for (int i = 0; i < nb; ++i) ws.Ic[i] = model.bodies[i].parameters;
  for (int i = nb - 1; i >= 0; --i) {
    const int parent = model.bodies[i].parent;
    if (parent != kWorld) ws.Ic[parent] += TransformParameters(ws.Ic[i], ws.R[i], ws.p[i]);
  }
  M.setZero();
  for (int i = 0; i < nb; ++i) {
    const Body& b = model.bodies[i];
    if (b.joint.type == JointType::kFree) {
      // S = blockdiag(Rᵀ, 1) maps [ṗ_world; ω_body] to the body velocity.
      Matrix6 S = Matrix6::Zero();
      S.topLeftCorner<3, 3>() = ws.R[i].transpose();
      S.bottomRightCorner<3, 3>().setIdentity();
      M.topLeftCorner<6, 6>() = S.transpose() * SpatialInertia(ws.Ic[i]) * S;
      continue;
    }
    Vector6 F = SpatialInertia(ws.Ic[i]) * MotionSubspace(b);
    M(b.v_index, b.v_index) = MotionSubspace(b).dot(F);
    int j = i;
    while (model.bodies[j].parent != kWorld) {
      F = ForceToParent(ws.R[j], ws.p[j], F);
      j = model.bodies[j].parent;
      const Body& bj = model.bodies[j];
      if (bj.joint.type == JointType::kFree) {
        Vector6 col;
        col << ws.R[j] * F.head<3>(), F.tail<3>();
        M.block<6, 1>(0, b.v_index) = col;
        M.block<1, 6>(b.v_index, 0) = col.transpose();
      } else {
        const double m = MotionSubspace(bj).dot(F);
        M(bj.v_index, b.v_index) = m;
        M(b.v_index, bj.v_index) = m;
      }
    }
  }
}

void FrameJacobian(const Model& model, const Workspace& ws, int frame,
                   Eigen::Ref<Matrix6X> J) noexcept {
  HEFT_ASSERT(J.cols() == model.nv, "J has the model's nv columns");
  J.setZero();
  const Frame& fr = model.frames[frame];
  if (fr.body == kWorld) return;
  const Eigen::Vector3d origin = ws.oR[fr.body] * fr.p + ws.op[fr.body];
  for (int j = fr.body; j != kWorld; j = model.bodies[j].parent) {
    const Body& b = model.bodies[j];
    const Eigen::Vector3d r = origin - ws.op[j];
    switch (b.joint.type) {
      case JointType::kFree:
        J.block<3, 3>(0, 0).setIdentity();
        for (int k = 0; k < 3; ++k) {
          const Eigen::Vector3d e = ws.oR[j].col(k);
          J.block<3, 1>(0, 3 + k) = e.cross(r);
          J.block<3, 1>(3, 3 + k) = e;
        }
        break;
      case JointType::kRevolute: {
        const Eigen::Vector3d z = ws.oR[j] * b.axis;
        J.block<3, 1>(0, b.v_index) = z.cross(r);
        J.block<3, 1>(3, b.v_index) = z;
        break;
      }
      case JointType::kPrismatic:
        J.block<3, 1>(0, b.v_index) = ws.oR[j] * b.axis;
        break;
    }
  }
}

void ContactTerm(const Model& model, Workspace& ws, std::span<const int> frames,
                 std::span<const Vector6> wrenches, Eigen::Ref<Eigen::VectorXd> out) noexcept {
  HEFT_ASSERT(frames.size() == wrenches.size() && out.size() == model.nv,
              "one wrench a frame, out sized nv");
  for (auto& f : ws.f) f.setZero();
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const Frame& fr = model.frames[frames[i]];
    if (fr.body == kWorld) continue;  // a wrench on the world does not move the robot
    ws.f[fr.body] += ForceToParent(fr.R, fr.p, wrenches[i]);
  }
  detail::BackwardPass(model, ws, out);
}

}  // namespace heft::dynamics

// What test_sim_backend.cpp and test_sim_backend_buses.cpp check the simulated robot's decoded
// frames against: MuJoCo's own state after a step in the drivers' order (joints, the feet's contact
// wrenches in the F/T frames, the base IMU's measurement), the decoded IMU sample back in the IMU's
// frame, the spec's quantisation of each channel, and the simulator stepped with the driver loop
// reading its buses.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <string>
#include <vector>

#include "heft/drivers/driver_config.hpp"
#include "heft/dynamics/model.hpp"
#include "heft/sim/sim_backend.hpp"
#include "sim_rig.hpp"

namespace heft::sim::test {

// MuJoCo's own state after a step, in the drivers' order: joints by name, and the contact wrench on
// each foot from MuJoCo's cfrc_ext (mj_rnePostConstraint: contact forces summed per body, at the
// root's subtree centre of mass, world axes) moved to the F/T frame's origin and axes.
class MujocoTruth {
 public:
  MujocoTruth(const SimulatedRobot& sim, const SimRig& s) : sim_(sim) {
    const mjModel* m = sim.plant().model();
    copy_ = mj_makeData(m);
    mj_copyData(copy_, m, sim.plant().data());  // the state before the first step
    if (s.drivers.imu) {
      R_BI_ = s.drivers.imu->R_BI;  // resolved from the URDF by CheckDriverConfig
      p_BI_ = s.drivers.imu->p_BI;
    }
    for (const auto& j : s.drivers.joints) {
      const int id = mj_name2id(m, mjOBJ_JOINT, j.joint.c_str());
      EXPECT_GE(id, 0) << j.joint;
      qpos_.push_back(m->jnt_qposadr[id]);
      dof_.push_back(m->jnt_dofadr[id]);
    }
    for (std::size_t k = 0; k < s.drivers.ft_cells.size(); ++k) {
      const std::string& foot = sim.scenario().wrench_links[k];
      foot_body_.push_back(mj_name2id(m, mjOBJ_BODY, foot.c_str()));
      const dynamics::Frame& ft = s.model.frames[s.model.frame_index(s.drivers.ft_cells[k].frame)];
      const dynamics::Frame& f = s.model.frames[s.model.frame_index(foot)];
      EXPECT_EQ(ft.body, f.body);
      ft_in_foot_.push_back(f.R.transpose() * (ft.p - f.p));  // F/T origin in the foot frame
      ft_R_foot_.push_back(f.R.transpose() * ft.R);           // F/T axes in the foot frame
    }
  }
  ~MujocoTruth() { mj_deleteData(copy_); }
  MujocoTruth(const MujocoTruth&) = delete;
  MujocoTruth& operator=(const MujocoTruth&) = delete;

  void Update() {
    const mjModel* m = sim_.plant().model();
    const bool floating = m->njnt > 0 && m->jnt_type[0] == mjJNT_FREE;
    Vector6 v_before = Vector6::Zero();
    if (floating) v_before = Eigen::Map<const Vector6>(copy_->qvel);
    mj_copyData(copy_, m, sim_.plant().data());
    mj_rnePostConstraint(m, copy_);
    if (floating) {
      // The free joint's acceleration over the step: its velocity change (what the integrator
      // applied), next to MuJoCo's qacc (which the damped semi-implicit step corrects).
      base_acc_ = (Eigen::Map<const Vector6>(copy_->qvel) - v_before) / m->opt.timestep;
      worst_qacc_gap_ =
          std::max(worst_qacc_gap_,
                   (Eigen::Map<const Vector6>(copy_->qacc) - base_acc_).cwiseAbs().maxCoeff());
    }
  }
  using Vector6 = Eigen::Matrix<double, 6, 1>;
  // The floating base after the step: attitude, angular velocity in B, and its acceleration over
  // the step [a_WB in W; ω̇ in B].
  Eigen::Quaterniond q_WB() const {
    return Eigen::Quaterniond(copy_->qpos[3], copy_->qpos[4], copy_->qpos[5], copy_->qpos[6]);
  }
  Eigen::Vector3d w_B() const { return Eigen::Map<const Eigen::Vector3d>(copy_->qvel + 3); }
  const Vector6& base_acceleration() const { return base_acc_; }
  double worst_qacc_gap() const { return worst_qacc_gap_; }
  // What the IMU at p_BI with axes R_BI measures: ω, and a − g at its origin (rigid-body
  // transport), both in I; q_WI.
  Eigen::Vector3d imu_w() const { return R_BI_.transpose() * w_B(); }
  Eigen::Vector3d imu_f() const {
    const Eigen::Vector3d g(0.0, 0.0, -9.81), w = w_B();
    const Eigen::Vector3d f_B = q_WB().conjugate() * (base_acc_.head<3>() - g) +
                                base_acc_.tail<3>().cross(p_BI_) + w.cross(w.cross(p_BI_));
    return R_BI_.transpose() * f_B;
  }
  Eigen::Quaterniond imu_q() const { return q_WB() * Eigen::Quaterniond(R_BI_); }
  const Eigen::Matrix3d& R_BI() const { return R_BI_; }
  double position(std::size_t i) const { return copy_->qpos[qpos_[i]]; }
  double velocity(std::size_t i) const { return copy_->qvel[dof_[i]]; }
  double torque(std::size_t i) const { return copy_->qfrc_applied[dof_[i]]; }
  Eigen::Matrix<double, 6, 1> wrench(std::size_t k) const {
    const mjModel* m = sim_.plant().model();
    const int b = foot_body_[k];
    const Eigen::Map<const Eigen::Matrix<double, 6, 1>> cfrc(copy_->cfrc_ext + 6 * b);
    const Eigen::Vector3d n_c = cfrc.head<3>(), f = cfrc.tail<3>();
    const Eigen::Map<const Eigen::Vector3d> c(copy_->subtree_com + 3 * m->body_rootid[b]);
    const Eigen::Map<const Eigen::Vector3d> x(copy_->xpos + 3 * b);
    const Eigen::Matrix3d R =
        Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(copy_->xmat + 9 * b);
    const Eigen::Vector3d p = x + R * ft_in_foot_[k];  // the F/T frame's origin in the world
    const Eigen::Vector3d n_p = n_c + (c - p).cross(f);
    const Eigen::Matrix3d R_ft = R * ft_R_foot_[k];
    Eigen::Matrix<double, 6, 1> w;
    w << R_ft.transpose() * f, R_ft.transpose() * n_p;
    return w;
  }
  double total_normal_force() const {
    double fz = 0;
    for (std::size_t k = 0; k < foot_body_.size(); ++k)
      fz += copy_->cfrc_ext[6 * foot_body_[k] + 5];
    return fz;
  }

 private:
  const SimulatedRobot& sim_;
  mjData* copy_ = nullptr;
  std::vector<int> qpos_, dof_, foot_body_;
  std::vector<Eigen::Vector3d> ft_in_foot_;
  std::vector<Eigen::Matrix3d> ft_R_foot_;
  Eigen::Matrix3d R_BI_ = Eigen::Matrix3d::Identity();
  Eigen::Vector3d p_BI_ = Eigen::Vector3d::Zero();
  Vector6 base_acc_ = Vector6::Zero();
  double worst_qacc_gap_ = 0.0;
};

// The base IMU's decoded sample (hal::BaseSample, base frame) back in the IMU's frame.
struct ImuDecoded {
  Eigen::Vector3d w, f;
  Eigen::Quaterniond q_WI;
};
inline ImuDecoded DecodedImu(const hal::BaseSample& b, const Eigen::Matrix3d& R_BI) {
  const Eigen::Quaterniond q_WB(b.orientation[0], b.orientation[1], b.orientation[2],
                                b.orientation[3]);
  return {R_BI.transpose() * Eigen::Vector3d(b.angular_velocity.data()),
          R_BI.transpose() * Eigen::Vector3d(b.specific_force.data()),
          q_WB * Eigen::Quaterniond(R_BI)};
}
// Angle of the rotation between two attitudes, per axis of the second's frame (small angles).
inline Eigen::Vector3d AttitudeError(const Eigen::Quaterniond& a, const Eigen::Quaterniond& b) {
  Eigen::Quaterniond d = b.conjugate() * a;
  if (d.w() < 0) d.coeffs() *= -1.0;
  return 2.0 * d.vec();
}

// The spec's quantisation of each channel, from the drivers' configuration: the largest rounding
// error (half a count) and the rounding noise's standard deviation (count/√12).
struct Quantum {
  double position, velocity, torque;
  std::array<double, 6> wrench;  // per component: ½ Σ_j |C_ij| (every gauge rounds by ≤ ½ count)
  std::array<double, 6> wrench_rms;  // √(Σ_j C_ij² / 12)
};
inline Quantum QuantumOf(const drivers::DriverConfig& d, std::size_t joint, std::size_t cell) {
  Quantum q{};
  const auto& j = d.joints[joint];
  q.position = std::numbers::pi / static_cast<double>(j.encoder.counts_per_rev);
  q.velocity = 0.5 * j.encoder.velocity_lsb;
  q.torque = 0.5 * j.torque.nm_per_count;
  if (cell < d.ft_cells.size()) {
    const auto& C = d.ft_cells[cell].ft.calibration;
    for (int i = 0; i < 6; ++i) {
      q.wrench[i] = 0.5 * C.row(i).cwiseAbs().sum();
      q.wrench_rms[i] = std::sqrt(C.row(i).squaredNorm() / 12.0);
    }
  }
  return q;
}

// Steps the simulator `steps` ms with the driver loop reading its buses; `check` sees each decoded
// sample next to MuJoCo's state.
template <typename Check>
void RunWithDrivers(const SimOptions& opt, const SimRig& s, int steps, Check check) {
  SimLoop rig(opt, s);
  MujocoTruth truth(rig.sim, s);
  for (int k = 1; k <= steps; ++k) {
    rig.Step(k);
    truth.Update();
    check(k, rig.loop.last_sample(), truth);
  }
  EXPECT_EQ(rig.loop.counters().rejected_total(), 0u);
}

}  // namespace heft::sim::test

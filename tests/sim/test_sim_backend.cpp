// heft-sim's simulated robot on its own (sim/src/sim_backend.cpp): its emulated CAN frames, decoded
// by heft's drivers, give back MuJoCo's state — joint positions, velocities, applied torques and
// the feet's contact wrenches in the F/T frames — within the spec's quantisation (no noise) and
// with the configured noise's statistics; its faults (bursts, random loss) are deterministic and
// counted; its candump log replays through the drivers to the very samples the live buses gave.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <string>
#include <vector>

#include "heft/drivers/candump.hpp"
#include "heft/drivers/driver_config.hpp"
#include "heft/drivers/driver_loop.hpp"
#include "heft/dynamics/model.hpp"
#include "heft/sim/sim_backend.hpp"
#include "sim_rig.hpp"

namespace heft::sim {
namespace {

using test::kMs;
using test::LoadSetup;
using test::Options;
using test::SimLoop;
using test::SimRig;

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
ImuDecoded DecodedImu(const hal::BaseSample& b, const Eigen::Matrix3d& R_BI) {
  const Eigen::Quaterniond q_WB(b.orientation[0], b.orientation[1], b.orientation[2],
                                b.orientation[3]);
  return {R_BI.transpose() * Eigen::Vector3d(b.angular_velocity.data()),
          R_BI.transpose() * Eigen::Vector3d(b.specific_force.data()),
          q_WB * Eigen::Quaterniond(R_BI)};
}
// Angle of the rotation between two attitudes, per axis of the second's frame (small angles).
Eigen::Vector3d AttitudeError(const Eigen::Quaterniond& a, const Eigen::Quaterniond& b) {
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
Quantum QuantumOf(const drivers::DriverConfig& d, std::size_t joint, std::size_t cell) {
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

void DecodesWithinQuantisation(const std::string& scenario, int steps) {
  const SimRig s = LoadSetup(scenario);
  const std::size_t nj = s.drivers.joints.size(), nc = s.drivers.ft_cells.size();
  std::array<double, 4> worst{};      // position, velocity, torque, wrench: error / its bound
  std::array<double, 3> worst_imu{};  // gyro, accelerometer, attitude: error / half an LSB
  double worst_support = 0, lightest_foot = 1e9;
  const bool imu = s.drivers.imu.has_value();
  // Half an LSB: gyro and accelerometer per axis; the attitude's x y z round by ½ / 32767 each, so
  // the rotation between decoded and true attitude is at most 2 |δq_xyz| ≤ √3 / 32767 (plus the
  // second-order error of the qw the decoder recomputes).
  const double gyro_q = imu ? 0.5 * s.drivers.imu->imu.gyro_lsb : 0.0,
               accel_q = imu ? 0.5 * s.drivers.imu->imu.accel_lsb : 0.0,
               attitude_q = std::sqrt(3.0) / 32767.0 * 1.01;
  RunWithDrivers(
      Options(scenario, false), s, steps,
      [&](int k, const hal::RobotStateSample& out, const MujocoTruth& truth) {
        ASSERT_EQ(out.num_joints, nj);
        for (std::size_t i = 0; i < nj; ++i) {
          const Quantum q = QuantumOf(s.drivers, i, 0);
          ASSERT_TRUE(out.joints[i].encoder.ok() && out.joints[i].torque_sensor.ok())
              << k << " " << i;
          ASSERT_LT(std::abs(truth.velocity(i)), 32767 * s.drivers.joints[i].encoder.velocity_lsb)
              << "joint " << s.drivers.joints[i].joint << " beyond the encoder's velocity range";
          const double ep = std::abs(out.joints[i].position - truth.position(i));
          const double ev = std::abs(out.joints[i].velocity - truth.velocity(i));
          const double et = std::abs(out.joints[i].torque - truth.torque(i));
          ASSERT_LE(ep, q.position * (1 + 1e-6))
              << s.drivers.joints[i].joint << " at " << k << " ms";
          ASSERT_LE(ev, q.velocity * (1 + 1e-6))
              << s.drivers.joints[i].joint << " at " << k << " ms";
          ASSERT_LE(et, q.torque * (1 + 1e-6)) << s.drivers.joints[i].joint << " at " << k << " ms";
          worst[0] = std::max(worst[0], ep / q.position);
          worst[1] = std::max(worst[1], ev / q.velocity);
          worst[2] = std::max(worst[2], et / q.torque);
        }
        ASSERT_EQ(out.num_wrenches, nc);
        for (std::size_t c = 0; c < nc; ++c) {
          const Quantum q = QuantumOf(s.drivers, 0, c);
          const auto w = truth.wrench(c);
          ASSERT_TRUE(out.wrenches[c].health.ok());
          for (int i = 0; i < 6; ++i) {
            const double e = std::abs(out.wrenches[c].wrench[i] - w[i]);
            ASSERT_LE(e, q.wrench[i] * (1 + 1e-6) + 1e-9)
                << "cell " << c << " component " << i << " at " << k << " ms: " << w.transpose();
            worst[3] = std::max(worst[3], e / q.wrench[i]);
          }
        }
        if (imu) {
          ASSERT_TRUE(out.has_base && out.base.health.ok() && out.base.has_specific_force) << k;
          const ImuDecoded d = DecodedImu(out.base, truth.R_BI());
          const Eigen::Vector3d ew = (d.w - truth.imu_w()).cwiseAbs(),
                                ef = (d.f - truth.imu_f()).cwiseAbs();
          const double eq = AttitudeError(d.q_WI, truth.imu_q()).norm();
          ASSERT_LE(ew.maxCoeff(), gyro_q * (1 + 1e-6)) << "gyro at " << k << " ms";
          ASSERT_LE(ef.maxCoeff(), accel_q * (1 + 1e-6))
              << "accelerometer at " << k << " ms: " << truth.imu_f().transpose();
          ASSERT_LE(eq, attitude_q) << "attitude at " << k << " ms";
          worst_imu[0] = std::max(worst_imu[0], ew.maxCoeff() / gyro_q);
          worst_imu[1] = std::max(worst_imu[1], ef.maxCoeff() / accel_q);
          worst_imu[2] = std::max(worst_imu[2], eq / attitude_q);
        }
        if (nc > 0) worst_support = std::max(worst_support, truth.total_normal_force());
        for (std::size_t c = 0; c < nc; ++c)
          lightest_foot = std::min(lightest_foot, truth.wrench(c)[2]);
      });
  std::printf(
      "%s, %d ms without noise: worst decode error / half an LSB: position %.3f, velocity %.3f, "
      "torque %.3f; wrench / (½ Σ|C_ij|) %.3f; total normal force up to %.0f N, one foot down to "
      "%.0f N\n",
      scenario.c_str(), steps, worst[0], worst[1], worst[2], worst[3], worst_support,
      nc > 0 ? lightest_foot : 0.0);
  if (imu)
    std::printf(
        "  base IMU: worst decode error / half an LSB: gyro %.3f, accelerometer %.3f; attitude "
        "%.3f of its bound\n",
        worst_imu[0], worst_imu[1], worst_imu[2]);
  if (nc > 0) {
    EXPECT_GT(worst_support, 500.0);  // the feet carry the robot: contacts are checked
    EXPECT_LT(lightest_foot, 1.0);    // and a foot leaves the floor: a step is checked too
  }
}

TEST(SimBackend, EmulatedFramesDecodeToMujocosStateWithinQuantisationFixedBase) {
  DecodesWithinQuantisation("dumbbell-curl", 1500);
}

TEST(SimBackend, EmulatedFramesDecodeToMujocosStateWithinQuantisationFloatingBase) {
  // Standing 1 s, shifting the weight 1.5 s, then a foot lifts (0.35 s) and touches down again.
  DecodesWithinQuantisation("step-in-place", 3300);
}

TEST(SimBackend, DecodedErrorsHaveTheConfiguredNoisesStatistics) {
  const std::string scenario = "step-in-place";
  const SimRig s = LoadSetup(scenario);
  const SimOptions opt = Options(scenario, true);
  const std::size_t nj = s.drivers.joints.size(), nc = s.drivers.ft_cells.size();
  ASSERT_EQ(nc, 2u);
  // Sums of squared errors: position, velocity, torque, force, moment; the base IMU's gyro,
  // accelerometer and attitude (per axis of I).
  std::array<double, 8> sq{}, expected_var{};
  std::array<std::size_t, 8> n{};
  ASSERT_TRUE(s.drivers.imu.has_value());
  const double lsb_g = s.drivers.imu->imu.gyro_lsb, lsb_a = s.drivers.imu->imu.accel_lsb,
               lsb_q = 2.0 / 32767.0;  // a rotation angle of 2 δq per unit of x y z
  RunWithDrivers(
      opt, s, 1500, [&](int, const hal::RobotStateSample& out, const MujocoTruth& truth) {
        for (std::size_t i = 0; i < nj; ++i) {
          const Quantum q = QuantumOf(s.drivers, i, 0);
          const double lsb_p = 2 * q.position, lsb_v = 2 * q.velocity, lsb_t = 2 * q.torque;
          sq[0] += std::pow(out.joints[i].position - truth.position(i), 2);
          sq[1] += std::pow(out.joints[i].velocity - truth.velocity(i), 2);
          sq[2] += std::pow(out.joints[i].torque - truth.torque(i), 2);
          expected_var[0] += lsb_p * lsb_p / 12;
          expected_var[1] += opt.noise.velocity * opt.noise.velocity + lsb_v * lsb_v / 12;
          expected_var[2] += opt.noise.joint_torque * opt.noise.joint_torque + lsb_t * lsb_t / 12;
          n[0]++, n[1]++, n[2]++;
        }
        for (std::size_t c = 0; c < nc; ++c) {
          const Quantum q = QuantumOf(s.drivers, 0, c);
          const auto w = truth.wrench(c);
          for (int i = 0; i < 6; ++i) {
            const int kind = i < 3 ? 3 : 4;
            const double sigma = i < 3 ? opt.noise.force : opt.noise.moment;
            sq[kind] += std::pow(out.wrenches[c].wrench[i] - w[i], 2);
            expected_var[kind] += sigma * sigma + q.wrench_rms[i] * q.wrench_rms[i];
            n[kind]++;
          }
        }
        const ImuDecoded d = DecodedImu(out.base, truth.R_BI());
        sq[5] += (d.w - truth.imu_w()).squaredNorm();
        sq[6] += (d.f - truth.imu_f()).squaredNorm();
        sq[7] += AttitudeError(d.q_WI, truth.imu_q()).squaredNorm();
        const double sg = opt.noise.gyro, sa = opt.noise.accel, sq_ = opt.noise.attitude;
        expected_var[5] += 3 * (sg * sg + lsb_g * lsb_g / 12);
        expected_var[6] += 3 * (sa * sa + lsb_a * lsb_a / 12);
        expected_var[7] += 3 * (sq_ * sq_ + lsb_q * lsb_q / 12);
        n[5] += 3, n[6] += 3, n[7] += 3;
      });
  const char* names[] = {"position", "velocity", "torque",        "force",
                         "moment",   "gyro",     "accelerometer", "attitude"};
  for (int k = 0; k < 8; ++k) {
    const double rms = std::sqrt(sq[k] / static_cast<double>(n[k]));
    const double expected = std::sqrt(expected_var[k] / static_cast<double>(n[k]));
    std::printf("%s: RMS decode error %.4g, configured noise ⊕ quantisation %.4g (ratio %.3f)\n",
                names[k], rms, expected, rms / expected);
    EXPECT_NEAR(rms / expected, 1.0, 0.2) << names[k];
  }
}

// A robot standing still: its accelerometer reads gravity's reaction, +9.81 m/s² up, in its own
// axes (the spec's sign), rotated by the decoded attitude. Fails with the sign of gravity flipped,
// the world's z taken for I's, or the specific force rotated with the transposed attitude (errors
// of the order of g). Bound per sample: what the standing robot's own motion adds at the IMU (the
// balance controller's small accelerations, transported: |truth f_I − R_WIᵀ g_up|, measured up to
// ~0.05 m/s²), plus half an LSB per axis and the attitude's quantisation times g; no noise.
TEST(SimBackend, StandingRobotsAccelerometerReadsGravityInItsOwnAxes) {
  const std::string scenario = "step-in-place";  // stands still for its first second
  const SimRig s = LoadSetup(scenario);
  const double quantum =
      std::sqrt(3.0) * 0.5 * s.drivers.imu->imu.accel_lsb + 9.81 * std::sqrt(3.0) / 32767.0 * 1.01;
  double worst = 0.0, worst_motion = 0.0;
  RunWithDrivers(
      Options(scenario, false), s, 900,
      [&](int k, const hal::RobotStateSample& out, const MujocoTruth& truth) {
        if (k < 300) return;  // settled on its feet
        const ImuDecoded d = DecodedImu(out.base, truth.R_BI());
        const Eigen::Vector3d up = d.q_WI.conjugate() * Eigen::Vector3d(0, 0, 9.81);
        const double motion =
            (truth.imu_f() - truth.imu_q().conjugate() * Eigen::Vector3d(0, 0, 9.81)).norm();
        ASSERT_LE((d.f - up).norm(), motion + quantum) << k << " ms";
        worst = std::max(worst, (d.f - up).norm());
        worst_motion = std::max(worst_motion, motion);
      });
  std::printf(
      "standing: |accelerometer − R_WIᵀ (0, 0, 9.81)| worst %.4f m/s² (the robot's own "
      "acceleration at the IMU up to %.4f)\n",
      worst, worst_motion);
  EXPECT_LT(worst_motion, 0.2);  // it does stand still: g dominates by far
}

// IMU faults: a silent IMU makes the base stale after its timeout and the drivers count every
// sample it skipped; ATTITUDE_NOT_CONVERGED and the saturation bits make the base faulty; the base
// recovers with the next good sample. Fails if a fault window is ignored or leaks past its end.
TEST(SimBackend, ImuFaultsReachTheBaseChannel) {
  const std::string scenario = "step-in-place";
  const SimRig s = LoadSetup(scenario);
  SimOptions opt = Options(scenario, true);
  SimFault silent, attitude, saturated;
  silent.kind = SimFault::Kind::kImu;
  silent.from = 0.1005;
  silent.to = 0.1105;  // 10 ms
  attitude.kind = SimFault::Kind::kImuAttitude;
  attitude.from = 0.2005;
  attitude.to = 0.2055;
  saturated.kind = SimFault::Kind::kImuSaturated;
  saturated.from = 0.3005;
  saturated.to = 0.3055;
  opt.faults = {silent, attitude, saturated};
  SimLoop rig(opt, s);
  int stale = 0, fault = 0;
  for (int k = 1; k <= 400; ++k) {
    rig.Step(k);
    const hal::BaseSample& b = rig.loop.last_sample().base;
    stale += b.health.state == hal::ChannelState::kStale;
    fault += b.health.state == hal::ChannelState::kFault;
    if (k >= 106 && k <= 111) {  // silent from step 102 (t = 0.101 s), stale past 3 ms
      ASSERT_NE(b.health.state, hal::ChannelState::kOk) << k;
    }
    if (k < 100 || (k > 112 && k <= 201) || (k > 206 && k <= 301) || k > 306) {
      ASSERT_TRUE(b.health.ok()) << k;
    }
  }
  EXPECT_EQ(rig.loop.counters().lost_samples, 10u);
  EXPECT_GE(stale, 7);   // ages 4..10 ms of the 3 ms timeout
  EXPECT_EQ(fault, 10);  // 5 ms of each flag
}

TEST(SimBackend, BurstsLoseEveryFrameOnTheirBusAndNothingElse) {
  const std::string scenario = "dumbbell-curl";  // arms on can0, legs on can1
  const SimRig s = LoadSetup(scenario);
  SimOptions opt = Options(scenario, true);
  SimFault burst;
  burst.kind = SimFault::Kind::kBurst;
  burst.device = 1;
  burst.from =
      0.1005;         // between two steps' times (the fault windows compare the time before a step)
  burst.to = 0.1055;  // 5 ms: longer than the 3 ms timeout
  burst.repeat = 3;
  burst.period = 0.050;
  opt.faults = {burst};
  SimLoop rig(opt, s);
  std::size_t on_can1 = 0;
  for (const auto& j : s.drivers.joints) on_can1 += j.bus == 1;
  int stale_ticks = 0;
  for (int k = 1; k <= 300; ++k) {
    rig.Step(k);
    const hal::RobotStateSample& out = rig.loop.last_sample();
    for (std::size_t i = 0; i < s.drivers.joints.size(); ++i) {
      if (s.drivers.joints[i].bus == 0) {
        ASSERT_TRUE(out.joints[i].encoder.ok() && out.joints[i].torque_sensor.ok()) << k;
      } else if (!out.joints[i].encoder.ok()) {
        ++stale_ticks;
        ASSERT_EQ(out.joints[i].encoder.state, hal::ChannelState::kStale);
      }
    }
  }
  // Each 5 ms burst: every can1 frame lost; the channels go stale for 2 ticks (ages 4 and 5 ms)
  // and recover with the next frame; the counter gaps account for every lost sample.
  const SimBusCounters& c1 = rig.sim.bus_counters()[1];
  EXPECT_EQ(c1.lost_burst, 3u * 5u * 2u * on_can1);
  EXPECT_EQ(rig.sim.bus_counters()[0].lost_burst, 0u);
  EXPECT_EQ(rig.loop.counters().lost_samples, c1.lost_burst);
  EXPECT_EQ(stale_ticks, static_cast<int>(3 * 2 * on_can1));
  EXPECT_EQ(rig.loop.counters().stale_events, 3u * 2u * on_can1);  // encoders and torque sensors
  EXPECT_TRUE(rig.loop.last_sample().joints[s.drivers.joints.size() - 1].encoder.ok());
}

TEST(SimBackend, RandomFrameLossIsDeterministicForTheSeedAndLeavesTheNoiseAlone) {
  const std::string scenario = "dumbbell-curl";
  const SimRig s = LoadSetup(scenario);
  auto run = [&](std::uint64_t seed, double loss) {
    SimOptions opt = Options(scenario, true);
    opt.seed = seed;
    if (loss > 0) {
      SimFault f;
      f.kind = SimFault::Kind::kLoss;
      f.device = -1;
      f.probability = loss;
      f.to = 1e6;
      opt.faults = {f};
    }
    SimLoop rig(opt, s);
    std::vector<double> torques;
    for (int k = 1; k <= 200; ++k) {
      rig.Step(k);
      torques.push_back(rig.loop.last_sample().joints[6].torque);
    }
    return std::make_pair(
        rig.sim.bus_counters()[0].lost_random + rig.sim.bus_counters()[1].lost_random, torques);
  };
  const auto a = run(7, 0.05), b = run(7, 0.05), c = run(8, 0.05), clean = run(7, 0.0);
  EXPECT_EQ(a.first, b.first);
  EXPECT_EQ(a.second, b.second);
  EXPECT_NE(a.first, c.first);
  EXPECT_GT(a.first, 0u);
  EXPECT_EQ(clean.first, 0u);
  // Where a sample arrived, the loss did not change the sensor noise drawn for it.
  int same = 0;
  for (std::size_t k = 0; k < a.second.size(); ++k) same += a.second[k] == clean.second[k];
  EXPECT_GT(same, 150);
}

TEST(SimBackend, CandumpLogReplaysThroughTheDriversToTheLiveSamples) {
  const std::string scenario = "step-in-place";  // joints and both F/T cells
  const SimRig s = LoadSetup(scenario);
  const std::string path = testing::TempDir() + "/sim_backend_candump.log";
  constexpr std::int64_t kEpoch = 1'700'000'000LL * 1'000'000'000LL;
  SimOptions opt = Options(scenario, true);
  opt.candump = path;
  opt.candump_epoch_ns = kEpoch;
  // Faults in the log too: random loss, a burst, and a bus-off the supervisor restarts.
  SimFault loss, burst, off;
  loss.kind = SimFault::Kind::kLoss;
  loss.device = -1;
  loss.probability = 0.02;
  loss.to = 1e6;
  burst.kind = SimFault::Kind::kBurst;
  burst.device = 0;
  burst.from = 0.1005;
  burst.to = 0.1045;
  off.kind = SimFault::Kind::kBusOff;
  off.device = 1;
  off.from = 0.2005;
  off.to = 0.2105;
  opt.faults = {loss, burst, off};
  constexpr int kSteps = 400;
  std::vector<hal::RobotStateSample> live;
  drivers::DriverCounters live_counters;
  std::uint64_t live_bus_off = 0, written = 0;
  {
    SimLoop rig(opt, s);
    drivers::BusSupervisor supervisor(rig.loop, rig.buses);
    for (int k = 1; k <= kSteps; ++k) {
      rig.Step(k);
      live.push_back(rig.loop.last_sample());
      if (k % 20 == 0) supervisor.Poll();
    }
    EXPECT_EQ(supervisor.restarts(), 1u);
    live_counters = rig.loop.counters();
    live_bus_off = rig.loop.bus(1).bus_off;
    rig.sim.CloseCandump();
    written = rig.sim.candump()->written();
    EXPECT_EQ(rig.sim.candump()->dropped(), 0u);
    std::uint64_t frames = 0;
    for (const auto& c : rig.sim.bus_counters()) frames += c.frames;
    EXPECT_EQ(written, frames);
  }
  EXPECT_EQ(live_bus_off, 1u);
  EXPECT_GT(live_counters.lost_samples, 100u);
  // The log, read back and replayed bus by bus through a fresh driver loop.
  std::ifstream in(path);
  std::vector<drivers::CandumpError> errors;
  const auto records = drivers::ReadCandump(in, errors);
  ASSERT_TRUE(errors.empty()) << errors.front().line << ": " << errors.front().reason;
  ASSERT_EQ(records.size(), written);
  drivers::CandumpReplay r0("can0", records), r1("can1", records);
  std::vector<hal::CanTransport*> replay{&r0, &r1};
  hal::StateBuffer buffer;
  drivers::DriverLoop loop(s.drivers, replay, buffer);
  for (int k = 1; k <= kSteps; ++k) {
    r0.AdvanceTo(kEpoch + k * kMs);
    r1.AdvanceTo(kEpoch + k * kMs);
    loop.Tick(k * kMs);
    const hal::RobotStateSample& a = live[static_cast<std::size_t>(k - 1)];
    const hal::RobotStateSample& b = loop.last_sample();
    for (std::size_t i = 0; i < s.drivers.joints.size(); ++i) {
      ASSERT_EQ(a.joints[i].position, b.joints[i].position) << k << " " << i;
      ASSERT_EQ(a.joints[i].velocity, b.joints[i].velocity) << k << " " << i;
      ASSERT_EQ(a.joints[i].torque, b.joints[i].torque) << k << " " << i;
      ASSERT_EQ(a.joints[i].encoder.state, b.joints[i].encoder.state) << k << " " << i;
      ASSERT_EQ(a.joints[i].torque_sensor.state, b.joints[i].torque_sensor.state) << k << " " << i;
      ASSERT_EQ(a.joints[i].encoder.lost_samples, b.joints[i].encoder.lost_samples) << k;
    }
    for (std::size_t c = 0; c < s.drivers.ft_cells.size(); ++c) {
      ASSERT_EQ(a.wrenches[c].health.state, b.wrenches[c].health.state) << k << " " << c;
      for (int i = 0; i < 6; ++i) ASSERT_EQ(a.wrenches[c].wrench[i], b.wrenches[c].wrench[i]) << k;
    }
  }
  EXPECT_TRUE(r0.done() && r1.done());
  EXPECT_EQ(loop.counters().lost_samples, live_counters.lost_samples);
  EXPECT_EQ(loop.counters().rejected_total(), live_counters.rejected_total());
  EXPECT_EQ(loop.bus(1).bus_off, live_bus_off);  // the error frame is in the log
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace heft::sim

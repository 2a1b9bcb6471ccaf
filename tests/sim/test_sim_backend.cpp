// heft-sim's simulated robot on its own (sim/src/sim_backend.cpp): its emulated CAN frames, decoded
// by heft's drivers, give back MuJoCo's state — joint positions, velocities, applied torques, the
// feet's contact wrenches in the F/T frames and the base IMU — within the spec's quantisation (no
// noise) and with the configured noise's statistics. Its faults and its candump log are in
// test_sim_backend_buses.cpp.
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
#include "mujoco_truth.hpp"
#include "sim_rig.hpp"

namespace heft::sim {
namespace {

using test::AttitudeError;
using test::DecodedImu;
using test::ImuDecoded;
using test::LoadSetup;
using test::MujocoTruth;
using test::Options;
using test::Quantum;
using test::QuantumOf;
using test::RunWithDrivers;
using test::SimRig;

// The worst decode errors of a run, each over its bound: position, velocity, torque, wrench; the
// base IMU's gyro, accelerometer and attitude; and the feet's support.
struct DecodeErrors {
  std::array<double, 4> worst{};      // position, velocity, torque, wrench: error / its bound
  std::array<double, 3> worst_imu{};  // gyro, accelerometer, attitude: error / half an LSB
  double worst_support = 0, lightest_foot = 1e9;
};

// Every joint's decoded position, velocity and torque within half an LSB of MuJoCo's at step k.
void ExpectJointsWithinQuantisation(const SimRig& s, int k, const hal::RobotStateSample& out,
                                    const MujocoTruth& truth, DecodeErrors& e) {
  const std::size_t nj = s.drivers.joints.size();
  ASSERT_EQ(out.num_joints, nj);
  for (std::size_t i = 0; i < nj; ++i) {
    const Quantum q = QuantumOf(s.drivers, i, 0);
    ASSERT_TRUE(out.joints[i].encoder.ok() && out.joints[i].torque_sensor.ok()) << k << " " << i;
    ASSERT_LT(std::abs(truth.velocity(i)), 32767 * s.drivers.joints[i].encoder.velocity_lsb)
        << "joint " << s.drivers.joints[i].joint << " beyond the encoder's velocity range";
    const double ep = std::abs(out.joints[i].position - truth.position(i));
    const double ev = std::abs(out.joints[i].velocity - truth.velocity(i));
    const double et = std::abs(out.joints[i].torque - truth.torque(i));
    ASSERT_LE(ep, q.position * (1 + 1e-6)) << s.drivers.joints[i].joint << " at " << k << " ms";
    ASSERT_LE(ev, q.velocity * (1 + 1e-6)) << s.drivers.joints[i].joint << " at " << k << " ms";
    ASSERT_LE(et, q.torque * (1 + 1e-6)) << s.drivers.joints[i].joint << " at " << k << " ms";
    e.worst[0] = std::max(e.worst[0], ep / q.position);
    e.worst[1] = std::max(e.worst[1], ev / q.velocity);
    e.worst[2] = std::max(e.worst[2], et / q.torque);
  }
}

// Every F/T cell's decoded wrench within ½ Σ|C_ij| of MuJoCo's contact wrench at step k.
void ExpectWrenchesWithinQuantisation(const SimRig& s, int k, const hal::RobotStateSample& out,
                                      const MujocoTruth& truth, DecodeErrors& e) {
  const std::size_t nc = s.drivers.ft_cells.size();
  ASSERT_EQ(out.num_wrenches, nc);
  for (std::size_t c = 0; c < nc; ++c) {
    const Quantum q = QuantumOf(s.drivers, 0, c);
    const auto w = truth.wrench(c);
    ASSERT_TRUE(out.wrenches[c].health.ok());
    for (int i = 0; i < 6; ++i) {
      const double err = std::abs(out.wrenches[c].wrench[i] - w[i]);
      ASSERT_LE(err, q.wrench[i] * (1 + 1e-6) + 1e-9)
          << "cell " << c << " component " << i << " at " << k << " ms: " << w.transpose();
      e.worst[3] = std::max(e.worst[3], err / q.wrench[i]);
    }
  }
}

// Half an LSB: gyro and accelerometer per axis; the attitude's x y z round by ½ / 32767 each, so
// the rotation between decoded and true attitude is at most 2 |δq_xyz| ≤ √3 / 32767 (plus the
// second-order error of the qw the decoder recomputes).
struct ImuBounds {
  double gyro_q, accel_q, attitude_q;
};

// The base IMU's decoded gyro, accelerometer and attitude within their bounds at step k.
void ExpectImuWithinQuantisation(const ImuBounds& b, int k, const hal::RobotStateSample& out,
                                 const MujocoTruth& truth, DecodeErrors& e) {
  ASSERT_TRUE(out.has_base && out.base.health.ok() && out.base.has_specific_force) << k;
  const ImuDecoded d = DecodedImu(out.base, truth.R_BI());
  const Eigen::Vector3d ew = (d.w - truth.imu_w()).cwiseAbs(),
                        ef = (d.f - truth.imu_f()).cwiseAbs();
  const double eq = AttitudeError(d.q_WI, truth.imu_q()).norm();
  ASSERT_LE(ew.maxCoeff(), b.gyro_q * (1 + 1e-6)) << "gyro at " << k << " ms";
  ASSERT_LE(ef.maxCoeff(), b.accel_q * (1 + 1e-6))
      << "accelerometer at " << k << " ms: " << truth.imu_f().transpose();
  ASSERT_LE(eq, b.attitude_q) << "attitude at " << k << " ms";
  e.worst_imu[0] = std::max(e.worst_imu[0], ew.maxCoeff() / b.gyro_q);
  e.worst_imu[1] = std::max(e.worst_imu[1], ef.maxCoeff() / b.accel_q);
  e.worst_imu[2] = std::max(e.worst_imu[2], eq / b.attitude_q);
}

void DecodesWithinQuantisation(const std::string& scenario, int steps) {
  const SimRig s = LoadSetup(scenario);
  const std::size_t nc = s.drivers.ft_cells.size();
  DecodeErrors e;
  const bool imu = s.drivers.imu.has_value();
  const ImuBounds bounds{imu ? 0.5 * s.drivers.imu->imu.gyro_lsb : 0.0,
                         imu ? 0.5 * s.drivers.imu->imu.accel_lsb : 0.0,
                         std::sqrt(3.0) / 32767.0 * 1.01};
  RunWithDrivers(Options(scenario, false), s, steps,
                 [&](int k, const hal::RobotStateSample& out, const MujocoTruth& truth) {
                   ASSERT_NO_FATAL_FAILURE(ExpectJointsWithinQuantisation(s, k, out, truth, e));
                   ASSERT_NO_FATAL_FAILURE(ExpectWrenchesWithinQuantisation(s, k, out, truth, e));
                   if (imu) {
                     ASSERT_NO_FATAL_FAILURE(ExpectImuWithinQuantisation(bounds, k, out, truth, e));
                   }
                   if (nc > 0)
                     e.worst_support = std::max(e.worst_support, truth.total_normal_force());
                   for (std::size_t c = 0; c < nc; ++c)
                     e.lightest_foot = std::min(e.lightest_foot, truth.wrench(c)[2]);
                 });
  std::printf(
      "%s, %d ms without noise: worst decode error / half an LSB: position %.3f, velocity %.3f, "
      "torque %.3f; wrench / (½ Σ|C_ij|) %.3f; total normal force up to %.0f N, one foot down to "
      "%.0f N\n",
      scenario.c_str(), steps, e.worst[0], e.worst[1], e.worst[2], e.worst[3], e.worst_support,
      nc > 0 ? e.lightest_foot : 0.0);
  if (imu)
    std::printf(
        "  base IMU: worst decode error / half an LSB: gyro %.3f, accelerometer %.3f; attitude "
        "%.3f of its bound\n",
        e.worst_imu[0], e.worst_imu[1], e.worst_imu[2]);
  if (nc > 0) {
    EXPECT_GT(e.worst_support, 500.0);  // the feet carry the robot: contacts are checked
    EXPECT_LT(e.lightest_foot, 1.0);    // and a foot leaves the floor: a step is checked too
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

}  // namespace
}  // namespace heft::sim

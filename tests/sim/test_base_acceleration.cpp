// The floating base's acceleration on the simulated robot's real path: MuJoCo → the base IMU's CAN
// frames → heft's drivers → SampleMapping's IMU path (specific force transported to the base origin
// with the gyro and its finite difference). Checked against MuJoCo's own base acceleration, and
// compared — by the residual of the six floating-base rows of inverse dynamics with the true
// parameters — with what a finite difference of a state estimator's base velocity gives.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "heft/dynamics/dynamics.hpp"
#include "heft/estimator/sample_mapping.hpp"
#include "sim_rig.hpp"

namespace heft::sim {
namespace {

using Vector6 = Eigen::Matrix<double, 6, 1>;
using test::LoadSetup;
using test::Options;
using test::SimLoop;
using test::SimRig;

// One simulated millisecond: the drivers' sample and MuJoCo's base after the step.
struct Record {
  hal::RobotStateSample sample;
  Vector6 base_acc;     // the free joint's velocity change over the step / step: [a_WB W; ω̇ B]
  Vector6 qacc;         // MuJoCo's qacc of the free joint for that step
  Eigen::Vector3d v_W;  // the base origin's true velocity, world
};

std::vector<Record> RunRecorded(const SimOptions& opt, const SimRig& s, int steps) {
  SimLoop rig(opt, s);
  std::vector<Record> out;
  out.reserve(static_cast<std::size_t>(steps));
  const mjData* d = rig.sim.plant().data();
  const double h = rig.sim.plant().timestep();
  for (int k = 1; k <= steps; ++k) {
    const Vector6 v_before = Eigen::Map<const Vector6>(d->qvel);
    rig.Step(k);
    Record r;
    r.sample = rig.loop.last_sample();
    r.base_acc = (Eigen::Map<const Vector6>(d->qvel) - v_before) / h;
    r.qacc = Eigen::Map<const Vector6>(d->qacc);
    r.v_W = Eigen::Map<const Eigen::Vector3d>(d->qvel);
    out.push_back(r);
  }
  EXPECT_EQ(rig.loop.counters().rejected_total(), 0u);
  return out;
}

estimator::SampleMappingConfig MappingConfig(const SimRig& s, estimator::BaseAcceleration source) {
  estimator::SampleMappingConfig c;
  for (const auto& j : s.drivers.joints) c.joints.push_back(j.joint);
  for (const auto& f : s.drivers.ft_cells) c.wrench_frames.push_back(f.frame);
  c.difference_samples = 2;
  c.base_acceleration = source;
  return c;
}

// SampleMapping's IMU path gives MuJoCo's base acceleration within the IMU's noise: standing and
// shifting the weight (1.5 s of step-in-place). The error expected: the accelerometer's noise and
// quantisation, plus the transport's ω̇ × p_BI with ω̇ a central difference of the gyro over 2h
// (σ_ω̇² = 2 σ_gyro² / (2h)²). Fails with a wrong frame, sign of gravity or transport, or a sample
// of the IMU describing another instant than the joints'.
TEST(BaseAcceleration, ImuPathMatchesMujocosBaseAccelerationWithinTheNoise) {
  const SimRig s = LoadSetup("step-in-place");
  ASSERT_TRUE(s.drivers.imu.has_value());
  const SimOptions opt = Options("step-in-place", true);
  const std::vector<Record> rec = RunRecorded(opt, s, 1500);
  estimator::SampleMapping mapping(s.model, MappingConfig(s, estimator::BaseAcceleration::kImu));
  const int h = mapping.lag_samples();
  const auto& imu = s.drivers.imu->imu;
  const double var_f = opt.noise.accel * opt.noise.accel + imu.accel_lsb * imu.accel_lsb / 12;
  const double var_w = opt.noise.gyro * opt.noise.gyro + imu.gyro_lsb * imu.gyro_lsb / 12;
  const double var_wdot = 2 * var_w / std::pow(2 * h * 1e-3, 2);
  const double p2 = s.drivers.imu->p_BI.squaredNorm();
  const double expected = std::sqrt(3 * var_f + 2 * p2 * var_wdot);  // RMS of |error|
  double sq = 0, sq_qacc = 0, peak = 0;
  int n = 0;
  for (std::size_t k = 500; k < rec.size(); ++k) {
    ASSERT_EQ(mapping.Assemble(rec[k].sample, rec[k - h].sample, rec[k - 2 * h].sample), 0u) << k;
    ASSERT_TRUE(mapping.base_from_imu());
    const Eigen::Vector3d a = mapping.a().head<3>();
    sq += (a - rec[k - h].base_acc.head<3>()).squaredNorm();
    sq_qacc += (a - rec[k - h].qacc.head<3>()).squaredNorm();
    peak = std::max(peak, rec[k - h].base_acc.head<3>().norm());
    ++n;
  }
  const double rms = std::sqrt(sq / n), rms_qacc = std::sqrt(sq_qacc / n);
  std::printf(
      "IMU path: |a_WB − MuJoCo's| RMS %.4f m/s² (vs qacc %.4f), expected from the noise %.4f "
      "(ratio %.3f); true base acceleration up to %.3f m/s²\n",
      rms, rms_qacc, expected, rms / expected, peak);
  EXPECT_NEAR(rms / expected, 1.0, 0.25);
  EXPECT_LT(rms_qacc, 1.25 * expected);
}

// docs/estimator.md's figure: on one step-in-place run (standing, weight shift, a step and its
// touchdown), the RMS of the six floating-base rows of τ_meas − τ_model(π_true) — the base carries
// no actuator, so they are the contact wrenches' mismatch with the base's dynamics — with the base
// acceleration from (a) the IMU and (b) a finite difference of a state estimator's base velocity:
// MuJoCo's plus white noise σ = 0.005 m/s (and σ = 0: the differencing alone). Everything else is
// shared: joints, F/T cells, attitude and gyro as decoded. Differencing velocity noise σ over 2h
// gives an acceleration noise √2 σ / 2h ≈ 1.8 m/s², ~150 N on an 89 kg robot, against the
// accelerometer's 0.02 m/s². What would make (a) lose: a wrong frame, sign of gravity or transport
// of the specific force, or an IMU sample of another instant than the joints' (each gives errors of
// the order of g·m or of the touchdown's accelerations).
TEST(BaseAcceleration, ImuBeatsDifferencedVelocityOnTheBaseRowsOfTheResidual) {
  const SimRig s = LoadSetup("step-in-place");
  const std::vector<Record> rec = RunRecorded(Options("step-in-place", true), s, 4000);
  std::vector<int> frames;
  for (const auto& f : s.drivers.ft_cells) frames.push_back(s.model.frame_index(f.frame));
  dynamics::Workspace ws(s.model);
  Eigen::VectorXd tau(s.model.nv), contact(s.model.nv);

  // RMS of the base rows (force rows, moment rows) over the control ticks after settling.
  struct Rms {
    double force, moment, all;
  };
  auto residual = [&](estimator::BaseAcceleration source,
                      const std::vector<hal::RobotStateSample>& in) {
    estimator::SampleMapping mapping(s.model, MappingConfig(s, source));
    const int h = mapping.lag_samples();
    Vector6 sq = Vector6::Zero();
    int n = 0;
    for (std::size_t k = 500; k < in.size(); k += 3) {
      EXPECT_EQ(mapping.Assemble(in[k], in[k - h], in[k - 2 * h]), 0u) << k;
      const std::vector<dynamics::Vector6> w(mapping.wrenches().begin(), mapping.wrenches().end());
      dynamics::Rnea(s.model, ws, mapping.q(), mapping.v(), mapping.a(), tau);
      dynamics::ContactTerm(s.model, ws, frames, w, contact);
      const Vector6 r = mapping.tau().head<6>() - (tau - contact).head<6>();
      sq += r.cwiseProduct(r);
      ++n;
    }
    return Rms{std::sqrt(sq.head<3>().sum() / (3 * n)), std::sqrt(sq.tail<3>().sum() / (3 * n)),
               std::sqrt(sq.sum() / (6 * n))};
  };
  std::vector<hal::RobotStateSample> imu;
  for (const Record& r : rec) imu.push_back(r.sample);
  auto with_velocity = [&](double sigma) {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<hal::RobotStateSample> out = imu;
    for (std::size_t k = 0; k < out.size(); ++k) {
      hal::BaseSample& b = out[k].base;
      for (int i = 0; i < 3; ++i) b.linear_velocity[i] = rec[k].v_W[i] + sigma * normal(rng);
      b.has_linear_velocity = true;
    }
    return out;
  };
  const Rms a = residual(estimator::BaseAcceleration::kImu, imu);
  const Rms b = residual(estimator::BaseAcceleration::kVelocity, with_velocity(0.005));
  const Rms b0 = residual(estimator::BaseAcceleration::kVelocity, with_velocity(0.0));
  std::printf(
      "base rows of τ_meas − τ_model(π_true), step-in-place 0.5–4 s, RMS force rows / moment rows "
      "/ all six:\n"
      "  (a) IMU (specific force + gyro):                 %8.2f N  %7.2f N·m  %8.2f\n"
      "  (b) differenced base velocity, σ = 0.005 m/s:    %8.2f N  %7.2f N·m  %8.2f\n"
      "      differenced base velocity, σ = 0 (exact):    %8.2f N  %7.2f N·m  %8.2f\n",
      a.force, a.moment, a.all, b.force, b.moment, b.all, b0.force, b0.moment, b0.all);
  EXPECT_LT(a.all, b.all);
}

}  // namespace
}  // namespace heft::sim

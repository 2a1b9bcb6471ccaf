// Batch identification: recovery of a perturbed humanoid's parameters by each method, joint
// friction as the recording shows it (a held joint's static friction, a joint sliding at one
// speed, the prediction's error split by the joints' speed), and torque-sensor offsets and gains.
// The SDP's physical consistency and the identifiability report are in test_identification_sdp.cpp.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numbers>

#include "heft/estimator/inertial_estimator.hpp"
#include "heft/identification/filter.hpp"
#include "heft/identification/identify.hpp"
#include "heft/identification/output.hpp"
#include "heft/identification/posterior.hpp"
#include "heft/identification/sdp.hpp"
#include "identification_data.hpp"
#include "motion.hpp"

namespace heft::identification {
namespace {

using test::Data;
using test::IdentifiedError;
using test::Recovery;
using test::Shared;
using test::TruthVector;

TEST(Identification, EachMethodRecoversTheIdentifiableParameters) {
  const Data& d = Shared();
  const Problem p = MakeProblem(d.nominal, {}, true);
  const Eigen::VectorXd truth = TruthVector(p, d.truth, 0.4, 0.3);
  const double prior_rmse = PredictTorques(p, d.valid, p.prior).rmse;
  const double truth_rmse = PredictTorques(p, d.valid, truth).rmse;
  for (Method m : {Method::kFullWls, Method::kContactOnly, Method::kNullSpace}) {
    const NormalEquations ne = Accumulate(p, d.train, m, NoiseModel{});
    EXPECT_EQ(ne.sensor_test_failures, 0) << MethodName(m);
    const LeastSquaresResult ls = SolveLeastSquares(ne, p);
    const Recovery err = IdentifiedError(p, ls, ls.x, truth);
    const double rmse = PredictTorques(p, d.valid, ls.x).rmse;
    std::printf(
        "%-9s rank %d/%d cond %.3g  identified %d: error/size p95 %.3f worst %.3f  "
        "valid RMSE %.3f (prior %.3f, truth %.3f)\n",
        MethodName(m), ls.report.rank, p.size(), ls.report.condition, err.count, err.p95, err.worst,
        rmse, prior_rmse, truth_rmse);
    EXPECT_LT(ls.report.rank, p.size()) << "a floating humanoid has unidentifiable parameters";
    EXPECT_GT(err.count, m == Method::kContactOnly ? 1 : 15) << MethodName(m);
    EXPECT_LT(err.p95, 0.1) << MethodName(m);
    if (m != Method::kContactOnly) {
      // As the online filter's nominal model: the constant residual the start-up calibration
      // would absorb shrinks.
      const double bias_before = PredictTorques(p, d.valid, p.prior).bias_rms;
      const double bias_after = PredictTorques(p, d.valid, ls.x).bias_rms;
      std::printf("          constant residual RMS: URDF %.3f → identified %.3f N·m\n", bias_before,
                  bias_after);
      EXPECT_LT(bias_after, 0.25 * bias_before) << MethodName(m);
      EXPECT_LT(rmse, 0.3 * prior_rmse) << MethodName(m);
      EXPECT_LT(rmse, truth_rmse + 0.15) << MethodName(m);
    }
    // Total mass is identifiable by every method.
    double mass = 0, mass_truth = 0;
    for (int b = 0; b < p.selection.size(); ++b) {
      mass += ls.x[10 * b];
      mass_truth += truth[10 * b];
    }
    EXPECT_NEAR(mass, mass_truth, 0.01 * mass_truth) << MethodName(m);
  }
}

// The shared recording with one joint's motion and friction replaced: its velocity v(t) (q and
// a stay: they move v's Coriolis terms by less than the noise), its measured torque carrying
// friction(v) instead of the recording's 0.4 s(v) + 0.3 v. Returns the data; `vi` its v index.
template <class Velocity, class Friction>
Dataset WithJointFriction(const std::string& joint, Velocity velocity, Friction friction, int& vi) {
  const Data& d = Shared();
  Dataset out = d.train;
  vi = d.nominal.bodies[d.nominal.joint_body_index(joint)].v_index;
  for (Sample& s : out.samples) {
    const double recorded = s.v[vi], v = velocity(s.t);
    s.tau[vi] += friction(v) - (0.4 * FrictionSign(recorded) + 0.3 * recorded);
    s.v[vi] = v;
  }
  return out;
}

TEST(Identification, AHeldJointsStaticFrictionIsNotReadAsViscous) {
  // The shared recording with one joint, the left wrist's roll, held instead of moving: it only
  // creeps (±4 mrad/s) while its static friction holds up to 0.5 N·m, the torque following the
  // creep's sign over 2 mrad/s (a regularised dry friction, as MuJoCo's is). Fitted from such
  // samples the viscous column reads the held torque over millirad/s: heft-identify put 7-30
  // N·m·s/rad on the simulated robot's wrists (0.1-0.4 true). Fails if the held joint's fitted
  // friction exceeds the plausible size PriorScale gives it (1 N·m, 1 N·m·s/rad), or if a moving
  // joint's (0.4 N·m, 0.3 N·m·s/rad) leaves 4 of its reported σ (+ 0.02 for the friction the
  // held-or-creeping samples near each reversal leave in the residual); one that slides at
  // nearly one speed gets Coulomb alone (AJointThatSlidesAtOneSpeedGetsCoulombAlone), 0.4 ± 0.1.
  int wrist = -1;
  const Dataset held = WithJointFriction(
      "left_wrist_roll",
      [](double t) { return 0.004 * std::sin(2.0 * std::numbers::pi * 0.5 * t); },
      [](double v) { return 0.5 * std::tanh(v / 0.002); }, wrist);
  const Problem p = MakeProblem(Shared().nominal, {}, true);
  const LeastSquaresResult ls = SolveLeastSquares(Accumulate(p, held, Method::kFullWls, {}), p);
  const int ni = p.inertial_size(), nj = p.joints();
  double worst = 0.0;  // the moving joints' largest error in their σ
  for (int j = 0; j < nj; ++j) {
    const double fc = ls.x[ni + j], fv = ls.x[ni + nj + j];
    if (p.joint_v[j] == wrist) {
      std::printf("held wrist: f_c %.3f N·m, f_v %.3f N·m·s/rad\n", fc, fv);
      EXPECT_LT(std::abs(fc), 1.0);
      EXPECT_LT(std::abs(fv), 1.0);
      continue;
    }
    const double sc = ls.report.sigma[ni + j], sv = ls.report.sigma[ni + nj + j];
    if (sv == 0.0) {  // slides at nearly one speed: Coulomb alone takes the viscous share too
      EXPECT_NEAR(fc, 0.4, 0.1) << "joint at v index " << p.joint_v[j];
      continue;
    }
    worst = std::max({worst, (std::abs(fc - 0.4) - 0.02) / sc, (std::abs(fv - 0.3) - 0.02) / sv});
  }
  std::printf("moving joints: worst friction error %.2f σ\n", worst);
  EXPECT_LT(worst, 4.0);
}

TEST(Identification, AJointThatSlidesAtOneSpeedGetsCoulombAlone) {
  // The shared recording with the right wrist's roll sliding only slowly, at 33-57 mrad/s either
  // way, its friction 0.5 tanh(v / 0.03) N·m (a dry friction regularised wider than the model's
  // s(v)). Over such samples s(v) and v are collinear (ρ² 0.97), and the fit traded Coulomb for
  // viscous: f_c 0.27, f_v 3.7 N·m·s/rad, twice the friction at 0.2 rad/s (the simulated
  // robot's right hip yaw came out 0.27 / 11.2 against 0.99 / 0.24 true). Fails if the joint's
  // viscous term is fitted (beyond the plausible 1 N·m·s/rad) or its Coulomb term leaves the
  // held torque's range, 0.40-0.50 N·m.
  int wrist = -1;
  const auto velocity = [](double t) {
    const double speed = 0.045 + 0.012 * std::sin(2.0 * std::numbers::pi * 0.3 * t);
    return std::sin(2.0 * std::numbers::pi * 0.25 * t) >= 0.0 ? speed : -speed;
  };
  const Dataset slow = WithJointFriction(
      "right_wrist_roll", velocity, [](double v) { return 0.5 * std::tanh(v / 0.03); }, wrist);
  const Problem p = MakeProblem(Shared().nominal, {}, true);
  const LeastSquaresResult ls = SolveLeastSquares(Accumulate(p, slow, Method::kFullWls, {}), p);
  const int ni = p.inertial_size(), nj = p.joints();
  const int j =
      static_cast<int>(std::find(p.joint_v.begin(), p.joint_v.end(), wrist) - p.joint_v.begin());
  ASSERT_LT(j, nj);
  const double fc = ls.x[ni + j], fv = ls.x[ni + nj + j];
  std::printf("slow wrist: f_c %.3f N·m, f_v %.3f N·m·s/rad\n", fc, fv);
  EXPECT_LT(std::abs(fv), 1.0);
  EXPECT_GT(fc, 0.40);
  EXPECT_LT(fc, 0.50);
}

TEST(Identification, APredictionSplitsItsErrorByTheJointsSpeed) {
  // The held wrist of AHeldJointsStaticFrictionIsNotReadAsViscous (creeping at ±4 mrad/s, below
  // the sliding speed, its static friction up to 0.5 N·m), predicted with and without that
  // friction in its measured torque, by one fit. Fails if the split loses or double-counts a row
  // (the two classes' rows and squared errors must add up to the whole), if a row is classed by
  // another speed than the fit's friction columns use (Problem::Slides), or if the held joint's
  // static friction reaches the sliding class, which must read the same with it and without.
  int wrist = -1;
  const auto creep = [](double t) { return 0.004 * std::sin(2.0 * std::numbers::pi * 0.5 * t); };
  const Dataset held = WithJointFriction(
      "left_wrist_roll", creep, [](double v) { return 0.5 * std::tanh(v / 0.002); }, wrist);
  const Dataset free = WithJointFriction(
      "left_wrist_roll", creep, [](double) { return 0.0; }, wrist);
  const Problem p = MakeProblem(Shared().nominal, {}, true);
  const LeastSquaresResult ls = SolveLeastSquares(Accumulate(p, held, Method::kFullWls, {}), p);
  const Prediction with = PredictTorques(p, held, ls.x), without = PredictTorques(p, free, ls.x);
  const int base = Shared().nominal.floating_base ? 6 : 0, nv = Shared().nominal.nv;
  long expected_held = 0;
  for (const Sample& s : held.samples)
    for (int i = base; i < nv; ++i) expected_held += p.Slides(s.v[i]) ? 0 : 1;
  const long rows = static_cast<long>(held.samples.size()) * (nv - base);
  std::printf(
      "sliding %.4f N·m over %ld rows; held %.4f (without the wrist's friction %.4f) over %ld\n",
      with.sliding_rmse, with.sliding_rows, with.held_rmse, without.held_rmse, with.held_rows);
  EXPECT_EQ(with.sliding_rows + with.held_rows, rows);
  EXPECT_EQ(with.held_rows, expected_held);
  EXPECT_GE(with.held_rows, static_cast<long>(held.samples.size())) << "every wrist row is held";
  const double whole = with.rmse * with.rmse * static_cast<double>(rows);
  const double parts =
      with.sliding_rmse * with.sliding_rmse * static_cast<double>(with.sliding_rows) +
      with.held_rmse * with.held_rmse * static_cast<double>(with.held_rows);
  EXPECT_NEAR(parts, whole, 1e-9 * whole);
  EXPECT_DOUBLE_EQ(with.sliding_rmse, without.sliding_rmse);
  EXPECT_GT(with.held_rmse, without.held_rmse);
  // Per joint: the wrist (joint index wrist − base) is held on every sample, and its held error
  // is its whole error; the joints' held rows add up to the held class's, their errors too.
  const std::size_t w = static_cast<std::size_t>(wrist - base);
  ASSERT_EQ(with.joint_held_share.size(), static_cast<std::size_t>(nv - base));
  ASSERT_EQ(with.joint_held_rmse.size(), static_cast<std::size_t>(nv - base));
  EXPECT_DOUBLE_EQ(with.joint_held_share[w], 1.0);
  EXPECT_NEAR(with.joint_held_rmse[w], with.joint_rmse[w], 1e-12);
  EXPECT_GT(with.joint_held_rmse[w], without.joint_held_rmse[w]);
  const double n = static_cast<double>(held.samples.size());
  double held_rows = 0.0, held_sq = 0.0;
  for (std::size_t j = 0; j < with.joint_held_share.size(); ++j) {
    held_rows += with.joint_held_share[j] * n;
    held_sq += with.joint_held_rmse[j] * with.joint_held_rmse[j] * with.joint_held_share[j] * n;
  }
  EXPECT_NEAR(held_rows, static_cast<double>(with.held_rows), 1e-6);
  EXPECT_NEAR(held_sq, with.held_rmse * with.held_rmse * static_cast<double>(with.held_rows),
              1e-9 * whole);
}

TEST(Identification, TorqueSensorOffsetsAreIdentifiedAndKeepTheInertialParametersUnbiased) {
  // Every joint torque sensor reads with a constant offset of 0.17–0.5 N·m. Without offset unknowns
  // the fit reads them as gravity of whatever bodies they can be traded against; with them the
  // identified parameters are recovered as without offsets and each offset is found. Fails if the
  // offset columns are missing or wrong (the inertial error then grows several-fold) or if they
  // leak into the friction's sign constraint.
  const Data& d = Shared();
  test::SimSpec spec;
  spec.duration = 12.0;
  spec.coulomb = 0.4;
  spec.viscous = 0.3;
  spec.torque_offset = 0.5;
  const Dataset train =
      PrepareDataset(d.nominal, {test::Simulate(d.truth, spec)}, DatasetOptions{});
  const Problem plain = MakeProblem(d.nominal, {}, true);
  const Problem with = MakeProblem(d.nominal, {}, true, true);
  ASSERT_EQ(with.size(), plain.size() + with.joints());
  Eigen::VectorXd truth = Eigen::VectorXd::Zero(with.size());
  truth.head(plain.size()) = TruthVector(plain, d.truth, 0.4, 0.3);
  for (int j = 0; j < with.joints(); ++j)
    truth[with.offset_begin() + j] = test::TorqueOffset(spec, with.joint_v[j]);
  const LeastSquaresResult ls_plain =
      SolveLeastSquares(Accumulate(plain, train, Method::kFullWls, NoiseModel{}), plain);
  const LeastSquaresResult ls_with =
      SolveLeastSquares(Accumulate(with, train, Method::kFullWls, NoiseModel{}), with);
  const Recovery e_plain = IdentifiedError(plain, ls_plain, ls_plain.x, truth.head(plain.size()));
  const Recovery e_with = IdentifiedError(with, ls_with, ls_with.x, truth);
  int offsets_identified = 0;
  double worst_offset = 0.0;
  for (int j = 0; j < with.joints(); ++j) {
    const int i = with.offset_begin() + j;
    if (ls_with.report.relative_sigma[i] >= 0.1) continue;  // traded against gravity: at the prior
    ++offsets_identified;
    worst_offset = std::max(worst_offset, std::abs(ls_with.x[i] - truth[i]));
  }
  std::printf(
      "offsets ±0.5 N·m: identified error/size p95 without offset unknowns %.3f (worst %.3f), with "
      "%.3f (worst %.3f); %d of %d offsets identified, worst error %.4f N·m\n",
      e_plain.p95, e_plain.worst, e_with.p95, e_with.worst, offsets_identified, with.joints(),
      worst_offset);
  // As without offsets (EachMethodRecoversTheIdentifiableParameters); the identified offsets are
  // among these (their plausible size is 1 N·m, so within 0.1 N·m at the 95th percentile).
  EXPECT_LT(e_with.p95, 0.1);
  EXPECT_GT(e_plain.p95, 5.0 * e_with.p95) << "the offsets should bias the plain fit";
  EXPECT_GT(offsets_identified, with.joints() / 2);
  // The SDP keeps friction non-negative, not the offsets (about half of them are negative): the
  // torso alone, every joint's friction and offset.
  const Problem torso = MakeProblem(d.nominal, {"torso"}, true, true);
  SdpOptions opt;
  opt.friction_nonnegative = true;
  const SdpResult sdp =
      SolveSdp(Accumulate(torso, train, Method::kFullWls, NoiseModel{}), torso, opt);
  ASSERT_TRUE(sdp.ok) << sdp.message;
  int negative = 0;
  for (int j = 0; j < torso.joints(); ++j) negative += sdp.x[torso.offset_begin() + j] < -0.1;
  EXPECT_GT(negative, 0);
}

TEST(Identification, SensorGainsAndOffsetsAreRecoveredWithinTheirSigma) {
  // Every joint torque sensor reads (1 + γ)(τ + friction) + ω with γ within ±2 % and ω within
  // ±0.5 N·m, and both F/T cells carry offsets within ±5 N and ±0.5 N·m. Identified on the full
  // rows (the floating base's rows fix the gains' scale) with every term, each gain, offset and
  // cell offset of the posterior's mean is within 4 σ of the truth (posterior.hpp, with the fit's
  // s² and κ), and the least squares' torque RMSE falls to the noise's. Fails if a column is
  // missing or wrong (its error then is tens of σ), or if the posterior's σ does not cover the
  // error.
  const Data& d = Shared();
  test::SimSpec spec;
  spec.duration = 12.0;
  spec.coulomb = 0.4;
  spec.viscous = 0.3;
  spec.torque_offset = 0.5;
  spec.torque_gain = 0.02;
  spec.ft_force = 5.0;
  spec.ft_moment = 0.5;
  const Dataset train =
      PrepareDataset(d.nominal, {test::Simulate(d.truth, spec)}, DatasetOptions{});
  const Problem plain = MakeProblem(d.nominal, {}, true);
  ProblemTerms terms;
  terms.friction = terms.offsets = terms.gains = true;
  terms.ft_frames = train.frames;
  const Problem with = MakeProblem(d.nominal, {}, terms);
  ASSERT_EQ(with.size(), plain.size() + 2 * with.joints() + 12);
  const NormalEquations ne = Accumulate(with, train, Method::kFullWls, NoiseModel{});
  const LeastSquaresResult ls = SolveLeastSquares(ne, with);
  const LeastSquaresResult ls_plain =
      SolveLeastSquares(Accumulate(plain, train, Method::kFullWls, NoiseModel{}), plain);
  const double s2 = ResidualVarianceFactor(ne, ls.x);
  const double kappa = ResidualCorrelation(with, train, ls.x);
  const Posterior post = ComputePosterior(ne, with.prior, PriorFactor(with), s2 * kappa);
  Eigen::VectorXd truth(with.size() - plain.size());
  for (int j = 0; j < with.joints(); ++j) {
    const double gamma = test::TorqueGain(spec, with.joint_v[j]);
    truth[j] = test::TorqueOffset(spec, with.joint_v[j]) / (1.0 + gamma);  // o = ω / (1 + γ)
    truth[with.joints() + j] = gamma / (1.0 + gamma);                      // g = γ / (1 + γ)
  }
  for (int c = 0; c < 12; ++c) truth[2 * with.joints() + c] = test::FtOffset(spec, c / 6, c % 6);
  double worst = 0.0, sum_sq = 0.0;
  std::string worst_name;
  for (int i = 0; i < truth.size(); ++i) {
    const int u = plain.size() + i;
    const double z = (post.mean[u] - truth[i]) / std::sqrt(post.covariance(u, u));
    sum_sq += z * z;
    if (std::abs(z) > worst) {
      worst = std::abs(z);
      worst_name = with.names[u];
    }
  }
  const double rmse = PredictTorques(with, train, ls.x).rmse;
  const double rmse_plain = PredictTorques(plain, train, ls_plain.x).rmse;
  std::printf(
      "sensor errors: s² %.3f κ %.2f; %ld unknowns, RMS z %.2f, worst %.2f σ (%s); torque RMSE "
      "%.4f N·m with, %.4f without\n",
      s2, kappa, static_cast<long>(truth.size()),
      std::sqrt(sum_sq / static_cast<double>(truth.size())), worst, worst_name.c_str(), rmse,
      rmse_plain);
  EXPECT_LT(worst, 4.0) << worst_name;
  EXPECT_LT(rmse, 0.5 * rmse_plain);
}

}  // namespace
}  // namespace heft::identification

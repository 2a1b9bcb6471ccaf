// The measurement's low-pass (EstimatorConfig::measurement_lowpass): both sides of
// H π = z through one first-order filter, against the differenced accelerations' noise in H.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>

#include "fixtures.hpp"
#include "heft/dynamics/inertia.hpp"
#include "heft/estimator/inertial_estimator.hpp"
#include "heft/estimator/measurement_lowpass.hpp"
#include "heft/test/alloc_counter.hpp"

namespace heft::estimator {
namespace {

struct Outcome {
  double mass = 0.0;     // mean |m̂ − m| / m over the last 2 s
  double com = 0.0;      // mean |ĉ − c| over the last 2 s, m
  double inertia = 0.0;  // mean ‖Î_c − I_c‖ / ‖I_c‖ (about the CoM) over the last 2 s
  std::uint64_t allocations = 0;
};

Outcome Estimate(const dynamics::Model& model, EstimatorConfig cfg,
                 const std::vector<test::Tick>& ticks, double lowpass) {
  cfg.measurement_lowpass = lowpass;
  InertialEstimator est(model, cfg);
  est.SkipCalibration();
  const unsigned char valid[2] = {1, 1}, contact[2] = {1, 1};
  Outcome r;
  int n = 0;
  const double end = ticks.back().t;
  for (std::size_t i = 0; i < ticks.size(); ++i) {
    const test::Tick& tk = ticks[i];
    const TickInput in{tk.t, tk.q, tk.v, tk.a, tk.tau, tk.wrenches, valid, contact};
    heft::test::AllocationScope scope;
    (void)est.Step(in);
    if (i > 0) r.allocations += scope.count();
    if (tk.t < end - 2.0) continue;
    const dynamics::Vector10 pi = est.estimate().head<10>(), truth = tk.truth.head<10>();
    r.mass += std::abs(pi[0] - truth[0]) / truth[0];
    r.com += (pi.segment<3>(1) / pi[0] - truth.segment<3>(1) / truth[0]).norm();
    const Eigen::Matrix3d Ic = dynamics::InertiaFromParameters10(truth).inertia_com;
    r.inertia += (dynamics::InertiaFromParameters10(pi).inertia_com - Ic).norm() / Ic.norm();
    ++n;
  }
  r.mass /= n;
  r.com /= n;
  r.inertia /= n;
  std::printf(
      "[ heft ] low-pass %.0f Hz: mass %.3f %%, CoM %.2f mm, inertia about the "
      "CoM %.1f %%\n",
      lowpass, 100 * r.mass, 1e3 * r.com, 100 * r.inertia);
  return r;
}

// Noise-free data (the differences' own truncation error aside), a 2 kg dumbbell in the hand: the
// low-pass changes both sides of H π = z alike, so the estimate converges as without it. Fails
// if one side is filtered and not the other, or the two with different weights (the residual
// would lag the rows by the filter's 32 ms: an error of the order of the motion's change over it).
// Tolerance: the unfiltered run's own error on the same data, plus 0.1 % of the mass, 0.5 mm and
// 1 % of the inertia (the filter's start from the prior is later by its time constant).
TEST(MeasurementLowPass, LeavesAnExactMeasurementExact) {
  test::DataSpec spec = test::ArmMotion(10.0);
  spec.noise = test::StandingStill(0.0).noise;  // no noise at all
  spec.payload = test::ForearmPayload(2.0);
  const auto ticks = test::Generate(spec);
  const dynamics::Model model = test::ReferenceHumanoid();
  const Outcome plain = Estimate(model, test::ArmConfig(), ticks, 0.0);
  const Outcome filtered = Estimate(model, test::ArmConfig(), ticks, 5.0);
  EXPECT_LT(filtered.mass, plain.mass + 1e-3);
  EXPECT_LT(filtered.com, plain.com + 5e-4);
  EXPECT_LT(filtered.inertia, plain.inertia + 0.01);
  EXPECT_EQ(filtered.allocations, 0u);
}

// A torso held by the rigid prior (its shape's σ 0.01 in the CoM frame, the prior's pull), the
// robot swaying on both feet, the base's angular velocity from a gyro with 0.002 rad/s of noise:
// differenced over 4 ms that is 0.7 rad/s² of base angular acceleration in every row of H, an
// errors-in-variables noise that pulls what it multiplies (the torso's inertia and the height of
// its CoM) toward zero whatever R says (R carries it, M Σ_a Mᵀ, as the plugin sets it). This is
// what moved the second humanoid's torso CoM 17 mm in heft-sim (docs/estimator.md, "The
// measurement's low-pass"). Measured on seeds 1-4: the CoM error at 5 Hz is 0.30-0.48 of the
// unfiltered one, the mass error about half. Fails if the low-pass is not applied, or applied to
// one side only (LeavesAnExactMeasurementExact), or allocates: the CoM error must come below 0.6 of
// the unfiltered one and the mass error must not grow.
// The torso run below, with either measurement.
void GyroNoiseRun(MeasurementChoice measurement) {
  test::DataSpec spec;
  spec.duration = 12.0;
  spec.motion.joints = {"waist_pitch", "left_elbow", "right_elbow"};
  spec.motion.amplitude = 0.2;
  spec.motion.base_amplitude = 0.05;
  spec.noise.gyro_sigma = 0.002;
  spec.watched = {"torso"};
  const auto ticks = test::Generate(spec);
  const dynamics::Model model = test::ReferenceHumanoid();
  EstimatorConfig cfg = test::ArmConfig({"torso"});
  cfg.measurement = measurement;
  dynamics::Vector10 sigma = dynamics::Vector10::Constant(0.01),
                     q = dynamics::Vector10::Constant(1e-6);
  sigma[0] = 0.3;
  sigma.tail<3>().setConstant(0.03);
  q[0] = 1e-3;
  cfg.initial_sigma = sigma;
  cfg.process_noise = q;
  cfg.prior_time_constant = 2.0;
  cfg.parameter_frame = EstimatorConfig::ParameterFrame::kCom;
  cfg.stiction_band = false;
  cfg.acceleration_sigma = Eigen::VectorXd::Zero(model.nv);
  cfg.acceleration_sigma.segment<3>(3).setConstant(std::sqrt(2.0) * spec.noise.gyro_sigma / 0.004);
  const Outcome plain = Estimate(model, cfg, ticks, 0.0);
  const Outcome filtered = Estimate(model, cfg, ticks, 5.0);
  EXPECT_LT(filtered.com, 0.6 * plain.com);
  EXPECT_LE(filtered.mass, plain.mass);
  EXPECT_EQ(filtered.allocations, 0u);
}

TEST(MeasurementLowPass, TakesTheGyrosNoisePullOffTheTorso) {
  GyroNoiseRun(MeasurementChoice::kFullWrench);
}

// The same on the robot without foot F/T cells: the null-space rows carry the same
// errors-in-variables noise (what pulled the simulated torso's CoM 60 mm down over 10 s on the
// ideal robot, torso-load-noft). Fails if the low-pass leaves the null-space rows out (as it did).
TEST(MeasurementLowPass, TakesTheGyrosNoisePullOffTheTorsoWithoutFootCells) {
  GyroNoiseRun(MeasurementChoice::kTorqueNullSpace);
}

// Two runs of exact dumbbell-curl data through the 5 Hz low-pass, one with the elbow torque `size`
// σ off from t = 6 s for `ticks` ticks (alternating in sign when `alternate`): the first such
// tick's result, the spiked run's largest departure of the forearm mass from the clean run's from
// then on, in the filter's own σ of it, and its releases from then on.
struct SpikeOutcome {
  TickResult at_spike;
  double worst = 0.0;
  int perturbed_gated = 0, releases = 0;
  std::uint64_t allocations = 0;
};
// With `lost_wrench` both runs lose the left foot's wrench on the tick before the spike (its tick
// goes to the null-space measurement).
SpikeOutcome RunSpike(double size, int ticks = 1, bool alternate = false, double duration = 6.5,
                      bool lost_wrench = false) {
  test::DataSpec spec = test::ArmMotion(duration);
  spec.noise = test::StandingStill(0.0).noise;  // exact data: a lost tick costs nothing
  spec.payload = test::ForearmPayload(2.0);
  const auto clean = test::Generate(spec);
  auto spiked = clean;
  const dynamics::Model model = test::ReferenceHumanoid();
  const int elbow = model.bodies[model.body_index("left_forearm")].v_index;
  std::size_t spike = 0;
  while (spiked[spike].t < 6.0) ++spike;
  for (int k = 0; k < ticks && spike + k < spiked.size(); ++k)  // σ = 1 N·m (ArmConfig)
    spiked[spike + k].tau[elbow] += (alternate && k % 2 ? -size : size);
  EstimatorConfig cfg = test::ArmConfig();
  cfg.measurement_lowpass = 5.0;
  InertialEstimator a(model, cfg), b(model, cfg);
  a.SkipCalibration();
  b.SkipCalibration();
  const unsigned char valid[2] = {1, 1}, lost[2] = {0, 1}, contact[2] = {1, 1};
  SpikeOutcome r;
  for (std::size_t i = 0; i < clean.size(); ++i) {
    const test::Tick &ta = clean[i], &tb = spiked[i];
    const unsigned char* v = lost_wrench && i + 1 == spike ? lost : valid;
    const TickInput ia{ta.t, ta.q, ta.v, ta.a, ta.tau, ta.wrenches, {v, 2}, contact};
    const TickInput ib{tb.t, tb.q, tb.v, tb.a, tb.tau, tb.wrenches, {v, 2}, contact};
    heft::test::AllocationScope scope;
    (void)a.Step(ia);
    const TickResult rb = b.Step(ib);
    if (i > 0) r.allocations += scope.count();
    if (i == spike) r.at_spike = rb;
    if (i < spike) continue;
    r.worst = std::max(r.worst, std::abs(b.estimate()[0] - a.estimate()[0]) / test::Sigma(a, 0));
    r.releases += rb.status == TickStatus::kReleased;
    r.perturbed_gated += i < spike + ticks && rb.status == TickStatus::kGated;
  }
  std::printf(
      "[ heft ] %d tick(s) of a %.0f σ spike%s%s: NIS %.0f (threshold %.0f), %s; %d of them "
      "gated, %d releases; largest effect on the mass %.3f σ\n",
      ticks, size, alternate ? ", alternating" : "",
      lost_wrench ? ", after a lost foot wrench" : "", r.at_spike.nis, r.at_spike.gamma,
      r.at_spike.status == TickStatus::kGated ? "gated" : "not gated", r.perturbed_gated,
      r.releases, r.worst);
  return r;
}

// A spike the gate rejects must not pass its tail to the ticks after it: the filtered rows would
// carry α (1 − α)ᵏ of it k ticks later, below the gate after the first few, and move the estimate
// (a touchdown's spike moved the simulated torso's mass +0.34 kg that way at the gait's start).
// A 100 σ spike. Fails if the spiked run's forearm mass leaves the clean run's by more than a
// tenth of the filter's own σ of it. With the update learning from the gate's rows, the tail
// moved it 0.36 σ; learning only from the used ticks, 0.03 σ (the ticks the gate rejected are
// missing, which exact data barely notice). Also fails if the spike is not gated at all, or the
// run allocates.
TEST(MeasurementLowPass, ARejectedSpikeLeavesNoTail) {
  const SpikeOutcome r = RunSpike(100.0);
  EXPECT_EQ(r.at_spike.status, TickStatus::kGated);
  EXPECT_LT(r.worst, 0.1);
  EXPECT_EQ(r.allocations, 0u);
}

// A spike one tick long reaches the low-passed rows at α of its size, so at α(2 − α) of its NIS
// once they are scaled to unit variance (0.17 at 5 Hz and 333 Hz): a touchdown the gate would
// reject on its own rows passes it low-passed, and then feeds the update for the low-pass's
// memory (about 30 ticks). The tick's own rows are screened too (InertialEstimator::Step). A
// 15 σ spike on one row: NIS ≈ 225 against a threshold of about 66 on 35 rows, about 38
// low-passed. Fails if that tick is not gated (it was not before the screen, and the mass then
// moved 0.22 of the filter's own σ, measured), if the mass leaves the clean run's by more than a
// tenth of that σ, or if the run allocates.
TEST(MeasurementLowPass, AOneTickSpikeIsGatedBeforeTheLowPass) {
  const SpikeOutcome r = RunSpike(15.0);
  EXPECT_EQ(r.at_spike.status, TickStatus::kGated);
  EXPECT_GT(r.at_spike.nis, r.at_spike.gamma);
  EXPECT_LT(r.worst, 0.1);
  EXPECT_EQ(r.allocations, 0u);
}

// Chatter that only the raw screen sees (±15 σ on one row, alternating every tick for 1 s; the
// low-pass averages it to about a twentieth) is a residual no parameter explains: the estimate is
// held, and the gate's release, judged on the low-passed rows it would learn from, is refused.
// Fails if any tick of it passes, or if it is released (it was, on every release_after, while the
// release test compared the raw NIS before with the low-passed one after: measured), or if the
// run allocates.
TEST(MeasurementLowPass, ChatterOnlyTheRawRowsShowIsHeldNotReleased) {
  const int ticks = 333;
  const SpikeOutcome r = RunSpike(15.0, ticks, true, 7.5);
  EXPECT_EQ(r.perturbed_gated, ticks);
  EXPECT_EQ(r.releases, 0);
  EXPECT_EQ(r.allocations, 0u);
}

// A foot wrench lost for one tick (a late F/T sample: that tick goes to the null-space measurement)
// must not cost the full measurement's low-pass its memory: on the deviated robot's seed 3 the
// restart that followed let a touchdown's raw rows through the gate (a 0.47 kg torso-mass spike).
// A lasting 5 σ residual on the elbow's row for 20 ticks (a touchdown's), right after such a tick:
// its effect on the forearm mass stays within 1.5× (+ 0.02 σ) of the same residual's without the
// lost tick. Fails if the lost tick restarts the low-pass (the residual's first ticks then reach
// the update whole and pass the gate, whose copy starts at the raw tick's variance), or the run
// allocates.
TEST(MeasurementLowPass, ALostFootWrenchKeepsTheLowPassMemory) {
  const SpikeOutcome plain = RunSpike(5.0, 20);
  const SpikeOutcome lost = RunSpike(5.0, 20, false, 6.5, true);
  EXPECT_LE(lost.worst, 1.5 * plain.worst + 0.02);
  EXPECT_EQ(lost.allocations, 0u);
}

// A cutoff at or above the control rate's Nyquist frequency is refused, naming the key.
TEST(MeasurementLowPass, RefusesACutoffAboveNyquist) {
  EstimatorConfig cfg = test::ArmConfig();
  cfg.measurement_lowpass = 0.5 / cfg.control_period;
  const dynamics::Model model = test::ReferenceHumanoid();
  try {
    InertialEstimator est(model, cfg);
    FAIL() << "accepted a cutoff at Nyquist";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("measurement_lowpass"), std::string::npos) << e.what();
  }
}

// The gate copy's NIS is read with its own noise: after k chained ticks of white unit-variance
// rows the filtered rows' variance is v_k = (1 − α)² v_{k−1} + α² from 1, and HGateNis / zGateNis
// are HGate / zGate divided by √v_k, so that zᵀ(H P Hᵀ + v·1)⁻¹z is the NIS of the whitened rows
// with R = 1. Fails if the gate rows are not whitened for v (the NIS then scaled the whole
// innovation covariance by 1/v, H P Hᵀ included, and rejected updates P explained) or v's
// recursion is wrong.
TEST(MeasurementLowPass, TheGateRowsAreWhitenedForTheirOwnNoise) {
  const double fc = 5.0, dt = 0.003;
  MeasurementLowPass lp(fc, dt, 3, 2);
  const double alpha = 1.0 - std::exp(-2.0 * std::numbers::pi * fc * dt);
  Eigen::MatrixXd H(3, 2);
  H << 1.0, 2.0, -1.0, 0.5, 0.0, 3.0;
  Eigen::VectorXd z(3);
  z << 0.3, -0.2, 1.0;
  double v = 1.0;
  for (int k = 0; k < 200; ++k) {
    lp.Blend(k * dt, H, z, 3);
    if (k > 0) v = (1.0 - alpha) * (1.0 - alpha) * v + alpha * alpha;
    ASSERT_NEAR(lp.gate_variance(), v, 1e-15 * v);
    // Constant rows: the filtered copy is the rows themselves, whitened by 1/√v.
    ASSERT_TRUE(lp.HGateNis().isApprox(H / std::sqrt(v), 1e-12)) << k;
    ASSERT_TRUE(lp.zGateNis().isApprox(z / std::sqrt(v), 1e-12)) << k;
    lp.After(true, false);
  }
  EXPECT_NEAR(v, alpha / (2.0 - alpha), 1e-6);  // the stationary variance of a low-passed white
}

// A gap shorter than the filter's time constant (ticks the estimator did not blend: a foot wrench
// lost for a tick, whose tick went to the null-space measurement) continues the chain as that many
// periods of decay: the gate copy's variance goes on as v ← (1 − α₄)² v + α₄², α₄ = 1 − (1 − α)⁴,
// and its rows keep their memory. A gap beyond it restarts (v = 1, the tick alone). Fails if a
// three-tick gap restarts the low-pass (on the deviated robot's seed 3 a single lost F/T sample at
// a touchdown then let the touchdown's raw rows through the gate: a 0.47 kg torso-mass spike, 6.6
// robust spreads) or blends it as one period.
TEST(MeasurementLowPass, AGapShorterThanItsTimeConstantContinuesTheChain) {
  const double fc = 5.0, dt = 0.003;
  MeasurementLowPass lp(fc, dt, 2, 2);
  const double alpha = 1.0 - std::exp(-2.0 * std::numbers::pi * fc * dt);
  const Eigen::MatrixXd H = Eigen::MatrixXd::Identity(2, 2);
  Eigen::VectorXd z(2);
  z << 1.0, -1.0;
  double t = 0.0;
  for (int k = 0; k < 100; ++k, t += dt) {
    lp.Blend(t, H, z, 2);
    lp.After(true, false);
  }
  const double v = lp.gate_variance();
  // Three ticks missed: the next comes four periods after the last.
  t += 3 * dt;
  const Eigen::VectorXd z2 = Eigen::VectorXd::Constant(2, 5.0);
  lp.Blend(t, H, z2, 2);
  const double a4 = 1.0 - std::pow(1.0 - alpha, 4.0);
  EXPECT_NEAR(lp.gate_variance(), (1.0 - a4) * (1.0 - a4) * v + a4 * a4, 1e-15);
  EXPECT_TRUE(lp.zGate().isApprox(a4 * z2 + (1.0 - a4) * z, 1e-12)) << lp.zGate().transpose();
  lp.After(true, false);
  // 0.1 s later (beyond 32 ms): the tick alone.
  lp.Blend(t + 0.1, H, z, 2);
  EXPECT_EQ(lp.gate_variance(), 1.0);
  EXPECT_TRUE((lp.zGate().array() == z.array()).all());
}

// The two copies as the header defines them (a plain reference with a buffer each): the gate's
// takes every tick; the update's is this tick alone until a used tick is kept, then this tick
// blended into the kept state; a release or a rejoin makes both the gate's. MeasurementLowPass
// forms the update's copy and the kept state without copies while they agree with the gate's;
// over random rows, decisions, gaps and row counts its copies must equal the reference bit for
// bit. Fails if a tick's update rows or kept state come from the wrong buffer (the gate's after a
// rejected tick, a kept state the gate's blend overwrote), or a gap is blended with the wrong α.
TEST(MeasurementLowPass, TheCopiesFollowTheirDefinitionBitForBit) {
  const double fc = 5.0, dt = 0.003;
  const int rows = 4, cols = 3;
  MeasurementLowPass lp(fc, dt, rows, cols);
  const double alpha = 1.0 - std::exp(-2.0 * std::numbers::pi * fc * dt);
  const int rejoin = static_cast<int>(std::ceil(std::log(1e-3) / std::log(1.0 - alpha)));
  const double tau = 1.0 / (2.0 * std::numbers::pi * fc);  // 32 ms: 10.6 periods
  Eigen::MatrixXd gate(rows, cols), use(rows, cols), kept(rows, cols);
  bool has_kept = false, split = false;
  int ticks_split = 0, last_rows = -1;
  double last_time = -1.0, time = 0.0;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int k = 0; k < 3000; ++k) {
    // Now and then a gap: within the time constant (5 periods) it continues with α₅, beyond it
    // (20 periods) both restart.
    const double g = u(rng);
    time += g < 0.005 ? 20 * dt : g < 0.015 ? 5 * dt : dt;
    const int m = u(rng) < 0.01 ? rows - 1 : rows;  // now and then a contact changes the rows
    const Eigen::MatrixXd H = Eigen::MatrixXd::Random(rows, cols);
    const Eigen::VectorXd z = Eigen::VectorXd::Random(rows);
    lp.Blend(time, H, z, m);
    const double gap = time - last_time;
    const bool chain = gap <= std::max(1.5 * dt, tau) && time > last_time;
    const double periods = chain ? std::max(1.0, std::round(gap / dt)) : 1.0;
    const double a = periods == 1.0 ? alpha : 1.0 - std::pow(1.0 - alpha, periods);
    const bool restart = !chain || m != last_rows;
    if (restart) has_kept = split = false;
    gate.topRows(m) =
        restart ? H.topRows(m) : Eigen::MatrixXd(a * H.topRows(m) + (1.0 - a) * gate.topRows(m));
    use.topRows(m) =
        !has_kept ? H.topRows(m) : Eigen::MatrixXd(a * H.topRows(m) + (1.0 - a) * kept.topRows(m));
    const bool split_now = split || (!has_kept && !restart);
    last_time = time;
    last_rows = m;
    ASSERT_TRUE((lp.HGate().array() == gate.topRows(m).array()).all()) << k;
    ASSERT_TRUE((lp.HUse().array() == use.topRows(m).array()).all()) << k;
    const double r = u(rng);
    const bool released = r < 0.05, updated = !released && r < 0.8;
    lp.After(updated, released);
    if (released || updated) {
      if (released) use = gate;
      kept = use;
      has_kept = true;
      split = !released && split_now;
      ticks_split = released ? 0 : ticks_split;
      if (split && ++ticks_split >= rejoin) {
        use = kept = gate;
        split = false;
        ticks_split = 0;
      }
    } else {
      split = true;
      ticks_split = 0;
    }
  }
}

}  // namespace
}  // namespace heft::estimator

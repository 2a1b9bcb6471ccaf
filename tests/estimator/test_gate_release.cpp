// The gate's release policy (a review's defect): a lasting residual that no estimated
// parameter explains must not cycle the gate (releases inflating P without bound), a genuine load
// step must still release and converge, and a numeric failure must not be permanent.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "fixtures.hpp"
#include "heft/estimator/inertial_estimator.hpp"
#include "heft/test/alloc_counter.hpp"

namespace heft::estimator {
namespace {

using test::ArmConfig;
using test::ArmMotion;

// 10 N·m of friction on the right knee: a row the left forearm's parameters do not enter at all, so
// no parameter change explains it (NIS ≈ 100 + χ²(35) > γ = 66.6 on every tick).
constexpr double kFriction = 10.0;
constexpr double kUnexplainedSeconds = 15.0;

// Over 15 s of this residual (37 release periods) the gate must not release (before the fix it
// released every release_after + open_for = 0.4 s, ×10 on P each time, past the covariance cap
// after the second), the covariance stays within
// max_covariance_factor × P₀ and finite, nothing is rejected as numeric, and the run allocates
// nothing (the refused-release branch included). Fails with periodic releases or a growing P.
TEST(GateRelease, UnexplainedResidualDoesNotCycleTheGate) {
  const auto ticks = test::Generate(ArmMotion(kUnexplainedSeconds));
  const dynamics::Model model = test::ReferenceHumanoid();
  const EstimatorConfig cfg = ArmConfig();
  InertialEstimator est(model, cfg);
  est.SkipCalibration();
  const int knee = model.bodies[model.body_index("right_shin")].v_index;
  const unsigned char valid[2] = {1, 1}, contact[2] = {1, 1};
  Eigen::VectorXd tau(model.nv);
  double worst_ratio = 0.0;
  std::uint64_t allocations = 0;
  for (std::size_t i = 0; i < ticks.size(); ++i) {
    const test::Tick& tk = ticks[i];
    tau = tk.tau;
    tau[knee] += kFriction;
    const TickInput in{tk.t, tk.q, tk.v, tk.a, tau, tk.wrenches, valid, contact};
    heft::test::AllocationScope scope;
    (void)est.Step(in);
    if (i > 0) allocations += scope.count();
    const Eigen::VectorXd& P = est.filter().covariance().diagonal();
    for (int s = 0; s < P.size(); ++s)
      worst_ratio =
          std::max(worst_ratio, P[s] / (cfg.initial_sigma[s % 10] * cfg.initial_sigma[s % 10]));
  }
  std::printf(
      "[ heft ] unexplained 10 N·m on the right knee, %.0f s: %llu releases, %llu refused, "
      "%llu gated, worst P/P0 %.3g, %llu numeric rejects\n",
      kUnexplainedSeconds, static_cast<unsigned long long>(est.gate().releases()),
      static_cast<unsigned long long>(est.gate().refused_releases()),
      static_cast<unsigned long long>(est.gate().rejected()), worst_ratio,
      static_cast<unsigned long long>(est.numeric_rejects()));
  EXPECT_EQ(est.gate().releases(), 0u);
  EXPECT_TRUE(std::isfinite(worst_ratio));
  EXPECT_LE(worst_ratio, cfg.gating.max_covariance_factor);
  EXPECT_EQ(est.numeric_rejects(), 0u);
  EXPECT_EQ(allocations, 0u);
}

// A genuine 5 kg payload at 1 s with the same unexplained residual present: the load change is
// what the forearm's parameters explain, so the gate releases (a few times at most) and the mass
// converges to within 5 %. (Not the filter's σ: with every tick but the release's open window
// gated, σ_m stays ~1.2 kg, a looser bound than 5 %; docs/ci.md, "Tests that can fail".) Fails if
// the release test refuses a load change or the gate keeps cycling.
TEST(GateRelease, LoadStepStillReleasesAndConverges) {
  test::DataSpec spec = ArmMotion(8.0);
  spec.payload = test::ForearmPayload(5.0, 1.0);
  const auto ticks = test::Generate(spec);
  const dynamics::Model model = test::ReferenceHumanoid();
  InertialEstimator est(model, ArmConfig());
  est.SkipCalibration();
  const int knee = model.bodies[model.body_index("right_shin")].v_index;
  const unsigned char valid[2] = {1, 1}, contact[2] = {1, 1};
  Eigen::VectorXd tau(model.nv);
  double sum = 0.0;
  int n = 0;
  for (const test::Tick& tk : ticks) {
    tau = tk.tau;
    tau[knee] += kFriction;
    const TickInput in{tk.t, tk.q, tk.v, tk.a, tau, tk.wrenches, valid, contact};
    (void)est.Step(in);
    if (tk.t > 6.0) sum += est.estimate()[0], ++n;
  }
  const double truth = ticks.back().truth[0], mean = sum / n;
  const double sigma = test::Sigma(est, 0);
  std::printf(
      "[ heft ] 5 kg step with unexplained residual: mass %.3f kg (truth %.3f, %.2f σ), %llu "
      "releases, %llu refused\n",
      mean, truth, std::abs(mean - truth) / sigma,
      static_cast<unsigned long long>(est.gate().releases()),
      static_cast<unsigned long long>(est.gate().refused_releases()));
  EXPECT_GE(est.gate().releases(), 1u);
  EXPECT_LE(est.gate().releases(), 5u);
  EXPECT_LT(std::abs(mean - truth), 0.05 * truth);
}

// A 5 kg payload at 1 s on the standing robot, its feet's contacts known (valid cells) and
// unchanged: with gating.quick_release_after 0.03 s (opt-in: docs/estimator.md, "The gate's quick
// release") the gate's first release comes within it (plus a few ticks for the low-pass to carry
// the step past the gate), with and without the measurement's low-pass. With a foot's contact
// changing at 0.99 s (a touchdown), or a cell's wrench invalid for that tick (its contact
// unknown), it waits release_after as before. Fails if a struck or unknown contact lets the gate
// release early, or a still robot's load waits the long way.
TEST(GateRelease, ALoadOnAStillRobotIsReleasedWithinTheQuickWait) {
  test::DataSpec spec = ArmMotion(2.0);
  spec.payload = test::ForearmPayload(5.0, 1.0);
  const auto ticks = test::Generate(spec);
  const dynamics::Model model = test::ReferenceHumanoid();
  enum class Feet { kStill, kTouchdown, kUnknown };
  for (const double lowpass : {0.0, 5.0})
    for (const Feet feet : {Feet::kStill, Feet::kTouchdown, Feet::kUnknown}) {
      EstimatorConfig cfg = ArmConfig();
      cfg.measurement_lowpass = lowpass;
      cfg.gating.quick_release_after = 0.03;
      InertialEstimator est(model, cfg);
      est.SkipCalibration();
      double released = -1.0;
      for (const test::Tick& tk : ticks) {
        const bool struck = tk.t >= 0.989 && tk.t < 0.992;
        unsigned char valid[2] = {1, 1}, contact[2] = {1, 1};
        if (feet == Feet::kTouchdown && tk.t < 0.99) contact[0] = 0;  // in contact from 0.99 s
        if (feet == Feet::kUnknown && struck) valid[0] = 0;
        const TickInput in{tk.t, tk.q, tk.v, tk.a, tk.tau, tk.wrenches, valid, contact};
        const TickResult r = est.Step(in);
        if (released < 0.0 && r.status == TickStatus::kReleased) released = tk.t;
      }
      const double after = released - 1.0;
      std::printf("[ heft ] 5 kg at 1 s, low-pass %.0f Hz, feet %d: first release after %.3f s\n",
                  lowpass, static_cast<int>(feet), after);
      ASSERT_GE(released, 1.0);
      if (feet == Feet::kStill) {
        EXPECT_LE(after, cfg.gating.quick_release_after + 0.02);
      } else {
        EXPECT_GE(after, cfg.gating.release_after - 0.011);
      }
    }
}

// The same unexplained residual from 1 s to 6 s: the estimate is held by the gate, and says so
// (TickResult::gate_holding) once gating.hold_after (2 s) of gated ticks have passed, not before,
// and no longer once the residual is gone and a measurement is used again; with hold_after 0 it
// never says so. Fails if the flag rises early (before 2.99 s, the 2 s counted from the residual's
// start), late (after 3.1 s: the gate's first refusals come within a tick of it, its low-pass
// copy's within 0.1 s), stays up after the residual ended (1 s allowed for the low-pass to
// forget it), or rises with hold_after 0.
TEST(GateRelease, AGateThatRefusesEveryMeasurementSaysTheEstimateIsHeld) {
  const auto ticks = test::Generate(ArmMotion(8.0));
  const dynamics::Model model = test::ReferenceHumanoid();
  const int knee = model.bodies[model.body_index("right_shin")].v_index;
  const unsigned char valid[2] = {1, 1}, contact[2] = {1, 1};
  Eigen::VectorXd tau(model.nv);
  for (const double hold_after : {2.0, 0.0}) {
    EstimatorConfig cfg = ArmConfig();
    cfg.gating.hold_after = hold_after;
    InertialEstimator est(model, cfg);
    est.SkipCalibration();
    double first = -1.0, last = -1.0;
    for (const test::Tick& tk : ticks) {
      tau = tk.tau;
      if (tk.t >= 1.0 && tk.t < 6.0) tau[knee] += kFriction;
      const TickInput in{tk.t, tk.q, tk.v, tk.a, tau, tk.wrenches, valid, contact};
      const TickResult r = est.Step(in);
      if (!r.gate_holding) continue;
      if (first < 0.0) first = tk.t;
      last = tk.t;
    }
    std::printf("[ heft ] hold_after %.0f s: held by the gate from %.3f s to %.3f s\n", hold_after,
                first, last);
    if (hold_after == 0.0) {
      EXPECT_LT(first, 0.0) << "hold_after 0 never holds";
      continue;
    }
    EXPECT_GE(first, 1.0 + hold_after - 0.01);  // the 2 s counted in ticks of 3.003 ms
    EXPECT_LT(first, 1.0 + hold_after + 0.1);
    EXPECT_GE(last, 6.0 - 0.1) << "held until the residual ends";
    EXPECT_LT(last, 7.0) << "released once measurements are used again";
  }
}

// A 1 kg load on the forearm is gated, then released; two ticks inside the window that follows
// carry a 40 N·m impulse on the elbow's row (NIS about 1 620 on 35 rows, as a walking robot's
// touchdown reads; the release was decided at about 170 without the low-pass and 1 030 with it,
// so the window takes up to about 240 and 1 230). The window rejects them and
// goes on, and learns from the copy of the ticks it used, so at the window's end the mass is where
// the run without the impulse has it: within 0.25 σ of the filter's own σ, with and without the 5
// Hz low-pass (the two ticks the clean run used and this one did not move it about 0.15 σ). Fails
// if the window takes the impulse (0.36 σ without the low-pass, 0.94 σ with it) or, with the
// low-pass, learns from the gate's copy, which holds the impulse's tail (0.58 σ).
TEST(GateRelease, TheWindowAfterAReleaseRejectsAnImpulseLargerThanTheResidual) {
  test::DataSpec spec = ArmMotion(3.0);
  spec.payload = test::ForearmPayload(1.0, 1.0);
  const auto ticks = test::Generate(spec);
  const dynamics::Model model = test::ReferenceHumanoid();
  const int elbow = model.bodies[model.body_index("left_forearm")].v_index;
  const unsigned char valid[2] = {1, 1}, contact[2] = {1, 1};
  Eigen::VectorXd tau(model.nv);
  for (const double lowpass : {0.0, 5.0}) {
    EstimatorConfig cfg = ArmConfig();
    cfg.measurement_lowpass = lowpass;
    InertialEstimator clean(model, cfg), spiked(model, cfg);
    clean.SkipCalibration();
    spiked.SkipCalibration();
    std::size_t released = 0;  // the release's tick, once found
    std::size_t impulse_refused = 0;
    double end = -1.0;
    for (std::size_t i = 0; i < ticks.size() && end < 0.0; ++i) {
      const test::Tick& tk = ticks[i];
      tau = tk.tau;
      const bool impulse = released > 0 && (i == released + 10 || i == released + 11);
      if (impulse) tau[elbow] += 40.0;
      const TickResult c =
          clean.Step({tk.t, tk.q, tk.v, tk.a, tk.tau, tk.wrenches, valid, contact});
      const TickResult r = spiked.Step({tk.t, tk.q, tk.v, tk.a, tau, tk.wrenches, valid, contact});
      if (released == 0 && c.status == TickStatus::kReleased) released = i;
      if (impulse && r.status == TickStatus::kGated) ++impulse_refused;
      if (released > 0 && tk.t >= ticks[released].t + cfg.gating.open_for) end = tk.t;
    }
    ASSERT_GT(released, 0u) << "the load step must release";
    const double sigma = test::Sigma(clean, 0);
    const double apart = std::abs(spiked.estimate()[0] - clean.estimate()[0]);
    std::printf(
        "[ heft ] low-pass %.0f Hz: released at %.3f s, the window's impulse: %zu of 2 ticks "
        "refused, mass %.3f against %.3f kg without it (%.3f σ), %llu refused in the window\n",
        lowpass, ticks[released].t, impulse_refused, spiked.estimate()[0], clean.estimate()[0],
        apart / sigma, static_cast<unsigned long long>(spiked.gate().refused_in_window()));
    EXPECT_EQ(impulse_refused, 2u);
    EXPECT_EQ(spiked.gate().releases(), clean.gate().releases());
    EXPECT_LT(apart, 0.25 * sigma);
  }
}

// A forced numeric failure: the covariance overflowed (what uncapped ×10 inflations did after
// ~300 releases). Before the fix every later Evaluate failed for good; now the first one resets P
// to P₀ and the next ones update again, towards the truth, allocating nothing. Fails if the
// filter stays broken or ends further from the truth than kSigmas of its own σ.
TEST(GateRelease, FilterRecoversFromAnOverflowedCovariance) {
  std::mt19937_64 rng(21);
  std::normal_distribution<double> nd(0.0, 1.0);
  dynamics::Vector10 nominal;
  nominal << 1.5, 0.0, 0.0, -0.2, 0.09, 0.0, 0.0, 0.09, 0.0, 0.002;
  dynamics::Vector10 truth = nominal * 1.2;
  Eigen::MatrixXd H(30, 10);
  for (int i = 0; i < H.size(); ++i) H.data()[i] = 5.0 * nd(rng);
  Eigen::VectorXd z = H * truth;
  for (int i = 0; i < z.size(); ++i) z[i] += nd(rng);
  InertialFilter f(FilterKind::kLogCholesky, 1, 30);
  ASSERT_TRUE(f.Reset(nominal, dynamics::Vector10::Constant(0.3)));
  InertialFilter::Candidate c;
  ASSERT_TRUE(f.Evaluate(H, z, c));  // warm-up; the update gives P correlations
  ASSERT_TRUE(f.Apply());
  for (int i = 0; i < 4; ++i) f.Inflate(1e300);  // overflow: ±inf, NaN in any factorisation
  ASSERT_FALSE(f.covariance().allFinite());
  int good = 0;
  heft::test::AllocationScope scope;
  for (int i = 0; i < 5; ++i) good += f.Evaluate(H, z, c) && f.Apply();
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_GE(good, 4) << "at most the first evaluation after the overflow fails";
  EXPECT_TRUE(f.covariance().allFinite());
  // Towards the truth: within kSigmas of the filter's σ_m (the rows' noise is the unit σ the
  // filter assumes), so an update that ignores the data after the reset fails.
  Eigen::Matrix<double, 10, 10> cov;
  f.BodyCovariance(0, cov);
  const double error = std::abs(f.parameters()[0] - truth[0]), sigma = std::sqrt(cov(0, 0));
  std::printf("[ heft ] after the overflow: mass error %.4f kg (%.2f σ)\n", error, error / sigma);
  EXPECT_LT(error, test::kSigmas * sigma);
}

}  // namespace
}  // namespace heft::estimator

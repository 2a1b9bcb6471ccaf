// The estimator's gating (χ² quantiles, outliers refused and a lasting change released, the quick
// release where no contact struck, the open window), the rate limiter on adversarial targets, and
// the start-up bias calibration (averaging at rest, pausing on brief motion, timing out).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "heft/estimator/bias_calibration.hpp"
#include "heft/estimator/gating.hpp"
#include "heft/estimator/rate_limiter.hpp"
#include "random_parameters.hpp"

namespace heft::estimator {
namespace {

using dynamics::Vector10;
using test::Consistent;

TEST(Gating, ChiSquareQuantilesMatchTables) {
  EXPECT_NEAR(ChiSquareQuantile(0.95, 1), 3.841459, 1e-5);
  EXPECT_NEAR(ChiSquareQuantile(0.99, 10), 23.209251, 1e-5);
  EXPECT_NEAR(ChiSquareQuantile(0.999, 35), 66.619, 1e-3);
  EXPECT_NEAR(ChiSquareCdf(ChiSquareQuantile(0.3, 7), 7), 0.3, 1e-10);
  EXPECT_THROW(ChiSquareQuantile(1.0, 3), std::invalid_argument);
}

TEST(Gating, RejectsOutliersAndReleasesALastingChange) {
  GatingConfig cfg;
  cfg.confidence = 0.99;
  cfg.release_after = 0.1;
  InnovationGate gate(cfg, 10);
  EXPECT_EQ(gate.Decide(5.0, 10, 0.0), GateDecision::kAccept);
  EXPECT_EQ(gate.Decide(100.0, 10, 0.003), GateDecision::kReject);  // an impulse
  EXPECT_EQ(gate.Decide(5.0, 10, 0.006), GateDecision::kAccept);    // over: the run restarts
  double t = 1.0;
  int rejected = 0;
  GateDecision d = GateDecision::kReject;
  while ((d = gate.Decide(100.0, 10, t)) == GateDecision::kReject) {  // a lasting change
    ++rejected;
    t += 0.003;
  }
  EXPECT_EQ(d, GateDecision::kRelease);
  EXPECT_NEAR(rejected * 0.003, 0.1, 0.0031);
  EXPECT_EQ(gate.releases(), 1u);
  EXPECT_EQ(gate.rejected(), static_cast<std::uint64_t>(rejected + 1));
  GatingConfig off;
  off.enabled = false;
  InnovationGate open(off, 10);
  EXPECT_EQ(open.Decide(1e12, 10, 0.0), GateDecision::kAccept);
}

// Where no contact struck, a lasting run is checked after quick_release_after (0.015 s) instead
// of release_after (0.1 s); a contact event within release_after before the run or during it, a
// run whose NIS decays (a spike's tail in a low-passed copy), a refused check of the run, or
// quick_release_after 0 each bring back release_after. Fails if any of them releases early, or a
// run with none of them waits the long way.
TEST(Gating, ReleasesQuicklyWhereNoContactStruck) {
  GatingConfig cfg;
  cfg.confidence = 0.99;
  cfg.release_after = 0.1;
  cfg.quick_release_after = 0.015;
  cfg.open_for = 0.0;  // the gate is plain again at the next tick
  // Seconds a lasting run takes to be released from `t`, and whether it was quick: NIS 100, or
  // when `decaying` a tail falling from 1000 by 0.83 a tick (a 5 Hz low-pass's (1 − α)²) to 60.
  auto run = [](InnovationGate& gate, double t, bool decaying = false) {
    const double start = t;
    double nis = decaying ? 1000.0 : 100.0;
    while (gate.Decide(nis, 10, t) == GateDecision::kReject) {
      if (decaying) nis = std::max(0.83 * nis, 60.0);
      t += 0.003;
    }
    return std::pair{t - start, gate.released_quick()};
  };
  InnovationGate gate(cfg, 10);
  auto [wait, quick] = run(gate, 1.0);  // no contact event ever
  EXPECT_NEAR(wait, 0.015, 0.0031);
  EXPECT_TRUE(quick);
  gate.ContactEvent(1.95);  // a touchdown 0.05 s before the next run
  std::tie(wait, quick) = run(gate, 2.0);
  EXPECT_NEAR(wait, 0.1, 0.0031);
  EXPECT_FALSE(quick);
  std::tie(wait, quick) = run(gate, 3.0);  // 1.05 s after it: quick again
  EXPECT_NEAR(wait, 0.015, 0.0031);
  std::tie(wait, quick) = run(gate, 4.0, true);
  EXPECT_NEAR(wait, 0.1, 0.0031) << "a decaying run is a low-pass's tail";
  EXPECT_EQ(gate.Decide(100.0, 10, 5.0), GateDecision::kReject);
  gate.ContactEvent(5.006);  // struck during the run
  std::tie(wait, quick) = run(gate, 5.003);
  EXPECT_NEAR(wait + 0.003, 0.1, 0.0031);
  // A refused quick check: the next check of the run waits release_after.
  EXPECT_EQ(gate.Decide(5.0, 10, 6.0), GateDecision::kAccept);
  double t = 7.0;
  while (gate.Decide(100.0, 10, t) == GateDecision::kReject) t += 0.003;
  gate.RefuseRelease(t);
  std::tie(wait, quick) = run(gate, t + 0.003);
  EXPECT_NEAR(wait + 0.003, 0.1, 0.0031);
  EXPECT_FALSE(quick);
  cfg.quick_release_after = 0.0;
  InnovationGate plain(cfg, 10);
  std::tie(wait, quick) = run(plain, 1.0);
  EXPECT_NEAR(wait, 0.1, 0.0031);
  EXPECT_FALSE(quick);
}

// The window after a release is for the residual the release confirmed (NIS 100 on 10 rows): that
// residual's NIS spreads by √(2 (2·100 − 10)) = 19.5, so up to 100 + 3.09 · 19.5 = 160 at the
// gate's 0.999 is the same residual and used (60, 100, 155), while 500 (a touchdown on a walking
// robot) is rejected and the window goes on; after open_for the gate is the plain one again. Fails
// if the window takes the larger residual, refuses the released one's own spread, ends at a
// refusal, or keeps refusing after it closed.
TEST(Gating, TheOpenWindowRefusesAResidualLargerThanTheReleasedOne) {
  GatingConfig cfg;
  cfg.confidence = 0.999;
  cfg.release_after = 0.1;
  cfg.open_for = 0.3;
  InnovationGate gate(cfg, 10);
  double t = 1.0;
  while (gate.Decide(100.0, 10, t) == GateDecision::kReject) t += 0.003;
  ASSERT_TRUE(gate.open());
  EXPECT_EQ(gate.Decide(60.0, 10, t + 0.003), GateDecision::kOpen);
  EXPECT_EQ(gate.Decide(500.0, 10, t + 0.006), GateDecision::kReject);
  EXPECT_EQ(gate.Decide(100.0, 10, t + 0.009), GateDecision::kOpen);  // the release's own level
  EXPECT_EQ(gate.Decide(155.0, 10, t + 0.012), GateDecision::kOpen);  // and its spread
  EXPECT_EQ(gate.Decide(170.0, 10, t + 0.015), GateDecision::kReject);
  EXPECT_EQ(gate.refused_in_window(), 2u);
  EXPECT_TRUE(gate.open());
  EXPECT_EQ(gate.Decide(50.0, 10, t + 0.31), GateDecision::kReject);  // plain gating: 50 > γ
  EXPECT_FALSE(gate.open());
  EXPECT_EQ(gate.Decide(5.0, 10, t + 0.313), GateDecision::kAccept);
}

TEST(RateLimiter, StaysConsistentOnAdversarialTargetsAndRespectsLimits) {
  std::mt19937_64 rng(7);
  const RateLimits limits{3.0, 0.5, 0.2};
  const double dt = 0.003;
  for (int trial = 0; trial < 40; ++trial) {
    Vector10 from = Consistent(rng);
    Vector10 to = Consistent(rng);
    // Adversarial: a thin rod to a flat disc with the mass moved far away.
    if (trial % 2) {
      dynamics::RigidBodyInertia rod{
          5.0, {0.5, -0.3, 0.2}, Eigen::Vector3d(1e-4, 0.5, 0.5).asDiagonal()};
      to = dynamics::ParametersFromInertia(rod);
    }
    for (int step = 0; step < 200000; ++step) {
      const RateLimitResult r = RateLimitStep(from, to, limits, dt);
      ASSERT_TRUE(dynamics::IsPhysicallyConsistent(r.handed, 0.0)) << trial << " " << step;
      const Vector10 d = (r.handed - from).cwiseAbs();
      ASSERT_LE(d[0], limits.mass * dt * (1 + 1e-9));
      ASSERT_LE(d.segment<3>(1).maxCoeff(), limits.first_moment * dt * (1 + 1e-9));
      ASSERT_LE(d.tail<6>().maxCoeff(), limits.inertia * dt * (1 + 1e-9));
      from = r.handed;
      if (r.fraction == 1.0) break;
    }
    EXPECT_LT((from - to).norm(), 1e-12 * (1 + to.norm())) << "target reached";
  }
}

TEST(BiasCalibration, AveragesAtRestAndRefusesWhileMoving) {
  CalibrationConfig cfg;
  cfg.window = 0.1;
  cfg.max_speed = 0.1;
  BiasCalibrator cal(3, cfg);
  const Eigen::Vector3d bias(1.0, -2.0, 0.5);
  std::mt19937_64 rng(8);
  std::normal_distribution<double> n(0.0, 0.1);
  double t = 0.0;
  EXPECT_EQ(cal.Add(bias, 0.0, t), CalibrationStatus::kCollecting);
  t += 0.003;
  EXPECT_EQ(cal.Add(bias * 10, 0.5, t),
            CalibrationStatus::kRefusedMoving);  // moving: not averaged, the window paused
  EXPECT_EQ(cal.samples(), 1);
  CalibrationStatus s = CalibrationStatus::kCollecting;
  while ((s = cal.Add(bias + Eigen::Vector3d(n(rng), n(rng), n(rng)), 0.01, t)) ==
         CalibrationStatus::kCollecting)
    t += 0.003;
  EXPECT_EQ(s, CalibrationStatus::kDone);
  EXPECT_LT((cal.bias() - bias).norm(), 0.1);
  EXPECT_EQ(cal.refusals(), 1u);
}

// A brief motion (30 ms, under max_motion) pauses the window instead of restarting it: the
// calibration ends one window after it began, the moving samples not averaged. A long motion
// (250 ms) restarts it. Fails if any fast sample restarts the window (done 30 ms late) or if a
// long motion does not.
TEST(BiasCalibration, BriefMotionPausesTheWindowALongOneRestartsIt) {
  CalibrationConfig cfg;
  cfg.window = 0.1;
  cfg.max_speed = 0.1;
  const Eigen::Vector3d bias(1.0, -2.0, 0.5);
  for (const double motion : {0.03, 0.25}) {
    BiasCalibrator cal(3, cfg);
    double t = 0.0, done_at = -1.0;
    for (int i = 0; i < 1000 && done_at < 0.0; ++i, t += 0.003) {
      const bool moving = t >= 0.05 && t < 0.05 + motion;
      const CalibrationStatus s =
          cal.Add(moving ? Eigen::Vector3d(bias * 10) : bias, moving ? 0.5 : 0.0, t);
      if (s == CalibrationStatus::kDone) done_at = t;
    }
    EXPECT_LT((cal.bias() - bias).norm(), 1e-12) << "moving samples are never averaged";
    if (motion < cfg.max_motion) {
      EXPECT_NEAR(done_at, cfg.window, 0.0031) << "paused, not restarted";
    } else {
      EXPECT_GE(done_at, 0.05 + motion + cfg.window - 0.0031) << "restarted after the motion";
    }
  }
}

// A robot that never stands still: the calibration gives up after `timeout` with the last good bias
// (zero for the first one), says so, and counts it; a refused tick (no usable measurement) runs the
// same clock. Fails if calibration waits for ever.
TEST(BiasCalibration, TimesOutWithTheLastGoodBias) {
  CalibrationConfig cfg;
  cfg.window = 0.1;
  cfg.max_speed = 0.1;
  cfg.timeout = 0.5;
  BiasCalibrator cal(3, cfg);
  const Eigen::Vector3d bias(1.0, -2.0, 0.5);
  double t = 0.0;
  CalibrationStatus s = CalibrationStatus::kCollecting;
  while ((s = cal.Add(bias, 0.0, t)) == CalibrationStatus::kCollecting) t += 0.003;
  ASSERT_EQ(s, CalibrationStatus::kDone);
  for (const bool refused : {false, true}) {
    cal.Restart();
    const double began = t;
    while ((s = refused ? cal.Refuse(t) : cal.Add(bias * 5, 1.0, t)) !=
           CalibrationStatus::kTimedOut) {
      ASSERT_LT(t - began, 1.0);
      t += 0.003;
    }
    EXPECT_NEAR(t - began, cfg.timeout, 0.0031);
    EXPECT_TRUE(cal.done());
    EXPECT_TRUE(cal.timed_out());
    EXPECT_LT((cal.bias() - bias).norm(), 1e-12) << "the last good bias";
  }
  EXPECT_EQ(cal.timeouts(), 2u);
  BiasCalibrator fresh(3, cfg);
  t = 0.0;
  while ((s = fresh.Add(bias, 1.0, t)) != CalibrationStatus::kTimedOut && t < 1.0) t += 0.003;
  EXPECT_EQ(s, CalibrationStatus::kTimedOut);
  EXPECT_EQ(fresh.bias().norm(), 0.0) << "no good bias yet: zero";
}

}  // namespace
}  // namespace heft::estimator

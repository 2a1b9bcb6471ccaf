// The estimator's input boundary: TickInput's vectors must have the model's sizes and its wrench
// spans must reach every contact frame they claim. A wrong size is invalid input (nothing done,
// the estimate unchanged), never a read out of bounds (an empty `wrenches` with `wrench_valid`
// set was a SIGSEGV) nor an update from misaligned rows (τ of the joints only on a floating
// robot was taken and drove a 0.25 kg link towards 0.027 kg).
#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "fixtures.hpp"
#include "heft/estimator/inertial_estimator.hpp"

namespace heft::estimator {
namespace {

// The torso of the floating humanoid with both feet's cells (fixtures.hpp), `measurement` chosen.
EstimatorConfig FloatingConfig(MeasurementChoice measurement) {
  EstimatorConfig c = test::ArmConfig({"torso"});
  c.measurement = measurement;
  return c;
}

class TickInputBoundary : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ticks_ = new std::vector<test::Tick>(test::Generate(test::StandingStill(0.5)));
  }
  static void TearDownTestSuite() {
    delete ticks_;
    ticks_ = nullptr;
  }
  // A few good ticks first, so that "unchanged" is about a filter that has been updating.
  static void Warm(InertialEstimator& est) {
    est.SkipCalibration();
    const unsigned char valid[2] = {1, 1}, contact[2] = {1, 1};
    for (std::size_t i = 0; i < 30; ++i) {
      const test::Tick& tk = (*ticks_)[i];
      (void)est.Step(TickInput{tk.t, tk.q, tk.v, tk.a, tk.tau, tk.wrenches, valid, contact});
    }
  }
  static inline std::vector<test::Tick>* ticks_ = nullptr;
};

// Fails if a vector of the wrong size is taken (status other than kInvalidInput, or the estimate
// or the handed parameters move), or read past its end (a crash under ASan).
TEST_F(TickInputBoundary, VectorsOfTheWrongSizeAreInvalidInputAndChangeNothing) {
  const dynamics::Model model = test::ReferenceHumanoid();
  ASSERT_TRUE(model.floating_base);
  InertialEstimator est(model, FloatingConfig(MeasurementChoice::kAuto));
  Warm(est);
  const Eigen::VectorXd estimate = est.estimate(), handed = est.handed();
  const test::Tick& tk = (*ticks_)[40];
  const unsigned char valid[2] = {1, 1}, contact[2] = {1, 1};
  const Eigen::VectorXd joints_only = tk.tau.tail(model.nv - 6);  // τ without the base's rows
  const Eigen::VectorXd short_q = tk.q.head(model.nq - 1);
  const Eigen::VectorXd long_v = Eigen::VectorXd::Zero(model.nv + 1);
  const Eigen::VectorXd empty;
  const TickInput cases[] = {
      {tk.t, tk.q, tk.v, tk.a, joints_only, tk.wrenches, valid, contact},
      {tk.t, short_q, tk.v, tk.a, tk.tau, tk.wrenches, valid, contact},
      {tk.t, tk.q, long_v, tk.a, tk.tau, tk.wrenches, valid, contact},
      {tk.t, tk.q, tk.v, empty, tk.tau, tk.wrenches, valid, contact},
  };
  for (const TickInput& in : cases) {
    EXPECT_EQ(est.Step(in).status, TickStatus::kInvalidInput);
    EXPECT_EQ(est.estimate(), estimate);
    EXPECT_EQ(est.handed(), handed);
  }
}

// Wrench spans shorter than the contact frames: with the full-wrench model forced, nothing is
// done; with `auto`, the tick falls back to the null-space model that needs no wrench. Fails on a
// read past the span's end (SIGSEGV before the check) or on a full-wrench update without wrenches.
TEST_F(TickInputBoundary, AShortWrenchSpanIsAMissingWrenchNotARead) {
  const dynamics::Model model = test::ReferenceHumanoid();
  const test::Tick& tk = (*ticks_)[40];
  const unsigned char valid[2] = {1, 1}, contact[2] = {1, 1};
  const std::span<const dynamics::Vector6> none;
  const std::span<const dynamics::Vector6> one(tk.wrenches.data(), 1);
  for (const auto& wrenches : {none, one}) {
    InertialEstimator forced(model, FloatingConfig(MeasurementChoice::kFullWrench));
    Warm(forced);
    const Eigen::VectorXd estimate = forced.estimate();
    const TickResult r =
        forced.Step(TickInput{tk.t, tk.q, tk.v, tk.a, tk.tau, wrenches, valid, contact});
    EXPECT_EQ(r.status, TickStatus::kInvalidInput);
    EXPECT_EQ(forced.estimate(), estimate);

    InertialEstimator automatic(model, FloatingConfig(MeasurementChoice::kAuto));
    Warm(automatic);
    const TickResult a =
        automatic.Step(TickInput{tk.t, tk.q, tk.v, tk.a, tk.tau, wrenches, valid, contact});
    EXPECT_NE(a.status, TickStatus::kInvalidInput);
    EXPECT_EQ(a.model, hal::MeasurementModel::kTorqueNullSpace);
  }
}

// A wrench span longer than the contact frames (a framework passing every sensor it has): the
// first num_contacts entries are the frames' and the rest is ignored, the same result as the exact
// span. Fails on the dynamics' size assertion (the process aborted before the fix: found by
// tests/fuzz/fuzz_tick_input, corpus longer-wrench-span.bin) or if the extra entries change it.
TEST_F(TickInputBoundary, ALongerWrenchSpanUsesTheFramesWrenchesOnly) {
  const dynamics::Model model = test::ReferenceHumanoid();
  const test::Tick& tk = (*ticks_)[40];
  const unsigned char valid[3] = {1, 1, 1}, contact[3] = {1, 1, 1};
  std::vector<dynamics::Vector6> longer(tk.wrenches.begin(), tk.wrenches.end());
  longer.push_back(dynamics::Vector6::Constant(1e3));
  InertialEstimator exact(model, FloatingConfig(MeasurementChoice::kFullWrench));
  InertialEstimator extra(model, FloatingConfig(MeasurementChoice::kFullWrench));
  Warm(exact);
  Warm(extra);
  const TickResult a =
      exact.Step(TickInput{tk.t, tk.q, tk.v, tk.a, tk.tau, tk.wrenches, valid, contact});
  const TickResult b =
      extra.Step(TickInput{tk.t, tk.q, tk.v, tk.a, tk.tau, longer, valid, contact});
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(exact.estimate(), extra.estimate());
}

}  // namespace
}  // namespace heft::estimator

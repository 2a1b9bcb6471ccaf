// SampleMapping: names to model order, finite differences with delay compensation, hold reasons,
// set-up errors, and no allocation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "heft/estimator/sample_mapping.hpp"
#include "heft/test/alloc_counter.hpp"
#include "trajectory.hpp"

namespace heft::est {
namespace {

struct Fixture {
  dyn::Model model = test::ReferenceHumanoid();
  SampleMappingConfig cfg;
  Fixture() {
    auto names = model.joint_names();
    std::reverse(names.begin(), names.end());  // the drivers' order is not the model's
    cfg.joints = names;
    cfg.wrench_frames = {"left_foot_ft", "right_foot_ft"};
  }
  // Sample k at 1 kHz: every joint i at q = 0.1 i + 0.3 sin(ω k dt), the base translating.
  hal::RobotStateSample Sample(std::uint64_t k) const {
    hal::RobotStateSample s;
    s.sequence = k + 1;
    s.stamp_ns = static_cast<std::int64_t>(k) * 1000000;
    s.num_joints = static_cast<std::uint16_t>(cfg.joints.size());
    s.num_wrenches = 2;
    s.has_base = true;
    const double t = 1e-3 * static_cast<double>(k), w = 2 * M_PI * 1.5;
    s.base.position = {0.1 * t, 0.0, 1.0};
    s.base.linear_velocity = {0.1, 0.0, std::sin(w * t)};
    s.base.has_linear_velocity = true;
    s.base.health.state = hal::ChannelState::kOk;
    for (std::size_t i = 0; i < cfg.joints.size(); ++i) {
      auto& j = s.joints[i];
      j.position = 0.1 * static_cast<double>(i) + 0.3 * std::sin(w * t);
      j.velocity = 0.3 * w * std::cos(w * t);
      j.torque = static_cast<double>(i);
      j.encoder.state = j.torque_sensor.state = hal::ChannelState::kOk;
    }
    for (int c = 0; c < 2; ++c) {
      s.wrenches[c].wrench = {0, 0, c == 0 ? 400.0 : 10.0, 0, 0, 0};
      s.wrenches[c].health.state = hal::ChannelState::kOk;
    }
    return s;
  }
};

TEST(SampleMapping, OrdersJointsAndDifferencesWithTheLagCompensated) {
  Fixture f;
  SampleMapping map(f.model, f.cfg);
  ASSERT_EQ(map.lag_samples(), 2);
  const std::uint64_t k = 100;
  ASSERT_EQ(map.Assemble(f.Sample(k), f.Sample(k - 2), f.Sample(k - 4)), 0u);
  EXPECT_DOUBLE_EQ(map.time(), 0.098);  // the middle sample's time
  const double t = 0.098, w = 2 * M_PI * 1.5;
  for (std::size_t i = 0; i < f.cfg.joints.size(); ++i) {
    const dyn::Body& b = f.model.bodies[f.model.joint_body_index(f.cfg.joints[i])];
    EXPECT_NEAR(map.q()[b.q_index], 0.1 * static_cast<double>(i) + 0.3 * std::sin(w * t), 1e-12);
    EXPECT_NEAR(map.a()[b.v_index], -0.3 * w * w * std::sin(w * t),
                0.01);  // central difference, O(h²)
    EXPECT_EQ(map.tau()[b.v_index], static_cast<double>(i));
  }
  EXPECT_NEAR(map.a()[2], w * std::cos(w * t), 0.01);  // base vertical acceleration
  EXPECT_EQ(map.tau().head<6>().norm(), 0.0);
  EXPECT_EQ(map.in_contact()[0], 1);
  EXPECT_EQ(map.in_contact()[1], 0);  // 10 N: lifted
}

TEST(SampleMapping, ReportsWhyAnInputIsNotUsable) {
  Fixture f;
  SampleMapping map(f.model, f.cfg);
  auto newest = f.Sample(10), mid = f.Sample(8), oldest = f.Sample(6);
  EXPECT_EQ(map.Assemble(newest, mid, f.Sample(5)),
            static_cast<std::uint32_t>(kHoldHistory));  // gap
  newest.joints[3].encoder.state = hal::ChannelState::kStale;
  mid.joints[4].torque_sensor.state = hal::ChannelState::kFault;
  mid.base.health.state = hal::ChannelState::kNeverSeen;
  EXPECT_EQ(map.Assemble(newest, mid, oldest), kHoldEncoders | kHoldTorques | kHoldBase);
  auto m2 = f.Sample(8);
  m2.wrenches[1].health.state = hal::ChannelState::kStale;
  EXPECT_EQ(map.Assemble(f.Sample(10), m2, oldest),
            0u);  // a dead cell is not a hold: null-space model
  EXPECT_EQ(map.wrench_valid()[1], 0);
  EXPECT_EQ(map.in_contact()[1], 1);  // unknown: assumed in contact
  m2.joints[0].velocity = std::nan("");
  EXPECT_EQ(map.Assemble(f.Sample(10), m2, oldest), static_cast<std::uint32_t>(kHoldNonFinite));
}

TEST(SampleMapping, SetUpErrorsNameTheJoint) {
  Fixture f;
  auto cfg = f.cfg;
  cfg.joints[0] = "left_elbo";
  EXPECT_THAT([&] { SampleMapping(f.model, cfg); },
              ::testing::Throws<dyn::ModelError>(::testing::Property(
                  &std::exception::what, ::testing::HasSubstr("unknown joint 'left_elbo'"))));
  cfg = f.cfg;
  cfg.joints.pop_back();
  EXPECT_THAT([&] { SampleMapping(f.model, cfg); },
              ::testing::Throws<std::invalid_argument>(::testing::Property(
                  &std::exception::what, ::testing::HasSubstr("has no sensor mapping"))));
  cfg = f.cfg;
  cfg.joints.push_back(cfg.joints[0]);
  EXPECT_THROW(SampleMapping(f.model, cfg), std::invalid_argument);
}

TEST(SampleMapping, AssembleAllocatesNothing) {
  Fixture f;
  SampleMapping map(f.model, f.cfg);
  const auto a = f.Sample(10), b = f.Sample(8), c = f.Sample(6);
  map.Assemble(a, b, c);
  heft::test::AllocationScope scope;
  for (int i = 0; i < 3; ++i) map.Assemble(a, b, c);
  EXPECT_EQ(scope.count(), 0u);
}

}  // namespace
}  // namespace heft::est

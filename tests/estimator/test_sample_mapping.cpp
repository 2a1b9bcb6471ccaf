// SampleMapping: names to model order, finite differences with delay compensation, hold reasons,
// set-up errors, and no allocation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>

#include "base_motion.hpp"
#include "heft/dynamics/dynamics.hpp"
#include "heft/estimator/sample_mapping.hpp"
#include "heft/test/alloc_counter.hpp"
#include "trajectory.hpp"

namespace heft::estimator {
namespace {

struct Fixture {
  dynamics::Model model = test::ReferenceHumanoid();
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
    const dynamics::Body& b = f.model.bodies[f.model.joint_body_index(f.cfg.joints[i])];
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
              ::testing::Throws<dynamics::ModelError>(::testing::Property(
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

// The three samples around tick time t_mid = k_mid ms of the analytic motion (test::BaseMotion).
struct Window {
  hal::RobotStateSample newest, mid, oldest;
  test::TruthState truth;  // at the middle sample
};
Window Measure(const dynamics::Model& model, const std::vector<std::string>& joints,
               std::uint64_t k_mid, int h, const test::BaseSensorSpec& spec) {
  std::mt19937_64 base_rng(1), joint_rng(2);
  auto at = [&](std::uint64_t k) {
    return test::MeasureState(model, joints, test::BaseMotion(model, 1e-3 * static_cast<double>(k)),
                              k, spec, base_rng, joint_rng);
  };
  const auto uh = static_cast<std::uint64_t>(h);
  return {at(k_mid + uh), at(k_mid), at(k_mid - uh),
          test::BaseMotion(model, 1e-3 * static_cast<double>(k_mid))};
}

// The IMU path on exact sensor data, the IMU off the base origin: the assembled base acceleration
// is the analytic classical acceleration of the base origin but for the central difference's error
// in ω̇, which reaches it only through ω̇ × p_BS. Fails if the specific force's sign convention
// (f = a − g), the transport to the origin or the frames of ω, f and p_BS are wrong.
TEST(SampleMapping, ImuGivesTheClassicalAccelerationOfTheBaseOrigin) {
  Fixture f;
  SampleMapping map(f.model, f.cfg);
  test::BaseSensorSpec spec;  // noise-free, S at (0.06, -0.04, 0.12) m
  for (std::uint64_t k : {7u, 503u, 1234u, 2891u}) {
    const Window w = Measure(f.model, f.cfg.joints, k, 2, spec);
    ASSERT_EQ(map.Assemble(w.newest, w.mid, w.oldest), 0u);
    ASSERT_TRUE(map.base_from_imu());
    EXPECT_EQ(map.v().head<3>().norm(), 0.0);  // Galilean invariance: the velocity is not needed
    EXPECT_LT((map.v().segment<3>(3) - w.truth.v.segment<3>(3)).norm(), 1e-12);
    // Central difference over ±Δ = 2 ms: |ω̇_fd − ω̇| ≤ Δ²/6 max|ω⃛|. ω⃛ holds θ⁗2 = 0.2 (2π 1.1)⁴
    // ≈ 460, θ⁗1 ≈ 110 and coupling terms ≈ 450 rad/s³: below 1100, so the bound is
    // 6.7e-7 · 1100 ≈ 7.3e-4 rad/s².
    const Eigen::Vector3d w_dot_error = map.a().segment<3>(3) - w.truth.a.segment<3>(3);
    EXPECT_LT(w_dot_error.norm(), 7.3e-4) << "k " << k;
    // Its only way into the linear part is R (ω̇ error × p_BS): |error| ≤ |ω̇ error| |p_BS|.
    const double bound = w_dot_error.norm() * spec.p_BS.norm() + 1e-12;
    EXPECT_LE((map.a().head<3>() - w.truth.a.head<3>()).norm(), bound) << "k " << k;
    EXPECT_GT(w.truth.a.head<3>().norm(), 0.2);  // the base does accelerate
  }
}

// A resting IMU reads +9.81 up: the base's linear acceleration is zero (the sign convention).
TEST(SampleMapping, ImuAtRestGivesNoAcceleration) {
  Fixture f;
  SampleMapping map(f.model, f.cfg);
  auto s = [&](std::uint64_t k) {
    auto x = f.Sample(k);
    x.base.has_linear_velocity = false;
    x.base.has_specific_force = true;
    x.base.specific_force = {0.0, 0.0, 9.81};
    x.base.specific_force_point = {0.1, 0.2, 0.3};
    return x;
  };
  ASSERT_EQ(map.Assemble(s(10), s(8), s(6)), 0u);
  EXPECT_LT(map.a().head<3>().norm(), 1e-12);
  EXPECT_EQ(map.q().head<3>().norm(), 0.0);  // no position without the state estimator's
}

// On noise-free data the two ways to the base acceleration give the same τ = RNEA(q, v, a), both
// within ‖M‖₂ · |their acceleration error| of the truth's (the only difference between them and
// the truth is the finite-difference error of a; v differs from the truth's only by the base's
// linear velocity, which inverse dynamics ignores). Fails if the IMU path's zero velocity or its
// acceleration changes τ beyond the central difference's error.
TEST(SampleMapping, ImuAndVelocityPathsGiveTheSameInverseDynamics) {
  Fixture f;
  SampleMapping map(f.model, f.cfg);
  dynamics::Workspace ws(f.model);
  const int nv = f.model.nv;
  Eigen::VectorXd tau_true(nv), tau_imu(nv), tau_vel(nv);
  Eigen::MatrixXd M(nv, nv);
  test::BaseSensorSpec imu, vel;
  vel.imu = false;
  for (std::uint64_t k : {11u, 777u, 2222u}) {
    const Window wi = Measure(f.model, f.cfg.joints, k, 2, imu);
    const Window wv = Measure(f.model, f.cfg.joints, k, 2, vel);
    const test::TruthState& x = wi.truth;
    dynamics::Rnea(f.model, ws, x.q, x.v, x.a, tau_true);
    dynamics::Crba(f.model, ws, x.q, M);
    const double m_norm =
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(M).eigenvalues().maxCoeff();
    ASSERT_EQ(map.Assemble(wi.newest, wi.mid, wi.oldest), 0u);
    ASSERT_TRUE(map.base_from_imu());
    const Eigen::VectorXd imu_a = map.a();
    const double err_imu = (imu_a - x.a).norm();
    dynamics::Rnea(f.model, ws, map.q(), map.v(), map.a(), tau_imu);
    ASSERT_EQ(map.Assemble(wv.newest, wv.mid, wv.oldest), 0u);
    ASSERT_FALSE(map.base_from_imu());
    const Eigen::VectorXd vel_a = map.a();
    const double err_vel = (vel_a - x.a).norm();
    dynamics::Rnea(f.model, ws, map.q(), map.v(), map.a(), tau_vel);
    const double slack = 1e-9 * tau_true.norm();  // rounding
    EXPECT_LE((tau_imu - tau_true).norm(), m_norm * err_imu + slack) << "k " << k;
    EXPECT_LE((tau_vel - tau_true).norm(), m_norm * err_vel + slack) << "k " << k;
    EXPECT_LE((tau_imu - tau_vel).norm(), m_norm * (err_imu + err_vel) + slack) << "k " << k;
    // The base's linear errors are the central difference's: velocity path Δ²/6 |p⃛| with
    // |p⃛| < 0.05·5.65⁴ + 0.04·8.17⁴ + 0.03·10.7⁴ < 620 m/s⁴ → 4.1e-4 m/s²; IMU path
    // |ω̇ error| |p_BS| < 7.3e-4 · 0.15 = 1.1e-4 m/s².
    EXPECT_LT((vel_a - x.a).head<3>().norm(), 4.1e-4);
    EXPECT_LT((imu_a - x.a).head<3>().norm(), 1.1e-4);
  }
}

// estimator.base_acceleration: what each choice needs of the samples.
TEST(SampleMapping, BaseAccelerationChoiceHoldsWhenItsSignalIsMissing) {
  Fixture f;
  auto imu_only = [&](std::uint64_t k) {
    auto x = f.Sample(k);
    x.base.has_linear_velocity = false;
    x.base.has_specific_force = true;
    x.base.specific_force = {0.0, 0.0, 9.81};
    return x;
  };
  auto both = [&](std::uint64_t k) {
    auto x = imu_only(k);
    x.base.has_linear_velocity = true;
    return x;
  };
  auto neither = [&](std::uint64_t k) {
    auto x = imu_only(k);
    x.base.has_specific_force = false;
    return x;
  };
  SampleMapping autom(f.model, f.cfg);
  EXPECT_EQ(autom.Assemble(both(10), both(8), both(6)), 0u);
  EXPECT_TRUE(autom.base_from_imu());  // auto prefers the IMU
  EXPECT_EQ(autom.Assemble(f.Sample(10), f.Sample(8), f.Sample(6)), 0u);
  EXPECT_FALSE(autom.base_from_imu());
  EXPECT_EQ(autom.Assemble(neither(10), neither(8), neither(6)),
            static_cast<std::uint32_t>(kHoldBase));
  auto cfg = f.cfg;
  cfg.base_acceleration = BaseAcceleration::kImu;
  SampleMapping imu(f.model, cfg);
  EXPECT_EQ(imu.Assemble(f.Sample(10), f.Sample(8), f.Sample(6)),
            static_cast<std::uint32_t>(kHoldBase));
  EXPECT_EQ(imu.Assemble(imu_only(10), imu_only(8), imu_only(6)), 0u);
  cfg.base_acceleration = BaseAcceleration::kVelocity;
  SampleMapping vel(f.model, cfg);
  EXPECT_EQ(vel.Assemble(imu_only(10), imu_only(8), imu_only(6)),
            static_cast<std::uint32_t>(kHoldBase));
  EXPECT_EQ(vel.Assemble(both(10), both(8), both(6)), 0u);
  EXPECT_FALSE(vel.base_from_imu());
  EXPECT_NEAR(vel.a()[2], 2 * M_PI * 1.5 * std::cos(2 * M_PI * 1.5 * 0.008), 0.01);
}

// Fails if Assemble allocates, on the velocity path or on the IMU path.
TEST(SampleMapping, AssembleAllocatesNothing) {
  Fixture f;
  SampleMapping map(f.model, f.cfg);
  const auto a = f.Sample(10), b = f.Sample(8), c = f.Sample(6);
  test::BaseSensorSpec spec;
  const Window w = Measure(f.model, f.cfg.joints, 100, 2, spec);
  map.Assemble(a, b, c);
  map.Assemble(w.newest, w.mid, w.oldest);
  heft::test::AllocationScope scope;
  for (int i = 0; i < 3; ++i) {
    map.Assemble(a, b, c);
    map.Assemble(w.newest, w.mid, w.oldest);
  }
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_TRUE(map.base_from_imu());
}

}  // namespace
}  // namespace heft::estimator

// The `drivers:` section: the base IMU's keys (defaults, ranges, unknown keys, identifier
// clashes), its frame resolved against the URDF into R_BI and p_BI (a composed chain of fixed
// joints; frames that are missing, above the base or behind a moving joint refused), bus names
// longer than a Linux interface name, and the shipped robot configuration.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <Eigen/Geometry>
#include <filesystem>
#include <fstream>
#include <functional>

#include "heft/config/yaml.hpp"
#include "heft/drivers/driver_config.hpp"
#include "heft/plugin/driver_check.hpp"

namespace heft::drivers {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

DriverConfig Parse(const std::string& yaml) {
  const config::Document doc = config::Document::Parse(yaml, "test.yaml");
  return ParseDriverConfig(doc.root()["drivers"]);
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

constexpr const char* kHead = R"(drivers:
  timeout_ms: 4
  buses: [can0, can1]
  joints:
    - {name: j1, bus: can0, node: 0}
  ft_cells:
    - {frame: foot, bus: can1, base_id: 0x300, calibration: [1,0,0,0,0,0, 0,1,0,0,0,0, 0,0,1,0,0,0, 0,0,0,1,0,0, 0,0,0,0,1,0, 0,0,0,0,0,1]}
)";

TEST(DriverConfigImu, DefaultsAndKeys) {
  // Fails if a default departs from docs/can-devices.md or a key is not read.
  DriverConfig cfg = Parse(std::string(kHead) + "  imu: {bus: can1}\n");
  ASSERT_TRUE(cfg.imu);
  EXPECT_EQ(cfg.imu->bus, 1);
  EXPECT_EQ(cfg.imu->imu.base_id, 0x400u);
  EXPECT_EQ(cfg.imu->frame, "imu");
  EXPECT_EQ(cfg.imu->imu.gyro_lsb, 0.001);
  EXPECT_EQ(cfg.imu->imu.accel_lsb, 0.002);
  EXPECT_DOUBLE_EQ(cfg.imu->timeout, 0.004);  // drivers.timeout_ms
  cfg = Parse(std::string(kHead) +
              "  imu: {bus: can0, base_id: 0x123, frame: mount, gyro_lsb: 0.0005, accel_lsb: "
              "0.001, timeout_ms: 7}\n");
  EXPECT_EQ(cfg.imu->bus, 0);
  EXPECT_EQ(cfg.imu->imu.base_id, 0x123u);
  EXPECT_EQ(cfg.imu->frame, "mount");
  EXPECT_EQ(cfg.imu->imu.gyro_lsb, 0.0005);
  EXPECT_EQ(cfg.imu->imu.accel_lsb, 0.001);
  EXPECT_DOUBLE_EQ(cfg.imu->timeout, 0.007);
  EXPECT_FALSE(Parse(kHead).imu);
}

TEST(DriverConfigImu, BadValuesNameFileLineKeyAndAllowed) {
  // Fails if an error lacks the file:line, the key path or what is allowed.
  auto err = [](const std::string& imu) {
    return ErrorOf([&] { Parse(std::string(kHead) + "  imu: " + imu + "\n"); });
  };
  EXPECT_THAT(err("{bus: can7}"), AllOf(HasSubstr("test.yaml:8:"), HasSubstr("drivers.imu.bus"),
                                        HasSubstr("can0, can1")));
  EXPECT_THAT(
      err("{bus: can0, base_id: 0x7FE}"),
      AllOf(HasSubstr("test.yaml:8:"), HasSubstr("drivers.imu.base_id"), HasSubstr("2045")));
  EXPECT_THAT(err("{bus: can0, gyro_lsb: 0}"), HasSubstr("drivers.imu.gyro_lsb"));
  EXPECT_THAT(err("{bus: can0, accel_lsb: -1}"), HasSubstr("drivers.imu.accel_lsb"));
  EXPECT_THAT(err("{bus: can0, timeout_ms: 0.1}"), HasSubstr("drivers.imu.timeout_ms"));
  EXPECT_THAT(err("{bus: can0, rate: 1000}"), AllOf(HasSubstr("rate"), HasSubstr("base_id")));
  EXPECT_THAT(err("{base_id: 0x400}"), AllOf(HasSubstr("drivers.imu"), HasSubstr("bus")));
}

TEST(DriverConfig, PlausibilityThresholdsDefaultsKeysAndRanges) {
  // Fails if a default departs from drivers/README.md, a key is not read, or a value out of its
  // range is taken.
  DriverConfig cfg = Parse(kHead);
  EXPECT_DOUBLE_EQ(cfg.plausibility.torque_stuck_time, 0.05);
  EXPECT_DOUBLE_EQ(cfg.plausibility.torque_stuck_velocity, 0.02);
  EXPECT_DOUBLE_EQ(cfg.plausibility.error_frame_window, 0.1);
  EXPECT_EQ(cfg.plausibility.error_frame_limit, 100);
  const std::string keys =
      "  torque_stuck_ms: 80\n  torque_stuck_velocity: 0.2\n  error_frame_window_ms: 50\n"
      "  error_frame_limit: 20\n";
  cfg = Parse(std::string(kHead) + keys);
  EXPECT_DOUBLE_EQ(cfg.plausibility.torque_stuck_time, 0.08);
  EXPECT_DOUBLE_EQ(cfg.plausibility.torque_stuck_velocity, 0.2);
  EXPECT_DOUBLE_EQ(cfg.plausibility.error_frame_window, 0.05);
  EXPECT_EQ(cfg.plausibility.error_frame_limit, 20);
  EXPECT_THAT(ErrorOf([] { Parse(std::string(kHead) + "  torque_stuck_ms: 1\n"); }),
              HasSubstr("drivers.torque_stuck_ms"));
  EXPECT_THAT(ErrorOf([] { Parse(std::string(kHead) + "  error_frame_limit: -1\n"); }),
              HasSubstr("drivers.error_frame_limit"));
}

TEST(DriverConfig, BusNamesLongerThanAnInterfaceNameAreRefused) {
  // Linux truncates or refuses interface names beyond IFNAMSIZ − 1 = 15 characters; fails if a
  // 16-character name gets past the configuration, or a 15-character one is refused.
  const std::string ok = "drivers:\n  buses: [can0, abcdefghijklmno]\n  joints: []\n";
  EXPECT_EQ(Parse(ok).buses[1], "abcdefghijklmno");
  const std::string err = ErrorOf(
      [] { Parse("drivers:\n  buses: [can0,\n          abcdefghijklmnop]\n  joints: []\n"); });
  EXPECT_THAT(err, AllOf(HasSubstr("test.yaml:3:"), HasSubstr("drivers.buses"),
                         HasSubstr("16 characters"), HasSubstr("1 to 15")));
}

// A small floating robot: base_root -floating-> base -revolute-> arm -fixed-> arm_imu;
// base -fixed (rotated, offset)-> mount -fixed (rotated, offset)-> imu.
constexpr const char* kUrdf = R"(<?xml version="1.0"?>
<robot name="t">
  <link name="base_root"/>
  <joint name="floating" type="floating"><parent link="base_root"/><child link="base"/></joint>
  <link name="base"><inertial><mass value="5"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <joint name="arm_imu_joint" type="fixed"><parent link="arm"/><child link="arm_imu"/></joint>
  <link name="arm_imu"/>
  <joint name="foot_joint" type="fixed"><parent link="arm"/><child link="foot"/></joint>
  <link name="foot"/>
  <joint name="mount_joint" type="fixed"><parent link="base"/><child link="mount"/>
    <origin xyz="0.1 0 0" rpy="0 0 1.5707963267948966"/></joint>
  <link name="mount"/>
  <joint name="imu_joint" type="fixed"><parent link="mount"/><child link="imu"/>
    <origin xyz="0 0.2 0.3" rpy="1.5707963267948966 0 0"/></joint>
  <link name="imu"/>
</robot>
)";

class ImuFrame : public ::testing::Test {
 protected:
  void SetUp() override {
    urdf_ = (std::filesystem::temp_directory_path() /
             ("heft_imu_" + std::to_string(::getpid()) + ".urdf"))
                .string();
    std::ofstream(urdf_) << kUrdf;
  }
  void TearDown() override { std::filesystem::remove(urdf_); }
  DriverConfig Checked(const std::string& imu) {
    DriverConfig cfg = Parse(std::string(kHead) + "  imu: " + imu + "\n");
    plugin::CheckDriverConfig(cfg, urdf_, "test.yaml");
    return cfg;
  }
  std::string urdf_;
};

TEST_F(ImuFrame, PoseComposesTheFixedJointsUpToTheBase) {
  // base → mount: Rz(90°), (0.1, 0, 0); mount → imu: Rx(90°), (0, 0.2, 0.3). Composed:
  // R_BI = Rz(90°) Rx(90°), p_BI = (0.1, 0, 0) + Rz(90°)(0, 0.2, 0.3) = (−0.1, 0, 0.3).
  // Fails if the chain is composed in the wrong order or a joint's origin is dropped.
  const DriverConfig cfg = Checked("{bus: can0, frame: imu}");
  const Eigen::Matrix3d R = (Eigen::AngleAxisd(M_PI / 2, Eigen::Vector3d::UnitZ()) *
                             Eigen::AngleAxisd(M_PI / 2, Eigen::Vector3d::UnitX()))
                                .toRotationMatrix();
  EXPECT_LT((cfg.imu->R_BI - R).norm(), 1e-12);
  EXPECT_LT((cfg.imu->p_BI - Eigen::Vector3d(-0.1, 0.0, 0.3)).norm(), 1e-12);
  const DriverConfig at_base = Checked("{bus: can0, frame: base}");
  EXPECT_TRUE(at_base.imu->R_BI.isIdentity(0.0));
  EXPECT_TRUE(at_base.imu->p_BI.isZero(0.0));
}

TEST_F(ImuFrame, FramesNotRigidlyOnTheBaseAreRefused) {
  // Fails if the IMU could sit behind a moving joint, above the base, or nowhere.
  auto err = [&](const std::string& imu) { return ErrorOf([&] { Checked(imu); }); };
  EXPECT_THAT(
      err("{bus: can0, frame: arm_imu}"),
      AllOf(HasSubstr("test.yaml:8:"), HasSubstr("drivers.imu.frame"), HasSubstr("'arm_imu'"),
            HasSubstr("not rigidly attached"), HasSubstr("joint 'j1'")));
  EXPECT_THAT(err("{bus: can0, frame: base_root}"),
              AllOf(HasSubstr("'base_root'"), HasSubstr("not on the floating base 'base'")));
  EXPECT_THAT(err("{bus: can0, frame: nowhere}"),
              AllOf(HasSubstr("drivers.imu.frame"), HasSubstr("not a link")));
  EXPECT_THAT(err("{bus: can0}"), HasSubstr("(no error)"));  // the default frame 'imu' is fine
}

TEST_F(ImuFrame, IdentifierClashesWithOtherDevicesAreRefused) {
  // Fails if the IMU's frames B or C may share an identifier with another device on its bus.
  auto err = [&](const std::string& imu) { return ErrorOf([&] { Checked(imu); }); };
  EXPECT_THAT(err("{bus: can1, base_id: 0x2FE}"),
              AllOf(HasSubstr("0x300"), HasSubstr("'can1'"), HasSubstr("F/T cell 'foot'"),
                    HasSubstr("IMU 'imu' (frame C)")));
  EXPECT_THAT(err("{bus: can0, base_id: 0x0FF}"),
              AllOf(HasSubstr("0x100"), HasSubstr("encoder of 'j1'"), HasSubstr("(frame B)")));
  EXPECT_THAT(err("{bus: can0, base_id: 0x2FE}"), HasSubstr("(no error)"));  // other bus
}

TEST(DriverConfigImu, TheShippedRobotConfigResolvesItsImuOnThePelvis) {
  // config/heft.yaml's IMU is the humanoid's `imu` link, 5 cm ahead of and 8 cm above the
  // pelvis origin, unrotated (scripts/gen_humanoid.py). Fails if the shipped config loses its IMU
  // or the URDF's mount changes without the config following.
  const std::string path = std::string(HEFT_CONFIG_DIR) + "/heft.yaml";
  const config::Document doc = config::Document::Load(path);
  DriverConfig cfg = ParseDriverConfig(doc.root()["drivers"]);
  ASSERT_TRUE(cfg.imu);
  plugin::CheckDriverConfig(cfg, std::string(HEFT_CONFIG_DIR) + "/robots/heft_humanoid.urdf", path);
  EXPECT_EQ(cfg.buses[cfg.imu->bus], "can0");
  EXPECT_EQ(cfg.imu->imu.base_id, 0x400u);
  EXPECT_TRUE(cfg.imu->R_BI.isIdentity(1e-15));
  EXPECT_LT((cfg.imu->p_BI - Eigen::Vector3d(0.05, 0.0, 0.08)).norm(), 1e-15);
}

}  // namespace
}  // namespace heft::drivers

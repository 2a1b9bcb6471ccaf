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

namespace heft::drivers {
namespace {

constexpr const char* kStandard = R"(drivers:
  buses: [can0, can1]
  joints:
    - {name: hip, bus: can0, device: mit, motor_id: 1, p_max: 12.5, v_max: 50, t_max: 18}
    - {name: knee, bus: can0, device: mit, motor_id: 2, reply_id: 0x10, p_max: 12.5, v_max: 50,
       t_max: 40, torque_constant: 0.091, gear_ratio: 9, direction: -1}
    - name: ankle
      bus: can1
      device: cia402
      node: 5
      tpdos:
        - {cob_id: 0x185, map: [statusword, position]}
        - {cob_id: 0x285, map: [velocity, u16, torque]}
      counts_per_rev: 4096
      gear_ratio: 50
      rated_torque: 0.5
)";

// The standard actuators' keys into their configurations, the conversion's uncertainty default
// and the identifiers each device sends. Fails if a key is dropped or lands in another field.
TEST(DriverConfigStandard, MitAndCia402EntriesAreRead) {
  const DriverConfig cfg = Parse(kStandard);
  ASSERT_EQ(cfg.joints.size(), 3u);
  const JointDevice& hip = cfg.joints[0];
  EXPECT_EQ(hip.protocol, JointProtocol::kMit);
  EXPECT_EQ(hip.mit.motor_id, 1);
  EXPECT_EQ(hip.mit.reply_id, 0u);
  EXPECT_DOUBLE_EQ(hip.mit.v_max, 50.0);
  EXPECT_FALSE(hip.mit.current.enabled);
  EXPECT_LT(hip.torque_scale_uncertainty, 0.0);  // the estimator's own
  const JointDevice& knee = cfg.joints[1];
  EXPECT_EQ(knee.mit.reply_id, 0x10u);
  EXPECT_TRUE(knee.mit.current.enabled);
  EXPECT_DOUBLE_EQ(knee.mit.current.torque_constant, 0.091);
  EXPECT_DOUBLE_EQ(knee.mit.current.gear_ratio, 9.0);
  EXPECT_EQ(knee.mit.direction, -1);
  EXPECT_DOUBLE_EQ(knee.torque_scale_uncertainty, 0.1);
  const JointDevice& ankle = cfg.joints[2];
  EXPECT_EQ(ankle.protocol, JointProtocol::kCia402);
  EXPECT_EQ(ankle.bus, 1);
  EXPECT_EQ(ankle.cia402.node, 5);
  ASSERT_EQ(ankle.cia402.num_tpdos, 2);
  EXPECT_EQ(ankle.cia402.tpdos[1].cob_id, 0x285u);
  EXPECT_EQ(ankle.cia402.tpdos[1].Bytes(), 8);
  EXPECT_EQ(ankle.cia402.tpdos[1].map[1], Cia402Object::kUnused16);
  EXPECT_DOUBLE_EQ(ankle.cia402.gear_ratio, 50.0);
  EXPECT_DOUBLE_EQ(ankle.cia402.rated_torque, 0.5);
  EXPECT_EQ(ankle.cia402.heartbeat_timeout_ns, 1'500'000'000);  // the default
  EXPECT_EQ(Parse(std::string(kStandard) + "      heartbeat_timeout_ms: 250\n")
                .joints[2]
                .cia402.heartbeat_timeout_ns,
            250'000'000);
  std::vector<std::uint32_t> ids;
  for (const IdClaim& c : JointIdentifiers(ankle)) ids.push_back(c.id);
  EXPECT_EQ(ids, (std::vector<std::uint32_t>{0x185, 0x285, 0x705, 0x085}));
  EXPECT_TRUE(JointIdentifiers(hip).front().shared);
}

// Fails if an error lacks the file:line, the key or the allowed values.
TEST(DriverConfigStandard, BadEntriesNameFileLineKeyAndAllowed) {
  auto err = [](const std::string& joint) {
    return ErrorOf([&] { Parse("drivers:\n  buses: [can0]\n  joints:\n    - " + joint + "\n"); });
  };
  EXPECT_THAT(err("{name: a, bus: can0, device: canopen}"),
              AllOf(HasSubstr("test.yaml:4:"), HasSubstr("drivers.joints[0].device"),
                    HasSubstr("heft, mit, cia402")));
  EXPECT_THAT(err("{name: a, bus: can0, node: 1, motor_id: 3}"),
              AllOf(HasSubstr("drivers.joints[0].motor_id"), HasSubstr("only for device: mit")));
  EXPECT_THAT(err("{name: a, bus: can0, device: mit, motor_id: 1, p_max: 1, v_max: 1}"),
              HasSubstr("t_max"));
  EXPECT_THAT(err("{name: a, bus: can0, device: mit, motor_id: 300, p_max: 1, v_max: 1, t_max: 1}"),
              AllOf(HasSubstr("drivers.joints[0].motor_id"), HasSubstr("255")));
  EXPECT_THAT(err("{name: a, bus: can0, device: mit, node: 1, motor_id: 1, p_max: 1, v_max: 1, "
                  "t_max: 1}"),
              AllOf(HasSubstr("drivers.joints[0].node"), HasSubstr("heft, cia402")));
  EXPECT_THAT(err("{name: a, bus: can0, device: cia402, node: 5, tpdos: [{cob_id: 0x185, map: "
                  "[statusword, angle]}]}"),
              AllOf(HasSubstr("test.yaml:4:"), HasSubstr("'angle' is not allowed"),
                    HasSubstr("statusword, position, velocity, torque, current, u8, u16, u32")));
  EXPECT_THAT(err("{name: a, bus: can0, device: cia402, node: 5, tpdos: [{cob_id: 0x185, map: "
                  "[position, position, u8]}]}"),
              HasSubstr("take 9 bytes; a TPDO carries at most 8"));
  EXPECT_THAT(err("{name: a, bus: can0, device: cia402, node: 5, tpdos: [{cob_id: 0x185, map: "
                  "[position]}]}"),
              HasSubstr("no TPDO maps torque (0x6077)"));
  EXPECT_THAT(err("{name: a, bus: can0, device: cia402, node: 0, tpdos: [{cob_id: 0x185, map: "
                  "[position, torque]}]}"),
              AllOf(HasSubstr("drivers.joints[0].node"), HasSubstr("1")));
  EXPECT_THAT(err("{name: a, bus: can0, device: cia402, node: 5, tpdos: [{cob_id: 0x185, map: "
                  "[position, torque]}], heartbeat_timeout_ms: 70000}"),
              AllOf(HasSubstr("test.yaml:4:"), HasSubstr("drivers.joints[0].heartbeat_timeout_ms"),
                    HasSubstr("65535")));
  EXPECT_THAT(err("{name: a, bus: can0, device: mit, motor_id: 1, p_max: 1, v_max: 1, t_max: 1, "
                  "heartbeat_timeout_ms: 100}"),
              AllOf(HasSubstr("drivers.joints[0].heartbeat_timeout_ms"),
                    HasSubstr("only for device: cia402")));
  EXPECT_THAT(err("{name: a, bus: can0, device: cia402, node: 5, tpdos: [{cob_id: 0x185, map: "
                  "[position, torque], rate: 1}]}"),
              AllOf(HasSubstr("rate"), HasSubstr("cob_id, map")));
}

}  // namespace
}  // namespace heft::drivers

namespace heft::drivers {
namespace {

// Two revolute joints on a fixed base, a foot link for an F/T cell.
constexpr const char* kTwoJoints = R"(<?xml version="1.0"?>
<robot name="two">
  <link name="base"><inertial><mass value="5"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <link name="a"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <link name="b"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <joint name="foot_joint" type="fixed"><parent link="b"/><child link="foot"/></joint>
  <link name="foot"/>
</robot>
)";

// Against the URDF: two MIT actuators share their controller's reply identifier but not a motor id
// on a bus; a CiA 402 drive's identifiers clash like any device's. Fails if a shared reply
// identifier is refused, a motor id or an EMCY identifier used twice is accepted, or the error does
// not name the file, the list and both claimants (this overload has no YAML node: no line).
TEST(DriverConfigStandard, MotorIdsAndDriveIdentifiersAreCheckedPerBus) {
  const std::string urdf = (std::filesystem::temp_directory_path() /
                            ("heft_two_" + std::to_string(::getpid()) + ".urdf"))
                               .string();
  std::ofstream(urdf) << kTwoJoints;
  auto check = [&](const std::string& joints, const std::string& cells = "") {
    return ErrorOf([&] {
      DriverConfig cfg = Parse("drivers:\n  buses: [can0, can1]\n  joints:\n" + joints + cells);
      plugin::CheckDriverConfig(cfg, urdf, "test.yaml");
    });
  };
  const std::string mit = ", device: mit, p_max: 12.5, v_max: 50, t_max: 18}\n";
  EXPECT_EQ(check("    - {name: j1, bus: can0, motor_id: 1" + mit +
                  "    - {name: j2, bus: can0, motor_id: 2" + mit),
            "(no error)");
  EXPECT_EQ(check("    - {name: j1, bus: can0, motor_id: 1" + mit +
                  "    - {name: j2, bus: can1, motor_id: 1" + mit),
            "(no error)");  // another bus
  EXPECT_THAT(check("    - {name: j1, bus: can0, motor_id: 1" + mit +
                    "    - {name: j2, bus: can0, motor_id: 1" + mit),
              AllOf(HasSubstr("test.yaml: drivers.joints"), HasSubstr("motor id 1 on bus 'can0'"),
                    HasSubstr("'j1' and 'j2'")));
  const std::string drive =
      "    - {name: j2, bus: can0, device: cia402, node: 5, tpdos: [{cob_id: 0x185, map: "
      "[statusword, position, torque]}]}\n";
  const std::string cell =
      "  ft_cells:\n    - {frame: foot, bus: can0, base_id: 0x084, calibration: [1,0,0,0,0,0, "
      "0,1,0,0,0,0, 0,0,1,0,0,0, 0,0,0,1,0,0, 0,0,0,0,1,0, 0,0,0,0,0,1]}\n";
  EXPECT_EQ(check("    - {name: j1, bus: can0, node: 0}\n" + drive), "(no error)");
  EXPECT_THAT(check("    - {name: j1, bus: can0, node: 0}\n" + drive, cell),
              AllOf(HasSubstr("0x085"), HasSubstr("EMCY of the drive of 'j2'"),
                    HasSubstr("F/T cell 'foot'")));
  std::filesystem::remove(urdf);
}

}  // namespace
}  // namespace heft::drivers

// Faults validated once: sim::CheckFault holds the rules a fault must keep, for the configuration
// (simulation.faults, reported at the entry's file, line and key) and for the simulated robot (a
// SimOptions built in code). Fails if either path stopped applying a rule, or if the two reported
// the same fault differently.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "fault_window.hpp"
#include "heft/config/yaml.hpp"
#include "heft/sim/sim_backend.hpp"
#include "heft/sim/sim_config.hpp"
#include "roles_yaml.hpp"

namespace heft::sim {
namespace {

using K = SimFault::Kind;
using ::testing::HasSubstr;

// The reference humanoid's role map (simulation.roles, required), after the faults.
const std::string kRoles =
    test::RolesYaml(std::string(HEFT_TEST_ROBOTS_DIR) + "/heft_humanoid_roles.yaml");

// Each rule is named by the key it concerns; a sound fault passes. Fails if a rule is dropped
// (nothing reported) or reports another key.
TEST(FaultCheck, EachRuleNamesItsKey) {
  const FaultTargets robot{3, 2, 2, false};  // 3 joints, 2 cells, 2 buses, no IMU
  EXPECT_FALSE(CheckFault(FaultWindow(K::kTorque, 2, 1.0, 2.0), robot));
  SimFault every_bus = FaultWindow(K::kLoss, -1, 0.0, 1e6);
  every_bus.probability = 0.5;
  EXPECT_FALSE(CheckFault(every_bus, robot));
  const auto key = [&](const SimFault& f) {
    const auto p = CheckFault(f, robot);
    return p ? std::string(p->key) : std::string("none");
  };
  EXPECT_EQ(key(FaultWindow(K::kTorque, 0, 2.0, 2.0)), "to");
  SimFault burst = FaultWindow(K::kBurst, 0, 1.0, 1.005);
  burst.repeat = 3;
  burst.period = 0.004;  // shorter than one 5 ms burst
  EXPECT_EQ(key(burst), "period");
  burst.repeat = 0;
  EXPECT_EQ(key(burst), "repeat");
  every_bus.probability = 1.5;
  EXPECT_EQ(key(every_bus), "probability");
  EXPECT_EQ(key(FaultWindow(K::kImu, 0, 1.0, 2.0)), "device");
  EXPECT_EQ(key(FaultWindow(K::kEncoder, 3, 1.0, 2.0)), "name");
  EXPECT_EQ(key(FaultWindow(K::kForceTorque, 2, 1.0, 2.0)), "name");
  EXPECT_EQ(key(FaultWindow(K::kBusOff, -1, 1.0, 2.0)), "name");
}

// The configuration reports CheckFault's message at the fault's key, file and line. Fails if the
// YAML path had rules of its own that disagree with the robot's.
TEST(FaultCheck, TheConfigurationReportsTheSameRuleAtItsLine) {
  const std::string text =
      "simulation:\n  scenario: dumbbell-curl\n  faults:\n"
      "    - {device: torque, name: left_elbow, from: 2.0, to: 1.0}\n" +
      kRoles;
  try {
    (void)ParseSimulation(config::Document::Parse(text, "sim.yaml").root());
    ADD_FAILURE() << "accepted";
  } catch (const config::ConfigError& e) {
    const auto problem =
        CheckFault(FaultWindow(K::kTorque, 0, 2.0, 1.0), FaultTargets{1, 0, 0, false});
    ASSERT_TRUE(problem);
    EXPECT_THAT(e.what(), HasSubstr("sim.yaml:4:"));
    EXPECT_THAT(e.what(), HasSubstr("simulation.faults[0].to: " + problem->what));
  }
  drivers::DriverConfig no_imu;
  no_imu.buses = {"can0"};
  SimulationConfig sim =
      ParseSimulation(config::Document::Parse("simulation:\n  scenario: dumbbell-curl\n  faults:\n "
                                              "   - {device: imu, from: 1, to: 2}\n" +
                                                  kRoles,
                                              "sim.yaml")
                          .root());
  try {
    ResolveFaultNames(sim, no_imu);
    ADD_FAILURE() << "an IMU fault without drivers.imu accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("simulation.faults[0].device: an IMU fault needs drivers.imu"));
  }
}

}  // namespace
}  // namespace heft::sim

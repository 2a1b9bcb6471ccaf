// heftd's simulated robot: a named scenario (tests/scenarios: MuJoCo plant, payload schedule,
// whole-body controller) whose sensors are emulated as the real devices' CAN frames — noise, bias
// and the spec's quantisation — written into in-memory buses that the same driver loop reads.
// Step() is one simulated millisecond; the controller takes the latest hand-off every 3 ms.
#pragma once

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "heft/drivers/memory_bus.hpp"
#include "heft/drivers/sample_encoder.hpp"
#include "heft/estimator/model.hpp"
#include "heft/hal/inertial_estimate.hpp"
#include "heft/scenarios/plant.hpp"
#include "heft/scenarios/scenario.hpp"

namespace heft::host {

struct SimNoise {
  double joint_torque = 0.3;  // N·m (plus the sensor's quantisation)
  double torque_bias = 0.0;   // N·m, constant on every joint
  double velocity = 0.0005;   // rad/s
  double force = 2.0;         // N
  double moment = 0.2;        // N·m
  double force_bias = 0.0;    // N, constant per cell (what a start-up tare would remove)
};

// A sensor fault on request: a device falls silent (or, kind crc, sends frames with a broken CRC)
// between `from` and `to` seconds of simulated time.
struct SimFault {
  enum class Kind { kEncoder, kTorque, kForceTorque, kCrc } kind = Kind::kTorque;
  int device = 0;  // joint index (drivers order) or F/T cell index
  double from = 0.0, to = 0.0;
};

struct SimOptions {
  std::string scenario;
  bool adaptation = true;
  double duration_scale = 1.0;
  std::uint64_t seed = 1;
  SimNoise noise;
  std::vector<SimFault> faults;
};

class SimulatedRobot {
 public:
  // `drivers` gives the buses, devices and joint order; `urdf_model` the frames of the F/T cells.
  SimulatedRobot(const SimOptions& options, const drivers::DriverConfig& drivers,
                 const dyn::Model& urdf_model);
  // One millisecond: payloads, the controller (with the latest hand-off when `estimate` is set), a
  // plant step, and every device's frames on the buses.
  void Step(const hal::InertialEstimate* estimate) noexcept;
  std::vector<hal::CanTransport*> buses();
  const hal::BaseSample& base() const { return truth_.base; }
  double time() const { return plant_->time(); }
  double duration() const { return scenario_.duration; }
  const scenarios::Scenario& scenario() const { return scenario_; }
  // Truth for telemetry: π of each payload link now, and the controller's task errors.
  Eigen::VectorXd TruePayload() const;
  std::span<const double> task_errors() const { return scenario_.controller->task_errors(); }
  bool fell() const;

 private:
  double Normal() noexcept;
  scenarios::Scenario scenario_;
  std::unique_ptr<scenarios::Plant> plant_;
  std::vector<int> payload_bodies_;
  std::vector<std::unique_ptr<drivers::MemoryBus>> buses_;
  std::vector<hal::CanTransport*> bus_ptrs_;
  std::unique_ptr<drivers::SampleEncoder> encoder_;
  std::vector<Eigen::Vector3d> ft_offsets_;  // F/T frame origin in the foot frame
  std::vector<double> torque_bias_;
  hal::RobotStateSample truth_, measured_;
  std::vector<double> tau_;
  std::vector<SimFault> faults_;
  std::vector<unsigned char> encoder_on_, torque_on_, ft_on_;
  std::mt19937_64 rng_;
  SimNoise noise_;
  std::int64_t now_ns_ = 0;
  int tick_ = 0;
};

}  // namespace heft::host

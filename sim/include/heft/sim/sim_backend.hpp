// heft-sim's simulated robot: a named scenario (heft/sim: MuJoCo plant, payload schedule,
// whole-body controller) whose sensors are emulated as the real devices' CAN frames — noise, bias
// and the spec's quantisation — written into in-memory buses that the same driver loop reads.
// Step() is one simulated millisecond; the controller takes the latest hand-off every 3 ms. Faults
// on request (silent devices, CRC errors, frame loss, bursts, bus-off) and a candump log of every
// frame put on the buses (written by its own thread, never in Step()).
#pragma once

#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "heft/drivers/candump_writer.hpp"
#include "heft/drivers/memory_bus.hpp"
#include "heft/drivers/sample_encoder.hpp"
#include "heft/dynamics/model.hpp"
#include "heft/hal/inertial_estimate.hpp"
#include "heft/sim/deviations.hpp"
#include "heft/sim/plant.hpp"
#include "heft/sim/scenario.hpp"

namespace heft::sim {

struct SimNoise {
  double joint_torque = 0.3;  // N·m (plus the sensor's quantisation)
  double torque_bias = 0.0;   // N·m, constant on every joint
  double velocity = 0.0005;   // rad/s
  double force = 2.0;         // N
  double moment = 0.2;        // N·m
  double force_bias = 0.0;    // N, constant per cell (what a start-up tare would remove)
  // The base IMU (when drivers.imu is configured), in its own frame, before the spec's
  // quantisation: white noise per axis, a constant bias per axis, and the attitude's error as a
  // small rotation (σ per axis, applied in I).
  double gyro = 0.002;                                   // rad/s
  double accel = 0.02;                                   // m/s²
  Eigen::Vector3d gyro_bias = Eigen::Vector3d::Zero();   // rad/s
  Eigen::Vector3d accel_bias = Eigen::Vector3d::Zero();  // m/s²
  double attitude = 0.001;                               // rad
};

// A fault on request, in simulated seconds. Device faults: a device falls silent (or, kind crc,
// every torque sensor sends frames with a broken CRC) between `from` and `to`. Bus faults (device
// = a bus index, -1 for every bus with kLoss): kLoss drops each frame with `probability`
// (deterministic for the seed); kBurst loses every frame on the bus from `from` to `to`, `repeat`
// times, bursts starting `period` apart; kBusOff takes the bus off (an error frame of class
// bus-off, then silence) for the window — a restart inside it finds the bus off again, the first
// restart after it brings the frames back. IMU faults (drivers.imu; no device): kImu the IMU falls
// silent, kImuSaturated its frames carry GYRO_SATURATED and ACCEL_SATURATED, kImuAttitude they
// carry ATTITUDE_NOT_CONVERGED (the drivers mark the base as faulty in both). The fault matrix's
// (scripts/faults.py): kTorqueStuck a torque sensor keeps sending the value it measured when the
// window opened (valid frames, no noise); kFtSaturated every gauge of a cell sits at its int16
// rail (an overload; the cell's status stays OK, as a cell that does not flag saturation);
// kErrorFrames the bus (device) carries an error-frame storm, kErrorFramesPerMs bus/protocol
// error frames each millisecond beside the devices' frames; kClockStep the clocks that stamp
// frames and the framework's samples jump by `step` seconds for the window (then back); kInputStale
// the simulated framework writes nothing into its input segment (no base sample, no command: a
// command due then waits for the window's end); kInputGarbage it writes random bytes as its base
// sample every millisecond.
struct SimFault {
  enum class Kind {
    kEncoder,
    kTorque,
    kForceTorque,
    kCrc,
    kLoss,
    kBurst,
    kBusOff,
    kImu,
    kImuSaturated,
    kImuAttitude,
    kTorqueStuck,
    kFtSaturated,
    kErrorFrames,
    kClockStep,
    kInputStale,
    kInputGarbage
  };
  Kind kind = Kind::kTorque;
  int device = 0;  // joint index (drivers order), F/T cell index or bus index
  double from = 0.0, to = 0.0;
  double probability = 0.0;  // kLoss
  int repeat = 1;            // kBurst
  double period = 0.0;       // kBurst, s between the starts of back-to-back bursts
  double step = 0.0;         // kClockStep, s the clocks jump by (negative: back)
  // True while the fault is active at simulated time t.
  bool Active(double t) const noexcept;
};

// What a fault may hit: the simulated robot's devices and buses (drivers order).
struct FaultTargets {
  std::size_t joints = 0, ft_cells = 0, buses = 0;
  bool imu = false;
};
// What is wrong with a fault: the key of its simulation.faults entry and why.
struct FaultProblem {
  const char* key;
  std::string what;
};
// The one check of a fault, for the configuration (simulation.faults, with file, line and key)
// and for the simulated robot (SimOptions built in code): a window that ends after it starts,
// back-to-back bursts that do not overlap, a probability in [0, 1], a device or bus that exists
// (kLoss: -1, every bus) and an IMU for the IMU's faults. Nothing when the fault is sound.
std::optional<FaultProblem> CheckFault(const SimFault& fault, const FaultTargets& targets);

// What the simulator did to its frames, per bus (for the summary and the tests).
inline constexpr int kErrorFramesPerMs = 4;

struct SimBusCounters {
  std::uint64_t frames = 0;        // put on the bus (what a candump on it would see)
  std::uint64_t lost_random = 0;   // kLoss
  std::uint64_t lost_burst = 0;    // kBurst
  std::uint64_t lost_bus_off = 0;  // not sent: the bus was off
  std::uint64_t bus_off = 0;       // bus-off events raised
  std::uint64_t error_frames = 0;  // kErrorFrames: error frames put on the bus
};

struct SimOptions {
  std::string scenario;
  std::string robots_dir;  // the scenarios' URDFs; empty: the source tree's config/robots
  std::string urdf;        // the robot (robot.urdf); empty: heft_humanoid*.urdf in robots_dir
  RoleMap roles;           // simulation.roles; empty (with urdf empty): the reference humanoid's
  bool adaptation = true;
  double duration_scale = 1.0;
  double load_after = 0.0;  // s: the scenario holds still, unloaded, this long first
  std::uint64_t seed = 1;
  SimNoise noise;
  DeviationConfig deviations;  // the simulated robot vs its URDF (default: ideal, the URDF)
  // simulation.drives.damping [N·m·s/rad]: the robot's drives' viscous damping on every joint (a
  // property of its actuators the URDF does not carry; the deviations' viscous friction adds to it)
  double drive_damping = 0.0;
  std::vector<SimFault> faults;
  // The host takes the floating base from the framework's input segment (host.framework_input
  // .base), which the simulated framework writes: a floating robot then needs no drivers.imu.
  bool base_from_input = false;
  // The simulated controllers' joint friction model: heft-sim passes robot.parameters' `friction`
  // (heft-identify's, identified on this robot); empty: none (the URDF has none).
  std::vector<estimator::JointFriction> controller_friction;
  // The simulated controllers' rigid-body model of these bodies: heft-sim passes robot.parameters'
  // (the identified model, the one the estimator starts from) unless simulation.controller_model
  // is urdf; empty: the URDF's.
  std::vector<sim::Controller::BodyParameters> controller_parameters;
  // heft's nominal parameters of the estimated links (what the hand-off is consistent with): the
  // controllers keep their own model of a link while heft hands this nominal of it, and take the
  // handed π once heft hands anything else (Controller::SetHandOffReference). Empty: every
  // hand-off replaces their model of the link.
  std::vector<sim::Controller::BodyParameters> hand_off_reference;
  // The identity of the model hand_off_reference comes from (hal::ModelIdentity of robot.urdf and
  // robot.parameters; 0: not checked). A hand-off that names another nominal model is not applied:
  // its change is of a model the controllers do not share (SimulatedBackend counts it).
  std::uint32_t hand_off_model = 0;
  std::string candump;       // path of a `candump -l` log of every frame; empty: none
  bool candump_wait = true;  // lockstep: the simulation waits for the log writer, never drops
  // The log's time of simulated t = 0 (ns since the epoch); negative: the wall clock's whole second
  // when the simulator starts (candump logs carry absolute times).
  std::int64_t candump_epoch_ns = -1;
};

class SimulatedRobot {
 public:
  // `drivers` gives the buses, devices and joint order; `urdf_model` the frames of the F/T cells.
  // The plant is the scenario's URDF with options.deviations drawn and applied (bodies, friction);
  // the sensors carry the drawn offsets, gains and biases.
  SimulatedRobot(const SimOptions& options, const drivers::DriverConfig& drivers,
                 const dynamics::Model& urdf_model);
  ~SimulatedRobot();
  // One millisecond: payloads, the controller (with the latest hand-off when `estimate` is set), a
  // plant step, and every device's frames on the buses (through the faults on request).
  void Step(const hal::InertialEstimate* estimate) noexcept;
  std::vector<hal::CanTransport*> buses();
  double time() const { return plant_->time(); }
  double duration() const { return scenario_.duration; }
  const sim::Scenario& scenario() const { return scenario_; }
  // MuJoCo's state after the last step (ground truth for tests).
  const sim::Plant& plant() const { return *plant_; }
  // The F/T frames' origins in their foot frames (cells in drivers order).
  const std::vector<Eigen::Vector3d>& ft_offsets() const { return ft_offsets_; }
  // What the simulated robot is, next to its URDF (every deviation drawn; all zero when ideal).
  const RobotDeviations& deviations() const { return deviations_; }
  // Truth for telemetry: π of each payload link now — the link's deviated body plus what the
  // scenario's payload adds to (or takes from) its URDF π —, and the controller's task errors.
  Eigen::VectorXd TruePayload() const;
  // The same into `out` (sized 10 × payloads; no allocation when it already is).
  void TruePayload(Eigen::VectorXd& out) const noexcept;
  std::span<const double> task_errors() const { return scenario_.controller->task_errors(); }
  bool fell() const;
  // The pelvis's lowest height so far [m] (floating base; +inf for a fixed one).
  double lowest_pelvis() const { return lowest_pelvis_; }
  // The simulated time at which MuJoCo found the simulation unstable (and reset it: everything
  // after is void), or a negative number while it has not.
  double unstable_at() const { return unstable_at_; }
  // What the faults did, per bus (drivers order). Read after the run (or between steps).
  const std::vector<SimBusCounters>& bus_counters() const { return bus_counters_; }
  // True while a fault of `kind` is active at simulated time t (the framework's faults, which the
  // backend injects into its input segment).
  bool FaultActive(SimFault::Kind kind, double t) const noexcept;
  // What the stepped clocks add to the true time now (kClockStep), ns.
  std::int64_t clock_offset_ns() const noexcept { return clock_offset_ns_; }
  // The state after the last step as MuJoCo has it (truth; the base is not on the buses: with
  // drivers.imu the IMU's frames carry it, see imu_truth()).
  const hal::RobotStateSample& truth() const { return truth_; }
  // What the sensors reported of the last step (noise, gains, offsets; before the CAN devices'
  // quantisation), and which devices spoke (the faults), in drivers order: what a framework that
  // owns the joints would have (framework_standin.hpp).
  const hal::RobotStateSample& measured() const { return measured_; }
  std::span<const unsigned char> encoders_on() const { return encoder_on_; }
  std::span<const unsigned char> torques_on() const { return torque_on_; }
  std::span<const unsigned char> ft_cells_on() const { return ft_on_; }
  // What the IMU measured of the last step before noise and quantisation (drivers.imu only).
  const sim::ImuTruth& imu_truth() const { return imu_truth_; }
  // The candump log (when configured): finishes writing it; throws on an I/O error. Idempotent.
  void CloseCandump();
  const drivers::CandumpWriter* candump() const { return candump_.get(); }

 private:
  class Link;  // between the devices and one bus: faults, the candump log
  static double Normal(std::mt19937_64& rng) noexcept;
  double Normal() noexcept { return Normal(rng_); }
  void EmitImu(double t) noexcept;
  // Set-up: the F/T cells' origins on their feet and the base IMU's pose (checked on the URDF).
  void PlaceSensors(const SimOptions& options, const drivers::DriverConfig& drivers,
                    const dynamics::Model& urdf_model);
  // Set-up: draws options.deviations, applies them to the plant and the sensors.
  void ApplyDeviations(const SimOptions& options, const drivers::DriverConfig& drivers);
  // Set-up: the candump log, the in-memory buses and their links.
  void OpenBuses(const SimOptions& options, const drivers::DriverConfig& drivers);
  // Set-up: the frame encoder, every device on, and the faults checked against the devices.
  void ArmDevices(const drivers::DriverConfig& drivers);
  // Step: what the sensors report of truth_ (noise, gains, offsets, the F/T frames) in measured_.
  void Measure() noexcept;
  // Step: every device back on, then the faults open at t on the devices, the buses and `emit`.
  void ApplyFaults(double t, drivers::EmitOptions& emit) noexcept;
  void ApplyFault(const SimFault& fault, drivers::EmitOptions& emit) noexcept;
  // The true π of payload i at time t (the deviated link and the scenario's payload).
  Vector10 PayloadTruth(std::size_t i, double t) const noexcept;
  sim::Scenario scenario_;
  std::unique_ptr<sim::Plant> plant_;
  std::vector<int> payload_bodies_;
  std::vector<std::unique_ptr<drivers::MemoryBus>> buses_;
  std::vector<hal::CanTransport*> bus_ptrs_;
  std::vector<std::unique_ptr<Link>> links_;
  std::vector<hal::CanTransport*> link_ptrs_;
  std::vector<SimBusCounters> bus_counters_;
  std::unique_ptr<drivers::CandumpWriter> candump_;
  std::unique_ptr<drivers::SampleEncoder> encoder_;
  std::vector<Eigen::Vector3d> ft_offsets_;  // F/T frame origin in the foot frame
  RobotDeviations deviations_;
  std::vector<Vector10> payload_base_;  // per payload: the link's deviated π (no payload)
  bool payload_deviated_ = false;       // false: the payloads' π are the scenario's own
  std::vector<double> torque_bias_;     // per joint: noise.torque_bias + the drawn offset
  std::vector<double> torque_scale_;    // per joint: 1 + the drawn gain error
  std::vector<Eigen::Matrix<double, 6, 1>> ft_bias_;  // per cell: force (+ force_bias), moment
  Eigen::Vector3d gyro_bias_ = Eigen::Vector3d::Zero(), accel_bias_ = Eigen::Vector3d::Zero();
  hal::RobotStateSample truth_, measured_;
  double lowest_pelvis_ = std::numeric_limits<double>::infinity();
  std::vector<double> tau_;
  std::vector<SimFault> faults_;
  std::vector<unsigned char> encoder_on_, torque_on_, ft_on_;
  std::vector<double> stuck_torque_;      // per joint: the stuck value, NaN while not stuck
  std::vector<unsigned char> stuck_now_;  // per joint: kTorqueStuck active this millisecond
  std::int64_t clock_offset_ns_ = 0;      // kClockStep
  std::mt19937_64 rng_;
  std::mt19937_64 fault_rng_;  // its own stream: frame loss does not change the sensor noise
  std::mt19937_64 imu_rng_;    // the IMU's noise: the other sensors' noise is the same with it
  bool imu_ = false;           // drivers.imu is configured
  Eigen::Matrix3d R_BI_ = Eigen::Matrix3d::Identity();
  Eigen::Vector3d p_BI_ = Eigen::Vector3d::Zero();
  sim::ImuTruth imu_truth_;
  SimNoise noise_;
  std::int64_t now_ns_ = 0;
  int tick_ = 0;
  double unstable_at_ = -1.0;
};

}  // namespace heft::sim

#include "heft/sim/sim_backend.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "heft/drivers/error_frames.hpp"
#include "heft/dynamics/inertia.hpp"

namespace heft::sim {

std::optional<FaultProblem> CheckFault(const SimFault& f, const FaultTargets& targets) {
  using K = SimFault::Kind;
  const auto number = [](double v) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", v);
    return std::string(text);
  };
  if (!(f.to > f.from)) return FaultProblem{"to", "must be after from (" + number(f.from) + " s)"};
  if (f.kind == K::kBurst && f.repeat < 1) return FaultProblem{"repeat", "at least 1"};
  if (f.kind == K::kBurst && f.repeat > 1 && !(f.period > f.to - f.from))
    return FaultProblem{"period",
                        "back-to-back bursts must start further apart than one burst lasts (" +
                            number(f.to - f.from) + " s)"};
  if (f.kind == K::kLoss && !(f.probability >= 0.0 && f.probability <= 1.0))
    return FaultProblem{"probability", "allowed: 0 to 1"};
  switch (f.kind) {
    case K::kCrc:
    case K::kClockStep:
    case K::kInputStale:
    case K::kInputGarbage:
      return std::nullopt;
    case K::kImu:
    case K::kImuSaturated:
    case K::kImuAttitude:
      if (!targets.imu) return FaultProblem{"device", "an IMU fault needs drivers.imu"};
      return std::nullopt;
    default:
      break;
  }
  const bool on_bus = f.kind == K::kLoss || f.kind == K::kBurst || f.kind == K::kBusOff ||
                      f.kind == K::kErrorFrames;
  const bool on_cell = f.kind == K::kForceTorque || f.kind == K::kFtSaturated;
  const std::size_t limit = on_cell ? targets.ft_cells : on_bus ? targets.buses : targets.joints;
  const int lowest = f.kind == K::kLoss ? -1 : 0;
  if (f.device < lowest || (f.device >= 0 && static_cast<std::size_t>(f.device) >= limit))
    return FaultProblem{"name", "device index " + std::to_string(f.device) + " out of range (" +
                                    std::to_string(limit) + " of its kind)"};
  return std::nullopt;
}

bool SimFault::Active(double t) const noexcept {
  if (kind != Kind::kBurst) return t >= from && t < to;
  for (int r = 0; r < repeat; ++r) {
    const double start = from + r * period;
    if (t >= start && t < start + (to - from)) return true;
  }
  return false;
}

// Between the emulated devices and one in-memory bus: what the bus loses (at random, in bursts,
// while it is off) and, for every frame that makes it onto the bus, a line in the candump log
// (queued, written by the log's own thread).
class SimulatedRobot::Link final : public hal::CanTransport {
 public:
  Link(drivers::MemoryBus& bus, int index, SimBusCounters& counters, std::mt19937_64& rng,
       drivers::CandumpWriter* log)
      : bus_(bus), index_(index), counters_(counters), rng_(rng), log_(log) {}
  double loss = 0.0;   // probability that a frame is lost, this millisecond
  bool burst = false;  // every frame is lost, this millisecond

  std::string_view name() const noexcept override { return bus_.name(); }
  hal::IoStatus receive(hal::CanFrame& frame) noexcept override { return bus_.receive(frame); }
  hal::IoStatus send(const hal::CanFrame& frame) noexcept override {
    if (bus_.bus_off()) {
      ++counters_.lost_bus_off;
      return hal::IoStatus::kDown;
    }
    if (burst) {
      ++counters_.lost_burst;
      return hal::IoStatus::kOk;  // sent; nobody received it
    }
    if (loss > 0.0 && static_cast<double>(rng_() >> 11) * 0x1.0p-53 < loss) {
      ++counters_.lost_random;
      return hal::IoStatus::kOk;
    }
    const hal::IoStatus s = bus_.send(frame);
    if (s == hal::IoStatus::kOk) Logged(frame);
    return s;
  }
  bool wait(std::int64_t timeout_ns) noexcept override { return bus_.wait(timeout_ns); }
  hal::CanBusStats stats() const noexcept override { return bus_.stats(); }
  bool restart() noexcept override { return bus_.restart(); }

  // An error frame of a storm (kErrorFrames) on the bus (and in the log); lost while off.
  void ErrorStorm(std::int64_t now_ns) noexcept {
    if (bus_.bus_off()) return;
    const hal::CanFrame f =
        drivers::ErrorFrame(drivers::kErrProtocol | drivers::kErrBusError, now_ns);
    if (bus_.send(f) != hal::IoStatus::kOk) return;
    ++counters_.error_frames;
    Logged(f);
  }
  // The bus goes off now: its error frame is on the bus (and in the log).
  void BusOff(std::int64_t now_ns) noexcept {
    if (!bus_.EnterBusOff(now_ns)) return;
    ++counters_.bus_off;
    Logged(drivers::ErrorFrame(drivers::kErrBusOff, now_ns));  // the frame the bus queued
  }

 private:
  void Logged(const hal::CanFrame& frame) noexcept {
    ++counters_.frames;
    if (log_) (void)log_->Log(index_, frame);  // a full queue counts the frame as left out
  }
  drivers::MemoryBus& bus_;
  int index_;
  SimBusCounters& counters_;
  std::mt19937_64& rng_;
  drivers::CandumpWriter* log_;
};

namespace {

// The scenario of the simulated robot: heft-sim's options, the operator's procedure (scenario.hpp:
// when the load arrives) and a robot without foot cells when the drivers list none.
sim::ScenarioOptions ScenarioOptionsOf(const SimOptions& options,
                                       const drivers::DriverConfig& drivers) {
  sim::ScenarioOptions so;
  so.adaptation = options.adaptation;
  so.duration_scale = options.duration_scale;
  so.seed = options.seed;
  so.robots_dir = options.robots_dir;
  so.urdf_path = options.urdf;
  so.roles = options.roles;
  so.load_after = options.load_after;
  so.foot_sensors = !drivers.ft_cells.empty();
  so.drive_damping = options.drive_damping;
  return so;
}

// The drivers' joint order must be the plant's: the emulated devices are addressed by it. One F/T
// cell per foot of the scenario.
void CheckDriverDevices(const sim::Scenario& scenario, const drivers::DriverConfig& drivers) {
  std::vector<std::string> driver_joints;
  for (const auto& j : drivers.joints) driver_joints.push_back(j.joint);
  if (driver_joints != scenario.joint_names)
    throw std::invalid_argument(
        "simulation: drivers.joints must list the scenario's joints in its order (" +
        std::to_string(scenario.joint_names.size()) + " joints, first '" +
        (scenario.joint_names.empty() ? std::string() : scenario.joint_names[0]) + "')");
  if (drivers.ft_cells.size() != scenario.wrench_links.size())
    throw std::invalid_argument(
        "simulation: the scenario has " + std::to_string(scenario.wrench_links.size()) +
        " foot cells, drivers.ft_cells lists " + std::to_string(drivers.ft_cells.size()));
}

}  // namespace

SimulatedRobot::SimulatedRobot(const SimOptions& options, const drivers::DriverConfig& drivers,
                               const dynamics::Model& urdf_model)
    : faults_(options.faults),
      rng_(options.seed),
      fault_rng_(options.seed ^ 0x9E3779B97F4A7C15ull),
      imu_rng_(options.seed ^ 0xD1B54A32D192ED03ull),
      noise_(options.noise) {
  scenario_ = sim::MakeScenario(options.scenario, ScenarioOptionsOf(options, drivers));
  plant_ = std::make_unique<sim::Plant>(scenario_.urdf_path, scenario_.wrench_links);
  plant_->SetDriveDamping(scenario_.drive_damping);  // before the deviations' viscous friction
  for (const auto& p : scenario_.payloads) payload_bodies_.push_back(plant_->body(p.link));
  CheckDriverDevices(scenario_, drivers);
  PlaceSensors(options, drivers, urdf_model);
  ApplyDeviations(options, drivers);
  scenario_.controller->SetFrictionModel(options.controller_friction);
  scenario_.controller->SetNominalModel(options.controller_parameters);
  scenario_.controller->SetHandOffReference(options.hand_off_reference);
  plant_->Reset(scenario_.initial_joints, scenario_.floating_base);
  OpenBuses(options, drivers);
  ArmDevices(drivers);
}

void SimulatedRobot::PlaceSensors(const SimOptions& options, const drivers::DriverConfig& drivers,
                                  const dynamics::Model& urdf_model) {
  for (std::size_t k = 0; k < drivers.ft_cells.size(); ++k) {
    const dynamics::Frame& f = urdf_model.frames[urdf_model.frame_index(drivers.ft_cells[k].frame)];
    const dynamics::Frame& foot =
        urdf_model.frames[urdf_model.frame_index(scenario_.wrench_links[k])];
    if (f.body != foot.body || !f.R.isApprox(Eigen::Matrix3d::Identity()))
      throw std::invalid_argument("simulation: F/T frame '" + drivers.ft_cells[k].frame +
                                  "' must sit on '" + scenario_.wrench_links[k] +
                                  "' with the same axes");
    ft_offsets_.push_back(f.p - foot.p);
  }
  // The base IMU: its frame's pose on the floating base's link, from the URDF (MuJoCo merges the
  // massless frame into that link). Without one a floating robot's base reaches nobody: the host
  // no longer hands the simulator's true base to the drivers.
  if (drivers.imu) {
    if (!scenario_.floating_base)
      throw std::invalid_argument("simulation: drivers.imu on the fixed-base scenario '" +
                                  options.scenario + "'");
    const dynamics::Frame& f = urdf_model.frames[urdf_model.frame_index(drivers.imu->frame)];
    if (f.body < 0 || urdf_model.bodies[f.body].joint.type != dynamics::JointType::kFree)
      throw std::invalid_argument("simulation: IMU frame '" + drivers.imu->frame +
                                  "' must be fixed to the floating base's link");
    imu_ = true;
    R_BI_ = f.R;
    p_BI_ = f.p;
  } else if (scenario_.floating_base && !options.base_from_input) {
    throw std::invalid_argument("simulation: the floating-base scenario '" + options.scenario +
                                "' needs drivers.imu or host.framework_input.base (the simulated "
                                "IMU or the simulated framework's input)");
  }
}

void SimulatedRobot::OpenBuses(const SimOptions& options, const drivers::DriverConfig& drivers) {
  if (!options.candump.empty())
    candump_ = std::make_unique<drivers::CandumpWriter>(
        options.candump, drivers.buses, options.candump_wait,
        options.candump_epoch_ns >= 0 ? options.candump_epoch_ns
                                      : std::chrono::duration_cast<std::chrono::seconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                                .count() *
                                            1'000'000'000);
  bus_counters_.resize(drivers.buses.size());
  for (std::size_t b = 0; b < drivers.buses.size(); ++b) {
    buses_.push_back(std::make_unique<drivers::MemoryBus>(drivers.buses[b]));
    bus_ptrs_.push_back(buses_.back().get());
    links_.push_back(std::make_unique<Link>(*buses_.back(), static_cast<int>(b), bus_counters_[b],
                                            fault_rng_, candump_.get()));
    link_ptrs_.push_back(links_.back().get());
  }
}

void SimulatedRobot::ArmDevices(const drivers::DriverConfig& drivers) {
  encoder_ = std::make_unique<drivers::SampleEncoder>(drivers);
  tau_.assign(plant_->num_joints(), 0.0);
  encoder_on_.assign(drivers.joints.size(), 1);
  torque_on_.assign(drivers.joints.size(), 1);
  stuck_torque_.assign(drivers.joints.size(), std::numeric_limits<double>::quiet_NaN());
  stuck_now_.assign(drivers.joints.size(), 0);
  ft_on_.assign(drivers.ft_cells.size(), 1);
  const FaultTargets targets{encoder_on_.size(), ft_on_.size(), buses_.size(), imu_};
  for (std::size_t i = 0; i < faults_.size(); ++i)
    if (const auto problem = CheckFault(faults_[i], targets))
      throw std::invalid_argument("simulation.faults[" + std::to_string(i) + "]." + problem->key +
                                  ": " + problem->what);
}

void SimulatedRobot::ApplyDeviations(const SimOptions& options,
                                     const drivers::DriverConfig& drivers) {
  std::vector<std::string> frames;
  for (const auto& c : drivers.ft_cells) frames.push_back(c.frame);
  deviations_ =
      DrawDeviations(options.deviations, plant_->model(), scenario_.joint_names, frames, imu_);
  const DeviationMagnitudes& mag = options.deviations.magnitudes;
  // The plant: every body (ideal leaves the URDF's bits untouched), every joint's friction.
  if (mag.inertial()) {
    for (const BodyDeviation& b : deviations_.bodies)
      if (!plant_->SetLinkParameters(b.mujoco_body, b.truth))
        throw std::invalid_argument("simulation.deviations: MuJoCo refuses the deviated body '" +
                                    b.name + "'");
  }
  if (mag.friction()) {
    for (std::size_t i = 0; i < deviations_.joints.size(); ++i)
      plant_->SetJointFriction(static_cast<int>(i), deviations_.joints[i].coulomb,
                               deviations_.joints[i].viscous);
  }
  // The payload links: their deviated body, and the scenario's payload on top of it. The truth is
  // affine in the payload's mass and the consistent π form a convex set: it is consistent at every
  // time if it is at the waveform's extremes, with and without the attached body.
  payload_deviated_ = mag.inertial();
  for (std::size_t i = 0; i < scenario_.payloads.size(); ++i) {
    const sim::Payload& p = scenario_.payloads[i];
    const BodyDeviation* b = deviations_.body(p.link);
    if (!b) throw std::invalid_argument("simulation: payload link '" + p.link + "' has no mass");
    payload_base_.push_back(b->truth);
    const double m0 = p.nominal[0];
    const double lo = p.mass.offset - std::abs(p.mass.amplitude),
                 hi = p.mass.offset + std::abs(p.mass.amplitude);
    for (const double mass : {lo, hi})
      for (const bool attached : {false, true}) {
        const Vector10 pi =
            b->truth + p.nominal * (mass / m0 - 1.0) + (attached ? p.attached : Vector10::Zero());
        if (!dynamics::IsPhysicallyConsistent(pi))
          throw std::invalid_argument("simulation.deviations: the deviated '" + p.link +
                                      "' with the scenario's payload (" + std::to_string(mass) +
                                      " kg) is not physically consistent; lower the magnitudes");
      }
  }
  // The sensors.
  torque_bias_.clear();
  torque_scale_.clear();
  for (const JointDeviation& j : deviations_.joints) {
    torque_bias_.push_back(noise_.torque_bias + j.torque_offset);
    torque_scale_.push_back(1.0 + j.torque_gain);
  }
  ft_bias_.clear();
  for (const FtDeviation& f : deviations_.ft_cells) {
    Eigen::Matrix<double, 6, 1> bias;
    bias << f.force_offset + Eigen::Vector3d::Constant(noise_.force_bias), f.moment_offset;
    ft_bias_.push_back(bias);
  }
  gyro_bias_ = noise_.gyro_bias + deviations_.gyro_bias;
  accel_bias_ = noise_.accel_bias + deviations_.accelerometer_bias;
}

SimulatedRobot::~SimulatedRobot() = default;

void SimulatedRobot::CloseCandump() {
  if (candump_) candump_->Close();
}

std::vector<hal::CanTransport*> SimulatedRobot::buses() {
  return bus_ptrs_;
}

double SimulatedRobot::Normal(std::mt19937_64& rng) noexcept {
  // Box-Muller on the seeded engine (std::normal_distribution differs between standard libraries).
  const double u1 = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
  const double u2 = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

Eigen::VectorXd SimulatedRobot::TruePayload() const {
  Eigen::VectorXd out;
  TruePayload(out);
  return out;
}

void SimulatedRobot::TruePayload(Eigen::VectorXd& out) const noexcept {
  out.resize(static_cast<Eigen::Index>(10 * scenario_.payloads.size()));
  for (std::size_t i = 0; i < scenario_.payloads.size(); ++i)
    out.segment<10>(static_cast<Eigen::Index>(10 * i)) = PayloadTruth(i, plant_->time());
}

Vector10 SimulatedRobot::PayloadTruth(std::size_t i, double t) const noexcept {
  const sim::Payload& p = scenario_.payloads[i];
  if (!payload_deviated_) return p.At(t);  // ideal: exactly what the scenario says
  return payload_base_[i] + (p.At(t) - p.nominal);
}

bool SimulatedRobot::fell() const {
  return scenario_.floating_base && truth_.base.position[2] < scenario_.fall_height;
}

void SimulatedRobot::Step(const hal::InertialEstimate* estimate) noexcept {
  const double t = plant_->time();
  for (std::size_t i = 0; i < scenario_.payloads.size(); ++i)
    plant_->SetLinkParameters(payload_bodies_[i], PayloadTruth(i, t));
  plant_->Sample(truth_);
  if (estimate) scenario_.controller->OnInertialEstimate(*estimate);
  scenario_.controller->Compute(t, truth_, tau_);
  plant_->Step(tau_);
  if (unstable_at_ < 0.0 && plant_->unstable()) unstable_at_ = t;
  plant_->Sample(truth_);
  if (scenario_.floating_base) lowest_pelvis_ = std::min(lowest_pelvis_, truth_.base.position[2]);
  Measure();
  now_ns_ += 1'000'000;
  drivers::EmitOptions emit;
  ApplyFaults(t, emit);
  emit.encoder_enabled = encoder_on_;
  emit.torque_enabled = torque_on_;
  emit.ft_enabled = ft_on_;
  encoder_->Emit(measured_, now_ns_ + clock_offset_ns_, link_ptrs_, emit);
  if (imu_) EmitImu(t);
  ++tick_;
}

void SimulatedRobot::Measure() noexcept {
  // What the sensors report of the state after the step.
  measured_ = truth_;
  for (std::size_t i = 0; i < measured_.num_joints; ++i) {
    measured_.joints[i].velocity += noise_.velocity * Normal();
    // The actuator's torque (friction included) through the sensor's gain and offset.
    measured_.joints[i].torque = torque_scale_[i] * measured_.joints[i].torque +
                                 (torque_bias_[i] + noise_.joint_torque * Normal());
  }
  for (std::size_t k = 0; k < measured_.num_wrenches; ++k) {
    auto& w = measured_.wrenches[k].wrench;
    // From the foot origin to the F/T frame (same axes): n_ft = n_o − p × f.
    const Eigen::Vector3d f(w[0], w[1], w[2]), n(w[3], w[4], w[5]);
    const Eigen::Vector3d n_ft = n - ft_offsets_[k].cross(f);
    for (int i = 0; i < 3; ++i) {
      w[i] = f[i] + noise_.force * Normal() + ft_bias_[k][i];
      w[3 + i] = n_ft[i] + noise_.moment * Normal() + ft_bias_[k][3 + i];
    }
  }
}

void SimulatedRobot::ApplyFaults(double t, drivers::EmitOptions& emit) noexcept {
  // Faults on request, while their window is open: silent devices, corrupted CRCs, frames lost at
  // random or in bursts, buses going off.
  std::fill(encoder_on_.begin(), encoder_on_.end(), 1);
  std::fill(torque_on_.begin(), torque_on_.end(), 1);
  std::fill(ft_on_.begin(), ft_on_.end(), 1);
  for (auto& link : links_) {
    link->loss = 0.0;
    link->burst = false;
  }
  std::fill(stuck_now_.begin(), stuck_now_.end(), 0);
  clock_offset_ns_ = 0;
  for (const SimFault& f : faults_) {
    if (f.Active(t)) ApplyFault(f, emit);
  }
  for (std::size_t j = 0; j < stuck_now_.size(); ++j)
    if (!stuck_now_[j]) stuck_torque_[j] = std::numeric_limits<double>::quiet_NaN();
}

void SimulatedRobot::ApplyFault(const SimFault& f, drivers::EmitOptions& emit) noexcept {
  switch (f.kind) {
    case SimFault::Kind::kEncoder:
      encoder_on_[f.device] = 0;
      break;
    case SimFault::Kind::kTorque:
      torque_on_[f.device] = 0;
      break;
    case SimFault::Kind::kForceTorque:
      ft_on_[f.device] = 0;
      break;
    case SimFault::Kind::kCrc:
      emit.corrupt_crc = true;
      break;
    case SimFault::Kind::kLoss:
      for (std::size_t b = 0; b < links_.size(); ++b)
        if (f.device < 0 || static_cast<std::size_t>(f.device) == b)  // independent losses
          links_[b]->loss = 1.0 - (1.0 - links_[b]->loss) * (1.0 - f.probability);
      break;
    case SimFault::Kind::kBurst:
      links_[f.device]->burst = true;
      break;
    case SimFault::Kind::kBusOff:
      links_[f.device]->BusOff(now_ns_);  // again after a restart inside the window
      break;
    case SimFault::Kind::kTorqueStuck: {
      double& stuck = stuck_torque_[f.device];
      if (std::isnan(stuck)) stuck = measured_.joints[f.device].torque;  // the window opens
      measured_.joints[f.device].torque = stuck;
      stuck_now_[f.device] = 1;
      break;
    }
    case SimFault::Kind::kFtSaturated:
      // Far past the cell's range on every axis: every gauge clamps at its rail.
      for (double& x : measured_.wrenches[f.device].wrench) x = x >= 0.0 ? 1e9 : -1e9;
      break;
    case SimFault::Kind::kErrorFrames:
      for (int e = 0; e < kErrorFramesPerMs; ++e) links_[f.device]->ErrorStorm(now_ns_);
      break;
    case SimFault::Kind::kClockStep:
      clock_offset_ns_ += std::llround(f.step * 1e9);
      break;
    case SimFault::Kind::kImu:
    case SimFault::Kind::kImuSaturated:
    case SimFault::Kind::kImuAttitude:
    case SimFault::Kind::kInputStale:
    case SimFault::Kind::kInputGarbage:
      break;  // EmitImu; the framework's input (SimulatedBackend)
  }
}

bool SimulatedRobot::FaultActive(SimFault::Kind kind, double t) const noexcept {
  for (const SimFault& f : faults_)
    if (f.kind == kind && f.Active(t)) return true;
  return false;
}

void SimulatedRobot::EmitImu(double t) noexcept {
  // The IMU's sample of this millisecond describes the same instant as the joints' (the state
  // after the step), its specific force the step that led there (Plant::Imu).
  imu_truth_ = plant_->Imu(R_BI_, p_BI_);
  drivers::ImuValues v;
  for (int k = 0; k < 3; ++k) {
    v.w_I[k] = imu_truth_.w_I[k] + gyro_bias_[k] + noise_.gyro * Normal(imu_rng_);
    v.f_I[k] = imu_truth_.f_I[k] + accel_bias_[k] + noise_.accel * Normal(imu_rng_);
  }
  Eigen::Vector3d dtheta;
  for (int k = 0; k < 3; ++k) dtheta[k] = noise_.attitude * Normal(imu_rng_);
  const double angle = dtheta.norm();
  v.q_WI = angle > 0.0
               ? imu_truth_.q_WI * Eigen::Quaterniond(Eigen::AngleAxisd(angle, dtheta / angle))
               : imu_truth_.q_WI;
  std::uint8_t status = drivers::ImuStatus::kValid;
  bool silent = false;
  for (const SimFault& f : faults_) {
    if (!f.Active(t)) continue;
    if (f.kind == SimFault::Kind::kImu) silent = true;
    if (f.kind == SimFault::Kind::kImuSaturated)
      status |= drivers::ImuStatus::kGyroSaturated | drivers::ImuStatus::kAccelSaturated;
    if (f.kind == SimFault::Kind::kImuAttitude) status |= drivers::ImuStatus::kAttitudeNotConverged;
  }
  if (silent)
    encoder_->SkipImu();
  else
    encoder_->EmitImu(v, now_ns_ + clock_offset_ns_, link_ptrs_, status);
}

}  // namespace heft::sim

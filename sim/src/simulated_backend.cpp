#include "heft/sim/simulated_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "heft/host/telemetry_table.hpp"  // the telemetry schema: π's column names
#include "heft/sim/framework_standin.hpp"
#include "heft/sim/nees.hpp"

namespace heft::sim {
namespace {

// ": joint n, joint n" for the joints whose commanded torque went beyond their effort limit (empty:
// none).
std::string JointsBeyondEffort(const Plant& plant) {
  std::string out;
  const std::vector<std::string> joints = plant.joint_names();
  for (std::size_t i = 0; i < joints.size(); ++i)
    if (plant.beyond_effort_steps()[i] > 0)
      out += fmt::format("{}{} {}", out.empty() ? ": " : ", ", joints[i],
                         plant.beyond_effort_steps()[i]);
  return out;
}

}  // namespace

SimulatedBackend::SimulatedBackend(SimulationConfig config, double duration,
                                   const drivers::DriverConfig& drivers,
                                   const dynamics::Model& urdf_model)
    : config_(std::move(config)), truth_queue_(std::make_unique<hal::SpscQueue<Truth, 8192>>()) {
  ResolveFaultNames(config_, drivers);
  config_.options.candump_wait =
      config_.lockstep;  // real time: a full log queue drops, never waits
  robot_ = std::make_unique<SimulatedRobot>(config_.options, drivers, urdf_model);
  true_pi_.resize(static_cast<Eigen::Index>(10 * robot_->scenario().payloads.size()));
  duration_ = duration > 0.0 ? duration : robot_->duration();
}

SimulatedBackend::~SimulatedBackend() = default;

void SimulatedBackend::AttachFrameworkInput(const std::string& name) {
  input_ =
      std::make_unique<host::FrameworkInputWriter>(name);  // its own mapping of /dev/shm/<name>
}

void SimulatedBackend::AttachFrameworkJoints(const std::string& name) {
  joints_ = std::make_unique<host::FrameworkJointsWriter>(name);
  joints_wrenches_ = joints_->segment()->header.num_wrenches > 0;
}

void SimulatedBackend::Step(std::int64_t k, host::StepContext& context) noexcept {
  // The millisecond after a control tick: the hand-off it published.
  const std::int64_t period = context.control_period_ms;
  const bool fresh = (k - 1) % period == 0 && context.hand_off.read_latest(estimate_);
  if (fresh) UpdateNees();
  // A hand-off of another nominal model than the controllers' reference is not theirs to apply.
  const bool foreign = fresh && config_.options.hand_off_model != 0 &&
                       estimate_.nominal_model != config_.options.hand_off_model;
  if (fresh) seen_model_ = estimate_.nominal_model;
  foreign_hand_offs_ += foreign;
  robot_->Step(fresh && !foreign ? &estimate_ : nullptr);

  // The simulated controller framework writes the floating base's state into its input segment
  // every millisecond (heftd takes it with host.framework_input.base) and tells the estimator
  // that the robot walks, once, at the first millisecond at or past walking_after, the way a
  // robot's framework does: a "walking" command written into the segment heftd's host reads. A
  // stale framework (kInputStale) writes neither: the command waits for the window's end.
  const double t = static_cast<double>(k - 1) * 1e-3;  // the robot's time during this step
  const bool stale = robot_->FaultActive(SimFault::Kind::kInputStale, t);
  if (input_ && !stale) WriteFrameworkInput(k, t);
  // The stand-in framework that owns the joints writes what its sensors read (a stale framework
  // writes nothing here either).
  if (joints_ && !stale) {
    FillFrameworkJoints(*robot_, k * 1'000'000 + robot_->clock_offset_ns(), ++joints_sequence_,
                        joints_wrenches_, joints_sample_);
    joints_->Write(joints_sample_);
  }
  if (!walking_sent_ && input_ && !stale &&
      static_cast<double>(k) * 1e-3 >= config_.walking_after) {
    input_->Command(plugin::Command::kRobotWalking);
    walking_sent_ = true;
  }

  if (k % period == 0) {  // the truth at each control tick, for its telemetry row
    Truth tr{};
    tr.t_ns = k * 1'000'000;
    robot_->TruePayload(true_pi_);  // sized once: no allocation here
    const Eigen::VectorXd& pi = true_pi_;
    for (int i = 0; i < std::min<int>(static_cast<int>(pi.size()), static_cast<int>(tr.pi.size()));
         ++i)
      tr.pi[i] = pi[i];
    tr.nees = nees_;
    tr.mh_nees = mh_nees_;
    const auto errors = robot_->task_errors();
    for (std::size_t e = 0; e < std::min<std::size_t>(errors.size(), 4); ++e)
      tr.errors[e] = errors[e];
    (void)truth_queue_->push(tr);  // a full queue drops the truth row (counted)
  }
}

void SimulatedBackend::WriteFrameworkInput(std::int64_t k, double t) noexcept {
  heft_input_sample sample{};
  if (robot_->FaultActive(SimFault::Kind::kInputGarbage, t)) {
    // A broken framework: random bytes where its base sample belongs.
    std::array<std::uint64_t, sizeof(sample) / sizeof(std::uint64_t)> words;
    for (std::uint64_t& w : words) w = garbage_rng_();
    std::memcpy(&sample, words.data(), sizeof(sample));
    input_->Write(sample);
    return;
  }
  const hal::RobotStateSample& truth = robot_->truth();
  if (!truth.has_base) return;  // a fixed base: the framework sends commands only
  sample.sequence = ++input_sequence_;
  sample.stamp_ns = k * 1'000'000 + robot_->clock_offset_ns();
  sample.flags = HEFT_INPUT_HAS_LINEAR_VELOCITY;
  std::copy_n(truth.base.orientation.begin(), 4, sample.orientation);
  std::copy_n(truth.base.angular_velocity.begin(), 3, sample.angular_velocity);
  std::copy_n(truth.base.linear_velocity.begin(), 3, sample.linear_velocity);
  input_->Write(sample);
}

void SimulatedBackend::UpdateNees() noexcept {
  robot_->TruePayload(true_pi_);
  const int links = std::min<int>(static_cast<int>(true_pi_.size() / 10), estimate_.num_links);
  for (int k = 0; k < links; ++k) {
    const hal::LinkEstimate& l = estimate_.links[static_cast<std::size_t>(k)];
    const Eigen::Map<const Eigen::Matrix<double, 10, 10, Eigen::RowMajor>> cov(l.covariance.data());
    const Eigen::Map<const Eigen::Matrix<double, 10, 1>> handed(l.parameters.data());
    const Eigen::Matrix<double, 10, 1> e = handed - true_pi_.segment<10>(10 * k);
    const HandedNees n = NeesOf(cov, e);
    nees_[static_cast<std::size_t>(k)] = n.all;
    mh_nees_[static_cast<std::size_t>(k)] = n.mass_first_moment;
  }
}

std::vector<std::string> SimulatedBackend::LinkColumns() const {
  std::vector<std::string> columns;
  for (const char* q : host::kInertialColumns) columns.push_back(std::string("true_") + q);
  columns.emplace_back("nees");     // eᵀ Σ⁻¹ e over π, χ²(10) when honest
  columns.emplace_back("mh_nees");  // the same over m and h alone, χ²(4); kLinkColumns per link
  return columns;
}

std::vector<std::string> SimulatedBackend::ExtraColumns() const {
  const auto names = robot_->scenario().controller->task_error_names();
  return {names.begin(), names.end()};
}

void SimulatedBackend::TelemetryValues(std::int64_t t_ns, std::vector<double>& link_values,
                                       std::vector<double>& extra_values) {
  while ((!have_truth_ || truth_.t_ns < t_ns) && truth_queue_->pop(truth_)) have_truth_ = true;
  const std::size_t payloads = robot_->scenario().payloads.size();
  constexpr std::size_t kLinkColumns = 12;  // true_m … true_izz, nees, mh_nees (LinkColumns)
  for (std::size_t k = 0; kLinkColumns * k < link_values.size(); ++k) {
    for (std::size_t i = 0; i < 10; ++i)
      link_values[kLinkColumns * k + i] =
          k < payloads && 10 * k + i < truth_.pi.size() ? truth_.pi[10 * k + i] : 0.0;
    link_values[kLinkColumns * k + 10] =
        k < payloads && k < truth_.nees.size() ? truth_.nees[k] : 0.0;
    link_values[kLinkColumns * k + 11] =
        k < payloads && k < truth_.mh_nees.size() ? truth_.mh_nees[k] : 0.0;
  }
  for (std::size_t e = 0; e < extra_values.size(); ++e)
    extra_values[e] = e < 4 ? truth_.errors[e] : 0.0;
}

void SimulatedBackend::LogSummary(spdlog::logger& log, const std::vector<std::string>& bus_names) {
  if (foreign_hand_offs_ > 0)
    log.error(
        "simulated controllers: {} hand-offs named nominal model {:08x}, theirs is {:08x} "
        "(robot.urdf and robot.parameters): not applied",
        foreign_hand_offs_, seen_model_, config_.options.hand_off_model);
  else if (config_.options.hand_off_model != 0 && seen_model_ != 0)
    log.info("simulated controllers: every hand-off named their nominal model {:08x}", seen_model_);
  if (robot_->unstable_at() >= 0.0) {
    log.error(
        "simulated robot: MuJoCo found the simulation unstable at t = {:.3f} s and reset it; the "
        "run is void from there (the controller could not hold this robot)",
        robot_->unstable_at());
    if (void_run_) *void_run_ = true;
  }
  if (robot_->scenario().floating_base) {
    // Did the controllers hold the robot: its lowest pelvis, a fall, the gait's progress.
    const auto* balance =
        dynamic_cast<const sim::BalanceController*>(robot_->scenario().controller.get());
    log.info(
        "simulated robot: pelvis lowest {:.3f} m (fall below {:.3f} m), fell {}; "
        "touchdowns {}; pelvis x {:.3f} m",
        robot_->lowest_pelvis(), robot_->scenario().fall_height,
        robot_->lowest_pelvis() < robot_->scenario().fall_height ? "yes" : "no",
        balance ? balance->touchdowns() : 0, robot_->truth().base.position[0]);
  }
  log.info("simulated robot: commanded torques beyond the drives' effort limits on {} steps{}",
           robot_->plant().steps_beyond_effort(), JointsBeyondEffort(robot_->plant()));
  for (std::size_t b = 0; b < robot_->bus_counters().size(); ++b) {
    const SimBusCounters& sc = robot_->bus_counters()[b];
    log.info(
        "simulated bus {}: {} frames put on the bus; lost {} at random, {} in bursts, {} while "
        "off; {} bus-off events; {} error frames of storms",
        bus_names[b], sc.frames, sc.lost_random, sc.lost_burst, sc.lost_bus_off, sc.bus_off,
        sc.error_frames);
  }
  if (robot_->candump()) {
    robot_->CloseCandump();
    log.info("candump log: {} frames in {} ({} left out: queue full)", robot_->candump()->written(),
             robot_->candump()->path(), robot_->candump()->dropped());
  }
}

void SimulatedBackend::Summarize(host::Json& summary, const std::vector<std::string>& bus_names) {
  auto count = [](std::uint64_t n) { return host::Json::Of(static_cast<double>(n)); };
  summary["simulation"]["unstable_at"] = host::Json::Of(robot_->unstable_at());
  // Steps on which a commanded torque was beyond the joint's effort limit (the URDF's).
  const sim::Plant& plant = robot_->plant();
  summary["simulation"]["steps_beyond_effort"] = count(plant.steps_beyond_effort());
  const std::vector<std::string> joints = plant.joint_names();
  for (std::size_t i = 0; i < joints.size(); ++i)
    if (plant.beyond_effort_steps()[i] > 0)
      summary["simulation"]["beyond_effort_steps"][joints[i]] =
          count(plant.beyond_effort_steps()[i]);
  for (std::size_t b = 0; b < robot_->bus_counters().size(); ++b) {
    const SimBusCounters& sc = robot_->bus_counters()[b];
    host::Json& bus = summary["buses"][bus_names[b]];
    bus["sim_frames"] = count(sc.frames);
    bus["lost_random"] = count(sc.lost_random);
    bus["lost_burst"] = count(sc.lost_burst);
    bus["lost_bus_off"] = count(sc.lost_bus_off);
    bus["sim_bus_off"] = count(sc.bus_off);
  }
  if (robot_->candump()) {
    host::Json& c = summary["candump"];
    c["path"] = host::Json::Of(robot_->candump()->path());
    c["written"] = count(robot_->candump()->written());
    c["left_out"] = count(robot_->candump()->dropped());
  }
}

}  // namespace heft::sim

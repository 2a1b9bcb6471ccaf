// The estimator plugin: state machine wait-for-walking → calibrating-bias → estimating (holding
// while a required channel is stale or invalid), one InertialEstimator step per control tick, the
// hand-off to the whole-body controller, telemetry for the host.
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "heft/config/schema.hpp"
#include "heft/config/yaml.hpp"
#include "heft/hal/model_identity.hpp"
#include "heft/hal/spsc_queue.hpp"
#include "heft/plugin/controller_interface.hpp"
#include "heft/plugin/driver_check.hpp"
#include "heft/plugin/plugin_config.hpp"

namespace heft::plugin {
namespace {

// CPU time of the calling thread: the tick's compute time, without what preemption adds (the host
// reports wake-up lateness and wall-clock time separately).
std::int64_t ThreadCpuNs() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// A framework that loads the plugin without a host reads the file here: every top-level key must be
// one of heft's, and the plugin's sections (robot, drivers, estimator) are read and checked.
PluginConfig ReadOwnSections(const std::string& path) {
  const config::Document document = config::Document::Load(path);
  document.root().AllowOnly(config::schema::kRoot);
  return ReadPluginConfig(document.root());
}

std::string Hex(std::uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "%08x", v);
  return text;
}

class EstimatorPlugin final : public ControllerInterface {
 public:
  const char* name() const noexcept override { return "heft_estimator"; }

  void init(const std::string& config_path, const HardwareInterface& hardware) override {
    if (!hardware.state || !hardware.hand_off)
      throw PluginError("init: the host gave no state buffer or hand-off");
    hw_ = hardware;
    try {
      // The host's reading of the file (heftd, heft-sim), or the plugin's sections read here.
      cfg_ = hardware.config ? *hardware.config : ReadOwnSections(config_path);
      dynamics::ModelOptions opt;
      opt.floating_base = cfg_.floating_base;
      opt.repair_inertia = cfg_.repair_inertia;
      model_ =
          std::make_unique<dynamics::Model>(dynamics::LoadModelFromUrdfFile(cfg_.urdf_path, opt));
      std::vector<std::string> from_parameters;
      if (!cfg_.parameters_path.empty()) {
        from_parameters = ApplyNominalParameters(cfg_.parameters_path, *model_);
        cfg_.estimator.friction = ReadNominalFriction(cfg_.parameters_path, *model_);
      }
      // An estimated link thinner than the estimator's margin is refused here, naming the file.
      CheckEstimatedNominals(cfg_, from_parameters, *model_);
      cfg_.estimator.joint_torque_scales =
          JointTorqueScales(cfg_.drivers, cfg_.estimator.joint_torque_scale, *model_);
      estimator_ = std::make_unique<estimator::InertialEstimator>(*model_, cfg_.estimator);
      mapping_ = std::make_unique<estimator::SampleMapping>(*model_, cfg_.mapping);
    } catch (const std::exception& e) {
      throw PluginError(e.what());
    }
    warnings_ = model_->warnings;
    std::uint32_t identity = 0;
    try {
      identity = hal::ModelIdentity(cfg_.urdf_path, cfg_.parameters_path);
    } catch (const std::exception& e) {
      throw PluginError(e.what());
    }
    // The hand-off template: names and nominal parameters.
    out_ = hal::InertialEstimate{};
    out_.num_links = static_cast<std::uint16_t>(cfg_.estimator.bodies.size());
    out_.nominal_model = identity;
    for (std::size_t k = 0; k < cfg_.estimator.bodies.size(); ++k) {
      auto& name = out_.links[k].name;
      std::strncpy(name.data(), cfg_.estimator.bodies[k].c_str(), name.size() - 1);
    }
    FillParameters();
    state_ = hal::EstimatorState::kInactive;
  }

  void start_from(const hal::InertialEstimate& e, double inflation) override {
    if (state_ != hal::EstimatorState::kInactive || ticks_ != 0)
      throw PluginError("start_from: only before the plugin is activated");
    if (e.num_links != out_.num_links)
      throw PluginError("start_from: the estimate has " + std::to_string(e.num_links) +
                        " link(s), this configuration estimates " + std::to_string(out_.num_links));
    // A change of another nominal model is not a change of this one (0: a file from before the
    // identity was written, taken as it is).
    if (e.nominal_model != 0 && e.nominal_model != out_.nominal_model)
      throw PluginError(
          "start_from: the estimate was made against another nominal model "
          "(identity " +
          Hex(e.nominal_model) + ", this configuration's " + Hex(out_.nominal_model) +
          "): the URDF or the parameters file changed since");
    const int n = 10 * static_cast<int>(out_.num_links);
    Eigen::VectorXd pi(n);
    Eigen::MatrixXd cov(10, n);
    for (std::size_t k = 0; k < out_.num_links; ++k) {
      const std::string got(e.links[k].name.data(),
                            strnlen(e.links[k].name.data(), hal::kLinkNameLength));
      if (got != cfg_.estimator.bodies[k])
        throw PluginError("start_from: link " + std::to_string(k) + " is '" + got +
                          "', this configuration's is '" + cfg_.estimator.bodies[k] + "'");
      const int base = 10 * static_cast<int>(k);
      for (int i = 0; i < 10; ++i) pi[base + i] = e.links[k].parameters[i];
      for (int r = 0; r < 10; ++r)
        for (int c = 0; c < 10; ++c) cov(r, base + c) = e.links[k].covariance[10 * r + c];
    }
    if (!estimator_->StartFrom(pi, cov, inflation))
      throw PluginError(
          "start_from: the estimate is not usable (not physically consistent, outside the "
          "estimator's divergence bounds, or its covariance is not positive definite)");
    FillParameters();
    hw_.hand_off->publish(out_);
  }

  void configure() override { hw_.hand_off->publish(out_); }  // nominal (or start_from's) first

  void activate() override {
    state_ = cfg_.wait_for_walking ? hal::EstimatorState::kWaitForWalking
                                   : hal::EstimatorState::kCalibratingBias;
    if (state_ == hal::EstimatorState::kCalibratingBias) estimator_->StartCalibration();
  }

  void deactivate() override { state_ = hal::EstimatorState::kInactive; }

  void command(Command c) noexcept override {
    pending_.fetch_or(1u << static_cast<unsigned>(c), std::memory_order_acq_rel);
  }

  bool pop_telemetry(TelemetryRecord& r) noexcept override { return telemetry_.pop(r); }
  std::size_t num_links() const noexcept override { return cfg_.estimator.bodies.size(); }
  const char* link_name(std::size_t i) const noexcept override {
    return cfg_.estimator.bodies[i].c_str();
  }

  UpdateResult update(std::int64_t time_ns, std::int64_t) noexcept override {
    const std::int64_t start = ThreadCpuNs();
    HandleCommands();
    TelemetryRecord rec;
    rec.time_ns = time_ns;
    rec.tick = ++ticks_;
    estimator::TickResult result;
    std::uint32_t hold = 0;
    if (state_ != hal::EstimatorState::kInactive &&
        state_ != hal::EstimatorState::kWaitForWalking) {
      hold = ReadState();
      if (hold != 0) {
        if (state_ != hal::EstimatorState::kHolding) resume_ = state_;
        state_ = hal::EstimatorState::kHolding;
      } else {
        if (state_ == hal::EstimatorState::kHolding) state_ = resume_;
        result = estimator_->Step(mapping_->input());
        if (result.status == estimator::TickStatus::kUpdated ||
            result.status == estimator::TickStatus::kReleased)
          ++updates_;
        if (state_ == hal::EstimatorState::kCalibratingBias && !estimator_->calibrating())
          state_ = hal::EstimatorState::kEstimating;
        calibrated_ = calibrated_ || state_ == hal::EstimatorState::kEstimating;
      }
    } else {
      // Disabled or waiting: a reset estimate still reaches the controller at the limited rate.
      result.rate_limited = estimator_->HandOn().rate_limited;
    }
    FillParameters();
    const hal::EstimatorStatus& st = FillStatus(result, hold);
    out_.sequence = ticks_;
    out_.stamp_ns = stamp_ns_;
    hw_.hand_off->publish(out_);

    rec.stamp_ns = stamp_ns_;
    rec.status = st;
    rec.tick_status = static_cast<std::uint8_t>(result.status);
    rec.estimate_consistent = result.target_consistent;
    rec.rate_limited = result.rate_limited;
    rec.gamma = result.gamma;
    rec.status.last_nis = result.nis;
    rec.calibration_progress =
        estimator_->calibrator().progress(1e-9 * static_cast<double>(stamp_ns_));
    if (!estimator_->calibrating()) {
      rec.calibration_timed_out = estimator_->calibrator().timed_out();
      rec.calibration_samples = static_cast<std::uint32_t>(estimator_->calibrator().samples());
      rec.calibration_held_joints =
          static_cast<std::uint16_t>(estimator_->calibration_held_joints());
      rec.calibration_friction_joints = static_cast<std::uint16_t>(estimator_->friction_joints());
    }
    rec.num_links = out_.num_links;
    for (std::size_t k = 0; k < out_.num_links; ++k) {
      rec.calibration_load[k] = estimator_->calibration_load()[10 * static_cast<int>(k)];
      rec.handed[k] = out_.links[k].parameters;
      for (std::size_t i = 0; i < 10; ++i)
        rec.handed_sd[k][i] = std::sqrt(std::max(0.0, out_.links[k].covariance[11 * i]));
      for (int i = 0; i < 10; ++i)
        rec.estimate[k][i] = estimator_->estimate()[10 * static_cast<int>(k) + i];
    }
    rec.compute_ns = ThreadCpuNs() - start;
    (void)telemetry_.push(rec);  // a full queue drops the row (counted); the tick goes on
    return UpdateResult::kOk;
  }

 private:
  // The hand-off's status after this tick (`hold`: ReadState's reasons).
  const hal::EstimatorStatus& FillStatus(const estimator::TickResult& result,
                                         std::uint32_t hold) noexcept {
    hal::EstimatorStatus& st = out_.status;
    st.state = state_;
    st.model = result.model;
    // A gate that refuses every measurement holds the estimate too: reported, not a state of its
    // own (the estimator goes on judging each tick and estimates again on the first one it uses).
    if (state_ == hal::EstimatorState::kEstimating && result.gate_holding) {
      st.state = hal::EstimatorState::kHolding;
      hold |= estimator::kHoldGated;
    }
    st.hold_reason = hold;
    st.ticks = ticks_;
    st.updates = updates_;
    st.gated = estimator_->gate().rejected();
    st.gate_releases = estimator_->gate().releases();
    st.numeric_rejects = estimator_->numeric_rejects();
    st.rate_limited = estimator_->rate_limited_ticks();
    if (result.status == estimator::TickStatus::kUpdated ||
        result.status == estimator::TickStatus::kReleased)
      st.last_nis = result.nis;
    return st;
  }

  void HandleCommands() noexcept {
    const std::uint32_t p = pending_.exchange(0, std::memory_order_acq_rel);
    auto has = [&](Command c) { return (p & (1u << static_cast<unsigned>(c))) != 0; };
    if (has(Command::kDisable)) {
      enabled_ = false;
      state_ = hal::EstimatorState::kInactive;
      estimator_->ResetFilter();  // nominal is handed on while disabled, reached at the rate limit
    }
    if (has(Command::kEnable) && !enabled_) {
      enabled_ = true;
      state_ = hal::EstimatorState::kWaitForWalking;
    }
    if (!enabled_) return;
    if (has(Command::kRobotStopped)) state_ = hal::EstimatorState::kWaitForWalking;
    // The bias is calibrated once (start-up) and again only when asked (reset): a walking command
    // after a stop resumes estimating with the estimate and the bias kept. A reset re-zeroes from
    // nominal; the handed parameters follow at the rate limit.
    const bool walking =
        has(Command::kRobotWalking) && state_ == hal::EstimatorState::kWaitForWalking;
    if (has(Command::kReset) || (walking && !calibrated_)) {
      if (has(Command::kReset)) estimator_->ResetFilter();
      estimator_->StartCalibration();
      state_ = estimator_->calibrating() ? hal::EstimatorState::kCalibratingBias
                                         : hal::EstimatorState::kEstimating;
      resume_ = state_;
    } else if (walking) {
      state_ = resume_ = hal::EstimatorState::kEstimating;
    }
  }

  // The newest sample and those h and 2h before it, assembled into the estimator's input.
  std::uint32_t ReadState() noexcept {
    const std::uint64_t newest = hw_.state->latest_index();
    const auto h = static_cast<std::uint64_t>(mapping_->lag_samples());
    if (newest <= 2 * h) return estimator::kHoldHistory;
    if (!hw_.state->read_index(newest, s0_) || !hw_.state->read_index(newest - h, s1_) ||
        !hw_.state->read_index(newest - 2 * h, s2_))
      return estimator::kHoldHistory;
    stamp_ns_ = s1_.stamp_ns;
    return mapping_->Assemble(s0_, s1_, s2_);
  }

  void FillParameters() noexcept {
    const Eigen::VectorXd& handed = estimator_->handed();
    const Eigen::MatrixXd& cov = estimator_->parameter_covariance();
    for (std::size_t k = 0; k < out_.num_links; ++k) {
      const int base = 10 * static_cast<int>(k);
      for (int i = 0; i < 10; ++i) out_.links[k].parameters[i] = handed[base + i];
      for (int r = 0; r < 10; ++r)
        for (int c = 0; c < 10; ++c) out_.links[k].covariance[10 * r + c] = cov(r, base + c);
    }
  }

  HardwareInterface hw_;
  PluginConfig cfg_;
  std::unique_ptr<dynamics::Model> model_;
  std::unique_ptr<estimator::InertialEstimator> estimator_;
  std::unique_ptr<estimator::SampleMapping> mapping_;
  std::vector<std::string> warnings_;
  hal::RobotStateSample s0_, s1_, s2_;
  hal::InertialEstimate out_;
  hal::EstimatorState state_ = hal::EstimatorState::kInactive,
                      resume_ = hal::EstimatorState::kCalibratingBias;
  bool enabled_ = true;
  bool calibrated_ = false;  // the start-up calibration is done (or off): walking does not redo it
  std::atomic<std::uint32_t> pending_{0};
  std::uint64_t ticks_ = 0;
  std::uint64_t updates_ = 0;  // accepted filter updates (EstimatorStatus::updates)
  std::int64_t stamp_ns_ = 0;
  hal::SpscQueue<TelemetryRecord, 4096> telemetry_;
};

}  // namespace
}  // namespace heft::plugin

extern "C" {
std::uint32_t heft_plugin_api_version() {
  return heft::plugin::kApiVersion;
}

heft::plugin::ControllerInterface* heft_plugin_create(std::uint32_t host_api_version, char* error,
                                                      std::size_t error_size) {
  if (host_api_version != heft::plugin::kApiVersion) {
    if (error && error_size)
      std::snprintf(error, error_size,
                    "heft_estimator plugin implements interface version %u, the host speaks %u",
                    heft::plugin::kApiVersion, host_api_version);
    return nullptr;
  }
  return new heft::plugin::EstimatorPlugin();
}

void heft_plugin_destroy(heft::plugin::ControllerInterface* controller) {
  delete controller;
}
}

// heft-sim's backend for the host (heft/host/backend.hpp): the simulated robot (sim_backend.hpp)
// stepped once per millisecond on the schedule's stepper thread, its in-memory buses, the
// scenario's duration, lockstep or real time, the "walking" command at simulation.walking_after,
// and the truth — each payload link's true π and the controller's task errors — as extra telemetry
// columns, plus the simulator's summary lines (what the faults did per bus, the candump log).
#pragma once

#include <Eigen/Core>
#include <array>
#include <memory>
#include <random>

#include "heft/hal/spsc_queue.hpp"
#include "heft/host/backend.hpp"
#include "heft/host/framework_input.hpp"
#include "heft/host/framework_joints.hpp"
#include "heft/sim/sim_backend.hpp"
#include "heft/sim/sim_config.hpp"

namespace heft::sim {

class SimulatedBackend final : public host::Backend {
 public:
  // `duration`: simulated seconds, 0: the scenario's. Throws on a configuration the simulator
  // cannot run (fault names, joints not the scenario's).
  SimulatedBackend(SimulationConfig config, double duration, const drivers::DriverConfig& drivers,
                   const dynamics::Model& urdf_model);
  ~SimulatedBackend() override;

  std::vector<hal::CanTransport*> buses() override { return robot_->buses(); }
  bool steps() const noexcept override { return true; }
  bool lockstep() const noexcept override { return config_.lockstep; }
  double duration() const noexcept override { return duration_; }
  void Step(std::int64_t k, host::StepContext& context) noexcept override;
  void AttachFrameworkInput(const std::string& name) override;
  void AttachFrameworkJoints(const std::string& name) override;
  double time() const noexcept override { return robot_->time(); }

  std::vector<std::string> LinkColumns() const override;
  std::vector<std::string> ExtraColumns() const override;
  void TelemetryValues(std::int64_t t_ns, std::vector<double>& link_values,
                       std::vector<double>& extra_values) override;
  void LogSummary(spdlog::logger& log, const std::vector<std::string>& bus_names) override;
  // Per bus: sim_frames (put on the bus), lost_random, lost_burst, lost_bus_off, sim_bus_off;
  // "simulation": unstable_at [s] (-1: stable); "candump" (simulation.candump): path, written,
  // left_out.
  void Summarize(host::Json& summary, const std::vector<std::string>& bus_names) override;

  const SimulatedRobot& robot() const { return *robot_; }
  // Set-up: `*flag` becomes true in LogSummary when the simulation went unstable (the run is void).
  void ReportVoidRunTo(bool* flag) { void_run_ = flag; }

 private:
  // The truth at a control tick, from the stepper thread to the telemetry thread.
  struct Truth {
    std::int64_t t_ns;
    std::array<double, 10 * hal::kMaxEstimatedLinks> pi;
    std::array<double, 4> errors;
    // Normalised estimation error squared of each handed π against the truth, with the handed
    // covariance: eᵀ Σ⁻¹ e, χ²(10) when the covariance is honest (NaN when Σ is not definite);
    // and over the mass and first moment alone, χ²(4) (nees.hpp).
    std::array<double, hal::kMaxEstimatedLinks> nees;
    std::array<double, hal::kMaxEstimatedLinks> mh_nees;
  };
  // The NEES of the latest hand-off against the truth now (stepper thread, no allocation).
  void UpdateNees() noexcept;
  // The simulated framework's base sample of millisecond k (stepper thread; the input faults).
  void WriteFrameworkInput(std::int64_t k, double t) noexcept;
  std::uint64_t input_sequence_ = 0;                       // stepper thread
  std::mt19937_64 garbage_rng_{0x5EED};                    // kInputGarbage's bytes
  std::array<double, hal::kMaxEstimatedLinks> nees_{};     // stepper thread
  std::array<double, hal::kMaxEstimatedLinks> mh_nees_{};  // stepper thread
  SimulationConfig config_;
  std::unique_ptr<SimulatedRobot> robot_;
  double duration_ = 0.0;
  hal::InertialEstimate estimate_;       // stepper thread: the latest hand-off
  bool walking_sent_ = false;            // stepper thread
  std::uint64_t foreign_hand_offs_ = 0;  // stepper thread: hand-offs of another nominal model
  std::uint32_t seen_model_ = 0;         // stepper thread: the last hand-off's nominal_model
  std::unique_ptr<host::FrameworkInputWriter> input_;  // the simulated framework's side
  // The stand-in framework that owns the joints (framework_standin.hpp): its writer, whether the
  // segment takes the wrenches, its counter and its sample (stepper thread).
  std::unique_ptr<host::FrameworkJointsWriter> joints_;
  bool joints_wrenches_ = false;
  std::uint64_t joints_sequence_ = 0;
  heft_joints_sample joints_sample_{};
  Eigen::VectorXd true_pi_;  // stepper thread: the payloads' true π (sized at set-up)
  std::unique_ptr<hal::SpscQueue<Truth, 8192>> truth_queue_;
  Truth truth_{};  // telemetry thread: the latest truth popped
  bool have_truth_ = false;
  bool* void_run_ = nullptr;
};

}  // namespace heft::sim

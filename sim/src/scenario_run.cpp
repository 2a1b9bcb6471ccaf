// Running a scenario standalone on its plant (RunScenario, scenario.hpp): the payloads, the truth
// handed on, the task errors and foot wrenches scored, the run's CSV.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <span>
#include <stdexcept>

#include "heft/sim/plant.hpp"
#include "heft/sim/scenario.hpp"

namespace heft::sim {

namespace {

// The run's CSV (options.csv_path; none when empty) and its header: t, the task errors, each
// payload's true and modelled mass, each foot cell's vertical force.
void OpenRunCsv(std::ofstream& csv, const Scenario& scenario, std::span<const std::string> names,
                const RunOptions& options) {
  if (options.csv_path.empty()) return;
  csv.open(options.csv_path);
  if (!csv) throw std::runtime_error("cannot write '" + options.csv_path + "'");
  csv << "t";
  for (const auto& n : names) csv << ',' << n;
  for (const auto& p : scenario.payloads)
    csv << ',' << p.link << "_mass_true," << p.link << "_mass_model";
  for (const auto& w : scenario.wrench_links) csv << ',' << w << "_fz";
  csv << '\n';
}

// The hand-off of the truth (HandOff::kTruth): estimating, one link per payload, named.
void NameTruthEstimate(const Scenario& scenario, hal::InertialEstimate& estimate) {
  estimate.status.state = hal::EstimatorState::kEstimating;
  estimate.num_links = static_cast<std::uint16_t>(scenario.payloads.size());
  for (std::size_t i = 0; i < scenario.payloads.size(); ++i) {
    const auto& link = scenario.payloads[i].link;
    std::copy_n(link.c_str(), std::min(link.size(), hal::kLinkNameLength - 1),
                estimate.links[i].name.begin());
  }
}

// The truth handed to the controller: every payload's π at t.
void HandTruth(const Scenario& scenario, double t, const hal::RobotStateSample& state,
               hal::InertialEstimate& estimate, Controller& controller) {
  estimate.sequence += 1;
  estimate.stamp_ns = state.stamp_ns;
  for (std::size_t i = 0; i < scenario.payloads.size(); ++i) {
    const Vector10 pi = scenario.payloads[i].At(t);
    std::copy(pi.data(), pi.data() + 10, estimate.links[i].parameters.begin());
  }
  controller.OnInertialEstimate(estimate);
}

// One tick's task errors into their sums of squares and largest magnitudes.
void ScoreErrors(std::span<const double> errors, std::vector<double>& sum_sq, RunResult& result) {
  for (std::size_t e = 0; e < errors.size(); ++e) {
    sum_sq[e] += errors[e] * errors[e];
    result.max_abs[e] = std::max(result.max_abs[e], std::abs(errors[e]));
  }
}

// One tick's foot wrenches: peak vertical force, its peak rise and the centre of pressure on the
// sole (after the robot has settled). `last_fz`: each foot's force of the previous tick.
void ScoreFeet(const Scenario& scenario, const hal::RobotStateSample& state, double t,
               double timestep, std::vector<double>& last_fz, RunResult& result) {
  for (std::size_t w = 0; w < scenario.wrench_links.size(); ++w) {
    const double fz = state.wrenches[w].wrench[2];
    result.peak_foot_force = std::max(result.peak_foot_force, fz);
    if (t > 0.5) {  // after the robot has settled on the floor
      result.peak_foot_force_rate =
          std::max(result.peak_foot_force_rate, (fz - last_fz[w]) / timestep);
    }
    last_fz[w] = fz;
    if (t > 0.5 && fz > 100.0) {
      // Wrench at the foot origin in the foot frame → centre of pressure on the sole plane.
      const auto& wr = state.wrenches[w].wrench;
      const Sole& sole = scenario.sole;
      const double zs = sole.centre.z();
      const double px = (zs * wr[0] - wr[4]) / fz, py = (wr[3] + zs * wr[1]) / fz;
      result.max_cop_fraction =
          std::max({result.max_cop_fraction, std::abs(px - sole.centre.x()) / sole.half_length,
                    std::abs(py - sole.centre.y()) / sole.half_width});
    }
  }
}

// One row of the run's CSV (the header's columns).
void WriteRunCsvRow(std::ofstream& csv, double t, std::span<const double> errors,
                    const Scenario& scenario, const Controller& controller,
                    const hal::RobotStateSample& state) {
  csv << t;
  for (const double e : errors) csv << ',' << e;
  for (std::size_t i = 0; i < scenario.payloads.size(); ++i) {
    csv << ',' << scenario.payloads[i].At(t)[0] << ',' << controller.model_parameters(i)[0];
  }
  for (std::size_t w = 0; w < scenario.wrench_links.size(); ++w)
    csv << ',' << state.wrenches[w].wrench[2];
  csv << '\n';
}

// After the run: where it ended, the errors' RMSE (over `ticks`) and the balance's touchdowns.
void SummariseRun(const Scenario& scenario, const Plant& plant, const Controller& controller,
                  const std::vector<double>& sum_sq, long ticks, std::size_t scored,
                  RunResult& result) {
  result.simulated = plant.time();
  if (scenario.floating_base) {
    for (int k = 0; k < 3; ++k) result.final_base_position[k] = plant.data()->qpos[k];
  }
  const std::size_t errors = sum_sq.size();
  result.rmse.resize(errors);
  for (std::size_t e = 0; e < errors; ++e) {
    result.rmse[e] = std::sqrt(sum_sq[e] / static_cast<double>(std::max<long>(ticks, 1)));
  }
  result.scored_rmse = scored < errors ? result.rmse[scored] : 0.0;
  if (const auto* balance = dynamic_cast<const BalanceController*>(&controller)) {
    result.touchdowns = balance->touchdowns();
  }
}

}  // namespace

RunResult RunScenario(Scenario& scenario, const RunOptions& options) {
  Plant plant(scenario.urdf_path, scenario.wrench_links);
  plant.SetDriveDamping(scenario.drive_damping);
  if (plant.joint_names() != scenario.joint_names) {
    throw std::invalid_argument("scenario '" + scenario.name +
                                "': the plant's joint order differs from the scenario's");
  }
  plant.Reset(scenario.initial_joints, scenario.floating_base);
  std::vector<int> payload_bodies;
  for (const auto& p : scenario.payloads) payload_bodies.push_back(plant.body(p.link));

  Controller& controller = *scenario.controller;
  const auto names = controller.task_error_names();
  RunResult result;
  result.error_names.assign(names.begin(), names.end());
  std::vector<double> sum_sq(names.size(), 0.0);
  result.max_abs.assign(names.size(), 0.0);
  const auto scored_it = std::find(names.begin(), names.end(), scenario.scored_error);
  const std::size_t scored = scored_it - names.begin();

  std::ofstream csv;
  OpenRunCsv(csv, scenario, names, options);

  hal::RobotStateSample state;
  hal::InertialEstimate estimate;
  NameTruthEstimate(scenario, estimate);
  std::vector<double> tau(plant.num_joints(), 0.0);
  std::vector<double> last_fz(scenario.wrench_links.size(), 0.0);
  const auto ticks = static_cast<long>(std::lround(scenario.duration / plant.timestep()));
  const auto wall_start = std::chrono::steady_clock::now();
  for (long k = 0; k < ticks; ++k) {
    const double t = plant.time();
    for (std::size_t i = 0; i < scenario.payloads.size(); ++i) {
      plant.SetLinkParameters(payload_bodies[i], scenario.payloads[i].At(t));
    }
    plant.Sample(state);
    if (options.hand_off == HandOff::kTruth && k % 3 == 0)
      HandTruth(scenario, t, state, estimate, controller);
    if (!controller.Compute(t, state, tau)) result.controller_failed = true;
    const auto errors = controller.task_errors();
    ScoreErrors(errors, sum_sq, result);
    ScoreFeet(scenario, state, t, plant.timestep(), last_fz, result);
    if (scenario.floating_base && state.base.position[2] < scenario.fall_height) result.fell = true;
    if (csv.is_open() && k % std::max(1, options.csv_decimation) == 0)
      WriteRunCsvRow(csv, t, errors, scenario, controller, state);
    plant.Step(tau);
    if (plant.unstable()) {
      result.fell = true;
      result.controller_failed = true;
      break;
    }
  }
  result.wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  SummariseRun(scenario, plant, controller, sum_sq, ticks, scored, result);
  result.steps_beyond_effort = plant.steps_beyond_effort();
  return result;
}

}  // namespace heft::sim

// The parts of the estimator's tick harness (tick_input_parts.hpp): the models, the
// configurations, and the decoding of special values, sizes and spans from the input.
#include "tick_input_parts.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

namespace heft::fuzz {

using estimator::EstimatorConfig;
using estimator::FilterKind;
using estimator::MeasurementChoice;

bool Trace() {
  static const bool trace = std::getenv("HEFT_FUZZ_TRACE") != nullptr;
  return trace;
}

[[noreturn]] void Fail(int call, const char* what) {
  std::fprintf(stderr, "fuzz_tick_input: call %d: %s\n", call, what);
  std::abort();
}

const Models& LoadModels() {
  static const Models models{
      dynamics::LoadModelFromUrdfFile(HEFT_FUZZ_ROBOTS_DIR "/heft_humanoid_fixed.urdf",
                                      {false, false}),
      dynamics::LoadModelFromUrdfFile(HEFT_FUZZ_ROBOTS_DIR "/heft_humanoid.urdf", {true, false})};
  return models;
}

Setup MakeSetup(int which, const Models& models) {
  EstimatorConfig c;
  c.control_period = kPeriod;
  c.calibration = {true, 0.03, 0.5, 0.01, 0.12};  // completes (or times out) within 64 calls
  c.gating.release_after = 0.01;                  // releases within a few gated ticks
  c.gating.open_for = 0.01;
  c.load_shape = true;  // the handed covariance with a carried load's shape (the service's)
  switch (which) {
    case 0: {  // fixed base: the forearm, the joint rows only, friction and its stiction band
      c.bodies = {"left_forearm"};
      c.friction = {{"left_elbow", 2.0, 0.5}};
      c.stiction_band = true;
      c.joint_torque_scale = 0.01;
      c.acceleration_sigma = Eigen::VectorXd::Constant(models.fixed.nv, 0.17);
      return {&models.fixed, c};
    }
    case 1: {  // floating, the feet's cells: the rigid torso of the simulated configurations
      c.bodies = {"torso"};
      c.contact_frames = {"left_foot_ft", "right_foot_ft"};
      c.ft_noise = {{"left_foot_ft", 2.0, 0.2}, {"right_foot_ft", 2.0, 0.2}};
      c.acceleration_sigma = Eigen::VectorXd::Constant(models.floating.nv, 0.17);
      c.acceleration_sigma.head<3>().setConstant(0.02);
      c.acceleration_sigma.segment<3>(3).setConstant(0.7);
      c.joint_torque_scale = 0.01;
      c.measurement_lowpass = 5.0;
      c.prior_time_constant = 2.0;
      c.parameter_frame = EstimatorConfig::ParameterFrame::kCom;
      c.stiction_band = false;
      return {&models.floating, c};
    }
    case 2: {  // floating, four links, the baseline KF, the full-wrench measurement forced
      c.filter = FilterKind::kKalman;
      c.bodies = {"torso", "left_forearm", "right_forearm", "left_thigh"};
      c.contact_frames = {"left_foot_ft", "right_foot_ft"};
      c.measurement = MeasurementChoice::kFullWrench;
      c.gating.gamma = 5.0;  // tight: gated and released ticks
      return {&models.floating, c};
    }
    default: {  // floating without cells: the feet assumed in contact, the null-space rows
      c.bodies = {"left_forearm"};
      c.contact_frames = {"left_foot", "right_foot"};
      c.measurement = MeasurementChoice::kTorqueNullSpace;
      c.calibration.enabled = false;
      EstimatorConfig::LinkPrior prior;
      prior.link = "left_forearm";
      prior.parameter_frame = EstimatorConfig::ParameterFrame::kCom;
      prior.prior_time_constant = 1.0;
      c.link_priors = {prior};
      return {&models.floating, c};
    }
  }
}

double Special(Bytes& in) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  static constexpr std::array<double, 10> kSpecial = {std::numeric_limits<double>::quiet_NaN(),
                                                      kInf,
                                                      -kInf,
                                                      1e300,
                                                      -1e300,
                                                      std::numeric_limits<double>::max(),
                                                      std::numeric_limits<double>::denorm_min(),
                                                      -0.0,
                                                      1e30,
                                                      -1e15};
  const auto pick = in.Take(1) % (kSpecial.size() + 1);
  return pick < kSpecial.size() ? kSpecial[pick] : in.Double();
}

// A vector's size from a shape code: the model's size, off by one, empty, large, the other
// vector's size, nv − 6.
int SizeFor(std::uint64_t code, int right, int other, int nv) {
  switch (code % 7) {
    case 0:
      return right;
    case 1:
      return std::max(right - 1, 0);
    case 2:
      return right + 1;
    case 3:
      return 0;
    case 4:
      return kLarge;
    case 5:
      return other;
    default:
      return std::max(nv - 6, 0);
  }
}

std::size_t SpanFor(std::uint64_t code, std::size_t contacts) {
  switch (code % 6) {
    case 0:
    case 1:
      return contacts;
    case 2:
      return 0;
    case 3:
      return 1;
    case 4:
      return std::min(contacts + 1, kMaxSpan);
    default:
      return kMaxSpan;
  }
}

}  // namespace heft::fuzz

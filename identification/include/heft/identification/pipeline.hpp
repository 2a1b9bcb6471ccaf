// The batch identification pipeline heft-identify runs, as one function: the URDF and recordings
// → prepared datasets → the chosen methods (least squares in three sensing variants, the SDP) →
// a report with each result, its identifiability, its torque-prediction RMSE on the training and
// validation recordings, its consistency, and the result to write. Nothing is printed or written
// here: the hooks carry progress, FormatReport the tables (pipeline_text.cpp).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "heft/identification/identify.hpp"
#include "heft/identification/posterior.hpp"
#include "heft/identification/sdp.hpp"

namespace heft::identification {

// A torque sensor's gain held at 0 beside joints whose gain is fitted (relative plausible size).
inline constexpr double kHeldGain = 1e-4;

struct PipelineOptions {
  std::string urdf_path;
  std::vector<std::string> recordings, validations, bodies;
  std::vector<std::string> methods;  // empty: chosen by the recording (DefaultMethods)
  std::string sdp_rows;              // empty: chosen with the methods
  std::string output_method;         // empty: the SDP when run, else the first method
  bool floating = false, friction = false, offsets = false, ellipsoids = true;
  bool gains = false;  // joint torque sensors' gains (ProblemTerms)
  // Joints whose torque comes from a motor current (τ = i · K_t · N), with the conversion's
  // relative uncertainty u: their gain is an unknown, its plausible size and prior σ u; the other
  // joints' gains are unknowns (0.05) with `gains`, else held at 0 (kHeldGain).
  std::map<std::string, double> torque_from_current;
  bool ft_offsets = false;  // the F/T cells' offsets (ProblemTerms)
  PriorUncertainty prior;   // the posterior's prior (posterior.hpp)
  double ellipsoid_scale = 2.0;
  DatasetOptions dataset;
  NoiseModel noise;
  LeastSquaresOptions least_squares;
  SdpOptions sdp;
};

// A method's options are wrong for this robot or recording (heft-identify: exit code 2).
class PipelineUsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PipelineHooks {
  std::function<void(const std::string&)> log;  // one line of progress
  // Stacking: (what, done, total); done == total once at the end.
  std::function<void(const std::string&, std::size_t, std::size_t)> progress;
  // A long step without progress (the SDP): called with true before, false after.
  std::function<void(const std::string&, bool)> busy;
};

struct MethodResult {
  std::string name;  // wls, contact, nullspace, sdp
  Eigen::VectorXd x;
  Identifiability report;  // the SDP's: that of its rows' least squares
  long samples = 0;
};

// A row of the identifiability table (least-squares methods that finished).
struct IdentifiabilityRow {
  std::string method;
  int rank = 0, identified = 0;
  double condition = 0.0;
  long samples = 0, sensor_test_failures = 0;
  int min_base_rank = 6;
};

// A row of the torque-prediction table: the URDF's parameters first, then each result.
struct Evaluation {
  std::string name;
  Prediction fit;  // on the identification data: its RMSE, and split by the joints' speed
  std::vector<double> validation_rmse;  // per validation recording
  double validation_bias_rms = 0.0;     // constant residual on the first validation recording
  int consistent_bodies = 0;
};

struct IdentificationReport {
  IdentificationReport(std::string urdf_xml, std::unique_ptr<const dynamics::Model> robot,
                       Problem unknowns)
      : xml(std::move(urdf_xml)), model(std::move(robot)), problem(std::move(unknowns)) {}
  std::string xml;  // the URDF's text (the output replaces its inertials)
  std::unique_ptr<const dynamics::Model> model;  // on the heap: problem points to it
  Problem problem;
  Dataset train;
  std::vector<std::pair<std::string, Dataset>> validations;  // name (file stem), data
  MethodPlan plan;
  bool methods_by_default = false;
  std::vector<std::string> methods;
  std::string sdp_rows;
  std::vector<IdentifiabilityRow> identifiability;
  std::vector<MethodResult> results;
  std::optional<SdpResult> sdp;
  std::vector<std::string> failures;  // per failed method: what happened and what to try
  std::vector<Evaluation> evaluations;
  std::size_t output = 0;  // index into results: the result to write
  std::string wanted;  // the method asked for (or the default); != results[output].name: it failed
  bool consistent = false;  // every chosen body of results[output]
  // The posterior of results[output] on its rows (posterior.hpp): s², κ and the covariance.
  double residual_variance = 1.0, residual_correlation = 1.0;
  std::optional<Posterior> posterior;
};

// Throws PipelineUsageError (options this robot or recording cannot support), RecordingError and
// std::runtime_error (unreadable input, no method finished).
IdentificationReport RunIdentification(const PipelineOptions& options,
                                       const PipelineHooks& hooks = {});

// The torque-prediction row of parameters x on the report's training and validation data.
Evaluation Evaluate(const IdentificationReport& report, const std::string& name,
                    const Eigen::VectorXd& x);

// Bodies of the selection whose parameters in x are physically consistent.
int ConsistentBodies(const Problem& problem, const Eigen::VectorXd& x);

// The report as heft-identify prints it: identifiability, per body, torque-prediction RMSE, the
// SDP's projection onto consistency, the validation bias.
std::string FormatReport(const IdentificationReport& report);

}  // namespace heft::identification

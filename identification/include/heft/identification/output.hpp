// Output of an identification: the input URDF with its inertials replaced, the parameter YAML, and
// bounding ellipsoids for the SDP from the URDF's collision geometry or the prior's inertia.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "heft/identification/posterior.hpp"
#include "heft/identification/sdp.hpp"

namespace heft::identification {

// The URDF text with every chosen body's <inertial> replaced by the identified one (written on the
// body's own link; links merged into it on fixed joints lose theirs, their share is included).
// Throws std::runtime_error when a link element cannot be found.
std::string ReplaceInertials(const std::string& urdf_xml, const dynamics::Model& identified,
                             const Problem& problem);

// Per chosen body: an ellipsoid enclosing the collision geometry (boxes, cylinders, spheres) of the
// body's links, when it has some; otherwise, when inertia_scale > 0, the uniform solid ellipsoid
// with the prior's mass distribution, its semi-axes scaled by inertia_scale (at least min_axis).
std::vector<std::optional<Ellipsoid>> BoundingEllipsoids(const Problem& problem,
                                                         double inertia_scale,
                                                         double min_axis = 0.03);

struct FitStatistics {
  std::string method;
  int samples = 0;
  int rank = 0;
  int unknowns = 0;
  double condition = 0.0;
  double fit_rmse = 0.0;        // N·m, torque prediction on the identification data
  double validation_rmse = -1;  // N·m, on validation data (< 0: none)
  bool consistent = false;      // every body's pseudo-inertia positive definite
  // The written result's fit split by the joints' speed (Prediction's sliding and held rows; no
  // `by_speed` entry when held_rows is 0) and the speed that splits them, rad/s.
  double sliding_speed = 0.0;
  double sliding_rmse = 0.0, held_rmse = 0.0;
  long sliding_rows = 0, held_rows = 0;
  // Every method's fit on the identification data, the URDF's first: what heft-identify's
  // torque-prediction table says, for a program to read (heft-report) without parsing the log.
  struct Method {
    std::string name;
    double fit_rmse = 0.0;  // N·m
    int consistent_bodies = 0;
  };
  std::vector<Method> methods;
  // The joints held or creeping on a fifth of the samples or more, with that share (model joint
  // order): what the motion leaves still (Prediction::joint_held_share).
  std::vector<std::pair<std::string, double>> held_joints;
  int bodies = 0;       // the identified bodies (each method's consistent_bodies is out of it)
  double seconds = -1;  // the identification's wall time up to writing (< 0: not stated)
};

// YAML for the estimator's nominal model: per link mass, com, inertia at the CoM, π, its
// identifiability share and σ; friction per joint; the fit statistics.
// Writes `text` to `path` (replacing it) and checks every step: open, write and close. Throws
// std::runtime_error "<path>: cannot write: <the system's reason>" on any failure.
void WriteTextFile(const std::string& path, const std::string& text);

// With a posterior, each link's `sigma` is √diag of its `covariance` (the 10 × 10 block of π, row
// major, body frame at the body origin); without one, sigma is the unit-weight least-squares σ over
// the identified subspace (Identifiability::sigma) and no covariance is written. Identified
// torque-sensor gains are written as `torque_sensors: {joint: {gain, gain_sigma}}`
// (τ_measured = (1 + gain) τ); offsets, which change at each power-up, as comments only.
std::string ParametersYaml(const Problem& problem, const Eigen::VectorXd& x,
                           const Identifiability& report, const FitStatistics& stats,
                           const Posterior* posterior = nullptr);

}  // namespace heft::identification

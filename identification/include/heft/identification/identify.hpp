// Batch identification of inertial parameters (and optionally joint friction) from prepared
// samples: the stacked regressor of the chosen bodies in three sensing variants, accumulated as
// whitened normal equations, least squares with the unidentifiable directions kept at the prior,
// and the identifiability report.
//
// Unknowns x = [π of the chosen bodies (10 each, selection order); friction (Coulomb f_c and
// viscous f_v per joint, in joint order) when enabled; one torque-sensor offset o per joint, in
// joint order, when enabled; one torque-sensor gain g per joint, in joint order, when enabled;
// six offsets δ per F/T cell (force, moment, in the cell's axes), when enabled]. The measured joint
// torque τ_m and wrenches λ_m are modelled as
//   τ_m = g·τ_m + ID(q, v, a, π) − Σ J_cᵀ (λ_m − δ) + f_c·s(v) + f_v·v + o
// with s(v) = tanh(v / 0.01) a smoothed sign, friction fitted only where the joint slides
// (Problem::sliding_speed). A sensor that reads (1 + γ)(τ + friction) + ω has g = γ / (1 + γ)
// and o = ω / (1 + γ) exactly, so the rows stay linear in every unknown (GainOfColumn). The gains
// are fixed in scale by the floating base's rows (no joint torque sensor there): on the
// null-space rows, or a fixed base, only their differences are. Offsets and gains are nuisance
// unknowns: estimated so that a sensor's error is not read as gravity or inertia of the bodies it
// can be traded against, and reported.
#pragma once

#include <cmath>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "heft/dynamics/dynamics.hpp"
#include "heft/dynamics/regressor.hpp"
#include "heft/identification/dataset.hpp"

namespace heft::identification {

enum class Method {
  kFullWls,      // every row: Y π = Sᵀτ + Σ J_cᵀ λ (joint torques and F/T cells)
  kContactOnly,  // the six floating-base rows: F/T cells only, no joint torque sensing
  kNullSpace,    // rows projected onto the null space of the contact Jacobians: joint torques only
};
const char* MethodName(Method m) noexcept;

struct NoiseModel {           // measurement σ, for the weights
  double joint_torque = 0.3;  // N·m
  double force = 2.0;         // N
  double moment = 0.2;        // N·m
  double floor = 0.05;        // σ added to every row (model error, acceleration noise)
};

double FrictionSign(double v) noexcept;

struct Problem {
  const dynamics::Model* model = nullptr;
  dynamics::RegressorSelection selection;
  bool friction = false;
  bool offsets = false;
  // A joint's friction columns take only the samples where it slides, |v| ≥ this (rad/s; 3 × the
  // smoothed sign's width, where s(v) is within 0.5 % of ±1). Below it a joint is held by static
  // friction, anywhere within ±F_s, or creeps: fitted there, that torque against a velocity of
  // millirad/s read as a viscous coefficient of tens of N·m·s/rad on joints that barely move.
  static constexpr double kSlidingSpeed = 0.03;
  double sliding_speed = kSlidingSpeed;
  bool Slides(double v) const { return std::abs(v) >= sliding_speed; }
  std::vector<int> joint_v;  // v index of each joint, in joint order (friction, offsets)
  std::vector<std::string>
      names;  // per unknown, e.g. "torso.m", "left_knee.fc", "left_knee.offset"
  int size() const { return static_cast<int>(names.size()); }
  int inertial_size() const { return 10 * selection.size(); }
  int joints() const { return static_cast<int>(joint_v.size()); }
  int friction_size() const { return friction ? 2 * joints() : 0; }
  int offset_begin() const { return inertial_size() + friction_size(); }
  Eigen::VectorXd prior;  // x of the model (friction, offsets and gains 0)
  bool gains = false;
  // The F/T cells (model frame indices, in the dataset's order) whose offsets are unknowns; they
  // must be the dataset's frames (Accumulate checks).
  std::vector<int> ft_frames;
  // Per joint, the gain's plausible size (relative; its prior σ in the posterior); empty: 0.05
  // for every joint (the torque sensors'). A joint whose torque comes from a motor current gets
  // its conversion's uncertainty here (PipelineOptions::torque_from_current).
  Eigen::VectorXd gain_size;
  int gain_begin() const { return offset_begin() + (offsets ? joints() : 0); }
  int ft_begin() const { return gain_begin() + (gains ? joints() : 0); }
};

// The nuisance terms modelled beside the inertial parameters.
struct ProblemTerms {
  bool friction = false;
  bool offsets = false;        // joint torque sensors' offsets
  bool gains = false;          // joint torque sensors' gains
  std::vector<int> ft_frames;  // F/T cells whose offsets are modelled (Dataset::frames)
};
Problem MakeProblem(const dynamics::Model& model, const std::vector<std::string>& bodies,
                    const ProblemTerms& terms);
Problem MakeProblem(const dynamics::Model& model, const std::vector<std::string>& bodies,
                    bool friction, bool offsets = false);

// A sensor's gain error γ (τ_m = (1 + γ) τ) from its unknown g = γ / (1 + γ).
inline double GainOfColumn(double g) {
  return g / (1.0 - g);
}

// Whitened normal equations: A = Σ Ỹᵀ Ỹ, b = Σ Ỹᵀ ỹ, c = Σ ỹᵀ ỹ over `rows` rows.
struct NormalEquations {
  Eigen::MatrixXd A;
  Eigen::VectorXd b;
  double c = 0.0;
  long rows = 0;
  long samples = 0;
  long samples_skipped = 0;  // no rows: near a contact change (null space) or no free direction
  // Mistry et al.'s minimal-sensor test, per sample: V_x spans the null space of the generalized
  // force directions of the sensors NOT used (A_x: joint torques for kContactOnly, the contact
  // Jacobians of the feet in contact for kNullSpace); the base must stay observable through the
  // projection, rank(S_b V_x) = 6. Counts the samples that fail and the smallest rank seen.
  long sensor_test_failures = 0;
  int min_base_rank = 6;
};

// Called now and then while stacking with the samples done and their total (from the calling
// thread; not at every sample).
using ProgressFn = std::function<void(std::size_t done, std::size_t total)>;

NormalEquations Accumulate(const Problem& problem, const Dataset& data, Method method,
                           const NoiseModel& noise, const ProgressFn& progress = {});

// The methods a recording supports, by name: "wls", "contact", "nullspace", "sdp".
// Contact-only and null-space need a floating base and F/T cells (on a fixed base there is no base
// wrench to measure, and the null space of no contacts is every row: null-space LS = WLS).
struct MethodPlan {
  std::vector<std::string> methods;
  std::string sdp_rows;  // "nullspace" when available (Khorshidi et al.), else "wls"
  std::string reason;    // one line: why these, for the operator
};
MethodPlan DefaultMethods(const dynamics::Model& model, const Dataset& data);
// Empty when `method` can run on this model and data; otherwise why not.
std::string MethodUnavailable(const std::string& method, const dynamics::Model& model,
                              const Dataset& data);

struct LeastSquaresOptions {
  double rank_tolerance = 1e-6;  // relative singular value below which a direction is dropped
};

struct Identifiability {
  int unknowns = 0;
  int rank = 0;
  double condition = 0.0;           // σ_max / σ_min over the retained directions (column-scaled)
  Eigen::VectorXd singular_values;  // column-scaled, descending
  // Per unknown: share of it that lies in the identified subspace (1 = identifiable alone,
  // 0 = not at all, between = only in combination with others), and its standard deviation.
  Eigen::VectorXd identifiable_share;
  Eigen::VectorXd sigma;
  // σ relative to the plausible size of each unknown (PriorScale): below 0.1 an unknown counts as
  // identified by the data; otherwise it stays essentially what the prior says.
  Eigen::VectorXd relative_sigma;
  int identified = 0;  // unknowns with relative_sigma < 0.1
  // The identified combinations, strongest first: each is a unit vector over the column-scaled
  // unknowns (scale: Identifiability::scale).
  Eigen::MatrixXd combinations;
  Eigen::VectorXd scale;
};

struct LeastSquaresResult {
  Eigen::VectorXd x;
  Identifiability report;
  double weighted_rms = 0.0;  // of the whitened residual (≈ 1 when the noise model is right)
};

// Plausible size of each unknown, from the prior: mass 0.2 m + 0.1 kg, first moment 0.2 |h| +
// m·2 cm, inertia 0.3·tr(I)/3 + 1e-4 kg·m², friction and torque offsets 1 N·m and 1 N·m·s/rad,
// gains 0.05, F/T offsets 10 N and 1 N·m.
Eigen::VectorXd PriorScale(const Problem& problem);

// Minimises ‖Ỹx − ỹ‖² in the retained directions; x keeps the prior in the others.
LeastSquaresResult SolveLeastSquares(const NormalEquations& ne, const Problem& problem,
                                     const LeastSquaresOptions& options = {});

// Torque-prediction error on a dataset: joint torques predicted by inverse dynamics with the
// parameters x (and friction) and the measured contact wrenches, against the measured torques.
struct Prediction {
  double rmse = 0.0;               // N·m over all joints and samples
  std::vector<double> joint_rmse;  // per joint (model joint order)
  // Mean of measured − predicted per joint: the constant part a start-up bias calibration would
  // have to absorb, and its RMS over the joints.
  std::vector<double> joint_bias;
  double bias_rms = 0.0;
  // The same error split by the joint's speed on each row: where it slides (|v| ≥ the problem's
  // sliding speed) and where it is held or creeps. A held joint's static friction lies anywhere
  // within its band, so no model of the state predicts it: on a robot with dry friction the held
  // rows keep a residual a better fit does not remove. 0 where a class has no rows.
  double sliding_rmse = 0.0;
  double held_rmse = 0.0;
  long sliding_rows = 0, held_rows = 0;
  // Per joint (model joint order): the share of its samples where it is held or creeps, and its
  // error on those samples (0 where it never is): which joints the motion leaves still, and how
  // much of the fit's error their static friction takes.
  std::vector<double> joint_held_share;
  std::vector<double> joint_held_rmse;
};
Prediction PredictTorques(const Problem& problem, const Dataset& data, const Eigen::VectorXd& x);

// The joints held or creeping on at least `min_share` of the samples, with that share, in model
// joint order (Prediction::joint_held_share): what the motion leaves still. heft-identify's text
// and identified.yaml's `fit.held_joints` both list them from here.
constexpr double kHeldJointShare = 0.2;
std::vector<std::pair<std::string, double>> HeldJoints(const Problem& problem, const Prediction& p,
                                                       double min_share = kHeldJointShare);

// Applies x to a copy of the model (friction is not part of the model).
dynamics::Model WithParameters(const Problem& problem, const Eigen::VectorXd& x);

// One sample's predicted joint torques, as PredictTorques computes them: inverse dynamics of
// `model` (= WithParameters(problem, x)) minus the measured contact wrenches at `frames`, plus
// friction from x when the problem has it. `contact` is scratch.
void PredictSample(const Problem& problem, const dynamics::Model& model, dynamics::Workspace& ws,
                   std::span<const int> frames, const Sample& s, const Eigen::VectorXd& x,
                   Eigen::VectorXd& tau, Eigen::VectorXd& contact);

}  // namespace heft::identification

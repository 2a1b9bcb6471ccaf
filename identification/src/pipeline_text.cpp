// FormatReport: the identification report as heft-identify prints it.
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>

#include "heft/identification/pipeline.hpp"

namespace heft::identification {

namespace {

// printf into a string.
[[gnu::format(printf, 2, 3)]] void Append(std::string& out, const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  if (n > 0) out.append(buf, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buf - 1));
}

std::string SensorVerdict(const dynamics::Model& model, const IdentifiabilityRow& row) {
  if (!model.floating_base) return "n/a (fixed base)";
  if (row.sensor_test_failures == 0) return "rank 6: ok";
  return "FAILS " + std::to_string(row.sensor_test_failures) + "/" + std::to_string(row.samples) +
         " (rank " + std::to_string(row.min_base_rank) + ")";
}

// The identifiability table: one row per least-squares method that finished.
void AppendIdentifiability(std::string& s, const IdentificationReport& r) {
  const dynamics::Model& model = *r.model;
  const Problem& problem = r.problem;
  Append(s, "\n== Identifiability (stacked regressor, column-scaled) ==\n");
  Append(s, "%-10s %9s %6s %10s %11s %14s\n", "method", "unknowns", "rank", "condition",
         "identified", "sensor test");
  for (const IdentifiabilityRow& row : r.identifiability)
    Append(s, "%-10s %9d %6d %10.3g %11d %14s\n", row.method.c_str(), problem.size(), row.rank,
           row.condition, row.identified, SensorVerdict(model, row).c_str());
}

// Per-body identifiability of the first result (the fullest sensing run), and what the motion
// leaves unexcited.
void AppendPerBody(std::string& s, const IdentificationReport& r) {
  const dynamics::Model& model = *r.model;
  const Problem& problem = r.problem;
  const MethodResult& ref = r.results.front();
  Append(s, "\nPer body (%s): unknowns identified alone (sigma < 10 %% of plausible size) of 10\n",
         ref.name.c_str());
  std::string weak;
  for (int b = 0; b < problem.selection.size(); ++b) {
    int count = 0;
    for (int k = 0; k < 10; ++k) count += ref.report.relative_sigma[10 * b + k] < 0.1;
    const std::string& name = model.bodies[problem.selection.bodies()[b]].name;
    // Which components of the first moment lie (mostly) in the identified subspace; a component
    // regrouped into the parent (along the body's own joint axis) does not.
    char h[4] = "...";
    for (int k = 0; k < 3; ++k)
      if (ref.report.identifiable_share.size() > 10 * b + 1 + k &&
          ref.report.identifiable_share[10 * b + 1 + k] >= 0.5)
        h[k] = "xyz"[k];
    Append(s, "  %-26s %2d   mass %-14s  first moment %s\n", name.c_str(), count,
           ref.report.relative_sigma[10 * b] < 0.1 ? "identified" : "NOT identified", h);
    if (count == 0) weak += (weak.empty() ? "" : ", ") + name;
  }
  s += "  (first moment: its components in the identified subspace, share >= 0.5; '.' = kept near "
       "the URDF's.\n   Where the mass is not identified, the CoM h/m carries the URDF mass's "
       "relative error;\n   along a '.' component it is the URDF's CoM. docs/imperfect-robot.md, "
       "\"Why the torso's CoM is not identified to 1 cm\".)\n";
  if (!weak.empty())
    s += "WARNING: the motion does not excite any parameter of: " + weak +
         " — they keep the URDF's values (only combinations with others may be identified)\n";
  if (ref.report.rank < problem.size())
    Append(s,
           "note: %d of %d directions are not identifiable from these sensors and motion "
           "(kept at the URDF's values)\n",
           problem.size() - ref.report.rank, problem.size());
}

// The joints held or creeping on a fifth of the samples or more (HeldJoints), most held first: the
// motion leaves them still, and their static friction is the fit's held error.
void AppendHeldJoints(std::string& s, const Problem& problem, const Prediction& f) {
  std::vector<std::pair<std::string, double>> held = HeldJoints(problem, f);
  if (held.empty()) return;
  const std::vector<std::string> names = problem.model->joint_names();
  std::stable_sort(held.begin(), held.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  Append(s, "Held or creeping on a fifth of the samples or more (the motion leaves them still):\n");
  Append(s, "  %-28s %8s %12s %12s\n", "joint", "held", "held RMSE", "RMSE");
  for (const auto& [joint, share] : held) {
    const auto j =
        static_cast<std::size_t>(std::find(names.begin(), names.end(), joint) - names.begin());
    Append(s, "  %-28s %7.0f%% %12.4f %12.4f\n", joint.c_str(), 100.0 * share, f.joint_held_rmse[j],
           f.joint_rmse[j]);
  }
}

// The torque-prediction table: the URDF's parameters, then each result.
void AppendPrediction(std::string& s, const IdentificationReport& r) {
  const Problem& problem = r.problem;
  Append(s, "\n== Torque-prediction RMSE [N·m] (joint torques, measured contact wrenches) ==\n");
  Append(s, "%-10s %12s", "method", "fit");
  for (const auto& [name, d] : r.validations) Append(s, " %14s", name.c_str());
  Append(s, " %12s\n", "consistent");
  for (const Evaluation& e : r.evaluations) {
    Append(s, "%-10s %12.4f", e.name.c_str(), e.fit.rmse);
    for (const double v : e.validation_rmse) Append(s, " %14.4f", v);
    Append(s, " %9d/%d\n", e.consistent_bodies, problem.selection.size());
  }
  // The written result's fit by the joints' speed (the evaluations: the URDF, then each result).
  const std::size_t written = r.output + 1;
  if (written < r.evaluations.size() && r.evaluations[written].fit.held_rows > 0) {
    const Evaluation& e = r.evaluations[written];
    const Prediction& f = e.fit;
    const double rows = static_cast<double>(f.sliding_rows + f.held_rows);
    Append(s,
           "\nFit by the joints' speed (%s): sliding %.4f N·m over %ld rows, held or creeping "
           "%.4f N·m over %ld rows (%.0f %%; |v| < %g rad/s: a static friction anywhere within "
           "its band, which no model of the state predicts)\n",
           e.name.c_str(), f.sliding_rmse, f.sliding_rows, f.held_rmse, f.held_rows,
           100.0 * static_cast<double>(f.held_rows) / rows, problem.sliding_speed);
    AppendHeldJoints(s, problem, f);
  }
}

// The SDP's bodies released from the pull toward the URDF, and its projection onto consistency.
void AppendSdp(std::string& s, const IdentificationReport& r) {
  const Problem& problem = r.problem;
  if (r.sdp && !r.sdp->released_bodies.empty()) {
    Append(s,
           "\nSDP: released from the pull toward the URDF (moved > %g plausible sizes by the "
           "data):",
           kReleaseSizes);
    for (const int b : r.sdp->released_bodies)
      Append(s, " %s", problem.model->bodies[problem.selection.bodies()[b]].name.c_str());
    Append(s, "\n");
  }
  if (r.sdp && r.sdp->ok && r.sdp->projected_bodies > 0) {
    const SdpResult& sdp = *r.sdp;
    Append(s,
           "\nSDP %s: %d bod%s outside J ⪰ ε·1 projected onto it (%d with mass or CoM moved); "
           "objective %.6g → %.6g (%+.3g %%)\n",
           sdp.message.c_str(), sdp.projected_bodies, sdp.projected_bodies == 1 ? "y" : "ies",
           sdp.projected_mass_or_com, sdp.objective_solver, sdp.objective,
           100.0 * (sdp.objective - sdp.objective_solver) / sdp.objective_solver);
  }
}

// A block of nuisance unknowns of the written result: RMS and largest, as `what` and `unit`.
void AppendNuisance(std::string& s, const IdentificationReport& r, const char* what, int begin,
                    int count, double scale, const char* unit) {
  const Problem& problem = r.problem;
  const Eigen::VectorXd o = scale * r.results[r.output].x.segment(begin, count);
  int worst = 0;
  if (o.size() > 0) o.cwiseAbs().maxCoeff(&worst);
  Append(s, "\n%s identified alongside (%s): RMS %.4f %s over %d, largest %s %+.4f %s\n", what,
         r.results[r.output].name.c_str(),
         o.size() ? std::sqrt(o.squaredNorm() / static_cast<double>(o.size())) : 0.0, unit, count,
         o.size() ? problem.names[begin + worst].c_str() : "-", o.size() ? o[worst] : 0.0, unit);
}

// The sensors' errors identified alongside: offsets, gains, the F/T cells' offsets.
void AppendSensors(std::string& s, const IdentificationReport& r) {
  const Problem& p = r.problem;
  if (p.offsets)
    AppendNuisance(s, r, "Torque-sensor offsets (not written to the model)", p.offset_begin(),
                   p.joints(), 1.0, "N·m");
  if (p.gains)
    AppendNuisance(s, r, "Torque-sensor gain errors (written: torque_sensors)", p.gain_begin(),
                   p.joints(), 100.0, "%");
  for (std::size_t c = 0; c < p.ft_frames.size(); ++c) {
    const int b = p.ft_begin() + 6 * static_cast<int>(c);
    const Eigen::VectorXd d = r.results[r.output].x.segment(b, 6);
    Append(
        s,
        "%s %s offsets (not written): force [%.3f, %.3f, %.3f] N, moment [%.4f, %.4f, %.4f] N·m\n",
        c == 0 ? "\nF/T cells'" : "          ", p.model->frames[p.ft_frames[c]].name.c_str(), d[0],
        d[1], d[2], d[3], d[4], d[5]);
  }
}

// The written result's covariance: how it was scaled.
void AppendPosterior(std::string& s, const IdentificationReport& r) {
  Append(s,
         "\nCovariance (written): posterior on the %s rows with the stated prior; residual "
         "variance factor s² %.4g × correlation κ %.3g samples\n",
         r.results[r.output].name == "sdp" ? r.sdp_rows.c_str() : r.results[r.output].name.c_str(),
         r.residual_variance, r.residual_correlation);
}

// The constant residual per joint on the first validation recording.
void AppendValidationBias(std::string& s, const IdentificationReport& r) {
  Append(s,
         "\nConstant residual per joint on %s (what start-up bias calibration absorbs), "
         "RMS over joints [N·m]:",
         r.validations.front().first.c_str());
  for (const Evaluation& e : r.evaluations)
    Append(s, "  %s %.4f", e.name.c_str(), e.validation_bias_rms);
  s += "\n";
}

}  // namespace

std::string FormatReport(const IdentificationReport& r) {
  std::string s;
  AppendIdentifiability(s, r);
  AppendPerBody(s, r);
  AppendPrediction(s, r);
  AppendSdp(s, r);
  if (r.output < r.results.size()) AppendSensors(s, r);
  if (r.posterior) AppendPosterior(s, r);
  if (!r.validations.empty()) AppendValidationBias(s, r);
  return s;
}

}  // namespace heft::identification

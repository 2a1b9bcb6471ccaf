#include "heft/identification/pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>

#include "heft/hal/text_file.hpp"
#include "heft/identification/output.hpp"

namespace heft::identification {

namespace {

std::string ReadText(const std::string& path) {
  hal::TextFile file = hal::ReadTextFile(path);
  if (!file.ok()) throw std::runtime_error(path + ": " + file.Describe("the URDF file"));
  return std::move(file.text);
}

Method MethodOf(const std::string& m) {
  return m == "wls" ? Method::kFullWls : m == "contact" ? Method::kContactOnly : Method::kNullSpace;
}

void Log(const PipelineHooks& hooks, const std::string& msg) {
  if (hooks.log) hooks.log(msg);
}

double SecondsSince(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

std::vector<recording::Recording> LoadRecordings(const std::vector<std::string>& paths,
                                                 const PipelineHooks& hooks) {
  std::vector<recording::Recording> recs;
  for (const auto& p : paths) {
    recs.push_back(recording::ReadRecording(p));
    Log(hooks, "read " + p + ": " + std::to_string(recs.back().samples.size()) + " records");
  }
  return recs;
}

bool Has(const IdentificationReport& r, const std::string& m) {
  return std::find(r.methods.begin(), r.methods.end(), m) != r.methods.end();
}

// The methods: the operator's, or what this recording supports; the SDP's rows; checked against
// the robot and the recording.
void ChooseMethods(const PipelineOptions& o, const PipelineHooks& hooks, IdentificationReport& r) {
  const dynamics::Model& model = *r.model;
  const Dataset& train = r.train;
  r.plan = DefaultMethods(model, train);
  r.methods_by_default = o.methods.empty();
  r.methods = r.methods_by_default ? r.plan.methods : o.methods;
  if (r.methods_by_default) Log(hooks, "methods: " + r.plan.reason + " (--methods to choose)");
  for (const auto& m : r.methods)
    if (const std::string why = MethodUnavailable(m, model, train); !why.empty())
      throw PipelineUsageError("--methods: " + why);
  r.sdp_rows = !o.sdp_rows.empty()                           ? o.sdp_rows
               : Has(r, "nullspace") || r.methods_by_default ? r.plan.sdp_rows
                                                             : std::string("wls");
  if (Has(r, "sdp"))
    if (const std::string why = MethodUnavailable(r.sdp_rows, model, train); !why.empty())
      throw PipelineUsageError("--sdp-rows: " + why);
  if (!o.output_method.empty() && !Has(r, o.output_method))
    throw PipelineUsageError("--output-method " + o.output_method +
                             " is not among the methods run (" + r.plan.reason + ")");
}

// The normal equations of each set of rows, stacked when first asked for.
struct Stacked {
  const PipelineOptions& o;
  const PipelineHooks& hooks;
  const Problem& problem;
  const Dataset& train;
  std::map<std::string, NormalEquations> normal;

  const NormalEquations& Get(const std::string& m) {
    auto it = normal.find(m);
    if (it != normal.end()) return it->second;
    const auto t = std::chrono::steady_clock::now();
    const std::string what =
        "stacking " + m + " (" + std::to_string(train.samples.size()) + " samples)";
    NormalEquations ne =
        Accumulate(problem, train, MethodOf(m), o.noise, [&](std::size_t done, std::size_t total) {
          if (hooks.progress) hooks.progress(what, done, total);
        });
    if (hooks.progress) hooks.progress(what, train.samples.size(), train.samples.size());
    Log(hooks, "stacked " + m + ": " + std::to_string(ne.rows) + " rows (" +
                   std::to_string(SecondsSince(t)) + " s)");
    return normal.emplace(m, std::move(ne)).first->second;
  }
};

// The least-squares methods, each into r's results (or failures); their solutions by method.
std::map<std::string, LeastSquaresResult> RunLeastSquares(const PipelineOptions& o,
                                                          Stacked& equations,
                                                          IdentificationReport& r) {
  std::map<std::string, LeastSquaresResult> ls_results;
  for (const auto& m : r.methods) {
    if (m == "sdp") continue;
    const NormalEquations& ne = equations.Get(m);
    LeastSquaresResult ls;
    try {
      ls = SolveLeastSquares(ne, r.problem, o.least_squares);
    } catch (const std::exception& e) {
      r.failures.push_back(m + " failed: " + e.what());
      continue;
    }
    r.identifiability.push_back({m, ls.report.rank, ls.report.identified, ls.report.condition,
                                 ne.samples, ne.sensor_test_failures, ne.min_base_rank});
    r.results.push_back({m, ls.x, ls.report, ne.samples});
    ls_results.emplace(m, std::move(ls));
  }
  return ls_results;
}

// The SDP on r.sdp_rows' equations, into r's results (or failures).
void RunSdp(const PipelineOptions& o, const PipelineHooks& hooks, Stacked& equations,
            const std::map<std::string, LeastSquaresResult>& ls_results, IdentificationReport& r) {
  const Problem& problem = r.problem;
  const NormalEquations& ne = equations.Get(r.sdp_rows);
  SdpOptions sopt = o.sdp;
  sopt.friction_sigma = o.prior.friction;  // one stated friction prior, the posterior's too
  if (o.ellipsoids) sopt.ellipsoids = BoundingEllipsoids(problem, o.ellipsoid_scale);
  Log(hooks, "SDP (CSDP) on the " + r.sdp_rows + " rows: " + std::to_string(problem.size()) +
                 " unknowns, " + std::to_string(problem.selection.size()) + " pseudo-inertia LMIs");
  if (hooks.busy) hooks.busy("solving the SDP (CSDP)", true);
  r.sdp = SolveSdp(ne, problem, sopt);
  if (hooks.busy) hooks.busy("solving the SDP (CSDP)", false);
  const SdpResult& sdp = *r.sdp;
  Log(hooks, "SDP " + sdp.message + " in " + std::to_string(sdp.seconds) + " s");
  const Identifiability rep = ls_results.count(r.sdp_rows)
                                  ? ls_results.at(r.sdp_rows).report
                                  : SolveLeastSquares(ne, problem, o.least_squares).report;
  if (sdp.ok)
    r.results.push_back({"sdp", sdp.x, rep, ne.samples});
  else
    r.failures.push_back(ExplainSdpFailure(sdp, sopt, rep.condition));
}

// The result to write: the one asked for (default: the SDP when run); when it failed, the best
// finished one — the least squares of the SDP's rows, else the first — named everywhere.
void ChooseOutput(const PipelineOptions& o, IdentificationReport& r) {
  r.wanted = !o.output_method.empty() ? o.output_method
             : Has(r, "sdp")          ? std::string("sdp")
                                      : r.results.front().name;
  std::optional<std::size_t> out;
  for (std::size_t i = 0; i < r.results.size(); ++i)
    if (r.results[i].name == r.wanted) out = i;
  for (std::size_t i = 0; i < r.results.size() && !out; ++i)
    if (r.results[i].name == r.sdp_rows) out = i;
  r.output = out.value_or(0);
  r.consistent = ConsistentBodies(r.problem, r.results[r.output].x) == r.problem.selection.size();
}

// The posterior of the written result on the rows it fitted (the SDP's: its rows' equations).
void ComputeOutputPosterior(const PipelineOptions& o, const PipelineHooks& hooks,
                            Stacked& equations, IdentificationReport& r) {
  const MethodResult& out = r.results[r.output];
  const NormalEquations& ne = equations.Get(out.name == "sdp" ? r.sdp_rows : out.name);
  r.residual_variance = ResidualVarianceFactor(ne, out.x);
  r.residual_correlation = ResidualCorrelation(r.problem, r.train, out.x);
  r.posterior = ComputePosterior(ne, r.problem.prior, PriorFactor(r.problem, o.prior),
                                 r.residual_variance * r.residual_correlation);
  Log(hooks, "posterior covariance of " + out.name + ": residual variance factor s² " +
                 std::to_string(r.residual_variance) + ", correlation κ " +
                 std::to_string(r.residual_correlation) + " samples");
}

}  // namespace

int ConsistentBodies(const Problem& problem, const Eigen::VectorXd& x) {
  int ok = 0;
  for (int b = 0; b < problem.selection.size(); ++b)
    ok += dynamics::IsPhysicallyConsistent(x.segment<10>(10 * b)) ? 1 : 0;
  return ok;
}

Evaluation Evaluate(const IdentificationReport& r, const std::string& name,
                    const Eigen::VectorXd& x) {
  Evaluation e;
  e.name = name;
  e.fit = PredictTorques(r.problem, r.train, x);
  for (const auto& [vn, d] : r.validations) {
    const Prediction pr = PredictTorques(r.problem, d, x);
    e.validation_rmse.push_back(pr.rmse);
    if (&d == &r.validations.front().second) e.validation_bias_rms = pr.bias_rms;
  }
  e.consistent_bodies = ConsistentBodies(r.problem, x);
  return e;
}

namespace {

// The joints whose torque comes from a current: their gain's size is the conversion's
// uncertainty; the torque sensors' 0.05 with --gains, else kHeldGain (held at 0).
void SizeGains(const PipelineOptions& o, Problem& p) {
  if (o.torque_from_current.empty()) return;
  p.gain_size.resize(p.joints());
  std::size_t found = 0;
  for (int j = 0; j < p.joints(); ++j) {
    const int unknown = p.gain_begin() + j;
    std::string joint = p.names[static_cast<std::size_t>(unknown)];
    joint.resize(joint.size() - std::string(".gain").size());
    const auto it = o.torque_from_current.find(joint);
    found += it != o.torque_from_current.end() ? 1 : 0;
    p.gain_size[j] = it != o.torque_from_current.end() ? it->second : o.gains ? 0.05 : kHeldGain;
  }
  if (found != o.torque_from_current.size())
    throw PipelineUsageError(
        "torque from current: " + std::to_string(o.torque_from_current.size() - found) +
        " of the joints named are not joints of the URDF");
}

}  // namespace

IdentificationReport RunIdentification(const PipelineOptions& o, const PipelineHooks& hooks) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string xml = ReadText(o.urdf_path);
  dynamics::ModelOptions mopt;
  mopt.floating_base = o.floating;
  auto loaded = std::make_unique<const dynamics::Model>(
      dynamics::LoadModelFromUrdfString(xml, mopt, o.urdf_path));
  ProblemTerms terms;
  terms.friction = o.friction;
  terms.offsets = o.offsets;
  terms.gains = o.gains || !o.torque_from_current.empty();
  Problem made = MakeProblem(*loaded, o.bodies, terms);
  SizeGains(o, made);
  IdentificationReport r(std::move(xml), std::move(loaded), std::move(made));
  const dynamics::Model& model = *r.model;
  r.train = PrepareDataset(model, LoadRecordings(o.recordings, hooks), o.dataset);
  const Dataset& train = r.train;
  if (o.ft_offsets) {  // the cells are the recording's
    if (train.frames.empty())
      throw PipelineUsageError("--ft-offsets: the recording has no F/T cells");
    terms.ft_frames = train.frames;
    r.problem = MakeProblem(model, o.bodies, terms);
    SizeGains(o, r.problem);
  }
  const Problem& problem = r.problem;
  Log(hooks, "model " + model.name + ": nv " + std::to_string(model.nv) + ", " +
                 std::to_string(problem.selection.size()) + " bodies to identify, " +
                 std::to_string(problem.size()) + " unknowns");
  for (const auto& w : train.warnings) Log(hooks, "warning: " + w);
  Log(hooks, "prepared " + std::to_string(train.samples.size()) + " samples at " +
                 std::to_string(static_cast<int>(o.dataset.rate_hz)) + " Hz from " +
                 std::to_string(train.duration) + " s (" + std::to_string(train.segments) +
                 " segments; low-pass " + std::to_string(o.dataset.cutoff_hz) + " Hz, zero phase)");
  ChooseMethods(o, hooks, r);
  for (const auto& v : o.validations) {
    r.validations.emplace_back(std::filesystem::path(v).stem().string(),
                               PrepareDataset(model, LoadRecordings({v}, hooks), o.dataset));
    if (o.ft_offsets && r.validations.back().second.frames != train.frames)
      throw PipelineUsageError("--ft-offsets: " + v +
                               " has other F/T cells than the training recordings");
  }

  Stacked equations{o, hooks, problem, train, {}};
  const std::map<std::string, LeastSquaresResult> ls_results = RunLeastSquares(o, equations, r);
  if (Has(r, "sdp")) RunSdp(o, hooks, equations, ls_results, r);
  if (r.results.empty()) throw std::runtime_error("no method finished; nothing written");

  r.evaluations.push_back(Evaluate(r, "urdf", problem.prior));
  for (const MethodResult& m : r.results) r.evaluations.push_back(Evaluate(r, m.name, m.x));
  ChooseOutput(o, r);
  ComputeOutputPosterior(o, hooks, equations, r);
  Log(hooks, "identified in " + std::to_string(SecondsSince(t0)) + " s");
  return r;
}

}  // namespace heft::identification

#include "heft/identification/pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>

#include "heft/hal/text_file.hpp"
#include "heft/identification/output.hpp"

namespace heft::ident {

namespace {

std::string ReadText(const std::string& path) {
  hal::TextFile file = hal::ReadTextFile(path);
  if (!file.ok()) throw std::runtime_error(path + ": " + file.Describe("the URDF file"));
  return std::move(file.text);
}

Method MethodOf(const std::string& m) {
  return m == "wls" ? Method::kFullWls : m == "contact" ? Method::kContactOnly : Method::kNullSpace;
}

}  // namespace

int ConsistentBodies(const Problem& problem, const Eigen::VectorXd& x) {
  int ok = 0;
  for (int b = 0; b < problem.selection.size(); ++b)
    ok += dyn::IsPhysicallyConsistent(x.segment<10>(10 * b)) ? 1 : 0;
  return ok;
}

Evaluation Evaluate(const IdentificationReport& r, const std::string& name,
                    const Eigen::VectorXd& x) {
  Evaluation e;
  e.name = name;
  e.fit_rmse = PredictTorques(r.problem, r.train, x).rmse;
  for (const auto& [vn, d] : r.validations) {
    const Prediction pr = PredictTorques(r.problem, d, x);
    e.validation_rmse.push_back(pr.rmse);
    if (&d == &r.validations.front().second) e.validation_bias_rms = pr.bias_rms;
  }
  e.consistent_bodies = ConsistentBodies(r.problem, x);
  return e;
}

IdentificationReport RunIdentification(const PipelineOptions& o, const PipelineHooks& hooks) {
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [](std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
  };
  auto log = [&](const std::string& msg) {
    if (hooks.log) hooks.log(msg);
  };
  std::string xml = ReadText(o.urdf_path);
  dyn::ModelOptions mopt;
  mopt.floating_base = o.floating;
  auto loaded =
      std::make_unique<const dyn::Model>(dyn::LoadModelFromUrdfString(xml, mopt, o.urdf_path));
  Problem made = MakeProblem(*loaded, o.bodies, o.friction, o.offsets);
  IdentificationReport r(std::move(xml), std::move(loaded), std::move(made));
  const dyn::Model& model = *r.model;
  const Problem& problem = r.problem;
  log("model " + model.name + ": nv " + std::to_string(model.nv) + ", " +
      std::to_string(problem.selection.size()) + " bodies to identify, " +
      std::to_string(problem.size()) + " unknowns");
  auto load = [&](const std::vector<std::string>& paths) {
    std::vector<Recording> recs;
    for (const auto& p : paths) {
      recs.push_back(ReadRecording(p));
      log("read " + p + ": " + std::to_string(recs.back().samples.size()) + " records");
    }
    return recs;
  };
  r.train = PrepareDataset(model, load(o.recordings), o.dataset);
  const Dataset& train = r.train;
  for (const auto& w : train.warnings) log("warning: " + w);
  log("prepared " + std::to_string(train.samples.size()) + " samples at " +
      std::to_string(static_cast<int>(o.dataset.rate_hz)) + " Hz from " +
      std::to_string(train.duration) + " s (" + std::to_string(train.segments) +
      " segments; low-pass " + std::to_string(o.dataset.cutoff_hz) + " Hz, zero phase)");
  // The methods: the operator's, or what this recording supports.
  r.plan = DefaultMethods(model, train);
  r.methods_by_default = o.methods.empty();
  r.methods = r.methods_by_default ? r.plan.methods : o.methods;
  if (r.methods_by_default) log("methods: " + r.plan.reason + " (--methods to choose)");
  for (const auto& m : r.methods)
    if (const std::string why = MethodUnavailable(m, model, train); !why.empty())
      throw PipelineUsageError("--methods: " + why);
  auto has = [&](const std::string& m) {
    return std::find(r.methods.begin(), r.methods.end(), m) != r.methods.end();
  };
  r.sdp_rows = !o.sdp_rows.empty()                        ? o.sdp_rows
               : has("nullspace") || r.methods_by_default ? r.plan.sdp_rows
                                                          : std::string("wls");
  if (has("sdp"))
    if (const std::string why = MethodUnavailable(r.sdp_rows, model, train); !why.empty())
      throw PipelineUsageError("--sdp-rows: " + why);
  if (!o.output_method.empty() && !has(o.output_method))
    throw PipelineUsageError("--output-method " + o.output_method +
                             " is not among the methods run (" + r.plan.reason + ")");
  for (const auto& v : o.validations)
    r.validations.emplace_back(std::filesystem::path(v).stem().string(),
                               PrepareDataset(model, load({v}), o.dataset));

  std::map<std::string, NormalEquations> normal;
  std::map<std::string, LeastSquaresResult> ls_results;
  auto equations = [&](const std::string& m) -> const NormalEquations& {
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
    log("stacked " + m + ": " + std::to_string(ne.rows) + " rows (" + std::to_string(seconds(t)) +
        " s)");
    return normal.emplace(m, std::move(ne)).first->second;
  };
  for (const auto& m : r.methods) {
    if (m == "sdp") continue;
    const NormalEquations& ne = equations(m);
    LeastSquaresResult ls;
    try {
      ls = SolveLeastSquares(ne, problem, o.least_squares);
    } catch (const std::exception& e) {
      r.failures.push_back(m + " failed: " + e.what());
      continue;
    }
    r.identifiability.push_back({m, ls.report.rank, ls.report.identified, ls.report.condition,
                                 ne.samples, ne.sensor_test_failures, ne.min_base_rank});
    r.results.push_back({m, ls.x, ls.report, ne.samples});
    ls_results.emplace(m, std::move(ls));
  }
  if (has("sdp")) {
    const NormalEquations& ne = equations(r.sdp_rows);
    SdpOptions sopt = o.sdp;
    if (o.ellipsoids) sopt.ellipsoids = BoundingEllipsoids(problem, o.ellipsoid_scale);
    log("SDP (CSDP) on the " + r.sdp_rows + " rows: " + std::to_string(problem.size()) +
        " unknowns, " + std::to_string(problem.selection.size()) + " pseudo-inertia LMIs");
    if (hooks.busy) hooks.busy("solving the SDP (CSDP)", true);
    r.sdp = SolveSdp(ne, problem, sopt);
    if (hooks.busy) hooks.busy("solving the SDP (CSDP)", false);
    const SdpResult& sdp = *r.sdp;
    log("SDP " + sdp.message + " in " + std::to_string(sdp.seconds) + " s");
    const Identifiability rep = ls_results.count(r.sdp_rows)
                                    ? ls_results.at(r.sdp_rows).report
                                    : SolveLeastSquares(ne, problem, o.least_squares).report;
    if (sdp.ok)
      r.results.push_back({"sdp", sdp.x, rep, ne.samples});
    else
      r.failures.push_back(ExplainSdpFailure(sdp, sopt, rep.condition));
  }
  if (r.results.empty()) throw std::runtime_error("no method finished; nothing written");

  r.evaluations.push_back(Evaluate(r, "urdf", problem.prior));
  for (const MethodResult& m : r.results) r.evaluations.push_back(Evaluate(r, m.name, m.x));

  // The result to write: the one asked for (default: the SDP when run); when it failed, the best
  // finished one — the least squares of the SDP's rows, else the first — named everywhere.
  r.wanted = !o.output_method.empty() ? o.output_method
             : has("sdp")             ? std::string("sdp")
                                      : r.results.front().name;
  std::optional<std::size_t> out;
  for (std::size_t i = 0; i < r.results.size(); ++i)
    if (r.results[i].name == r.wanted) out = i;
  for (std::size_t i = 0; i < r.results.size() && !out; ++i)
    if (r.results[i].name == r.sdp_rows) out = i;
  r.output = out.value_or(0);
  r.consistent = ConsistentBodies(problem, r.results[r.output].x) == problem.selection.size();
  log("identified in " + std::to_string(seconds(t0)) + " s");
  return r;
}

}  // namespace heft::ident

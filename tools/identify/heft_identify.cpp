// heft-identify: the robot's nominal inertial parameters (and joint friction) from recorded motion.
// Reads .heftrec recordings and the URDF, filters (zero phase), stacks the regressor, identifies by
// weighted least squares (full sensing), contact forces only, joint torques only (contact null
// space) and as a semidefinite program (physically consistent), prints the identifiability report
// and the torque-prediction table, and writes the identified URDF and parameter YAML. The command
// line (options.*, progress.*) stays thin; the methods live in heft_identification.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "heft/config/configuration.hpp"
#include "heft/identification/candump_convert.hpp"
#include "heft/identification/output.hpp"
#include "options.hpp"
#include "progress.hpp"

namespace {

using namespace heft;
using namespace heft::ident;
using cli::UsageError;

std::string SensorVerdict(const dyn::Model& model, const NormalEquations& ne) {
  if (!model.floating_base) return "n/a (fixed base)";
  if (ne.sensor_test_failures == 0) return "rank 6: ok";
  return "FAILS " + std::to_string(ne.sensor_test_failures) + "/" + std::to_string(ne.samples) +
         " (rank " + std::to_string(ne.min_base_rank) + ")";
}

// Bodies of the selection whose parameters in x are physically consistent.
int ConsistentBodies(const Problem& problem, const Eigen::VectorXd& x) {
  int ok = 0;
  for (int b = 0; b < problem.selection.size(); ++b)
    ok += dyn::IsPhysicallyConsistent(x.segment<10>(10 * b)) ? 1 : 0;
  return ok;
}

struct Timer {
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  double Seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
};

void Log(const Timer& t, const std::string& msg) {
  std::printf("[%7.2f s] %s\n", t.Seconds(), msg.c_str());
  std::fflush(stdout);
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read: " + std::strerror(errno));
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// candump logs + heftd's configuration → a recording, through heft's drivers.
int Convert(const cli::ConvertOptions& o) {
  const plugin::PluginConfig cfg =
      config::LoadConfiguration(o.config_path, config::Reader::kTool).plugin;
  const dyn::Model model = dyn::LoadModelFromUrdfFile(
      cfg.urdf_path, dyn::ModelOptions{cfg.floating_base, cfg.repair_inertia});
  // The logs in the order given, each bus going forward in time through all of them: merging by
  // time stamp would hide a damaged log (issue 17), and the replay is per bus anyway.
  std::vector<drivers::CandumpRecord> records;
  std::map<std::string, std::pair<std::int64_t, std::string>> last;  // bus → time, "file:line"
  for (const auto& path : o.logs) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot read: " + std::strerror(errno));
    std::vector<drivers::CandumpError> errors;
    auto part = drivers::ReadCandump(in, errors);
    for (const auto& e : errors)
      std::fprintf(stderr, "heft-identify: %s:%d: %s (line skipped)\n", path.c_str(), e.line,
                   e.reason.c_str());
    for (const auto& r : part) {
      const std::string where = path + ":" + std::to_string(r.line);
      auto [it, first] = last.try_emplace(r.bus, r.stamp_ns, where);
      if (!first && r.stamp_ns < it->second.first)
        throw std::runtime_error(
            where + ": " + r.bus + " goes back in time by " +
            std::to_string(1e-9 * static_cast<double>(it->second.first - r.stamp_ns)) +
            " s (after " + it->second.second +
            "); frames are replayed in the logs' order, not re-sorted");
      it->second = {r.stamp_ns, where};
    }
    records.insert(records.end(), std::make_move_iterator(part.begin()),
                   std::make_move_iterator(part.end()));
  }
  ident::ConvertOptions options;
  options.max_gap_ns = o.max_gap_ns;
  // Streamed to the file: memory holds the log, not the samples.
  RecordingWriter w(o.out, InfoFromDrivers(cfg.drivers, model.floating_base));
  const std::string source = o.logs.size() == 1 ? o.logs.front() : "the logs";
  const RecordingInfo info = ConvertCandump(cfg.drivers, records, model.floating_base, source,
                                            options, [&](const RecordSample& s) { w.Write(s); });
  const auto written = w.records();
  w.Close();
  std::printf(
      "%s: %llu records (%zu joints, %zu F/T cells)%s\n", o.out.c_str(),
      static_cast<unsigned long long>(written), info.joints.size(), info.wrench_frames.size(),
      model.floating_base && !cfg.drivers.imu ? "; the floating base is not on CAN: marked invalid"
                                              : "");
  return cli::kOk;
}

int Identify(const cli::Options& o) {
  const Timer timer;
  const std::string& urdf_path = o.urdf_path;
  const std::vector<std::string>& recordings = o.recordings;
  const std::vector<std::string>& bodies = o.bodies;
  const bool friction = o.friction;
  const DatasetOptions& dopt = o.dataset;
  const NoiseModel& noise = o.noise;
  const LeastSquaresOptions& lsopt = o.least_squares;
  SdpOptions sopt = o.sdp;
  std::vector<std::string> failures;  // per failed method: what happened and what to try
  const std::string xml = ReadText(urdf_path);
  dyn::ModelOptions mopt;
  mopt.floating_base = o.floating;
  const dyn::Model model = dyn::LoadModelFromUrdfString(xml, mopt, urdf_path);
  const Problem problem = MakeProblem(model, bodies, friction);
  Log(timer, "model " + model.name + ": nv " + std::to_string(model.nv) + ", " +
                 std::to_string(problem.selection.size()) + " bodies to identify, " +
                 std::to_string(problem.size()) + " unknowns");
  auto load = [&](const std::vector<std::string>& paths) {
    std::vector<Recording> recs;
    for (const auto& p : paths) {
      recs.push_back(ReadRecording(p));
      Log(timer, "read " + p + ": " + std::to_string(recs.back().samples.size()) + " records");
    }
    return recs;
  };
  const Dataset train = PrepareDataset(model, load(recordings), dopt);
  for (const auto& w : train.warnings) Log(timer, "warning: " + w);
  Log(timer, "prepared " + std::to_string(train.samples.size()) + " samples at " +
                 std::to_string(static_cast<int>(dopt.rate_hz)) + " Hz from " +
                 std::to_string(train.duration) + " s (" + std::to_string(train.segments) +
                 " segments; low-pass " + std::to_string(dopt.cutoff_hz) + " Hz, zero phase)");
  // The methods: the operator's, or what this recording supports.
  const MethodPlan plan = DefaultMethods(model, train);
  const std::vector<std::string> methods = o.methods.empty() ? plan.methods : o.methods;
  if (o.methods.empty()) Log(timer, "methods: " + plan.reason + " (--methods to choose)");
  for (const auto& m : methods)
    if (const std::string why = MethodUnavailable(m, model, train); !why.empty())
      throw UsageError("--methods: " + why);
  auto has = [&](const std::string& m) {
    return std::find(methods.begin(), methods.end(), m) != methods.end();
  };
  const std::string sdp_rows = !o.sdp_rows.empty()                     ? o.sdp_rows
                               : has("nullspace") || o.methods.empty() ? plan.sdp_rows
                                                                       : std::string("wls");
  if (has("sdp"))
    if (const std::string why = MethodUnavailable(sdp_rows, model, train); !why.empty())
      throw UsageError("--sdp-rows: " + why);
  if (!o.output_method.empty() && !has(o.output_method))
    throw UsageError("--output-method " + o.output_method + " is not among the methods run (" +
                     plan.reason + ")");

  std::vector<std::pair<std::string, Dataset>> valid;
  for (const auto& v : o.validations) {
    valid.emplace_back(std::filesystem::path(v).stem().string(),
                       PrepareDataset(model, load({v}), dopt));
  }

  struct Result {
    std::string name;
    Eigen::VectorXd x;
    Identifiability report;
    long samples = 0;
  };
  std::vector<Result> results;
  std::map<std::string, NormalEquations> normal;
  std::map<std::string, LeastSquaresResult> ls_results;
  auto method_of = [](const std::string& m) {
    return m == "wls"       ? Method::kFullWls
           : m == "contact" ? Method::kContactOnly
                            : Method::kNullSpace;
  };
  auto equations = [&](const std::string& m) -> const NormalEquations& {
    auto it = normal.find(m);
    if (it != normal.end()) return it->second;
    const Timer t;
    cli::Progress bar("stacking " + m + " (" + std::to_string(train.samples.size()) + " samples)");
    NormalEquations ne =
        Accumulate(problem, train, method_of(m), noise,
                   [&](std::size_t done, std::size_t total) { bar.Update(done, total); });
    bar.Finish();
    Log(timer, "stacked " + m + ": " + std::to_string(ne.rows) + " rows (" +
                   std::to_string(t.Seconds()) + " s)");
    return normal.emplace(m, std::move(ne)).first->second;
  };

  std::printf("\n== Identifiability (stacked regressor, column-scaled) ==\n");
  std::printf("%-10s %9s %6s %10s %11s %14s\n", "method", "unknowns", "rank", "condition",
              "identified", "sensor test");
  for (const auto& m : methods) {
    if (m == "sdp") continue;
    const NormalEquations& ne = equations(m);
    LeastSquaresResult ls;
    try {
      ls = SolveLeastSquares(ne, problem, lsopt);
    } catch (const std::exception& e) {
      failures.push_back(m + " failed: " + e.what());
      std::fprintf(stderr, "heft-identify: %s\n", failures.back().c_str());
      continue;
    }
    std::printf("%-10s %9d %6d %10.3g %11d %14s\n", m.c_str(), problem.size(), ls.report.rank,
                ls.report.condition, ls.report.identified, SensorVerdict(model, ne).c_str());
    results.push_back({m, ls.x, ls.report, ne.samples});
    ls_results.emplace(m, std::move(ls));
  }
  if (has("sdp")) {
    const NormalEquations& ne = equations(sdp_rows);
    if (o.ellipsoids) sopt.ellipsoids = BoundingEllipsoids(xml, problem, o.ellipsoid_scale);
    Log(timer, "SDP (CSDP) on the " + sdp_rows + " rows: " + std::to_string(problem.size()) +
                   " unknowns, " + std::to_string(problem.selection.size()) +
                   " pseudo-inertia LMIs");
    SdpResult sdp;
    {
      const cli::ElapsedTicker ticker("solving the SDP (CSDP)");
      sdp = SolveSdp(ne, problem, sopt);
    }
    Log(timer, "SDP " + sdp.message + " in " + std::to_string(sdp.seconds) + " s");
    Identifiability rep = ls_results.count(sdp_rows) ? ls_results.at(sdp_rows).report
                                                     : SolveLeastSquares(ne, problem, lsopt).report;
    if (sdp.ok) {
      results.push_back({"sdp", sdp.x, rep, ne.samples});
    } else {
      failures.push_back(ExplainSdpFailure(sdp, sopt, rep.condition));
      std::fprintf(stderr, "heft-identify: %s", failures.back().c_str());
    }
  }
  if (results.empty()) throw std::runtime_error("no method finished; nothing written");

  // Per-body identifiability of the first least-squares result (the fullest sensing run).
  const Result& ref = results.front();
  std::printf(
      "\nPer body (%s): unknowns identified alone (sigma < 10 %% of plausible size) of 10\n",
      ref.name.c_str());
  std::string weak;
  for (int b = 0; b < problem.selection.size(); ++b) {
    int count = 0;
    for (int k = 0; k < 10; ++k) count += ref.report.relative_sigma[10 * b + k] < 0.1;
    const std::string& name = model.bodies[problem.selection.bodies()[b]].name;
    std::printf("  %-26s %2d   mass %s\n", name.c_str(), count,
                ref.report.relative_sigma[10 * b] < 0.1 ? "identified" : "NOT identified");
    if (count == 0) weak += (weak.empty() ? "" : ", ") + name;
  }
  if (!weak.empty())
    std::printf(
        "WARNING: the motion does not excite any parameter of: %s — they keep the "
        "URDF's values (only combinations with others may be identified)\n",
        weak.c_str());
  if (ref.report.rank < problem.size())
    std::printf(
        "note: %d of %d directions are not identifiable from these sensors and motion "
        "(kept at the URDF's values)\n",
        problem.size() - ref.report.rank, problem.size());

  std::printf("\n== Torque-prediction RMSE [N·m] (joint torques, measured contact wrenches) ==\n");
  std::printf("%-10s %12s", "method", "fit");
  for (const auto& [name, d] : valid) std::printf(" %14s", name.c_str());
  std::printf(" %12s\n", "consistent");
  const Eigen::VectorXd prior = problem.prior;
  std::vector<std::pair<std::string, double>> bias_rows;
  auto row = [&](const std::string& name, const Eigen::VectorXd& x) {
    std::printf("%-10s %12.4f", name.c_str(), PredictTorques(problem, train, x).rmse);
    for (const auto& [vn, d] : valid) {
      const Prediction pr = PredictTorques(problem, d, x);
      std::printf(" %14.4f", pr.rmse);
      if (&d == &valid.front().second) bias_rows.emplace_back(name, pr.bias_rms);
    }
    std::printf(" %9d/%d\n", ConsistentBodies(problem, x), problem.selection.size());
  };
  row("urdf", prior);
  Eigen::VectorXd xr;
  if (!o.reference_urdf.empty()) {
    const dyn::Model ref_model = dyn::LoadModelFromUrdfFile(o.reference_urdf, mopt);
    if (ref_model.nv != model.nv)
      throw UsageError("--reference-urdf " + o.reference_urdf + ": a different robot (nv " +
                       std::to_string(ref_model.nv) + ", not " + std::to_string(model.nv) + ")");
    xr = prior;
    xr.head(problem.inertial_size()) = problem.selection.Gather(ref_model);
    row("reference", xr);
  }
  for (const Result& r : results) row(r.name, r.x);

  if (!valid.empty()) {
    std::printf(
        "\nConstant residual per joint on %s (what start-up bias calibration absorbs), "
        "RMS over joints [N·m]:",
        valid.front().first.c_str());
    for (const auto& [name, b] : bias_rows) std::printf("  %s %.4f", name.c_str(), b);
    std::printf("\n");
  }
  if (xr.size() > 0) {
    // Recovery against the reference, over the inertial unknowns each method identifies.
    std::printf(
        "\nRecovery vs the reference (inertial unknowns identified alone; error / "
        "plausible size):\n%-10s %10s %8s %8s %14s\n",
        "method", "identified", "p95", "worst", "total mass");
    const Eigen::VectorXd scale = PriorScale(problem);
    double mass_ref = 0;
    for (int b = 0; b < problem.selection.size(); ++b) mass_ref += xr[10 * b];
    for (const Result& r : results) {
      std::vector<double> e;
      for (int i = 0; i < problem.inertial_size(); ++i)
        if (r.report.relative_sigma[i] < 0.1) e.push_back(std::abs(r.x[i] - xr[i]) / scale[i]);
      std::sort(e.begin(), e.end());
      double mass = 0;
      for (int b = 0; b < problem.selection.size(); ++b) mass += r.x[10 * b];
      std::printf(
          "%-10s %10zu %8.3f %8.3f %+13.3f%%\n", r.name.c_str(), e.size(),
          e.empty() ? 0.0 : e[static_cast<std::size_t>(0.95 * static_cast<double>(e.size() - 1))],
          e.empty() ? 0.0 : e.back(), 100.0 * (mass - mass_ref) / mass_ref);
    }
  }
  // The result to write: the one asked for (default: the SDP when run); when it failed, the best
  // finished one — the least squares of the SDP's rows, else the first — named everywhere.
  const std::string wanted = !o.output_method.empty() ? o.output_method
                             : has("sdp")             ? std::string("sdp")
                                                      : results.front().name;
  const Result* out = nullptr;
  for (const Result& r : results)
    if (r.name == wanted) out = &r;
  if (!out) {
    for (const Result& r : results)
      if (r.name == sdp_rows) out = &r;
    if (!out) out = &results.front();
    if (!o.out_urdf.empty() || !o.out_yaml.empty())
      std::fprintf(stderr, "heft-identify: %s failed: writing the %s result instead\n",
                   wanted.c_str(), out->name.c_str());
  }
  const std::string chosen = out->name;
  const bool consistent = ConsistentBodies(problem, out->x) == problem.selection.size();
  if (!o.out_urdf.empty()) {
    if (!consistent)
      std::printf(
          "warning: the %s parameters are not physically consistent; the URDF will be "
          "refused by heft's loader unless repair_inertia is set\n",
          chosen.c_str());
    WriteTextFile(o.out_urdf, ReplaceInertials(xml, WithParameters(problem, out->x), problem));
    Log(timer, "wrote " + o.out_urdf + " (" + chosen + ")");
  }
  if (!o.out_yaml.empty()) {
    FitStatistics st;
    st.method = chosen;
    st.samples = static_cast<int>(out->samples);
    st.rank = out->report.rank;
    st.unknowns = problem.size();
    st.condition = out->report.condition;
    st.fit_rmse = PredictTorques(problem, train, out->x).rmse;
    if (!valid.empty())
      st.validation_rmse = PredictTorques(problem, valid.front().second, out->x).rmse;
    st.consistent = consistent;
    WriteTextFile(o.out_yaml, ParametersYaml(problem, out->x, out->report, st));
    Log(timer, "wrote " + o.out_yaml + " (" + chosen + ")");
  }
  if (!o.residual_csv.empty()) {
    std::ostringstream csv;
    csv << "t,urdf_norm,urdf_mean," << chosen << "_norm," << chosen << "_mean\n";
    const Dataset& d = valid.front().second;
    const dyn::Model before = WithParameters(problem, prior);
    const dyn::Model after = WithParameters(problem, out->x);
    dyn::Workspace ws(model);
    Eigen::VectorXd tau(model.nv), contact(model.nv);
    const int base = model.floating_base ? 6 : 0;
    for (const Sample& s : d.samples) {
      csv << s.t;
      for (const dyn::Model* m : {&before, &after}) {
        PredictSample(problem, *m, ws, d.frames, s, m == &after ? out->x : prior, tau, contact);
        const Eigen::VectorXd r = (s.tau - tau).tail(model.nv - base);
        csv << ',' << r.norm() << ',' << r.mean();
      }
      csv << '\n';
    }
    WriteTextFile(o.residual_csv, csv.str());
    Log(timer, "wrote " + o.residual_csv);
  }
  if (!failures.empty()) {
    std::fprintf(stderr, "heft-identify: finished with %zu failed method(s):\n", failures.size());
    for (const auto& f : failures) std::fprintf(stderr, "  %s\n", f.c_str());
    return cli::kPartial;
  }
  Log(timer, "done");
  return cli::kOk;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc >= 2 && std::string(argv[1]) == "convert") {
      const cli::ConvertOptions o = cli::ParseConvertOptions(argc, argv);
      if (o.help) {
        std::printf("%s", cli::kUsageText);
        return cli::kOk;
      }
      return Convert(o);
    }
    const cli::Options o = cli::ParseOptions(argc, argv);
    if (o.help) {
      std::printf("%s", cli::kUsageText);
      return cli::kOk;
    }
    if (o.version) {
      std::printf("heft-identify %s\n", HEFT_VERSION);
      return cli::kOk;
    }
    return Identify(o);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "heft-identify: %s\n", e.what());
    return cli::kUsageError;
  } catch (const config::ConfigError& e) {
    std::fprintf(stderr, "heft-identify: %s\n", e.what());
    return cli::kUsageError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heft-identify: %s\n", e.what());
    return cli::kFailure;
  }
}

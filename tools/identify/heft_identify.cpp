// heft-identify: the robot's nominal inertial parameters (and joint friction) from recorded motion.
// Reads .heftrec recordings and the URDF, filters (zero phase), stacks the regressor, identifies by
// weighted least squares (full sensing), contact forces only, joint torques only (contact null
// space) and as a semidefinite program (physically consistent), prints the identifiability report
// and the torque-prediction table, and writes the identified URDF and parameter YAML.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "heft/identification/candump_convert.hpp"
#include "heft/identification/output.hpp"
#include "heft/plugin/plugin_config.hpp"

namespace {

using namespace heft;
using namespace heft::ident;

constexpr const char* kUsage = R"(usage: heft-identify --urdf FILE [options] RECORDING...
       heft-identify convert --config HEFT.yaml --out FILE.heftrec [--max-gap S] CANDUMP.log...

  convert: the logs (e.g. one per bus) in time order; each bus must go forward in time through
  them (a frame going back is refused with its file and line, never re-sorted); a gap longer
  than --max-gap seconds between frames (default 10, at most 3600) is refused with its line.

  --urdf FILE              robot description (the prior: its inertials)
  --floating-base          the URDF's root link is a floating base (automatic with a floating joint)
  --validate FILE          a recording to evaluate on (repeatable; not used for fitting)
  --bodies a,b,...         links to identify (default: every moving body)
  --methods LIST           of wls, contact, nullspace, sdp (default: wls,contact,nullspace,sdp)
  --sdp-rows wls|nullspace rows the SDP fits (default nullspace, as Khorshidi et al.)
  --friction               identify Coulomb and viscous friction per joint alongside
  --cutoff HZ              zero-phase low-pass cut-off (default 8)
  --rate HZ                identification rate after filtering (default 100)
  --contact-force N        a foot is in contact above this force (default 50)
  --noise TAU,F,N          measurement sigma: joint torque N·m, force N, moment N·m (0.3,2,0.2)
  --rank-tolerance R       relative singular value kept as identified (default 1e-6)
  --regularisation MU      SDP pull toward the URDF's values (default 1e-6)
  --ellipsoid-scale S      bounding ellipsoids from the prior's inertia ×S where the URDF has no
                           collision geometry (default 2; 0: collision geometry only)
  --no-ellipsoids          no bounding-ellipsoid constraints
  --reference-urdf FILE    also evaluate this URDF's parameters in the RMSE table (e.g. the truth)
  --residual-csv FILE      per sample of the first validation recording: joint-torque residual
                           norm and mean with the URDF's and with the identified parameters
  --output-method M        which result to write (default: sdp if run, else the first)
  --out-urdf FILE          the input URDF with the identified inertials
  --out-yaml FILE          the identified parameters with their identifiability and fit statistics
)";

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "heft-identify: %s\n", msg.c_str());
  std::exit(2);
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

double Number(const std::string& opt, const std::string& v) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(x)) Die(opt + ": not a number: '" + v + "'");
  return x;
}

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

}  // namespace

// candump logs + heftd's configuration → a recording, through heft's drivers.
int Convert(int argc, char** argv) {
  std::string config_path, out;
  std::vector<std::string> logs;
  ConvertOptions options;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--config") {
      config_path = value();
    } else if (a == "--out") {
      out = value();
    } else if (a == "--max-gap") {
      const double s = Number(a, value());
      if (!(s > 0.0 && s * 1e9 <= static_cast<double>(kMaxConvertGapNs)))
        Die("--max-gap: seconds in (0, " + std::to_string(kMaxConvertGapNs / 1'000'000'000) + "]");
      options.max_gap_ns = static_cast<std::int64_t>(s * 1e9);
    } else if (!a.empty() && a[0] == '-') {
      Die("convert: unknown option " + a + "\n" + kUsage);
    } else {
      logs.push_back(a);
    }
  }
  if (config_path.empty() || out.empty() || logs.empty())
    Die(std::string("convert needs --config, --out and at least one candump log\n") + kUsage);
  try {
    const plugin::PluginConfig cfg = plugin::LoadPluginConfig(config_path);
    const dyn::Model model = dyn::LoadModelFromUrdfFile(
        cfg.urdf_path, dyn::ModelOptions{cfg.floating_base, cfg.repair_inertia});
    // The logs in the order given, each bus going forward in time through all of them: merging
    // by time stamp would hide a damaged log (issue 17), and the replay is per bus anyway.
    std::vector<drivers::CandumpRecord> records;
    std::map<std::string, std::pair<std::int64_t, std::string>> last;  // bus → time, "file:line"
    for (const auto& path : logs) {
      std::ifstream in(path);
      if (!in) Die(path + ": cannot read");
      std::vector<drivers::CandumpError> errors;
      auto part = drivers::ReadCandump(in, errors);
      for (const auto& e : errors)
        std::fprintf(stderr, "heft-identify: %s:%d: %s (line skipped)\n", path.c_str(), e.line,
                     e.reason.c_str());
      for (const auto& r : part) {
        const std::string where = path + ":" + std::to_string(r.line);
        auto [it, first] = last.try_emplace(r.bus, r.stamp_ns, where);
        if (!first && r.stamp_ns < it->second.first)
          Die(where + ": " + r.bus + " goes back in time by " +
              std::to_string(1e-9 * static_cast<double>(it->second.first - r.stamp_ns)) +
              " s (after " + it->second.second +
              "); frames are replayed in the logs' order, not re-sorted");
        it->second = {r.stamp_ns, where};
      }
      records.insert(records.end(), std::make_move_iterator(part.begin()),
                     std::make_move_iterator(part.end()));
    }
    // Streamed to the file: memory holds the log, not the samples.
    RecordingWriter w(out, InfoFromDrivers(cfg.drivers, model.floating_base));
    const std::string source = logs.size() == 1 ? logs.front() : "the logs";
    const RecordingInfo info = ConvertCandump(cfg.drivers, records, model.floating_base, source,
                                              options, [&](const RecordSample& s) { w.Write(s); });
    w.Flush();
    std::printf("%s: %llu records (%zu joints, %zu F/T cells)%s\n", out.c_str(),
                static_cast<unsigned long long>(w.records()), info.joints.size(),
                info.wrench_frames.size(),
                model.floating_base ? "; the floating base is not on CAN: marked invalid" : "");
  } catch (const std::exception& e) {
    Die(e.what());
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "convert") return Convert(argc, argv);
  std::string reference_urdf, residual_csv;
  std::string urdf_path, out_urdf, out_yaml, output_method, sdp_rows = "nullspace";
  std::vector<std::string> recordings, validations, bodies;
  std::vector<std::string> methods = {"wls", "contact", "nullspace", "sdp"};
  bool floating = false, friction = false, ellipsoids = true;
  DatasetOptions dopt;
  NoiseModel noise;
  LeastSquaresOptions lsopt;
  SdpOptions sopt;
  double ellipsoid_scale = 2.0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die(a + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::printf("%s", kUsage);
      return 0;
    } else if (a == "--urdf") {
      urdf_path = value();
    } else if (a == "--floating-base") {
      floating = true;
    } else if (a == "--validate") {
      validations.push_back(value());
    } else if (a == "--bodies") {
      bodies = Split(value());
    } else if (a == "--methods") {
      methods = Split(value());
      for (const auto& m : methods)
        if (m != "wls" && m != "contact" && m != "nullspace" && m != "sdp")
          Die("--methods: unknown method '" + m + "' (allowed: wls, contact, nullspace, sdp)");
    } else if (a == "--sdp-rows") {
      sdp_rows = value();
      if (sdp_rows != "wls" && sdp_rows != "nullspace")
        Die("--sdp-rows: '" + sdp_rows + "' (allowed: wls, nullspace)");
    } else if (a == "--friction") {
      friction = true;
    } else if (a == "--cutoff") {
      dopt.cutoff_hz = Number(a, value());
    } else if (a == "--rate") {
      dopt.rate_hz = Number(a, value());
    } else if (a == "--contact-force") {
      dopt.contact_force = Number(a, value());
    } else if (a == "--noise") {
      const auto parts = Split(value());
      if (parts.size() != 3) Die("--noise: three numbers TAU,F,N");
      noise.joint_torque = Number(a, parts[0]);
      noise.force = Number(a, parts[1]);
      noise.moment = Number(a, parts[2]);
      if (noise.joint_torque <= 0 || noise.force <= 0 || noise.moment <= 0)
        Die("--noise: sigmas must be positive");
    } else if (a == "--rank-tolerance") {
      lsopt.rank_tolerance = Number(a, value());
    } else if (a == "--regularisation") {
      sopt.regularisation = Number(a, value());
      if (sopt.regularisation <= 0) Die("--regularisation must be positive");
    } else if (a == "--ellipsoid-scale") {
      ellipsoid_scale = Number(a, value());
    } else if (a == "--no-ellipsoids") {
      ellipsoids = false;
    } else if (a == "--reference-urdf") {
      reference_urdf = value();
    } else if (a == "--residual-csv") {
      residual_csv = value();
    } else if (a == "--output-method") {
      output_method = value();
    } else if (a == "--out-urdf") {
      out_urdf = value();
    } else if (a == "--out-yaml") {
      out_yaml = value();
    } else if (!a.empty() && a[0] == '-') {
      Die("unknown option " + a + "\n" + kUsage);
    } else {
      recordings.push_back(a);
    }
  }
  if (urdf_path.empty()) Die(std::string("--urdf is required\n") + kUsage);
  if (recordings.empty()) Die(std::string("no recordings given\n") + kUsage);
  auto has = [&](const char* m) {
    for (const auto& x : methods)
      if (x == m) return true;
    return false;
  };
  if (!output_method.empty() && !has(output_method.c_str()))
    Die("--output-method " + output_method + " is not among --methods");

  const Timer timer;
  try {
    std::ifstream in(urdf_path);
    if (!in) Die(urdf_path + ": cannot read");
    const std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    dyn::ModelOptions mopt;
    mopt.floating_base = floating;
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
    std::vector<std::pair<std::string, Dataset>> valid;
    for (const auto& v : validations) {
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
      NormalEquations ne = Accumulate(problem, train, method_of(m), noise);
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
      LeastSquaresResult ls = SolveLeastSquares(ne, problem, lsopt);
      std::printf("%-10s %9d %6d %10.3g %11d %14s\n", m.c_str(), problem.size(), ls.report.rank,
                  ls.report.condition, ls.report.identified, SensorVerdict(model, ne).c_str());
      results.push_back({m, ls.x, ls.report, ne.samples});
      ls_results.emplace(m, std::move(ls));
    }
    if (has("sdp")) {
      const NormalEquations& ne = equations(sdp_rows);
      if (ellipsoids) sopt.ellipsoids = BoundingEllipsoids(xml, problem, ellipsoid_scale);
      Log(timer, "SDP (CSDP) on the " + sdp_rows + " rows: " + std::to_string(problem.size()) +
                     " unknowns, " + std::to_string(problem.selection.size()) +
                     " pseudo-inertia LMIs");
      const SdpResult sdp = SolveSdp(ne, problem, sopt);
      Log(timer, "SDP " + sdp.message + " in " + std::to_string(sdp.seconds) + " s");
      if (!sdp.ok) Die("the SDP failed: " + sdp.message);
      Identifiability rep = ls_results.count(sdp_rows)
                                ? ls_results.at(sdp_rows).report
                                : SolveLeastSquares(ne, problem, lsopt).report;
      results.push_back({"sdp", sdp.x, rep, ne.samples});
    }

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

    std::printf(
        "\n== Torque-prediction RMSE [N·m] (joint torques, measured contact wrenches) ==\n");
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
    if (!reference_urdf.empty()) {
      const dyn::Model ref_model = dyn::LoadModelFromUrdfFile(reference_urdf, mopt);
      if (ref_model.nv != model.nv) Die(reference_urdf + ": a different robot");
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
    const std::string chosen = !output_method.empty() ? output_method
                               : has("sdp")           ? std::string("sdp")
                                                      : results.front().name;
    const Result* out = nullptr;
    for (const Result& r : results)
      if (r.name == chosen) out = &r;
    if (!out) Die("no result for " + chosen);
    if (!out_urdf.empty() || !out_yaml.empty()) {
      const bool consistent = ConsistentBodies(problem, out->x) == problem.selection.size();
      if (!out_urdf.empty()) {
        if (!consistent)
          std::printf(
              "warning: the %s parameters are not physically consistent; the URDF will be "
              "refused by heft's loader unless repair_inertia is set\n",
              chosen.c_str());
        std::ofstream(out_urdf) << ReplaceInertials(xml, WithParameters(problem, out->x), problem);
        Log(timer, "wrote " + out_urdf + " (" + chosen + ")");
      }
      if (!out_yaml.empty()) {
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
        std::ofstream(out_yaml) << ParametersYaml(problem, out->x, out->report, st);
        Log(timer, "wrote " + out_yaml + " (" + chosen + ")");
      }
    }
    if (!residual_csv.empty()) {
      if (valid.empty()) Die("--residual-csv needs a --validate recording");
      std::ofstream csv(residual_csv);
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
      Log(timer, "wrote " + residual_csv);
    }
    Log(timer, "done");
  } catch (const std::exception& e) {
    Die(e.what());
  }
  return 0;
}

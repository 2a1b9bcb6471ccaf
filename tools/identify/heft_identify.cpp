// heft-identify: the robot's nominal inertial parameters (and joint friction) from recorded motion,
// and the conversion of candump logs into recordings. The command line only: the pipeline
// (RunIdentification: read, filter, stack, least squares, SDP, evaluate) and its printed report
// (FormatReport) live in heft_identification; this file runs it with progress on the terminal and
// writes the identified URDF and parameter YAML.
#include <chrono>
#include <cstdio>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "heft/host/configuration.hpp"
#include "heft/identification/output.hpp"
#include "heft/identification/pipeline.hpp"
#include "heft/recording/candump_convert.hpp"
#include "log_reader.hpp"
#include "options.hpp"
#include "progress.hpp"

namespace {

using namespace heft;
using namespace heft::identification;
using identify::UsageError;

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

// What identified.yaml's `fit:` section says of the written result and of every method.
FitStatistics Statistics(const IdentificationReport& r, double seconds) {
  const Problem& problem = r.problem;
  const MethodResult& out = r.results[r.output];
  FitStatistics st;
  st.method = out.name;
  st.samples = static_cast<int>(out.samples);
  st.rank = out.report.rank;
  st.unknowns = problem.size();
  st.condition = out.report.condition;
  const Evaluation& e = r.evaluations[r.output + 1];  // after the URDF's row
  st.fit_rmse = e.fit.rmse;
  if (!e.validation_rmse.empty()) st.validation_rmse = e.validation_rmse.front();
  st.consistent = r.consistent;
  st.sliding_speed = problem.sliding_speed;
  st.sliding_rmse = e.fit.sliding_rmse;
  st.held_rmse = e.fit.held_rmse;
  st.sliding_rows = e.fit.sliding_rows;
  st.held_rows = e.fit.held_rows;
  for (const Evaluation& m : r.evaluations)
    st.methods.push_back({m.name, m.fit.rmse, m.consistent_bodies});
  st.bodies = static_cast<int>(problem.selection.size());
  st.held_joints = HeldJoints(problem, e.fit);
  st.seconds = seconds;
  return st;
}

// candump logs + heftd's configuration → a recording, through heft's drivers.
int Convert(const identify::ConvertOptions& o) {
  const plugin::PluginConfig cfg =
      host::LoadConfiguration(o.config_path, host::Reader::kTool).plugin;
  const dynamics::Model model = dynamics::LoadModelFromUrdfFile(
      cfg.urdf_path, dynamics::ModelOptions{cfg.floating_base, cfg.repair_inertia});
  // The logs in the order given, each bus going forward in time through all of them: merging by
  // time stamp would hide a damaged log, and the replay is per bus anyway.
  std::vector<drivers::CandumpRecord> records;
  std::map<std::string, std::pair<std::int64_t, std::string>> last;  // bus → time, "file:line"
  std::uint64_t budget = o.max_log_bytes;
  for (const auto& path : o.logs) {
    // Bounded: regular files only, within the budget, up to their length when opened.
    identify::LogRead read = identify::ReadLogBounded(path, budget);
    budget -= read.bytes;
    std::printf("%s: %zu frames (%llu bytes)\n", path.c_str(), read.records.size(),
                static_cast<unsigned long long>(read.bytes));
    const auto& errors = read.errors;
    auto& part = read.records;
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
  recording::ConvertOptions options;
  options.max_gap_ns = o.max_gap_ns;
  // Streamed to the file: memory holds the log, not the samples.
  recording::RecordingWriter w(o.out, recording::InfoFromDrivers(cfg.drivers, model.floating_base));
  const std::string source = o.logs.size() == 1 ? o.logs.front() : "the logs";
  const recording::RecordingInfo info =
      recording::ConvertCandump(cfg.drivers, records, model.floating_base, source, options,
                                [&](const recording::RecordSample& s) { w.Write(s); });
  const auto written = w.records();
  w.Close();
  std::printf(
      "%s: %llu records (%zu joints, %zu F/T cells)%s\n", o.out.c_str(),
      static_cast<unsigned long long>(written), info.joints.size(), info.wrench_frames.size(),
      model.floating_base && !cfg.drivers.imu ? "; the floating base is not on CAN: marked invalid"
                                              : "");
  return identify::kOk;
}

int Identify(identify::Options o) {
  const Timer timer;
  if (!o.config_path.empty())
    for (const drivers::JointDevice& j :
         host::LoadConfiguration(o.config_path, host::Reader::kTool).plugin.drivers.joints)
      if (j.torque_scale_uncertainty >= 0.0 && j.protocol != drivers::JointProtocol::kHeft)
        o.torque_from_current[j.joint] = j.torque_scale_uncertainty;
  const PipelineOptions& po = o;  // the command line's options are the pipeline's and more
  PipelineHooks hooks;
  hooks.log = [&](const std::string& msg) { Log(timer, msg); };
  std::unique_ptr<identify::Progress> bar;
  hooks.progress = [&](const std::string& what, std::size_t done, std::size_t total) {
    if (!bar) bar = std::make_unique<identify::Progress>(what);
    bar->Update(done, total);
    if (done == total) {
      bar->Finish();
      bar.reset();
    }
  };
  std::unique_ptr<identify::ElapsedTicker> ticker;
  hooks.busy = [&](const std::string& what, bool start) {
    if (start)
      ticker = std::make_unique<identify::ElapsedTicker>(what);
    else
      ticker.reset();
  };
  const IdentificationReport r = [&] {
    try {
      return RunIdentification(po, hooks);
    } catch (const PipelineUsageError& e) {
      throw UsageError(e.what());
    }
  }();
  for (const auto& f : r.failures) std::fprintf(stderr, "heft-identify: %s\n", f.c_str());
  std::printf("%s", FormatReport(r).c_str());
  const Problem& problem = r.problem;
  const MethodResult& out = r.results[r.output];
  const std::string& chosen = out.name;
  if (chosen != r.wanted && (!o.out_urdf.empty() || !o.out_yaml.empty()))
    std::fprintf(stderr, "heft-identify: %s failed: writing the %s result instead\n",
                 r.wanted.c_str(), chosen.c_str());
  if (!o.out_urdf.empty()) {
    if (!r.consistent)
      std::printf(
          "warning: the %s parameters are not physically consistent; the URDF will be "
          "refused by heft's loader unless repair_inertia is set\n",
          chosen.c_str());
    WriteTextFile(o.out_urdf, ReplaceInertials(r.xml, WithParameters(problem, out.x), problem));
    Log(timer, "wrote " + o.out_urdf + " (" + chosen + ")");
  }
  if (!o.out_yaml.empty()) {
    const FitStatistics st = Statistics(r, timer.Seconds());
    WriteTextFile(o.out_yaml, ParametersYaml(problem, out.x, out.report, st,
                                             r.posterior ? &*r.posterior : nullptr));
    Log(timer, "wrote " + o.out_yaml + " (" + chosen + ")");
  }
  if (!r.failures.empty()) {
    std::fprintf(stderr, "heft-identify: finished with %zu failed method(s):\n", r.failures.size());
    for (const auto& f : r.failures) std::fprintf(stderr, "  %s\n", f.c_str());
    return identify::kPartial;
  }
  Log(timer, "done");
  return identify::kOk;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc >= 2 && std::string(argv[1]) == "convert") {
      const identify::ConvertOptions o = identify::ParseConvertOptions(argc, argv);
      if (o.help) {
        std::printf("%s", identify::kUsageText);
        return identify::kOk;
      }
      return Convert(o);
    }
    const identify::Options o = identify::ParseOptions(argc, argv);
    if (o.help) {
      std::printf("%s", identify::kUsageText);
      return identify::kOk;
    }
    if (o.version) {
      std::printf("heft-identify %s\n", HEFT_VERSION);
      return identify::kOk;
    }
    return Identify(o);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "heft-identify: %s\n", e.what());
    return identify::kUsageError;
  } catch (const config::ConfigError& e) {
    std::fprintf(stderr, "heft-identify: %s\n", e.what());
    return identify::kUsageError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heft-identify: %s\n", e.what());
    return identify::kFailure;
  }
}

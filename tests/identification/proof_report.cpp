// heft-identify-proof: what only the identification proof (scripts/identification-proof.sh) needs
// beside heft-identify's own report — the truth is known there. Runs the same pipeline
// (RunIdentification, friction on), prints heft-identify's report, then the true parameters'
// RMSE row, the recovery of the truth by each method (inertial unknowns identified alone, error
// relative to their plausible size; total mass) and, with --residual-csv, the joint-torque
// residual per sample of the first validation recording with the URDF's and the written result.
//   heft-identify-proof --urdf F --truth-urdf F [--validate F]... [--methods M,..]
//                       [--sdp-rows R] [--residual-csv F] TRAIN...
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "heft/identification/output.hpp"
#include "heft/identification/pipeline.hpp"

namespace {

using namespace heft;
using namespace heft::identification;

void Recovery(const IdentificationReport& r, const Eigen::VectorXd& truth) {
  const Problem& problem = r.problem;
  std::printf(
      "\nRecovery vs the truth (inertial unknowns identified alone; error / plausible size):\n"
      "%-10s %10s %8s %8s %14s\n",
      "method", "identified", "p95", "worst", "total mass");
  const Eigen::VectorXd scale = PriorScale(problem);
  double mass_ref = 0;
  for (int b = 0; b < problem.selection.size(); ++b) mass_ref += truth[10 * b];
  for (const MethodResult& m : r.results) {
    std::vector<double> e;
    for (int i = 0; i < problem.inertial_size(); ++i)
      if (m.report.relative_sigma[i] < 0.1) e.push_back(std::abs(m.x[i] - truth[i]) / scale[i]);
    std::sort(e.begin(), e.end());
    double mass = 0;
    for (int b = 0; b < problem.selection.size(); ++b) mass += m.x[10 * b];
    std::printf(
        "%-10s %10zu %8.3f %8.3f %+13.3f%%\n", m.name.c_str(), e.size(),
        e.empty() ? 0.0 : e[static_cast<std::size_t>(0.95 * static_cast<double>(e.size() - 1))],
        e.empty() ? 0.0 : e.back(), 100.0 * (mass - mass_ref) / mass_ref);
  }
}

void ResidualCsv(const IdentificationReport& r, const std::string& path) {
  const Problem& problem = r.problem;
  const MethodResult& out = r.results[r.output];
  std::ostringstream csv;
  csv << "t,urdf_norm,urdf_mean," << out.name << "_norm," << out.name << "_mean\n";
  const Dataset& d = r.validations.front().second;
  const dynamics::Model before = WithParameters(problem, problem.prior);
  const dynamics::Model after = WithParameters(problem, out.x);
  dynamics::Workspace ws(*r.model);
  Eigen::VectorXd tau(r.model->nv), contact(r.model->nv);
  const int base = r.model->floating_base ? 6 : 0;
  for (const Sample& s : d.samples) {
    csv << s.t;
    for (const dynamics::Model* m : {&before, &after}) {
      PredictSample(problem, *m, ws, d.frames, s, m == &after ? out.x : problem.prior, tau,
                    contact);
      const Eigen::VectorXd res = (s.tau - tau).tail(r.model->nv - base);
      csv << ',' << res.norm() << ',' << res.mean();
    }
    csv << '\n';
  }
  WriteTextFile(path, csv.str());
  std::printf("wrote %s\n", path.c_str());
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  PipelineOptions o;
  o.friction = true;
  std::string truth_urdf, residual_csv;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--urdf")
        o.urdf_path = value();
      else if (a == "--truth-urdf")
        truth_urdf = value();
      else if (a == "--validate")
        o.validations.push_back(value());
      else if (a == "--methods")
        o.methods = Split(value());
      else if (a == "--sdp-rows")
        o.sdp_rows = value();
      else if (a == "--residual-csv")
        residual_csv = value();
      else
        o.recordings.push_back(a);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "heft-identify-proof: %s\n", e.what());
      return 2;
    }
  }
  if (o.urdf_path.empty() || truth_urdf.empty() || o.recordings.empty() ||
      (!residual_csv.empty() && o.validations.empty())) {
    std::fprintf(stderr,
                 "usage: heft-identify-proof --urdf F --truth-urdf F [--validate F]... "
                 "[--methods M,..] [--sdp-rows R] [--residual-csv F (needs --validate)] "
                 "TRAIN...\n");
    return 2;
  }
  try {
    PipelineHooks hooks;
    hooks.log = [](const std::string& msg) { std::printf("%s\n", msg.c_str()); };
    IdentificationReport r = RunIdentification(o, hooks);
    for (const auto& f : r.failures) std::fprintf(stderr, "heft-identify-proof: %s\n", f.c_str());
    const dynamics::Model truth_model =
        dynamics::LoadModelFromUrdfFile(truth_urdf, dynamics::ModelOptions{});
    Eigen::VectorXd truth = r.problem.prior;
    truth.head(r.problem.inertial_size()) = r.problem.selection.Gather(truth_model);
    // The truth's row in the RMSE table, after the URDF's.
    r.evaluations.insert(r.evaluations.begin() + 1, Evaluate(r, "truth", truth));
    std::printf("%s", FormatReport(r).c_str());
    Recovery(r, truth);
    if (!residual_csv.empty()) ResidualCsv(r, residual_csv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heft-identify-proof: %s\n", e.what());
    return 1;
  }
  return 0;
}

// What test_identification.cpp and test_identification_sdp.cpp share: the nominal humanoid, the
// perturbed truth's training (18 s) and validation (6 s) recordings, simulated once per test
// program, and the recovery error over the unknowns the report calls identified.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "heft/identification/identify.hpp"
#include "motion.hpp"

namespace heft::identification::test {

inline const std::string kUrdf = std::string(HEFT_ROBOTS_DIR) + "/heft_humanoid.urdf";

inline dynamics::Model Nominal() {
  return dynamics::LoadModelFromUrdfFile(kUrdf, dynamics::ModelOptions{});
}

// Shared data: the perturbed humanoid's training and validation recordings (once per test run).
struct Data {
  dynamics::Model nominal = Nominal();
  dynamics::Model truth = test::PerturbedTruth(nominal);
  Dataset train, valid;
  Data() {
    test::SimSpec spec;
    spec.duration = 18.0;
    spec.coulomb = 0.4;
    spec.viscous = 0.3;
    DatasetOptions opt;
    train = PrepareDataset(nominal, {test::Simulate(truth, spec)}, opt);
    spec.seed = 2;
    spec.duration = 6.0;
    valid = PrepareDataset(nominal, {test::Simulate(truth, spec)}, opt);
  }
};
inline const Data& Shared() {
  static const Data data;
  return data;
}

// Recovery where the data identify: over the unknowns the report calls identified (σ below 10 % of
// their plausible size), the error relative to that size — worst and 95th percentile.
struct Recovery {
  int count = 0;
  double p95 = 0, worst = 0;
};
inline Recovery IdentifiedError(const Problem& p, const LeastSquaresResult& ls,
                                const Eigen::VectorXd& x, const Eigen::VectorXd& truth) {
  const Eigen::VectorXd scale = PriorScale(p);
  std::vector<double> e;
  for (int i = 0; i < p.size(); ++i)
    if (ls.report.relative_sigma[i] < 0.1) e.push_back(std::abs(x[i] - truth[i]) / scale[i]);
  Recovery r;
  r.count = static_cast<int>(e.size());
  if (e.empty()) return r;
  std::sort(e.begin(), e.end());
  r.worst = e.back();
  r.p95 = e[static_cast<std::size_t>(0.95 * static_cast<double>(e.size() - 1))];
  return r;
}

inline Eigen::VectorXd TruthVector(const Problem& p, const dynamics::Model& truth, double fc,
                                   double fv) {
  Eigen::VectorXd x(p.size());
  x.head(p.inertial_size()) = p.selection.Gather(truth);
  const int nj = p.joints();
  if (p.friction) {
    x.segment(p.inertial_size(), nj).setConstant(fc);
    x.segment(p.inertial_size() + nj, nj).setConstant(fv);
  }
  return x;
}

}  // namespace heft::identification::test

// The identified parameters' covariance (posterior.hpp): honest on a synthetic problem whose noise
// is known (NEES over Monte Carlo draws ≈ the dimension), widened by the fit's residual when the
// noise is larger than the model says, the prior's where the data see nothing; and its way into
// the estimator's model through robot.parameters (written, read back, refused when malformed).
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "heft/dynamics/nominal_uncertainty.hpp"
#include "heft/identification/output.hpp"
#include "heft/identification/pipeline.hpp"
#include "heft/identification/posterior.hpp"
#include "heft/plugin/plugin_config.hpp"
#include "motion.hpp"

namespace heft::identification {
namespace {

const std::string kUrdf = std::string(HEFT_ROBOTS_DIR) + "/heft_humanoid.urdf";
const std::vector<std::string> kArm = {"left_shoulder_roll_link", "left_upper_arm", "left_forearm",
                                       "left_hand"};

// A small synthetic problem: four bodies of the left arm, 6 s of the training motion with the
// reference robot's noise; only its whitened normal equations are used.
struct Arm {
  dynamics::Model nominal = dynamics::LoadModelFromUrdfFile(kUrdf, dynamics::ModelOptions{});
  Problem problem = MakeProblem(nominal, kArm, false);
  NormalEquations ne;
  Eigen::MatrixXd G;
  Arm() {
    test::SimSpec spec;
    spec.duration = 6.0;
    const Dataset d = PrepareDataset(nominal, {test::Simulate(nominal, spec)}, DatasetOptions{});
    ne = Accumulate(problem, d, Method::kFullWls, NoiseModel{});
    G = PriorFactor(problem);
  }
};
const Arm& SharedArm() {
  static const Arm arm;
  return arm;
}

// One draw of the problem's sufficient statistics, exactly as whitened rows y = K x + σ e with
// e ~ N(0, 1) give them: b = A x + σ A^½ η, c = ‖y‖² (η ~ N(0, 1) over A's range, the rest of
// ‖e‖² a χ² over the other rows).
NormalEquations Draw(const NormalEquations& ne, const Eigen::VectorXd& x, double sigma,
                     std::mt19937_64& rng) {
  static thread_local Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig;
  static thread_local const NormalEquations* cached = nullptr;
  if (cached != &ne) {
    eig.compute(ne.A);
    cached = &ne;
  }
  std::normal_distribution<double> gauss(0.0, 1.0);
  const Eigen::Index n = ne.A.rows();
  Eigen::VectorXd eta(n);
  for (Eigen::Index i = 0; i < n; ++i) eta[i] = gauss(rng);
  const Eigen::VectorXd root = eig.eigenvalues().cwiseMax(0.0).cwiseSqrt();
  const Eigen::VectorXd kte = eig.eigenvectors() * root.cwiseProduct(eta);  // Kᵀ e
  std::chi_squared_distribution<double> rest(static_cast<double>(ne.rows - n));
  NormalEquations d = ne;
  d.b = ne.A * x + sigma * kte;
  d.c =
      x.dot(ne.A * x) + 2.0 * sigma * x.dot(kte) + sigma * sigma * (eta.squaredNorm() + rest(rng));
  return d;
}

// (e ᵀ C⁺ e, rank C) over C's range.
std::pair<double, int> Nees(const Eigen::Matrix<double, 10, 10>& C, const dynamics::Vector10& e) {
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 10, 10>> eig(C);
  const double top = eig.eigenvalues().maxCoeff();
  double nees = 0.0;
  int rank = 0;
  for (int i = 0; i < 10; ++i) {
    const double l = eig.eigenvalues()[i];
    if (l <= 1e-10 * top) continue;
    ++rank;
    const double p = eig.eigenvectors().col(i).dot(e);
    nees += p * p / l;
  }
  return {nees, rank};
}

// Mean NEES per body over `draws` truths from the prior and noise σ·e, the posterior computed with
// the variance factor s² estimated from the residual (estimate) or 1 (the noise model's).
struct NeesResult {
  std::vector<double> mean;  // per body
  std::vector<int> rank;     // per body: its block's rank, the NEES's dof
  double s2 = 0.0;           // mean estimated variance factor
};
NeesResult MonteCarlo(const Arm& arm, double sigma, bool estimate, int draws) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> gauss(0.0, 1.0);
  const int nb = arm.problem.selection.size();
  NeesResult out;
  out.mean.assign(nb, 0.0);
  out.rank.assign(nb, 0);
  for (int k = 0; k < draws; ++k) {
    Eigen::VectorXd xi(arm.G.cols());
    for (Eigen::Index i = 0; i < xi.size(); ++i) xi[i] = gauss(rng);
    const Eigen::VectorXd truth = arm.problem.prior + arm.G * xi;
    const NormalEquations d = Draw(arm.ne, truth, sigma, rng);
    Posterior p = ComputePosterior(d, arm.problem.prior, arm.G, 1.0);
    if (estimate) {
      const double s2 = ResidualVarianceFactor(d, p.mean);
      out.s2 += s2 / draws;
      p = ComputePosterior(d, arm.problem.prior, arm.G, s2);
    }
    for (int b = 0; b < nb; ++b) {
      const auto [nees, rank] =
          Nees(p.Body(b), p.mean.segment<10>(10 * b) - truth.segment<10>(10 * b));
      out.mean[b] += nees / draws;
      out.rank[b] = rank;
    }
  }
  return out;
}

TEST(Posterior, NeesOverMonteCarloDrawsIsTheDimension) {
  // Truths drawn from the stated prior, noise from the noise model: each body's 10 × 10 block is
  // its marginal posterior, so the mean NEES over the draws is the block's rank r (mass, CoM,
  // principal moments, the axes' turns: 10, 9 for a body with two equal principal moments, whose
  // turn about the third changes nothing). Per body the mean of N χ²ᵣ has σ = √(2r / N); the bound
  // is 4 of those.
  // Fails if the blocks are not the posterior's (the unit-weight least-squares σ over the
  // identified subspace gives no variance to the prior's directions: NEES unbounded), or if the
  // information or the prior is scaled wrong.
  const Arm& arm = SharedArm();
  constexpr int kDraws = 400;
  const NeesResult r = MonteCarlo(arm, 1.0, false, kDraws);
  for (std::size_t b = 0; b < r.mean.size(); ++b) {
    const int dof = r.rank[b];
    EXPECT_GE(dof, 9) << kArm[b];
    const double tol = 4.0 * std::sqrt(2.0 * dof / kDraws);
    std::printf("%s: mean NEES %.3f (dof %d)\n", kArm[b].c_str(), r.mean[b], dof);
    EXPECT_NEAR(r.mean[b], dof, tol) << kArm[b];
  }
}

TEST(Posterior, AFitWorseThanTheNoiseModelWidensIt) {
  // The noise is three times what the model says: the residual's variance factor s² ≈ 9 and the
  // posterior scaled by it stays honest (mean NEES ≈ its dof); scaled by the noise model's 1 it is
  // overconfident (three- to fourfold here: the prior bounds what the noise can move). Fails if s²
  // is not the residual's variance per degree of freedom or is not applied.
  const Arm& arm = SharedArm();
  constexpr int kDraws = 200;
  const NeesResult honest = MonteCarlo(arm, 3.0, true, kDraws);
  const NeesResult unit = MonteCarlo(arm, 3.0, false, kDraws);
  // s²'s own spread over ~10⁴ rows is ≈ 1 %.
  EXPECT_NEAR(honest.s2, 9.0, 0.2);
  for (std::size_t b = 0; b < honest.mean.size(); ++b) {
    const int dof = honest.rank[b];
    const double tol = 4.0 * std::sqrt(2.0 * dof / kDraws);
    std::printf("%s: mean NEES %.3f with s² %.3f, %.3f with 1\n", kArm[b].c_str(), honest.mean[b],
                honest.s2, unit.mean[b]);
    EXPECT_NEAR(honest.mean[b], dof, tol) << kArm[b];
    EXPECT_GT(unit.mean[b], 2.0 * dof) << kArm[b];
  }
}

TEST(Posterior, WhatTheDataDoNotSeeKeepsThePriorsVariance) {
  // The hand as if the recording never excited it (its rows and columns of the normal equations
  // zero): its block is the prior's F Fᵀ and uncorrelated with the rest; the bodies the data see
  // end well inside their prior. Fails if the prior is dropped in the unseen directions (the old
  // σ: zero there) or leaks between bodies.
  const Arm& arm = SharedArm();
  NormalEquations ne = arm.ne;
  const int hand = 3;
  ne.A.middleRows(10 * hand, 10).setZero();
  ne.A.middleCols(10 * hand, 10).setZero();
  ne.b.segment<10>(10 * hand).setZero();
  const Posterior p = ComputePosterior(ne, arm.problem.prior, arm.G, 1.0);
  const dynamics::Vector10 pi = arm.problem.prior.segment<10>(10 * hand);
  const Eigen::Matrix<double, 10, 10> F = dynamics::NominalFactor(pi, {0.03, 0.01, 0.10, 0.10});
  const Eigen::Matrix<double, 10, 10> prior = F * F.transpose();
  EXPECT_LT((p.Body(hand) - prior).norm(), 1e-9 * prior.norm());
  EXPECT_LT(p.covariance.block(10 * hand, 0, 10, 10 * hand).norm(), 1e-9 * prior.norm());
  // The forearm: the data only take variance away (prior − posterior ⪰ 0), and some entry of π
  // (a first moment across the elbow's axis) they fix to under half its prior σ.
  const int forearm = 2;
  const Eigen::Matrix<double, 10, 10> fprior =
      arm.G.middleRows(10 * forearm, 10) * arm.G.middleRows(10 * forearm, 10).transpose();
  const Eigen::Matrix<double, 10, 10> fpost = p.Body(forearm);
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 10, 10>> gain(fprior - fpost);
  EXPECT_GT(gain.eigenvalues().minCoeff(), -1e-12 * fprior.norm());
  double best = 1.0;
  for (int i = 0; i < 10; ++i)
    if (fprior(i, i) > 0) best = std::min(best, std::sqrt(fpost(i, i) / fprior(i, i)));
  std::printf("forearm: smallest posterior σ / prior σ over π's entries %.3f\n", best);
  EXPECT_LT(best, 0.5);
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("heft_posterior_" + name)).string();
}

// A joint whose torque comes from a motor current (PipelineOptions::torque_from_current): its
// gain's plausible size and prior σ are the conversion's uncertainty, the others' the torque
// sensors' 0.05 (or held). Fails if PriorScale or PriorFactor ignores a per-joint size, or uses it
// on another joint.
TEST(Posterior, AGainFromCurrentHasTheConversionsUncertainty) {
  const dynamics::Model model = dynamics::LoadModelFromUrdfFile(kUrdf, dynamics::ModelOptions{});
  ProblemTerms terms;
  terms.gains = true;
  Problem p = MakeProblem(model, kArm, terms);
  const int nj = p.joints(), g0 = p.gain_begin(), ni = p.inertial_size();
  ASSERT_GT(nj, 2);
  EXPECT_DOUBLE_EQ(PriorScale(p)[g0 + 1], 0.05);  // no sizes: every joint a torque sensor
  p.gain_size = Eigen::VectorXd::Constant(nj, kHeldGain);
  p.gain_size[1] = 0.1;
  const Eigen::VectorXd scale = PriorScale(p);
  const Eigen::MatrixXd G = PriorFactor(p);
  const auto k = static_cast<int>(G.cols()) - (p.size() - ni);  // the first nuisance column
  for (int j = 0; j < nj; ++j) {
    EXPECT_DOUBLE_EQ(scale[g0 + j], j == 1 ? 0.1 : kHeldGain) << p.names[g0 + j];
    EXPECT_DOUBLE_EQ(G(g0 + j, k + g0 - ni + j), j == 1 ? 0.1 : kHeldGain) << p.names[g0 + j];
  }
}

// Each joint's Coulomb friction is written with its posterior σ (`fc_sigma`), and the service
// reads it into JointFriction::coulomb_sigma. Information on the first joint's F_c only (as when
// only it slides in the recording): its σ shrinks, every other joint keeps its prior's (1 N·m).
// Fails if fc_sigma is not written, is not the posterior's, or is not read.
TEST(Posterior, EachFrictionIsWrittenAndReadWithItsSigma) {
  const dynamics::Model model = dynamics::LoadModelFromUrdfFile(kUrdf, dynamics::ModelOptions{});
  ProblemTerms terms;
  terms.friction = true;
  const Problem p = MakeProblem(model, kArm, terms);
  const int n = p.size(), ni = p.inertial_size();
  NormalEquations ne;
  ne.A = Eigen::MatrixXd::Identity(n, n) * 1e-12;
  ne.b = Eigen::VectorXd::Zero(n);
  ne.A(ni, ni) = 1e6;  // σ = 1e-3 N·m on the first joint's F_c
  const Posterior post = ComputePosterior(ne, p.prior, PriorFactor(p), 1.0);
  Identifiability rep;
  rep.identifiable_share = Eigen::VectorXd::Ones(n);
  rep.sigma = Eigen::VectorXd::Zero(n);
  const std::string path = TempPath("friction_params.yaml");
  std::ofstream(path) << ParametersYaml(p, p.prior, rep, FitStatistics{}, &post);
  const std::vector<estimator::JointFriction> read = plugin::ReadNominalFriction(path, model);
  ASSERT_EQ(static_cast<int>(read.size()), p.joints());
  EXPECT_NEAR(read[0].coulomb_sigma, 1e-3, 1e-5) << read[0].joint;
  for (std::size_t j = 1; j < read.size(); ++j)
    EXPECT_NEAR(read[j].coulomb_sigma, PriorUncertainty{}.friction, 1e-6) << read[j].joint;
}

TEST(Posterior, TheEstimatorsModelReadsTheCovarianceAndRefusesABadOne) {
  // heft-identify's YAML with a posterior: every link's `covariance` reaches Body::covariance
  // (to its 9 printed digits) and `sigma` is √diag of it; a covariance that is not 100 finite
  // numbers, symmetric and positive semidefinite is refused naming the file, the link's key and
  // what is wrong. Fails if the loader drops or garbles the matrix or accepts a bad one.
  const Arm& arm = SharedArm();
  const Posterior p = ComputePosterior(arm.ne, arm.problem.prior, arm.G, 1.0);
  Identifiability rep;
  rep.identifiable_share = Eigen::VectorXd::Ones(arm.problem.size());
  rep.sigma = Eigen::VectorXd::Zero(arm.problem.size());
  const std::string path = TempPath("params.yaml");
  const std::string yaml = ParametersYaml(arm.problem, p.mean, rep, FitStatistics{}, &p);
  std::ofstream(path) << yaml;
  dynamics::Model m = arm.nominal;
  plugin::ApplyNominalParameters(path, m);
  for (std::size_t k = 0; k < kArm.size(); ++k) {
    const int b = m.body_index(kArm[k]);
    ASSERT_TRUE(m.bodies[b].covariance.has_value()) << kArm[k];
    const Eigen::Matrix<double, 10, 10> want = p.Body(static_cast<int>(k));
    EXPECT_LT((*m.bodies[b].covariance - want).norm(), 1e-8 * want.norm()) << kArm[k];
  }
  EXPECT_FALSE(m.bodies[m.body_index("right_forearm")].covariance.has_value());
  const std::string sigma0 = "sigma: [" + [&] {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", std::sqrt(p.Body(0)(0, 0)));
    return std::string(buf);
  }();
  EXPECT_NE(yaml.find(sigma0), std::string::npos) << "sigma is not √diag of the covariance";

  auto matrix = [](const Eigen::Matrix<double, 10, 10>& c, int count) {
    std::string s = "[";
    for (int i = 0; i < count; ++i) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.9g", c(i / 10, i % 10));
      s += (i ? ", " : "") + std::string(buf);
    }
    return s + "]";
  };
  auto refused = [&](const std::string& cov, const std::string& what) {
    const std::string bad = TempPath("bad_params.yaml");
    std::ofstream(bad) << "links:\n  torso: {pi: [30, 0, 0, 3, 3, 0, 0, 3, 0, 1], covariance: "
                       << cov << "}\n";
    dynamics::Model mm = arm.nominal;
    try {
      plugin::ApplyNominalParameters(bad, mm);
      ADD_FAILURE() << "accepted " << cov.substr(0, 60);
    } catch (const std::exception& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(what), std::string::npos) << msg;
      EXPECT_NE(msg.find("bad_params.yaml"), std::string::npos) << msg;
      EXPECT_NE(msg.find("links.torso.covariance"), std::string::npos) << msg;
    }
  };
  const Eigen::Matrix<double, 10, 10> good = p.Body(2);
  Eigen::Matrix<double, 10, 10> skew = good;
  skew(0, 1) += 0.1 * good(0, 0);
  refused(matrix(skew, 100), "not symmetric");
  Eigen::Matrix<double, 10, 10> indefinite = good;
  indefinite(0, 0) = -good(0, 0);
  refused(matrix(indefinite, 100), "not positive semidefinite");
  refused(matrix(good, 99), "100");
  refused("[.nan" + matrix(good, 100).substr(matrix(good, 100).find(',')), "not a finite number");
}

}  // namespace
}  // namespace heft::identification

#include "heft/identification/posterior.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <stdexcept>

#include "heft/dynamics/nominal_uncertainty.hpp"

namespace heft::identification {

Eigen::MatrixXd PriorFactor(const Problem& problem, const PriorUncertainty& prior) {
  const int nb = problem.selection.size(), ni = problem.inertial_size(), n = problem.size();
  constexpr int kBody = dynamics::kNominalColumns;
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(n, kBody * nb + (n - ni));
  for (int b = 0; b < nb; ++b)
    G.block<10, kBody>(10 * b, kBody * b) =
        dynamics::NominalFactor(problem.prior.segment<10>(10 * b), prior.body);
  Eigen::VectorXd sigma = Eigen::VectorXd::Constant(n - ni, prior.friction);
  const int nj = problem.joints();
  if (problem.offsets)
    sigma.segment(problem.offset_begin() - ni, nj).setConstant(prior.torque_offset);
  if (problem.gains)
    sigma.segment(problem.gain_begin() - ni, nj) =
        problem.gain_size.size() == nj ? problem.gain_size
                                       : Eigen::VectorXd::Constant(nj, prior.torque_gain);
  for (std::size_t c = 0; c < 6 * problem.ft_frames.size(); ++c)
    sigma[problem.ft_begin() - ni + static_cast<int>(c)] =
        c % 6 < 3 ? prior.ft_force : prior.ft_moment;
  for (int i = 0; i < n - ni; ++i) G(ni + i, kBody * nb + i) = sigma[i];
  return G;
}

Posterior ComputePosterior(const NormalEquations& ne, const Eigen::VectorXd& prior_mean,
                           const Eigen::MatrixXd& G, double variance_factor) {
  if (!(variance_factor > 0.0) || G.rows() != ne.A.rows() || prior_mean.size() != G.rows())
    throw std::invalid_argument("ComputePosterior: sizes or variance factor do not fit");
  // M = 1 + Gᵀ A G / f; Σ_post = G M⁻¹ Gᵀ; mean = x₀ + G M⁻¹ Gᵀ (b − A x₀) / f.
  Eigen::MatrixXd M = G.transpose() * ne.A * G / variance_factor;
  M.diagonal().array() += 1.0;
  const Eigen::LLT<Eigen::MatrixXd> llt(M);
  if (llt.info() != Eigen::Success)
    throw std::runtime_error("ComputePosterior: the information matrix is not positive definite");
  const Eigen::MatrixXd MinvGt = llt.solve(G.transpose());
  Posterior p;
  p.variance_factor = variance_factor;
  p.covariance = G * MinvGt;
  p.covariance = 0.5 * (p.covariance + p.covariance.transpose()).eval();
  p.mean = prior_mean + G * (MinvGt * (ne.b - ne.A * prior_mean)) / variance_factor;
  return p;
}

double ResidualVarianceFactor(const NormalEquations& ne, const Eigen::VectorXd& x) {
  const double res = x.dot(ne.A * x) - 2.0 * ne.b.dot(x) + ne.c;
  const long dof = ne.rows - static_cast<long>(x.size());
  if (dof <= 0) throw std::invalid_argument("ResidualVarianceFactor: fewer rows than unknowns");
  return std::max(0.0, res) / static_cast<double>(dof);
}

double ResidualCorrelation(const Problem& problem, const Dataset& data, const Eigen::VectorXd& x,
                           int batch) {
  const dynamics::Model model = WithParameters(problem, x);
  dynamics::Workspace ws(model);
  const int nv = model.nv, base = model.floating_base ? 6 : 0, nj = nv - base;
  Eigen::VectorXd tau(nv), contact(nv), sum = Eigen::VectorXd::Zero(nj);
  Eigen::VectorXd samples_sq = Eigen::VectorXd::Zero(nj), means_sq = Eigen::VectorXd::Zero(nj);
  long count = 0, batches = 0;
  int in_batch = 0;
  for (const Sample& s : data.samples) {
    PredictSample(problem, model, ws, data.frames, s, x, tau, contact);
    const Eigen::VectorXd r = (s.tau - tau).tail(nj);
    samples_sq += r.cwiseAbs2();
    ++count;
    sum += r;
    if (++in_batch == batch) {
      means_sq += (sum / batch).cwiseAbs2();
      ++batches;
      sum.setZero();
      in_batch = 0;
    }
  }
  if (batches < 2) return 1.0;
  // Per joint, uncentred (a constant residual, an unmodelled offset, does not average out
  // either); the largest over the joints whose residual is not negligible (above 1 % of the
  // mean square), since an unknown's information may come from that joint's rows alone.
  const double mean_sq = samples_sq.sum() / static_cast<double>(nj);
  double kappa = 1.0;
  for (int j = 0; j < nj; ++j) {
    if (!(samples_sq[j] > 0.01 * mean_sq)) continue;
    kappa = std::max(kappa, batch * (means_sq[j] / static_cast<double>(batches)) /
                                (samples_sq[j] / static_cast<double>(count)));
  }
  return kappa;
}

}  // namespace heft::identification

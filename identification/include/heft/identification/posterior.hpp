// The identified parameters' covariance, for the estimator's nominal model (robot.parameters'
// `covariance`): the Gaussian posterior of the linear problem
//
//   Σ_post = (Σ_prior⁻¹ + A / f)⁻¹,   f = s² · κ
//
// with A the whitened normal matrix of the rows fitted (NormalEquations::A), Σ_prior the URDF's
// stated uncertainty (dynamics::NominalFactor per body: mass 3 %, CoM 10 mm per axis, principal
// moments 10 % about the CoM, at least m·(10 mm)², principal axes 0.1 rad; wide priors on the
// nuisance unknowns), s² the residual's variance factor at the solution (an imperfect fit widens
// it) and κ the residual's correlation time in samples (the rows are low-passed and the model's
// error is slow: fewer independent rows than there are rows). Σ_prior may be singular (a sphere's
// axes, a massless body), so the posterior is computed in the prior's factor G (Σ_prior = G Gᵀ)
// and never inverts it: Σ_post = G (1 + Gᵀ A G / f)⁻¹ Gᵀ. Directions the data do not see keep the
// prior's variance. The model is linear in every unknown, so the SDP's solution changes only f (its
// residual); its constraints are not part of the posterior. Set-up only (batch, allocates).
#pragma once

#include <vector>

#include "heft/dynamics/nominal_uncertainty.hpp"
#include "heft/identification/dataset.hpp"
#include "heft/identification/identify.hpp"

namespace heft::identification {

// The prior's standard deviations.
struct PriorUncertainty {
  dynamics::NominalSigmas body;             // each body's: the estimator's nominal_uncertainty
  double friction = 1.0;                    // N·m (Coulomb) and N·m·s/rad (viscous)
  double torque_offset = 1.0;               // N·m
  double torque_gain = 0.05;                // relative
  double ft_force = 10.0, ft_moment = 1.0;  // N, N·m per axis of a cell
};

// G (n × k): the prior's factor, Σ_prior = G Gᵀ; dynamics::kNominalColumns per body, one per
// nuisance unknown.
Eigen::MatrixXd PriorFactor(const Problem& problem, const PriorUncertainty& prior = {});

struct Posterior {
  Eigen::MatrixXd covariance;    // n × n, every unknown
  Eigen::VectorXd mean;          // the linear problem's posterior mean (prior: the problem's prior)
  double variance_factor = 1.0;  // f = s² · κ, as applied
  // Per chosen body, its 10 × 10 block of `covariance` (π, body frame, at the body origin).
  Eigen::Matrix<double, 10, 10> Body(int k) const {
    return covariance.block<10, 10>(10 * k, 10 * k);
  }
};

// The posterior with the normal equations' information divided by `variance_factor`.
Posterior ComputePosterior(const NormalEquations& ne, const Eigen::VectorXd& prior_mean,
                           const Eigen::MatrixXd& G, double variance_factor);

// s² = ‖Kx − y‖²_W / (rows − unknowns): the whitened residual's variance at x (1 when the noise
// model explains the residual).
double ResidualVarianceFactor(const NormalEquations& ne, const Eigen::VectorXd& x);

// κ ≥ 1: the joint torques' prediction residual's correlation time in samples, by batch means
// (batches of `batch` samples: κ_j = batch · mean(batch mean²) / mean(residual²) per joint,
// uncentred; the largest over the joints whose residual is not negligible). 1 for a white
// residual; the low-pass and a slowly varying model error raise it.
double ResidualCorrelation(const Problem& problem, const Dataset& data, const Eigen::VectorXd& x,
                           int batch = 100);

}  // namespace heft::identification

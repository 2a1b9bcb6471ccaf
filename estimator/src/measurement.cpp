#include "heft/estimator/measurement.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "heft/estimator/inertial_estimator.hpp"
#include "heft/estimator/nominal_uncertainty.hpp"
#include "sparse_whitening.hpp"

namespace heft::estimator {
namespace {

// One whitened row's noise variance: its σ², plus on a joint row the torque's scale term
// (scale · τ_obs)² (EstimatorConfig::joint_torque_scale(s); 0 on the base's rows). Both whitening
// paths read it.
double RowVariance(double sigma, double scale, double tau) noexcept {
  const double scaled = scale * tau;
  return sigma * sigma + scaled * scaled;
}

// Each row's torque scale: 0 on the base's rows, the joint's own or the common one on a joint's.
void ReadRowScales(const dynamics::Model& model, const EstimatorConfig& config,
                   Eigen::VectorXd& scale) {
  const int first_joint = model.floating_base ? 6 : 0;
  const auto joints = static_cast<std::size_t>(model.nv - first_joint);
  if (!config.joint_torque_scales.empty() && config.joint_torque_scales.size() != joints)
    throw std::invalid_argument("estimator: joint_torque_scales: one value per joint (" +
                                std::to_string(joints) + "), not " +
                                std::to_string(config.joint_torque_scales.size()));
  scale.setZero(model.nv);
  for (int i = first_joint; i < model.nv; ++i)
    scale[i] = config.joint_torque_scales.empty()
                   ? config.joint_torque_scale
                   : config.joint_torque_scales[static_cast<std::size_t>(i - first_joint)];
  if (!((scale.array() >= 0.0).all() && (scale.array() < 1.0).all()))
    throw std::invalid_argument("estimator: joint_torque_scale(s) must be in [0, 1)");
}

// The nominal model's friction (estimator.friction): per entry its joint's v index, F_c and F_v.
void ReadFriction(const dynamics::Model& model, const EstimatorConfig& config,
                  std::vector<int>& friction_v, std::vector<double>& friction_coulomb,
                  std::vector<double>& friction_viscous, std::vector<double>& friction_held) {
  for (const JointFriction& f : config.friction) {
    int v = -1;
    for (const dynamics::Body& b : model.bodies)
      if (b.joint.type != dynamics::JointType::kFree && b.joint.name == f.joint) v = b.v_index;
    if (v < 0)
      throw std::invalid_argument("estimator.friction: '" + f.joint +
                                  "' is not a 1-DoF joint of the model");
    if (!std::isfinite(f.coulomb) || !std::isfinite(f.viscous))
      throw std::invalid_argument("estimator.friction: '" + f.joint + "' has a non-finite value");
    if (!(f.coulomb_sigma >= 0.0) || !std::isfinite(f.coulomb_sigma))
      throw std::invalid_argument("estimator.friction: '" + f.joint +
                                  "' has a Coulomb σ that is not a finite value ≥ 0");
    friction_v.push_back(v);
    friction_coulomb.push_back(f.coulomb);
    friction_viscous.push_back(f.viscous);
    friction_held.push_back(std::hypot(f.coulomb, f.coulomb_sigma));
  }
}

// Per friction entry: 1 when its joint lies on the path from the root to one of `bodies` (its row
// carries that body's weight and motion).
std::vector<unsigned char> JointsSupporting(const dynamics::Model& model,
                                            const std::vector<int>& friction_v,
                                            const std::vector<int>& bodies) {
  std::vector<unsigned char> on_path(static_cast<std::size_t>(model.nv), 0);
  for (int b : bodies)
    for (; b != dynamics::kWorld; b = model.bodies[b].parent)
      if (model.bodies[b].joint.type != dynamics::JointType::kFree)
        on_path[static_cast<std::size_t>(model.bodies[b].v_index)] = 1;
  std::vector<unsigned char> out;
  for (const int v : friction_v) out.push_back(on_path[static_cast<std::size_t>(v)]);
  return out;
}

// The F/T cells' noise (estimator.noise.ft) per contact frame; `ft_noise`: whether any is > 0.
void ReadFtNoise(const EstimatorConfig& config, std::vector<double>& ft_force_sigma,
                 std::vector<double>& ft_moment_sigma, bool& ft_noise) {
  for (const FtNoise& n : config.ft_noise) {
    const auto it = std::find(config.contact_frames.begin(), config.contact_frames.end(), n.frame);
    if (it == config.contact_frames.end())
      throw std::invalid_argument("estimator.noise.ft: '" + n.frame +
                                  "' is not a force/torque cell frame");
    if (!(n.force >= 0.0) || !(n.moment >= 0.0))
      throw std::invalid_argument("estimator.noise.ft: noise of '" + n.frame + "' must be >= 0");
    const auto k = static_cast<std::size_t>(it - config.contact_frames.begin());
    ft_force_sigma[k] = n.force;
    ft_moment_sigma[k] = n.moment;
    ft_noise = ft_noise || n.force > 0.0 || n.moment > 0.0;
  }
}

// Each row's σ: the base's force and torque rows, then the joints' (one for all, or per joint).
void ReadRowSigmas(const dynamics::Model& model, const EstimatorConfig& config,
                   Eigen::VectorXd& row_sigma) {
  const int nv = model.nv;
  row_sigma.resize(nv);
  const int first_joint = model.floating_base ? 6 : 0;
  if (model.floating_base) {
    row_sigma.head<3>().setConstant(config.base_force_sigma);
    row_sigma.segment<3>(3).setConstant(config.base_torque_sigma);
  }
  for (int i = first_joint; i < nv; ++i)
    row_sigma[i] = config.joint_torque_sigmas.empty() ? config.joint_torque_sigma
                                                      : config.joint_torque_sigmas[i - first_joint];
  if ((row_sigma.array() <= 0.0).any())
    throw std::invalid_argument("estimator: noise sigmas must be > 0");
}

// The null-space measurement's factorisations, one per number of contacts c = 0 … nc, sized once.
void SizeNullSpaceFactorisations(int nv, int nc, std::vector<Eigen::MatrixXd>& jct,
                                 std::vector<Eigen::HouseholderQR<Eigen::MatrixXd>>& qr,
                                 std::vector<Eigen::LLT<Eigen::MatrixXd>>& rllt) {
  // Reserved first: Eigen's decompositions must not be copied before they have computed something
  // (their status member is uninitialised until then).
  jct.reserve(nc + 1);
  qr.reserve(nc + 1);
  rllt.reserve(nc + 1);
  for (int c = 0; c <= nc; ++c) {
    const int rows = std::max(nv - 6 * c, 1);
    jct.emplace_back(Eigen::MatrixXd::Zero(nv, std::max(6 * c, 1)));
    qr.emplace_back(nv, std::max(6 * c, 1));
    rllt.emplace_back(rows);
    rllt.back().compute(Eigen::MatrixXd::Identity(rows, rows));
  }
}

}  // namespace

Measurement::Measurement(const dynamics::Model& model,
                         const dynamics::RegressorSelection& selection,
                         const EstimatorConfig& config)
    : model_(model),
      selection_(selection),
      ws_(model_),
      nv_(model_.nv),
      n_(10 * selection.size()),
      friction_epsilon_(config.friction_epsilon) {
  for (const std::string& frame : config.contact_frames)
    contact_frames_.push_back(model_.frame_index(frame));
  if (!(config.friction_epsilon > 0.0))
    throw std::invalid_argument("estimator: friction epsilon must be > 0");
  ReadFriction(model_, config, friction_v_, friction_coulomb_, friction_viscous_, friction_held_);
  stiction_width_.assign(friction_v_.size(), 0.0);
  held_width_.assign(friction_v_.size(), 0.0);
  dropped_.assign(friction_v_.size(), 0);
  stiction_band_ = config.stiction_band;
  {
    // A joint between the base and a foot cell that supports no estimated link (StictionBand).
    std::vector<int> feet;
    for (const int f : contact_frames_) feet.push_back(model_.frames[f].body);
    const auto sees_estimate = JointsSupporting(model_, friction_v_, selection_.bodies());
    const auto carries_contact = JointsSupporting(model_, friction_v_, feet);
    for (std::size_t j = 0; j < friction_v_.size(); ++j)
      leg_only_.push_back(carries_contact[j] && !sees_estimate[j]);
  }
  ft_force_sigma_.assign(contact_frames_.size(), 0.0);
  ft_moment_sigma_.assign(contact_frames_.size(), 0.0);
  ReadFtNoise(config, ft_force_sigma_, ft_moment_sigma_, ft_noise_);
  ReadRowSigmas(model_, config, row_sigma_);
  if (!(config.joint_torque_scale >= 0.0 && config.joint_torque_scale < 1.0))
    throw std::invalid_argument("estimator: joint_torque_scale must be in [0, 1)");
  ReadRowScales(model_, config, torque_scale_);

  if (config.consider_nominal) ReadConsiderBodies(model_, selection_, config);
  Y_.resize(nv_, n_);
  H_.resize(nv_, n_ + nc_);
  C_.setZero(nv_, nc_);
  consider_bias_.setZero(nv_, nc_);
  tau_nom_.resize(nv_);
  r_.resize(nv_);
  innovation_.resize(nv_);
  contact_.resize(nv_);
  z_.resize(nv_);
  row_scale_.setOnes(nv_);
  jac_.resize(6, nv_);
  qy_.resize(nv_, std::max(n_ + nc_, nv_) + 1);
  rfull_.resize(nv_, nv_);
  l_inverse_.setZero(nv_, nv_);
  whiten_column_.setZero(nv_);
  dense_rows_ = model_.floating_base ? 6 : 0;  // the base's rows: in every column's support
  whiten_top_.setZero(dense_rows_, n_ + nc_);
  if (config.acceleration_sigma.size() != 0) {
    if (config.acceleration_sigma.size() != nv_ ||
        !(config.acceleration_sigma.array() >= 0.0).all() || !config.acceleration_sigma.allFinite())
      throw std::invalid_argument("estimator: acceleration noise needs " + std::to_string(nv_) +
                                  " finite values >= 0");
    acceleration_noise_ = (config.acceleration_sigma.array() > 0.0).any();
    acceleration_sigma_ = config.acceleration_sigma;
    mass_.setZero(nv_, nv_);
    mass_scaled_.setZero(nv_, nv_);
  }
  const Eigen::Index k_max = 6 * std::max<Eigen::Index>(contact_frames_.size(), 1);
  const Eigen::Index cols_max = std::max(n_ + nc_, nv_) + 1;
  wy_v_.setZero(nv_, k_max);
  wy_t_.setZero(k_max, k_max);
  wy_s_.setZero(k_max);
  wy_w_.setZero(k_max, cols_max);
  wy_w2_.setZero(k_max, cols_max);
  wy_p_.setZero(k_max, cols_max);
  wy_u_.setZero(nv_, k_max);
  wy_u2_.setZero(nv_, k_max);
  ft_llt_.compute(Eigen::MatrixXd::Identity(nv_, nv_));  // sized (and initialised) once
  SizeNullSpaceFactorisations(nv_, static_cast<int>(contact_frames_.size()), jct_, qr_, rllt_);
}

void Measurement::ReadConsiderBodies(const dynamics::Model& model,
                                     const dynamics::RegressorSelection& selection,
                                     const EstimatorConfig& config) {
  const EstimatorConfig::NominalUncertainty& u = config.nominal_uncertainty;
  for (int b = 0; b < model.num_bodies(); ++b) {
    const dynamics::Vector10 pi = model.bodies[b].parameters;
    if (selection.mask()[b] || !(pi[0] > 0.0)) continue;  // estimated, or massless
    // The principal moments and axes do not move the mass and first moment: F's first four
    // columns and rows factor their covariance.
    const Eigen::Matrix4d factor = NominalFactor(pi, u).topLeftCorner<4, 4>();
    if (!factor.allFinite() || factor.isZero()) continue;
    consider_bodies_.push_back(b);
    consider_factors_.push_back(factor);
  }
  nc_others_ = 4 * static_cast<int>(consider_bodies_.size());
  // A torque sensor's scale error is the same on every tick: τ_sensed = (1 + g) τ.
  // (torque_scale_ is read before: ReadRowScales.)
  nc_gain_ = (torque_scale_.array() > 0.0).any() ? model.nv - (model.floating_base ? 6 : 0) : 0;
  for (const int b : selection.bodies())
    own_factors_.push_back(NominalFactor(model.bodies[b].parameters, u));
  // Static friction: a joint at rest is held anywhere within ±F_c, which the model's
  // F_c tanh(q̇/ε) calls 0. Two columns per friction joint, each non-zero on its own row only: the
  // friction held while a calibration averaged (its bias took it; AccumulateConsider) and the
  // friction held now (Residual). Every friction joint, not only those supporting an estimated
  // link: the null-space projection, the F/T cells' and the accelerations' noise correlate their
  // rows with the rows that see the links.
  held_index_.assign(friction_v_.size(), -1);
  for (std::size_t j = 0; j < friction_v_.size(); ++j)
    if (friction_held_[j] != 0.0) {
      held_index_[j] = static_cast<int>(stiction_entries_.size());
      stiction_entries_.push_back(static_cast<int>(j));
    }
  // The prior's own error, ten columns on each link the prior pulls.
  for (const std::string& link : config.bodies)
    nc_prior_ += LinkPriorTimeConstant(config, link) > 0.0 ? 10 : 0;
  nc_ = nc_others_ + nc_gain_ + dynamics::kNominalColumns * static_cast<int>(own_factors_.size()) +
        2 * static_cast<int>(stiction_entries_.size()) + nc_prior_;
}

void Measurement::AccumulateConsider(Eigen::Ref<Eigen::MatrixXd> sum) const noexcept {
  if (nc_ == 0) return;
  sum.leftCols(nc_others_ + nc_gain_) += C_.leftCols(nc_others_ + nc_gain_);
  for (std::size_t k = 0; k < own_factors_.size(); ++k)
    sum.middleCols<dynamics::kNominalColumns>(own_column(static_cast<int>(k))).noalias() +=
        Y_.middleCols<10>(10 * static_cast<Eigen::Index>(k)) * own_factors_[k];
  // The static friction held at this tick, anywhere within ±w (the band's half-width): the bias
  // takes it with the residual, one standard deviation w of a friction held at either edge (with
  // F_c's own uncertainty: held_width_). (The friction held now, the next columns, is another
  // parameter: nothing of it enters the bias.)
  const int first = stiction_column();
  for (std::size_t k = 0; k < stiction_entries_.size(); ++k) {
    const auto j = static_cast<std::size_t>(stiction_entries_[k]);
    sum(friction_v_[j], first + static_cast<int>(k)) += held_width_[j];
  }
}

void Measurement::Residual(const TickInput& in) noexcept {
  dropped_rows_ = 0;  // StictionBand sets dropped_ anew when it runs
  // Y_est and τ_nom (the nominal model of every other link, and its friction), r = τ_obs − τ_nom.
  dynamics::CondensedRegressor(model_, ws_, selection_, in.q, in.v, in.a, Y_, tau_nom_);
  if (nc_ > 0)
    dynamics::MassFirstMomentColumns(model_, ws_, consider_bodies_, consider_factors_,
                                     C_.leftCols(nc_others_));
  if (nc_gain_ > 0) {
    // Only the diagonal is ever non-zero (C_ starts at zero; the stiction band zeroes whole rows).
    const int first_joint = nv_ - nc_gain_;
    for (int j = 0; j < nc_gain_; ++j)
      C_(first_joint + j, nc_others_ + j) =
          torque_scale_[first_joint + j] * in.tau[first_joint + j];
  }
  // The nominal model's friction (heft-identify's model): τ_f = F_c tanh(q̇/ε) + F_v q̇.
  for (std::size_t j = 0; j < friction_v_.size(); ++j) {
    const double qd = in.v[friction_v_[j]];
    const double sliding = std::tanh(qd / friction_epsilon_);
    tau_nom_[friction_v_[j]] += friction_coulomb_[j] * sliding + friction_viscous_[j] * qd;
    const double held = 1.0 - std::abs(sliding);  // 1 at rest, 0 while sliding
    stiction_width_[j] = std::abs(friction_coulomb_[j]) * held;
    held_width_[j] = friction_held_[j] * held;
  }
  r_ = in.tau - tau_nom_;
  // The static friction held now: w on the joint's row, one standard deviation of a friction held
  // at either edge of its band (0 while the joint slides; with F_c's own uncertainty, held_width_).
  // StictionBand then drops a row whose innovation lies inside the band, these columns with it,
  // and gives a shifted row's column the innovation's sign.
  if (nc_ > 0) {
    const int first = held_column();
    for (std::size_t k = 0; k < stiction_entries_.size(); ++k) {
      const auto j = static_cast<std::size_t>(stiction_entries_[k]);
      C_(friction_v_[j], first + static_cast<int>(k)) = held_width_[j];
    }
  }
}

void Measurement::StictionBand(const Eigen::VectorXd& estimate, bool null_space) noexcept {
  if (!stiction_band_ || friction_v_.empty() || estimate.size() != n_) return;
  // ν = r − Y_est π̂ row by row; in the null space its part no contact wrench can carry, since the
  // rows themselves hold the feet's unknown wrench (J_cᵀλ: the robot's weight through the legs),
  // which would decide the band for every leg joint.
  innovation_ = r_;
  innovation_.noalias() -= Y_ * estimate;
  if (null_space) ProjectOntoNullSpace(innovation_);
  for (std::size_t j = 0; j < friction_v_.size(); ++j) {
    dropped_[j] = 0;
    const double w = stiction_width_[j];
    if (!(w > 0.0)) continue;
    const int v = friction_v_[j];
    const double nu = innovation_[v];
    // A held joint between the base and a foot cell that supports no estimated link: its row
    // holds the cell's wrench, as the base's rows do, and R correlates the two (the cells' and
    // the accelerations' noise), so the row tells only their shared noise, and its static
    // friction, which takes up part of any load's change the foot carries, would be read as that
    // noise and passed into the base's rows. It is dropped whole while it holds. (In the null
    // space the legs' rows are the robot's weight: kept.)
    if (std::abs(nu) <= w || (!null_space && leg_only_[j])) {
      dropped_[j] = 1;
      // Inside the band the row says nothing: no sensitivity, no residual, and (below) a variance
      // that decouples it from the other rows.
      Y_.row(v).setZero();
      if (nc_ > 0) C_.row(v).setZero();  // no consider columns: C_ holds no storage to index
      r_[v] = 0.0;
      ++dropped_rows_;
    } else {
      r_[v] -= std::copysign(w, nu);
      // The shift takes the friction as held at the band's edge on ν's side, sign(ν)·w, which is
      // where a joint that a controller holds from the estimate has it once its load's change
      // exceeds the band. The shift's error, the joint's static friction against the model's F_c,
      // takes that sign too: a load that comes and goes flips it. (Residual wrote +w.)
      if (nc_ > 0 && held_index_[j] >= 0 && nu < 0.0)
        C_(v, held_column() + held_index_[j]) = -held_width_[j];
    }
  }
}

void Measurement::DecoupleDropped() noexcept {
  if (dropped_rows_ == 0) return;
  for (std::size_t j = 0; j < friction_v_.size(); ++j)
    if (dropped_[j]) rfull_(friction_v_[j], friction_v_[j]) += kDroppedVariance;
}

// r = τ_obs − τ_nom + Σ J_cᵀλ_c − bias, and the whitened rows H = W Y_est, z = W r.
bool Measurement::FullWrench(const TickInput& in, const Eigen::VectorXd* bias,
                             const Eigen::VectorXd* estimate) noexcept {
  Residual(in);
  if (!contact_frames_.empty()) {
    // One wrench per contact frame: a longer span's extra entries are not the model's (the caller
    // checked that the span reaches every frame: InertialEstimator::ChooseModel).
    if (in.wrenches.size() < contact_frames_.size()) return false;
    dynamics::ContactTerm(model_, ws_, contact_frames_, in.wrenches.first(contact_frames_.size()),
                          contact_);
    r_ += contact_;
  }
  if (bias != nullptr) r_ -= *bias;
  if (estimate != nullptr) StictionBand(*estimate, false);
  rows_ = nv_;
  if ((ft_noise_ && !contact_frames_.empty()) || acceleration_noise_) {
    // R = diag(σ²) + Σ_c J_cᵀ Σ_c J_c + M Σ_a Mᵀ, whitened by its Cholesky factor L: H = L⁻¹Y,
    // z = L⁻¹r.
    rfull_.setZero();
    SetRowVariances(in.tau);
    AddAccelerationNoise(in.q, true);  // its Cholesky factor reads the lower triangle only
    if (ft_noise_ && !contact_frames_.empty()) {
      dynamics::ForwardKinematics(model_, ws_, in.q);
      for (std::size_t k = 0; k < contact_frames_.size(); ++k) {
        if (ft_force_sigma_[k] <= 0.0 && ft_moment_sigma_[k] <= 0.0) continue;
        dynamics::FrameJacobian(model_, ws_, contact_frames_[k], jac_);
        jac_.topRows<3>() *= ft_force_sigma_[k];
        jac_.bottomRows<3>() *= ft_moment_sigma_[k];
        rfull_.selfadjointView<Eigen::Lower>().rankUpdate(jac_.transpose());
      }
    }
    DecoupleDropped();
    ft_llt_.compute(rfull_);
    if (ft_llt_.info() != Eigen::Success) return false;
    whitened_full_ = true;
  } else {
    whitened_full_ = false;
    for (int i = 0; i < nv_; ++i)
      row_scale_[i] = std::sqrt(RowVariance(row_sigma_[i], torque_scale_[i], in.tau[i]));
  }
  H_.leftCols(n_) = Y_;
  if (nc_ > 0 && bias != nullptr)
    H_.rightCols(nc_) = C_ - consider_bias_;  // one pass, not a copy and a subtraction
  else if (nc_ > 0)
    H_.rightCols(nc_) = C_;
  z_ = r_;
  if (whitened_full_) {
    // H's columns are mostly zeros before whitening (sparse_whitening.hpp): L⁻¹ once, then only
    // their non-zero entries.
    detail::LowerTriangularInverse(ft_llt_.matrixLLT(), l_inverse_);
    detail::ApplyLowerInverse(l_inverse_, dense_rows_, H_, whiten_top_, whiten_column_);
  } else {
    Whiten(H_);
  }
  Whiten(z_);
  return true;
}

void Measurement::Whiten(Eigen::Ref<Eigen::MatrixXd> v) const noexcept {
  if (whitened_full_) {
    ft_llt_.matrixL().solveInPlace(v);
  } else {
    v.array().colwise() /= row_scale_.array();
  }
}

void Measurement::SetRowVariances(const Eigen::Ref<const Eigen::VectorXd>& tau) noexcept {
  for (int i = 0; i < nv_; ++i) rfull_(i, i) = RowVariance(row_sigma_[i], torque_scale_[i], tau[i]);
}

void Measurement::AddAccelerationNoise(const Eigen::Ref<const Eigen::VectorXd>& q,
                                       bool lower_only) noexcept {
  if (!acceleration_noise_) return;
  // M Σ_a Mᵀ = (M D)(M D)ᵀ with D = diag(σ_a): its lower triangle for a Cholesky factor (half the
  // products), both triangles where the null-space path projects the whole matrix from both sides.
  dynamics::Crba(model_, ws_, q, mass_);
  mass_scaled_.noalias() = mass_ * acceleration_sigma_.asDiagonal();
  if (lower_only)
    rfull_.selfadjointView<Eigen::Lower>().rankUpdate(mass_scaled_);
  else
    rfull_.noalias() += mass_scaled_ * mass_scaled_.transpose();
}

}  // namespace heft::estimator

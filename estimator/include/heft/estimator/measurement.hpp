// The measurement of one control tick (Foster et al. eq. 14-15), whitened for the filter: rows
// H = W Y_est and z = W r with r the residual of the nominal model, in one of two forms:
// - FullWrench (eq. 14): r = τ − τ_nom + Σ_c J_cᵀ λ_c − bias over all nv rows, with the F/T cells'
//   wrenches λ_c; R = diag(σ²) + Σ_c J_cᵀ Σ_c J_c + M Σ_a Mᵀ.
// - TorqueNullSpace: the joint torques only, r = τ − τ_nom − bias projected onto the null space of
//   the contact Jacobians (Q₂ᵀ of a QR of [J_c1ᵀ … J_ckᵀ]), so that the unknown contact wrenches
//   drop out; for a robot without cells, or whose cells are not valid.
// τ_nom includes the nominal friction (heft-identify's model). The tick policy (which form, the
// filter, gating, rate limits) is InertialEstimator's.
//
// Set-up (the constructor) validates and allocates; FullWrench and TorqueNullSpace allocate
// nothing, never throw and never log.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Householder>
#include <Eigen/QR>
#include <cmath>
#include <vector>

#include "heft/dynamics/dynamics.hpp"
#include "heft/dynamics/nominal_uncertainty.hpp"
#include "heft/dynamics/regressor.hpp"

namespace heft::estimator {

struct EstimatorConfig;
struct TickInput;

class Measurement {
 public:
  // Throws dynamics::ModelError / std::invalid_argument naming what is wrong in the configuration.
  Measurement(const dynamics::Model& model, const dynamics::RegressorSelection& selection,
              const EstimatorConfig& config);

  // Both return false when the numbers are unusable (a factorisation failed); `bias` (nv, or
  // nullptr for none) is subtracted from the residual. With `estimate` (π̂ of the estimated links,
  // or nullptr), each friction joint's row keeps only the part of its innovation r − Y_est π̂ that
  // lies outside the joint's stiction band (StictionBand below).
  [[nodiscard]] bool FullWrench(const TickInput& in, const Eigen::VectorXd* bias,
                                const Eigen::VectorXd* estimate = nullptr) noexcept;
  [[nodiscard]] bool TorqueNullSpace(const TickInput& in, const Eigen::VectorXd* bias,
                                     const Eigen::VectorXd* estimate = nullptr) noexcept;

  // The last measurement's whitened rows. H has the 10k columns of the estimated links and then
  // consider_columns() more: the nominal torque's sensitivity to the other bodies' mass and first
  // moment, one standard deviation of their nominal error each (EstimatorConfig::consider_nominal;
  // dynamics::MassFirstMomentColumns), then each joint torque sensor's scale error (one column per
  // joint: τ_obs times joint_torque_scale on its own row), then the estimated links' own nominal
  // error, the static friction a calibration held (AccumulateConsider) and the static friction
  // held now, through the same projection and whitening as the rest.
  int rows() const { return rows_; }
  int consider_columns() const { return nc_; }
  auto H() const { return H_.topRows(rows_); }
  auto z() const { return z_.head(rows_); }
  // v ← W v (each column) with the last measurement's whitening: a full-wrench tick's R, or after
  // a null-space tick each row's σ (R's diagonal before the projection).
  void Whiten(Eigen::Ref<Eigen::MatrixXd> v) const noexcept;
  // x ← x − Q₁Q₁ᵀ x (each column), Q₁ spanning the last null-space tick's range of J_cᵀ: what is
  // left of a residual, a regressor or consider columns once any contact wrench could have carried
  // the rest; the bias calibration of a robot without foot F/T cells averages these. Nothing
  // changes after a tick without contacts or a full-wrench tick; x is nv × at most
  // max(10k + consider_columns(), nv) + 1.
  void ProjectOntoNullSpace(Eigen::Ref<Eigen::MatrixXd> x) noexcept;
  // Its regressor of the estimated links (nv × 10k) and residual r (nv), not whitened: the bias
  // calibration averages r − Y_est π̂ over the full rows.
  const Eigen::MatrixXd& regressor() const { return Y_; }
  Eigen::VectorXd& residual() { return r_; }
  // Its consider columns, not whitened (nv × consider_columns()), and the part of them a bias
  // calibration took with the residual: subtracted from them wherever the bias is from the
  // residual (the calibration averaged both over the same ticks, InertialEstimator::Calibrate).
  const Eigen::MatrixXd& consider() const { return C_; }
  // sum += what a calibration tick adds to the consider columns' average: the other bodies' columns
  // as they are, and for the estimated links' own nominal error (10k columns, zero on every
  // tick: the links are estimated) Y_est F, F the links' nominal factors (NominalFactor) — the
  // calibration's bias takes Ȳ_est ε with the residual, ε the links' own nominal error, so that
  // after it the rows read Y_est π − Ȳ_est ε: a constant error in the directions the calibration
  // pose sees, which the estimate keeps; and on each friction joint's row its band half-width w,
  // the static friction the bias took with it (stiction_column()).
  void AccumulateConsider(Eigen::Ref<Eigen::MatrixXd> sum) const noexcept;
  // Estimated link k's own nominal error: its first consider column.
  int own_column(int k) const { return nc_others_ + nc_gain_ + dynamics::kNominalColumns * k; }
  // Static friction on every friction joint, two columns each, after the links' own: the friction
  // a calibration held (zero on every tick, w̄ on the joint's row in the bias: the band's
  // half-width averaged over the calibration, F_c at rest; AccumulateConsider), then the friction
  // held now (w, this tick's half-width, on the joint's row, with the sign of the innovation the
  // stiction band shifted).
  int stiction_column() const {
    return nc_others_ + nc_gain_ +
           dynamics::kNominalColumns * static_cast<int>(own_factors_.size());
  }
  int held_column() const { return stiction_column() + stiction_columns(); }
  // The prior's own error beyond P₀ (InertialFilter::SetPriorError), ten columns per estimated link
  // the prior pulls (prior_time_constant > 0), in the order of the estimated links; zero on every
  // row (the pull, not the data, carries them).
  int prior_column() const { return held_column() + stiction_columns(); }
  int prior_columns() const { return nc_prior_; }
  int stiction_columns() const { return static_cast<int>(stiction_entries_.size()); }
  void SetConsiderBias(const Eigen::Ref<const Eigen::MatrixXd>& c) noexcept { consider_bias_ = c; }
  int num_contacts() const { return static_cast<int>(contact_frames_.size()); }
  // The friction joints (estimator.friction, in its order) and, for joint j, how far this tick's
  // stiction band is open: its half-width over |F_c|, 1 for a joint held still, 0 while it slides
  // (and without Coulomb friction).
  int friction_joints() const { return static_cast<int>(friction_v_.size()); }
  double held_fraction(int j) const noexcept {
    const auto k = static_cast<std::size_t>(j);
    const double fc = std::abs(friction_coulomb_[k]);
    return fc > 0.0 ? stiction_width_[k] / fc : 0.0;
  }
  // Rows the last measurement dropped inside their stiction band: they are in H and z as zeros
  // and carry no degree of freedom of the innovation.
  int dropped_rows() const { return dropped_rows_; }

 private:
  // consider_bodies_ and their factors: every body not estimated that has a mass (set-up).
  void ReadConsiderBodies(const dynamics::Model& model,
                          const dynamics::RegressorSelection& selection,
                          const EstimatorConfig& config);
  // τ_nom and r = τ − τ_nom with the regressor Y_est (both forms start here).
  void Residual(const TickInput& in) noexcept;
  // Stiction: a joint at rest is held by its static friction, anywhere in ±F_c, and the model's
  // F_c tanh(q̇/ε) says 0 there. What that friction holds is unknown: a row whose innovation
  // ν = r − Y_est π̂ lies inside the band ±w, w = F_c (1 − |tanh(q̇/ε)|), carries no information on
  // the estimated links and is dropped (zero sensitivity and residual, and a variance that
  // decouples it from the other rows); outside it, the part beyond the band is what the row says,
  // ν ← ν − w sign(ν). Without it a joint that holds still reads back, within ±F_c, the torque the
  // controller commands from the handed estimate, and the estimate confirms itself
  // (docs/estimator.md, "Stiction"). A held joint between the base and a foot cell that supports
  // no estimated link is dropped whatever its ν, with the full wrench (its row tells only the
  // noise it shares with the base's rows, and its friction would pass as that noise).
  // null_space: ν's part in the contacts' null space (the reflectors of this tick built), as the
  // null-space rows see it.
  void StictionBand(const Eigen::VectorXd& estimate, bool null_space) noexcept;
  // rfull_(v, v) += kDroppedVariance for the rows StictionBand dropped this tick.
  void DecoupleDropped() noexcept;
  static constexpr double kDroppedVariance = 1e12;  // (N·m)²: a row that carries nothing
  // rfull_ += M(q) Σ_a M(q)ᵀ when acceleration noise is configured; with `lower_only` its lower
  // triangle only.
  void AddAccelerationNoise(const Eigen::Ref<const Eigen::VectorXd>& q,
                            bool lower_only = false) noexcept;

  dynamics::Model model_;
  dynamics::RegressorSelection selection_;
  dynamics::Workspace ws_;
  int nv_, n_;
  std::vector<int> contact_frames_;
  std::vector<double> friction_coulomb_, friction_viscous_;
  // Per friction joint √(F_c² + σ_Fc²), and this tick's held static friction's standard deviation
  // from it (held_width_: 0 while sliding), for the consider columns.
  std::vector<double> friction_held_, held_width_;
  std::vector<int> friction_v_;         // v index of each friction entry
  std::vector<double> stiction_width_;  // this tick's band half-width per friction entry
  std::vector<unsigned char> dropped_;  // per friction entry: its row inside its band this tick
  // Per friction entry: its joint supports a contact frame and no estimated link (a held leg).
  std::vector<unsigned char> leg_only_;
  bool stiction_band_ = true;
  int dropped_rows_ = 0;
  double friction_epsilon_ = 0.01;
  Eigen::VectorXd acceleration_sigma_;
  Eigen::VectorXd row_sigma_;
  Eigen::VectorXd torque_scale_;  // per row: EstimatorConfig::joint_torque_scale(s), 0 on the base
  // rfull_'s diagonal: σ² per row plus each joint row's scale term (scale · τ_obs)².
  void SetRowVariances(const Eigen::Ref<const Eigen::VectorXd>& tau) noexcept;
  Eigen::MatrixXd Y_, H_;
  // Consider columns: the bodies, their (m, h) covariance factors, the columns and their bias.
  std::vector<int> consider_bodies_;
  std::vector<Eigen::Matrix4d> consider_factors_;
  std::vector<Eigen::Matrix<double, 10, dynamics::kNominalColumns>>
      own_factors_;                    // per estimated link
  std::vector<int> stiction_entries_;  // friction entries with F_c ≠ 0
  std::vector<int> held_index_;  // per friction entry: its place in stiction_entries_, or −1
  int nc_ = 0, nc_others_ = 0, nc_gain_ = 0, nc_prior_ = 0;
  Eigen::MatrixXd C_, consider_bias_;
  Eigen::VectorXd tau_nom_, r_, contact_, z_;
  Eigen::VectorXd innovation_;  // StictionBand's ν (nv)
  Eigen::VectorXd row_scale_;   // the last rows' σ when whitened row by row
  bool whitened_full_ = false;  // the last full-wrench rows were whitened by R's factor
  int rows_ = 0;
  // Null-space measurement: one QR and one whitening factorisation per number of contacts.
  std::vector<Eigen::MatrixXd> jct_;  // J_cᵀ, nv × 6c
  std::vector<Eigen::HouseholderQR<Eigen::MatrixXd>> qr_;
  std::vector<Eigen::LLT<Eigen::MatrixXd>> rllt_;
  Eigen::MatrixXd jac_, qy_, rfull_;
  std::vector<double> ft_force_sigma_, ft_moment_sigma_;  // per contact frame (0: not configured)
  bool ft_noise_ = false;
  bool acceleration_noise_ = false;
  Eigen::MatrixXd mass_, mass_scaled_;  // M(q) and M diag(σ_a) (acceleration noise)
  Eigen::LLT<Eigen::MatrixXd> ft_llt_;  // R of the full-wrench rows with the cells' noise
  // L⁻¹ of ft_llt_'s factor, for H's mostly zero columns (sparse_whitening.hpp): its first
  // dense_rows_ rows taken as dense, and scratch.
  Eigen::MatrixXd l_inverse_, whiten_top_;
  Eigen::Index dense_rows_ = 0;
  Eigen::VectorXd whiten_column_;
  // Qᵀ of the null-space QR as one block reflector I − V T Vᵀ, and its products' workspaces.
  Eigen::MatrixXd wy_v_, wy_t_, wy_w_, wy_w2_, wy_u_, wy_u2_, wy_p_;
  Eigen::Index null_k_ = 0;  // columns of Q₁ in the last null-space tick's reflector (0: none)
  Eigen::VectorXd wy_s_;
};

}  // namespace heft::estimator

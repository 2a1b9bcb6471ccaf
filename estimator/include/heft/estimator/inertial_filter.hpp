// Kalman filters over the inertial parameters of k bodies (stacked states).
//
// - kKalman: the baseline linear filter in π (Foster et al. eq. 12, 15): x = π, H = Y_est.
// - kLogCholesky: the extended filter in θ (eq. 18-21): x = θ, π = g(θ), H = Y_est G(θ).
// The process model is a random walk, x_k = x_{k-1} + η (eq. 12, 18).
//
// The update works on a whitened measurement (unit noise, rows W·Δτ). Rows of H that are exactly
// zero (joints that support none of the estimated links) carry no information on x: they are left
// out of the update and add only ỹᵢ² to the NIS, exactly. On the m' rows left, the cheaper of two
// algebraically equal forms runs:
// - information form when m' ≥ n (n = 10k states; one body against a whole humanoid's rows):
//     P⁺ = (P⁻¹ + HᵀH)⁻¹,  x⁺ = x⁻ + P⁺ Hᵀ ỹ,  NIS = ỹᵀỹ − bᵀP⁺b with b = Hᵀỹ,
//   two n×n factorisations, P⁺ positive definite by construction;
// - covariance form when m' < n (several bodies):
//     S = H P Hᵀ + 1 = L Lᵀ,  V = L⁻¹ H P,  P⁺ = P − VᵀV,  x⁺ = x⁻ + Vᵀ L⁻¹ỹ,  NIS = |L⁻¹ỹ|²,
//   one m'×m' factorisation; P⁺ is checked positive definite (Cholesky) and the information form
//   runs instead in the rare case cancellation made it lose definiteness.
// Gating (eq. 22) is decided from the NIS before anything is applied.
//
// The EKF's mean step is damped: g(θ) is exponential in the log-Cholesky coordinates, so a full
// linearised step from far away (a 1.5 kg forearm suddenly holding 7 kg) overshoots by a factor
// of several. The step along dx is halved (at most kMaxHalvings times) until the nonlinear MAP cost
// |z − H_π g(θ⁻ + s·dx)|² + s²·dxᵀP⁻¹dx is below its value at s = 0 — a backtracking line search
// on the Gauss-Newton step. The KF's model is linear: its step is never damped.
//
// The covariance follows the step taken. A damped step x⁺ = x⁻ + s·K ỹ is the update with the gain
// K_s = s·K (K = P Hᵀ S⁻¹, S = H P Hᵀ + 1), and for ANY gain the error covariance of the
// (linearised) estimate is the Joseph form
//   P⁺(s) = (1 − K_s H) P (1 − K_s H)ᵀ + K_s K_sᵀ
//         = P − s (K H P + P Hᵀ Kᵀ) + s² K (H P Hᵀ + 1) Kᵀ
//         = P − 2s·K S Kᵀ + s²·K S Kᵀ                    (K H P = P Hᵀ Kᵀ = K S Kᵀ)
//         = P − s(2 − s)·K S Kᵀ.
// With the full step's P⁺(1) = P − K S Kᵀ this is
//   P⁺(s) = (1 − s)²·P + s(2 − s)·P⁺(1),
// weights ≥ 0 summing to 1: positive definite whenever P and P⁺(1) are, P at s = 0 (nothing
// learnt), P⁺(1) at s = 1. Keeping P⁺(1) after a damped step (as before) claimed information the
// mean did not use: P too small, the next innovations over-weighted.
//
// Where the data say nothing. A random walk (P += Q dt) lets P grow in every direction the motion
// does not excite, and the EKF re-linearises at every tick: the constraints the data do impose
// (a torso's mass and horizontal first moment while it stands) are honoured, but the estimate
// wanders along what they leave free (its CoM height, its inertia), driven by noise and small
// model errors, since the filter's prior is always centred on its current estimate and forgets
// where it started. PullToPrior (opt-in) keeps the starting prior standing there: the prior
// N(x₀, P₀) re-enters as a pseudo-measurement at a slow rate. Its gain is P (P + P₀/w)⁻¹: ≈ w where
// P ≈ P₀ (no data), ≈ 0 where the data dominate, so it anchors the directions the data leave free.
// Its price: it also pulls, at up to that rate, a genuine change the data see only weakly (a
// dumbbell's CoM along an axis the curl barely excites). It moves the mean only: the prior seen
// again is not new information, so P keeps what the data made of it, and where it holds the
// estimate a variance above the prior's (the random walk's, a gate release's) relaxes back to it.
//
// Consider parameters. The measurement may carry, after H_π's columns, columns C of parameters c
// the filter does not estimate but whose error it must own up to (the other bodies' nominal mass
// and first moment, scaled to one standard deviation each: c ~ N(0, 1)): z = H x + C c + v. The
// gain stays the filter's own (the estimate is what it would be without them); the sensitivity of
// the estimate to c, D = ∂x̂/∂c, follows every step taken, D ← D − s·K (H D − C), and the pull
// (D ← (1 − A⁻¹W) D), so that the error's covariance is P + D Dᵀ (Bierman's consider
// covariance): the part of the error that averaging never removes, since c is the same on every
// tick. The covariances handed out (BodyCovariance, ParameterCovariance) are that sum, D Dᵀ
// mapped to π at first order (G D Dᵀ Gᵀ: D is a first-order sensitivity); P alone
// still drives the gain and the NIS. The prior's own error beyond P₀ is such a parameter too,
// carried by the pull instead of the rows (SetPriorError). With set_consider_gain the gain and the
// NIS count them too (the Schmidt–Kalman filter, inertial_filter_schmidt.cpp): the innovation's
// covariance is H P Hᵀ + X Xᵀ + 1 with X = H D − C, the gain (P Hᵀ + D Xᵀ) S⁻¹, so that a
// residual the consider parameters explain is neither learned as a change of x nor gated as an
// outlier; D and P + D Dᵀ follow the step taken as above, whatever the gain.
//
// Set-up allocates; Predict, Evaluate, Nis, Apply, Inflate and PullToPrior do not (sizes fixed at
// construction).
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cstdint>
#include <limits>
#include <vector>

#include "heft/dynamics/log_cholesky.hpp"

namespace heft::estimator {

enum class FilterKind { kKalman, kLogCholesky };

class InertialFilter {
 public:
  // `bodies` bodies; `rows` the largest measurement size that will be passed; `consider` consider
  // parameters (header: "Consider parameters"), 0 for none.
  InertialFilter(FilterKind kind, int bodies, int rows, int consider = 0);

  FilterKind kind() const { return kind_; }
  int states() const { return n_; }
  int consider() const { return nc_; }

  // The EKF's coordinates for one body taken in a frame translated by `offset` from the body's own
  // (its nominal centre of mass, typically): θ is the log-Cholesky vector of the body described in
  // that frame, π (what Evaluate's H_π multiplies, parameters(), the covariances) stays in the
  // body's frame: π = X(offset) g(θ) (dynamics::TranslationMatrix). At the centre of mass θ's d and
  // s are the inertia about it and t its displacement, so a prior on them is a prior on those
  // physical quantities; in the body's frame, with the CoM far from the origin (a torso above its
  // waist joint), the inertia about the CoM is a small difference of large terms and moves with
  // every θ. Takes effect at the next Reset. Returns false for the KF (its x is π: no frame
  // matters) or a body out of range or a non-finite offset.
  bool SetBodyFrame(int body, const Eigen::Vector3d& offset);
  // Starts from the (physically consistent) parameters π0 (10k) with a per-state standard
  // deviation `sigma0` in the filter's own coordinates (θ for the EKF, π for the KF): 10 values
  // repeated for every body, or 10k (each body its own). Returns false if π0 is not physically
  // consistent (EKF) or sigma0 has another size.
  bool Reset(const Eigen::Ref<const Eigen::VectorXd>& pi0,
             const Eigen::Ref<const Eigen::VectorXd>& sigma0);
  // The same, but the state's covariance from `cov_pi` (10 × 10k: body k's 10×10 covariance of π
  // in columns 10k..10k+9, as the hand-off carries it; bodies uncorrelated) times `inflation`,
  // mapped into the filter's coordinates (G⁻¹ Σ G⁻ᵀ for the EKF, G = ∂π/∂θ at π0), no state's
  // variance above sigma0's (CapVariances, Inflate's bound, where it would be). P₀, what
  // Inflate and RecoverCovariance go back to, is still sigma0's. Returns false and changes
  // nothing if π0 is not physically consistent, or a block is not finite, symmetric and positive
  // definite, or inflation is not a finite number >= 1.
  bool Reset(const Eigen::Ref<const Eigen::VectorXd>& pi0,
             const Eigen::Ref<const Eigen::VectorXd>& sigma0,
             const Eigen::Ref<const Eigen::MatrixXd>& cov_pi, double inflation);

  // P += Q (random walk; q holds per-state variances per second, scaled by dt: 10 values repeated
  // for every body, or 10k). Pass a vector, not an expression: Eigen evaluates an expression
  // into a temporary, which allocates.
  void Predict(const Eigen::Ref<const Eigen::VectorXd>& q_per_second, double dt) noexcept;

  // The prior as a pseudo-measurement (header: "Where the data say nothing"): the state x₀ of
  // Reset observed with covariance P₀ / w, in the information form (linear in x, so exact), the
  // mean only:
  //   x⁺ = x + (P⁻¹ + W)⁻¹ W (x₀ − x),  W = w P₀⁻¹ (diagonal),  P⁺ = P,
  // except that a pulled variance above P₀ relaxes towards it: its excess × 1/(1 + wᵢ)² per call.
  // Where the data leave P ≈ P₀ each call takes w/(1 + w) of the way back to x₀ (leaving
  // 1/(1 + w) of the distance) and the variance stays the prior's.
  // Why P is kept: the step moves the error e = x − x_true to (1 − K) e + K e₀, K = (P⁻¹ + W)⁻¹ W,
  // e₀ = x₀ − x_true the prior's own error. Where the data say nothing, e is e₀ (the estimate is
  // the prior) and the step changes no error: P = P₀ is exact; where they dominate, K ≈ 0 and P
  // is exact too. Taking P⁺ = (P⁻¹ + W)⁻¹ (or the Joseph form with e and e₀ independent) counts
  // the same prior anew every call: P shrank to P₀/(1 + N w), far below what the estimate there is
  // worth, and the handed covariance with it.
  // The EKF leaves α out of W: a change of α scales the whole pseudo-inertia (mass, first moment,
  // inertia alike), so the pull holds each body's centre of mass and inertia per unit mass where
  // the data leave them free and lets the mass follow the data. (With α pulled too, a load's mass
  // is met partly through t, m = e^{2α}(1 + |t|²), and the CoM moves:
  // tests/estimator/test_prior.cpp.) Where the data have made P ≪ P₀ this moves nothing; where they
  // have not (P ≈ P₀) it pulls x back to x₀ at the rate w per call. w = dt/τ per period dt gives
  // the prior's information a renewal time τ. Returns false (nothing changed) if a factorisation
  // fails. Allocates nothing.
  [[nodiscard]] bool PullToPrior(double w) noexcept;
  // The same with a weight per state (10k values; 0 leaves that state unpulled): each body its own
  // renewal time.
  [[nodiscard]] bool PullToPrior(const Eigen::Ref<const Eigen::VectorXd>& w) noexcept;

  // The prior's own error beyond P₀ as consider parameters (header: "Consider parameters"): the
  // pull above keeps P at P₀ where the data say nothing, which is honest only if x₀'s error is
  // N(0, P₀). With its true covariance Σθ = G⁻¹ Σ_π G⁻ᵀ (at x₀, body by body: Σ_π the prior's
  // covariance of π, `cov_pi` 10 × 10k), the excess on the pulled states (the EKF: not α),
  // Σθ − P₀, is F Fᵀ (its positive eigen-directions): consider columns [first, first + 10·|bodies|)
  // for `bodies`, ten each. The estimate starts at x₀, so D there starts at F; the pull observes
  // x₀ = x_true + e_f + F c again, so it renews it: D ← D − A⁻¹W (D − F); the data's steps treat
  // them as any consider column (C = 0 on the rows: the measurement carries zero columns there).
  // Call after Reset at x₀; every later Reset(π0, σ0) starts those columns at F again, the
  // persisted start (Reset with cov_pi) at 0 and without the renewal (its x₀ is the persisted
  // estimate, whose covariance it is given). Set-up only (allocates). Returns false for columns
  // out of range, a body out of range or a cov_pi of another size.
  bool SetPriorError(int first, const Eigen::Ref<const Eigen::MatrixXd>& cov_pi,
                     const std::vector<int>& bodies);

  // Evaluates the update for the whitened measurement z = H_π π + C c + noise (unit variance),
  // where H_π (m × 10k, then the m × consider() columns C) and z (m) are already multiplied by the
  // whitening W. Nothing is applied yet.
  // Returns false when the numbers are not usable (non-finite, factorisation failed).
  struct Candidate {
    double nis = 0.0;   // normalised innovation squared, χ²(m) under the model
    int dof = 0;        // m
    double step = 0.0;  // largest |Δx| of the update
    int rows_used = 0;  // m': rows that carry information on x
    bool covariance_form = false;
    double step_fraction = 1.0;  // s of the damped step (1: the full Kalman step)
  };
  static constexpr int kMaxHalvings = 8;
  // With `reuse_nis`, where H_π and z are the ones the last Nis read (the same buffers, unchanged
  // since: the caller's promise) and the filter's state has not changed since, the rows that Nis
  // staged and their products (H P Hᵀ, or P⁻¹ and HᵀH) are reused instead of formed again: the
  // gate's NIS and the update on one low-passed copy (InertialEstimator). Other buffers, or a
  // changed state, are staged anew.
  bool Evaluate(const Eigen::Ref<const Eigen::MatrixXd>& H_pi,
                const Eigen::Ref<const Eigen::VectorXd>& z, Candidate& out,
                bool reuse_nis = false) noexcept;
  // The NIS Evaluate would report for this measurement (χ²(m) under the model), without forming
  // an update: for a gate that screens rows other than the ones the update learns from. Where
  // ỹᵀỹ, an upper bound of it (S ≥ I), is at most `level`, nis ← that bound, without factorising
  // (a gate at threshold `level` needs no more). Leaves the last evaluated candidate as it was.
  // False when the numbers are not usable.
  // `scale` multiplies H_π and z (the low-pass's gate copy whitened for its own variance,
  // MeasurementLowPass::GateNisScale) without a scaled copy of them.
  bool Nis(const Eigen::Ref<const Eigen::MatrixXd>& H_pi,
           const Eigen::Ref<const Eigen::VectorXd>& z, double& nis, double level = -1.0,
           double scale = 1.0) noexcept;
  // With `on` (and consider parameters), Nis and Evaluate use the Schmidt gain: the NIS against the
  // whole innovation covariance S = H P Hᵀ + X Xᵀ + 1 (X = H D − C) and the gain
  // K = (P Hᵀ + D Xᵀ) S⁻¹, so that what the consider parameters explain is neither learned as a
  // change of the state nor gated as an outlier (inertial_filter_schmidt.cpp). Every row is
  // staged; the m×m factorisation always runs. Off: the Bierman gain above (the filter's own).
  void set_consider_gain(bool on) noexcept {
    consider_gain_ = on && nc_ > 0;
    gain_mask_.setOnes();
    staged_.valid = false;
  }
  // The same for the consider columns where `in_gain` (consider() values) is 1; those where it is
  // 0 (a parameter that is not the same on every tick: a friction re-drawn at each hold) stay in
  // the covariance only, as with the Bierman gain: for any gain, D ← D − K (H D − C) and the
  // Joseph form keep P + D Dᵀ exact. Set-up only. False (nothing changed) for another size or a
  // value other than 0 and 1.
  bool set_consider_gain(const Eigen::Ref<const Eigen::VectorXd>& in_gain) noexcept;
  bool consider_gain() const { return consider_gain_; }
  // Applies the last evaluated update. Returns false (and keeps the prior state) if the result is
  // non-finite or, for the EKF, not mappable back (never happens for finite θ).
  [[nodiscard]] bool Apply() noexcept;

  // Undoes the last Apply (the divergence guard's fall-back to the last good state).
  void Revert() noexcept;

  // Inflates the covariance: P ← factor·P + P₀ (P₀ the initial covariance of Reset), used when
  // gating has rejected a lasting change: what the filter had learnt no longer holds — for every
  // parameter of the link, seen by the current measurement or not (a load changes them all).
  // Bounded: a state whose variance would exceed cap·P₀ᵢᵢ has its row and column scaled down to it
  // (a congruence D P D with diagonal D ≤ 1, so P stays positive definite), so repeated releases
  // can never grow P without bound in directions no measurement renews.
  void Inflate(double factor, double cap = std::numeric_limits<double>::infinity()) noexcept;

  // Numeric recovery: if P is not finite or not positive definite (what an overflow leaves), it
  // is reset to the initial covariance P₀ (the mean is kept: Apply never stores a non-finite one).
  // Returns true if it reset. Evaluate calls it; a reset is counted.
  bool RecoverCovariance() noexcept;
  // Puts back the covariance the last Inflate started from (a release the caller refused).
  void UndoInflate() noexcept {
    P_ = P_before_inflation_;
    ++generation_;
  }
  std::uint64_t covariance_resets() const { return covariance_resets_; }

  // Current estimate in π (10k) and its covariance in π (ParameterCovariance: first order,
  // G (P + D Dᵀ) Gᵀ for the EKF, every body and their cross terms).
  const Eigen::VectorXd& parameters() const { return pi_; }
  const Eigen::VectorXd& state() const { return x_; }
  const Eigen::MatrixXd& covariance() const { return P_; }
  // ∂x̂/∂c: the estimate's sensitivity to the consider parameters (states × consider()).
  const Eigen::MatrixXd& consider_sensitivity() const { return D_; }
  void ParameterCovariance(Eigen::Ref<Eigen::MatrixXd> out) const noexcept;
  // The 10×10 covariance of one body's π (what the hand-off carries): for the EKF the second
  // moment of π about the estimate under θ ~ N(x, P), by a Gauss–Hermite rule along P's Cholesky
  // columns (the .cpp says why not first order), plus the consider part at first order, G D Dᵀ Gᵀ
  // (AddConsiderCovariance); for the KF its block of P + D Dᵀ.
  // With `consider` false, of P alone (the noise's part, without D Dᵀ).
  void BodyCovariance(int body, Eigen::Ref<Eigen::Matrix<double, 10, 10>> out,
                      bool consider = true) const noexcept;
  // out += the consider parameters' part of one body's π covariance: G D Dᵀ Gᵀ (D Dᵀ for the KF).
  void AddConsiderCovariance(int body,
                             Eigen::Ref<Eigen::Matrix<double, 10, 10>> out) const noexcept;

 private:
  void RefreshParameters() noexcept;  // pi_ and G_ from x_
  // out ← the EKF's second moment of one body's π about the estimate under θ ~ N(x, P), P its
  // 10×10 block (BodyCovariance).
  void NoiseCovariance(int body, const dynamics::Matrix10& P,
                       Eigen::Ref<Eigen::Matrix<double, 10, 10>> out) const noexcept;
  // Scales down every state whose variance exceeds cap·P₀ᵢᵢ to it, by the congruence D P D
  // (diagonal D ≤ 1: P stays positive definite). Inflate's bound, and StartFrom's at cap 1.
  void CapVariances(double cap) noexcept;
  // π in the body's frame from π in body j's θ frame (SetBodyFrame; unchanged when none was set).
  dynamics::Vector10 InBodyFrame(int body, const dynamics::Vector10& pi_frame) const noexcept;
  // The two forms of the update on the compacted rows Hc_/yc_ (m of them): dx_, P_candidate_ and
  // the NIS of those rows; false if unusable.
  // Stages z's innovation and H = H_π G (the rows carrying information on x) in yc_ and Hc_, both
  // times `scale`, and the consider columns in Cc_ when `consider` and some rows are left out (else
  // they are read in H_π); returns their number, nis ← the other rows' ỹᵢ².
  int StageRows(const Eigen::Ref<const Eigen::MatrixXd>& H_pi,
                const Eigen::Ref<const Eigen::VectorXd>& z, double& nis, double scale = 1.0,
                bool consider = true) noexcept;
  // Whether the last staging (either path's) was from these H_π and z at the current state.
  bool StagedFrom(const Eigen::Ref<const Eigen::MatrixXd>& H_pi,
                  const Eigen::Ref<const Eigen::VectorXd>& z) const noexcept;
  // Stage's rows (unscaled, StageRows) for Nis and Evaluate: with `reuse`, the last ones where
  // they were staged from the same H_π and z at the same state (Evaluate's reuse_nis).
  int Stage(const Eigen::Ref<const Eigen::MatrixXd>& H_pi,
            const Eigen::Ref<const Eigen::VectorXd>& z, double& other_nis, bool consider,
            bool reuse) noexcept;
  bool InformationUpdate(int m, double& nis) noexcept;
  // D_candidate_ from the evaluated step on the m staged rows (header: "Consider parameters"),
  // whose consider columns are C (m × consider()).
  void ConsiderStep(int m, bool covariance_form, double fraction,
                    const Eigen::Ref<const Eigen::MatrixXd>& C) noexcept;
  bool CovarianceUpdate(int m, double& nis) noexcept;
  // Their first halves, all Nis needs: the NIS of the staged rows times `scale`. The information
  // form's leaves llt_ = chol(A), b_ and dx_ = A⁻¹ b; the covariance form's leaves S's factor L in
  // S_'s lower triangle, U_ = H P and w_ = L⁻¹ ỹ. The products of the staged rows that do not
  // depend on the scale (P⁻¹, HᵀH, Hᵀỹ; H P, H P Hᵀ) are formed once per staging (staged_).
  bool InformationNis(int m, double& nis, double scale) noexcept;
  bool CovarianceNis(int m, double& nis, double scale) noexcept;
  // The covariance form's NIS of the m staged rows at `scale` from HPHt_'s lower triangle (H P Hᵀ,
  // with X Xᵀ on the Schmidt path): S's factor L in S_, w_ = L⁻¹ s ỹ.
  bool WhitenedNis(int m, double scale, double& nis) noexcept;
  // The Schmidt path (set_consider_gain; inertial_filter_schmidt.cpp): every row staged with
  // H P, X, H P Hᵀ + X Xᵀ (HPHt_'s lower triangle) and S Kᵀ = H P + X Dᵀ (V_) (StagedFrom
  // tells whether they are this H_π's and z's); the update; its damping.
  void StageSchmidt(const Eigen::Ref<const Eigen::MatrixXd>& H_pi,
                    const Eigen::Ref<const Eigen::VectorXd>& z) noexcept;
  bool SchmidtEvaluate(const Eigen::Ref<const Eigen::MatrixXd>& H_pi,
                       const Eigen::Ref<const Eigen::VectorXd>& z, Candidate& out,
                       bool reuse) noexcept;
  double SchmidtDamping(const Eigen::Ref<const Eigen::MatrixXd>& H_pi,
                        const Eigen::Ref<const Eigen::VectorXd>& z, int m) noexcept;
  // The nonlinear measurement residual |z − H_π g(θ⁻ + s·dx)|² (EKF).
  double Residual(const Eigen::Ref<const Eigen::MatrixXd>& H_pi,
                  const Eigen::Ref<const Eigen::VectorXd>& z, double s) noexcept;

  FilterKind kind_;
  int k_, n_, nc_;
  Eigen::VectorXd x_, x0_, pi_, x_candidate_, b_, dx_, x_previous_, p0_diagonal_;
  Eigen::VectorXd pull_w_;                 // PullToPrior(double)'s weights, one per state
  Eigen::VectorXd prior_mask_;             // 1 where PullToPrior pulls (the EKF: not α)
  Eigen::MatrixXd frame_, frame_inverse_;  // 10 × 10k: body j's X(offset) and X(−offset)
  std::vector<unsigned char> framed_;      // per body: a frame was set (else X = 1, skipped)
  Eigen::MatrixXd P_, P_candidate_, P_previous_, P_before_inflation_, A_, G_, Hc_, U_, S_;
  Eigen::VectorXd yc_, w_, pi_trial_, res_;
  double prior_cost_ = 0.0;  // dxᵀ P⁻¹ dx of the last evaluated step
  std::uint64_t covariance_resets_ = 0;
  // Consider analysis: D (its candidate and the state before the last Apply), the staged rows' C,
  // and scratch.
  Eigen::MatrixXd D_, D_candidate_, D_previous_, Cc_, X_, T_;
  // SetPriorError's F (states × its columns), where its columns start, and whether the pull renews
  // them (off after a persisted start).
  Eigen::MatrixXd prior_error_;
  int prior_first_ = 0;
  bool prior_error_on_ = false;
  Eigen::MatrixXd HtH_;  // HᵀH of the staged rows (InformationNis; ConsiderStep's)
  Eigen::MatrixXd Kt_;   // Kᵀ = L⁻ᵀ V of the covariance form's gain (ConsiderStep)
  Eigen::MatrixXd K_;    // K = A⁻¹ Hᵀ of the information form's gain (ConsiderStep)
  Eigen::MatrixXd KH_;   // its K H = A⁻¹ HᵀH
  Eigen::LLT<Eigen::MatrixXd> llt_;
  // Stage's last rows: where from (H_π's and z's data, rows, stride, the state's generation), the
  // rows kept and the other rows' ỹᵢ², whether the consider columns were staged, and which
  // products of them are formed: the covariance form's U_ = H P and HPHt_ (lower triangle), the
  // information form's P_inverse_, HtH_ and b_staged_ = Hᵀỹ.
  struct Staged {
    const double* H = nullptr;
    const double* z = nullptr;
    Eigen::Index rows = 0, stride = 0;
    std::uint64_t generation = 0;
    int kept = 0;
    double other_nis = 0.0;
    bool valid = false, consider = false, covariance = false, information = false;
  };
  Staged staged_;
  std::uint64_t generation_ = 0;  // counts the changes of x_ and P_ (Stage's reuse)
  Eigen::MatrixXd HPHt_, P_inverse_;
  Eigen::VectorXd b_staged_;
  // The Schmidt path: on, its S Kᵀ (then L⁻¹ S Kᵀ) and H dx.
  bool consider_gain_ = false;
  Eigen::VectorXd gain_mask_;  // per consider column: 1 where the gain counts it
  Eigen::MatrixXd Xg_, Tg_;    // X's and K X's columns the gain counts (the others zero)
  Eigen::MatrixXd V_;
  Eigen::VectorXd hdx_;
};

}  // namespace heft::estimator

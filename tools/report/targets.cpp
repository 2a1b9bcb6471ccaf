#include "targets.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>
#include <vector>

#include "heft/drivers/driver_config.hpp"

namespace heft::report {

bool IsTorsoShapeScenario(const std::string& name) {
  return name == "torso-load" || name == "step-in-place" || name == "walk";
}

// Every scenario's first targets: the handed sets consistent, the control tick's time.
void AddRunTargets(const std::string& name, const RunFigures& a, std::vector<Target>& targets) {
  targets.push_back(
      {name + ": every handed parameter set physically consistent",
       std::to_string(a.rows - a.handed_inconsistent) + " / " + std::to_string(a.rows), "all",
       a.handed_inconsistent == 0, true});
  targets.push_back(
      {name + ": control tick 99.9th percentile < 10 % of 3 ms, never over the period",
       Fmt("%.0f µs", a.tick_p999) + Fmt(" / worst %.0f µs", a.tick_worst), "< 300 µs, < 3000 µs",
       a.tick_p999 < 300 && a.tick_worst < 3000, false});
}

// Table II's checked reductions (forearm-load, torso-load). A missed one says what the error with
// adaptation is made of: a steady offset (its mean at least 0.9 of its RMSE) is held by the
// controller or a biased estimate, not the hand-off's lag, which alternates with the load.
void AddReductionTarget(const std::string& name, const RunFigures& a, double ratio,
                        std::vector<Target>& targets) {
  const bool forearm = name == "forearm-load", torso = name == "torso-load";
  if (!forearm && !torso) return;
  const double wanted = forearm ? 7.0 : 2.2;
  Target t{forearm ? "elbow RMSE reduced by adaptation (forearm-load)"
                   : "pelvis-height RMSE reduced by adaptation (torso-load)",
           Fmt("%.1f×", ratio), forearm ? "≥ 7×" : "≥ 2.2×", ratio >= wanted, true};
  if (!t.met && std::abs(a.mean_error) >= 0.9 * a.rmse)
    t.figure += Fmt(" (with adaptation a steady offset: mean %+.4f", a.mean_error) +
                Fmt(" of %.4f RMSE, not the hand-off's lag)", a.rmse);
  targets.push_back(t);
}

// Issue 14: where standing and walking say little (a torso's centre-of-mass height), the estimate
// holds its prior (docs/estimator.md, "Where the data say nothing").
void AddTorsoShapeTargets(const std::string& name, const RunFigures& a,
                          std::vector<Target>& targets) {
  if (!IsTorsoShapeScenario(name)) return;
  // Against the truth, beyond what the nominal model itself gets wrong there: on the deviated
  // robot the identified torso's CoM is off in directions no recording fixes, and holding that
  // prior is what the estimate should do (docs/imperfect-robot.md, "What no recording fixes").
  // On the ideal robot the nominal's error is about 0 and this is the plain 10 mm.
  targets.push_back({name + ": torso centre of mass at steady state",
                     Fmt("%.1f mm", 1000 * a.com_error) +
                         Fmt(" (the nominal model's own: %.1f mm)", 1000 * a.prior_com_error),
                     "≤ 10 mm + the nominal's", a.com_error <= 0.01 + a.prior_com_error, true});
  // And its inertia no further from the truth than the prior's. The rotational inertia about the
  // CoM (the URDF's), since the CoM has its own check: about the link origin the inertia holds
  // m c cᵀ, which moves 0.3 % per mm of the torso's CoM height, so that figure re-checks the CoM
  // 30 times more strictly and rewards a prior whose CoM error happens to cancel its inertia's
  // (docs/estimator.md, "Where the data say nothing"). "No further" up to twice the estimate's own
  // jitter over the settled part (its noise): a drift beyond it fails.
  targets.push_back(
      {name + ": torso inertia about its CoM at steady state, no further from the truth "
              "than the prior",
       Fmt("%.2f %%", 100 * a.com_inertia_error) + Fmt(" ± %.2f", 100 * a.com_inertia_jitter) +
           Fmt(" (prior %.2f %%; about the origin ", 100 * a.prior_com_inertia_error) +
           Fmt("%.1f %%", 100 * a.inertia_error) +
           Fmt(", prior %.1f %%)", 100 * a.prior_inertia_error),
       "≤ the prior's + 2 × jitter",
       a.com_inertia_error <= a.prior_com_inertia_error + 2 * a.com_inertia_jitter, true});
}

// The handed covariance: the mean NEES over the settled part is 10 when it is honest (4 for the
// mass and first moment alone), so its factor ÷ 10 (÷ 4) is 1; ≤ 2× counts as honest
// (docs/handoff.md, "The handed covariance"). Reported for every run. Checked, as issue 37 asks,
// for forearm-load, torso-load and dumbbell-curl, the whole π and the mass and first moment alone
// (dumbbell-curl's mass and first moment also on a row of its own). The figures each full and
// short job measured are in docs/main-job.md, "The handed covariance".
void AddNeesTarget(const std::string& name, const RunFigures& a, std::vector<Target>& targets) {
  constexpr double kHonest = 2.0;
  const bool whole_met = a.nees / 10 <= kHonest;
  const bool mh_met = std::isnan(a.mh_nees) || a.mh_nees / 4 <= kHonest;
  const std::string figure =
      Fmt("%.3g×", a.nees / 10) +
      (std::isnan(a.mh_nees) ? std::string()
                             : Fmt(" (mass and first moment alone, ÷ 4: %.3g×)", a.mh_nees / 4));
  if (name == "dumbbell-curl") {
    targets.push_back({name + ": handed covariance of the mass and first moment, mean NEES ÷ 4 "
                              "(1 when honest)",
                       Fmt("%.3g×", a.mh_nees / 4), "≤ 2×", mh_met && !std::isnan(a.mh_nees),
                       true});
  }
  const bool checked = name == "forearm-load" || name == "torso-load" || name == "dumbbell-curl";
  targets.push_back({name + ": handed covariance, mean NEES ÷ 10 (1 when honest)", figure,
                     "≤ 2×, and the mass and first moment alone too",
                     whole_met && mh_met && !(checked && std::isnan(a.mh_nees)), checked});
}

namespace {

// The handed mass's σ as a share of the handed mass (median over the last quarter), after
// `lead`, or nothing without a σ column: beside a mass error it says how well the motion
// determined the mass (the fixed arm's curl leaves it to the shoulders' small lever arm:
// docs/main-job.md, "The fixed arm's mass").
std::string HandedMassSd(const RunFigures& a, const std::string& lead, const std::string& tail) {
  if (std::isnan(a.handed_mass_sd)) return "";
  return lead + Fmt("handed σ %.1f %%", 100 * a.handed_mass_sd) + tail;
}

}  // namespace

// The dumbbell's mass, CoM and convergence. The same reading as the torso's: the forearm's own
// mass and CoM are shares of the arm's distal composite that no recording splits, so the nominal
// model's forearm is off by what identification left there (up to the URDF's deviation), and the
// estimate converges to it plus the dumbbell. The mass is checked where the run determines it to
// the target's scale, its handed σ within 3 × the 2 % allowed: on the fixed arm of a deviated robot
// the motion and the nominal model's uncertainty leave it at σ 6.1–28 % (docs/main-job.md, "The
// fixed arm's mass"), where a 2 % error is luck either way; on the URDF robots σ is 2.5–5.6 %.
void AddDumbbellTargets(const RunFigures& a, std::vector<Target>& targets) {
  constexpr double kAllowed = 0.02, kDetermined = 3.0;
  const bool determined =
      std::isnan(a.handed_mass_sd) || a.handed_mass_sd <= kDetermined * kAllowed;
  targets.push_back(
      {"dumbbell: forearm + dumbbell mass at steady state",
       Fmt("%.2f %%", 100 * a.mass_error) +
           Fmt(" (the nominal model's own: %.2f %%", 100 * a.prior_mass_error) +
           HandedMassSd(a, "; ", "") + ")" +
           (determined ? std::string()
                       : Fmt("; not checked: the run leaves the mass undetermined (σ > %.0f %%)",
                             100 * kDetermined * kAllowed)),
       "≤ 2 % + the nominal's", a.mass_error <= kAllowed + a.prior_mass_error, determined});
  targets.push_back({"dumbbell: centre of mass at steady state",
                     Fmt("%.1f mm", 1000 * a.com_error) +
                         Fmt(" (the nominal model's own: %.1f mm)", 1000 * a.prior_com_error),
                     "≤ 10 mm + the nominal's", a.com_error <= 0.01 + a.prior_com_error, true});
  targets.push_back({"dumbbell: raw estimate within 5 % after the dumbbell arrives",
                     Fmt("%.3f s", a.converge_s), "< 0.5 s (Baek et al.: ~0.1 s)",
                     a.converge_s < 0.5, true});
}

// Adaptation must not make the task worse where no load comes (issue 37): ≤ 1.1× the RMSE
// without it, or at most 0.5 mm above it (on the ideal robot both are a fraction of a millimetre).
// Checked: the hand-off policy hands the nominal until the data show a change, so a miss is a
// policy that lets the estimate's jitter reach the controller.
void AddNoHarmTarget(const std::string& name, const RunFigures& a, const RunFigures& o,
                     std::vector<Target>& targets) {
  if ((name != "step-in-place" && name != "walk") || !o.ok) return;
  const double allowed = std::max(1.1 * o.rmse, o.rmse + 0.0005);
  targets.push_back({name + ": no harm when nothing is carried, pelvis-height RMSE with "
                            "adaptation against without",
                     Fmt("%.4f m", a.rmse) + Fmt(" against %.4f m", o.rmse),
                     "≤ 1.1× without, or ≤ 0.5 mm above it", a.rmse <= allowed, true});
}

// The operator's procedure should be the best way to run heft (issue 37): its reduction within
// 10 % of the best of the four combinations of nominal model (URDF, identified) and start-up
// calibration (off, on). Reported, not enforced: on the fixed-base arm the identified model
// without calibration is ahead (docs/estimator.md, "Stiction": the calibration's bias takes the
// static friction that held each still joint).
void AddCombinationTarget(const std::string& name, const RunFigures& a, const RunFigures& o,
                          const std::vector<NamedRun>& others, std::vector<Target>& targets) {
  if (!o.ok || !a.ok || others.empty()) return;
  const double mine = o.rmse / a.rmse;
  double best = mine;
  std::string best_what = "the procedure's own";
  const RunFigures* best_run = &a;
  for (const NamedRun& r : others) {
    if (!r.figures.ok || !(o.rmse / r.figures.rmse > best)) continue;
    best = o.rmse / r.figures.rmse;
    best_what = r.what;
    best_run = &r.figures;
  }
  if (best_run != &a) best_what += GateHeldNote(*best_run);  // a frozen estimate, if so
  std::string measured = Fmt("%.1f×", mine) + Fmt(" against the best %.1f× (", best) + best_what;
  // The estimates' own share beside the scores (a stiction ratchet can part the two).
  if (best_run != &a && std::isfinite(a.handed_mass_rmse) &&
      std::isfinite(best_run->handed_mass_rmse))
    measured += Fmt("; handed mass RMSE %.3f", a.handed_mass_rmse) +
                Fmt(" against %.3f kg", best_run->handed_mass_rmse);
  targets.push_back({name + ": the procedure (identified nominal, calibrated) within 10 % of the "
                            "best nominal model × calibration",
                     measured + ")", "≥ 0.9 × the best", mine >= 0.9 * best, false});
}

// Without foot F/T cells (issue 37): the torso's CoM within 20 mm, the dumbbell's mass within 3 %.
// Reported, not enforced.
void AddNoFtTargets(const std::string& name, const RunFigures& a, std::vector<Target>& targets) {
  if (name == "torso-load-noft")
    targets.push_back({"torso-load-noft: torso centre of mass at steady state",
                       Fmt("%.1f mm", 1000 * a.com_error), "≤ 20 mm", a.com_error <= 0.02, false});
  if (name == "standing-curl-noft")
    targets.push_back({"standing-curl-noft: forearm + dumbbell mass at steady state",
                       Fmt("%.2f %%", 100 * a.mass_error) + HandedMassSd(a, " (", ")"), "≤ 3 %",
                       a.mass_error <= 0.03, false});
}

namespace {

// The largest relative uncertainty of a torque from current among a run's joints (drivers'
// `torque_uncertainty`, defaulted where `torque_constant` is set), or NaN when none has one.
double TorqueFromCurrentUncertainty(const std::string& yaml_path) {
  double u = NAN;
  try {
    const heft::config::Document doc = heft::config::Document::Load(yaml_path);
    for (const auto& j : heft::drivers::ParseDriverConfig(doc.root()["drivers"]).joints)
      if (j.torque_scale_uncertainty >= 0.0 && !(j.torque_scale_uncertainty <= u))
        u = j.torque_scale_uncertainty;
  } catch (const std::exception&) {
    return NAN;  // no configuration beside the run: no target that needs it
  }
  return u;
}

// RMS of the link's true mass against RMS of its change from the first row (the unloaded link the
// nominal model describes), over the rows from the load's arrival on: how large the mass is
// against the error the nominal model makes.
double MassOverChange(const Table& t, const std::string& link, double load_time) {
  const std::vector<double> time = Seconds(t), m = t.column(LinkColumn(t, link, "true_", 0));
  if (m.empty() || m.size() != time.size()) return NAN;
  const double origin = time.front() > 1.0 ? time.front() : 0.0;
  std::vector<double> mass, change;
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (!(time[i] - origin >= load_time) && !std::isnan(load_time)) continue;
    mass.push_back(m[i]);
    change.push_back(m[i] - m.front());
  }
  return Rms(mass) / Rms(change);
}

}  // namespace

// The MIT path's own targets (docs/standard-actuators.md, "The main job on MIT actuators"). A
// torque from current is the CAN torque sensor's reading through K_t · N, known to a relative u: a
// scale error δ (|δ| ≤ u) on the joints that sense the load moves the load's estimate by δ·m.
// Beside the CAN path's (its steady-state mass error e, its task error E with adaptation, linear in
// the handed mass error) the MIT path is held to e + u, and to the reduction its task error allows
// when the CAN path just meets its target W: 1 / (1/W + u · RMS(m) / RMS(m − m₀)), RMS(m − m₀)
// being what the nominal model's task error is made of, and never below 1×. The current's
// quantisation (2 t_max / 4095 A, K_t N t_max ≤ the joint's effort limit: ≤ 0.042 N·m σ on the
// reference robot) is below 5 % of the rows' modelled noise σ₀ (estimator.noise.joint_torque, 1
// N·m): no term of its own.
void AddMitTargets(const std::string& name, const std::string& yaml_path, const Table& mit,
                   const std::string& link, const RunFigures& f, const RunFigures& c,
                   const RunFigures& o, std::vector<Target>& targets) {
  const double u = TorqueFromCurrentUncertainty(yaml_path);
  if (std::isnan(u)) return;
  targets.push_back({name +
                         ": mass error on MIT actuators at steady state, within the CAN path's + "
                         "the current-to-torque uncertainty u",
                     Fmt("%.2f %%", 100 * f.mass_error) + Fmt(" (CAN %.2f %%", 100 * c.mass_error) +
                         Fmt(", u %.0f %%)", 100 * u),
                     "≤ CAN's + u", f.mass_error <= c.mass_error + u, true});
  const bool forearm = name == "forearm-load";
  if (!o.ok || (!forearm && name != "torso-load")) return;
  const double wanted = forearm ? 7.0 : 2.2;  // AddReductionTarget's
  const double ratio = o.rmse / f.rmse;
  // At least 1×: adaptation is never to make the task worse than the nominal model does.
  const double allowed =
      std::max(1.0, 1.0 / (1.0 / wanted + u * MassOverChange(mit, link, f.load_time)));
  targets.push_back(
      {std::string(forearm ? "elbow" : "pelvis-height") + " RMSE reduced by adaptation (" + name +
           "), MIT actuators",
       Fmt("%.1f×", ratio),
       Fmt("≥ %.1f× (the CAN path's ", allowed) + Fmt("%.3g× less u's share)", wanted),
       ratio >= allowed, true});
}

}  // namespace heft::report

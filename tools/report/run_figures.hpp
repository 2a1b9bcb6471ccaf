// The figures of one heft-sim run of the main job, from its telemetry (columns found by name, in
// the host's layout before or after units entered the names: `t` or `t_ns`, `L_est_m` or
// `L_est_mass_kg`, states as numbers or names), and what the run was, from the configuration
// tools/main-job.sh wrote beside it (RUN_DIR/<config>-<label>.yaml).
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "heft/host/telemetry_table.hpp"

namespace heft::report {

using Table = host::TelemetryTable;

// A run the simulated robot could not complete: MuJoCo found the simulation unstable and reset it
// (heft-sim's run summary beside the telemetry, simulation.unstable_at; heft-sim exits 1), so its
// telemetry from then on is not the scenario's.
struct VoidRun {
  double unstable_at = NAN;        // s
  double steps_beyond_effort = 0;  // steps on which a commanded torque was beyond a drive's limit
  std::string joints;              // those joints, most steps first: "NAME STEPS, …"
  // "unstable at T s; torques beyond the drives' limits on N steps (NAME STEPS, …)"
  std::string Reason() const;
};
// The run whose telemetry is `telemetry_path` as its summary (host::SummaryPath) describes it:
// nullopt when it completed or has no summary.
std::optional<VoidRun> VoidOf(const std::string& telemetry_path);

// The telemetry as the host's one reader reads it (heft/host/telemetry_table.hpp); a void run's
// reads as none (not ok), so no figure of the report comes from it.
Table Read(const std::string& path);

double Rms(const std::vector<double>& v);
double Quantile(std::vector<double> v, double q);
double Fraction(const std::vector<double>& v, double value);
std::string Fmt(const char* format, double a);

// Time of each row in seconds (`t` or `t_ns`).
std::vector<double> Seconds(const Table& t);
// The first of `names` the table has ("" when none).
std::string Column(const Table& t, const std::vector<std::string>& names);
// A link's quantity q (0 mass, 1-3 first moment, 4-9 inertia) of kind "" (handed on), "est_" (raw
// estimate) or "true_" (simulated truth).
std::string LinkColumn(const Table& t, const std::string& link, const std::string& kind, int q);
// A task error of the simulated controller (`left_elbow_error`, with or without its unit).
std::string ErrorColumn(const Table& t, const std::string& error);

struct RunFigures {
  bool ok = false;
  double load_time = NAN;       // s: when the true mass first left its starting value
  double calibrated_at = NAN;   // s: when the start-up calibration ended (NaN: none ran)
  double rmse = NAN;            // task error from the load's arrival on (the whole run without one)
  double mean_error = NAN;      // its mean over the same ticks (a steady offset: |mean| ≈ rmse)
  double pre_load_error = NAN;  // mean task error over the second before the load's arrival (when
                                // it arrives after 1 s): the controller's own offset, unloaded
  double mass_error = NAN;      // mean relative error, last quarter, while estimating
  double com_error = NAN;       // m, same
  double inertia_error = NAN;   // relative Frobenius, same
  double prior_inertia_error = NAN;  // the same for the estimator's prior (its first row's
                                     // estimate, the nominal model's link) against the same truth
  double com_inertia_error = NAN;    // the rotational inertia about the CoM, relative
                                     // Frobenius, mean over the same ticks
  double com_inertia_jitter = NAN;   // its standard deviation over them
  double prior_com_inertia_error = NAN;  // the prior's, against the same truth
  // The nominal model's own error over the same ticks: its link (row 0's estimate) plus the true
  // payload (the truth's change since row 0) against the truth. What no estimate can remove where
  // the data say nothing (an identified link's share of a composite no recording splits).
  double prior_mass_error = NAN;  // relative
  double prior_com_error = NAN;   // m
  double nees = NAN;  // mean of <link>_nees (χ²(10) when the handed covariance is honest), same
  double mh_nees = NAN;  // mean of <link>_mh_nees: mass and first moment alone (χ²(4)), same
  // median of the handed mass's σ over the handed mass, same ticks (NaN: no σ column): above 1 the
  // handed covariance says the motion leaves the mass unseen
  double handed_mass_sd = NAN;
  double converge_s = NAN;  // median time to within 5 % after each jump of the true mass (or
                            // after the estimator starts when the mass never jumps)
  // kg: the handed mass against the truth over the ticks of rmse (what the controller was given,
  // its lag included).
  double handed_mass_rmse = NAN;
  double true_mass_span = 0.0;      // kg
  double nominal_mass_error = NAN;  // the handed mass before estimation vs the final truth
  double gated = 0, released = 0;
  double rate_limited = 0;    // fraction of ticks
  double raw_consistent = 0;  // fraction of ticks
  int rows = 0, handed_inconsistent = 0;
  double null_space = 0;  // fraction of ticks with the null-space measurement
  double tick_p50 = 0, tick_p999 = 0, tick_worst = 0, overruns = 0;  // compute_us
};

// The figures of `link` and the task error `error` in one run's telemetry.
RunFigures Measure(const Table& t, const std::string& link, const std::string& error);
// ", N % gated" for a run whose gate refused half its ticks or more (its estimate was held: said
// beside its figures), else "".
std::string GateHeldNote(const RunFigures& f);

// The stepping runs' torso-mass spikes (Fig. 8): `link`'s raw mass error against the truth after
// `after` seconds (once stepping has begun), its settled value (the median), the robust spread of
// the estimate about it (1.4826 × the median absolute deviation: the standard deviation for
// Gaussian jitter, untouched by a few spikes) and the peak deviation about 0 and about the settled
// value. A touchdown spike is a peak beyond kSpikeSigmas spreads: for ~3000 samples of Gaussian
// jitter the largest is about 3.7 spreads, and one beyond 5 has a chance of about 0.2 %.
// `used` is the share of those ticks whose measurement was used (updated or released): an
// estimator that gated every touchdown by gating everything has frozen, not rejected spikes.
struct MassSpikes {
  bool ok = false;
  double settled = NAN, spread = NAN, peak = NAN, peak_about_settled = NAN, used = NAN;
  static constexpr double kSpikeSigmas = 5.0;
  static constexpr double kMinUsed = 0.5;
  bool spiked() const { return !(peak_about_settled <= kSpikeSigmas * spread); }
  // The peak in spreads (a peak over a jitter-free estimate: infinitely many).
  double spreads() const {
    if (spread > 0.0) return peak_about_settled / spread;
    return peak_about_settled > 0.0 ? INFINITY : 0.0;
  }
};
MassSpikes MeasureMassSpikes(const Table& t, const std::string& link, double after);

// One run's telemetry file for a figure: DIR/<file>, read as `table`, drawn as `title`.
struct PlottedRun {
  std::string file;
  const Table& table;
  std::string title;
};
// Writes DIR/PNG: `link`'s mass estimate in run a (primary) and run b (secondary) and the truth
// (from run a), against time. False when gnuplot failed.
bool PlotMassEstimates(const std::string& dir, const std::string& png, const std::string& title,
                       const std::string& link, const PlottedRun& a, const PlottedRun& b);

// Writes PATH: per row of `link`, the distance of its CoM to the truth (mm) and its inertia's
// relative error (%), for the raw estimate, the handed one and the prior (row 0's raw estimate,
// the nominal link). False when the table lacks the link's columns or PATH cannot be written.
bool WriteShapeErrors(const Table& t, const std::string& link, const std::string& path);
// Writes DIR/NAME-com-error.png and DIR/NAME-inertia-error.png from DIR/NAME-shape.csv. False
// when gnuplot failed.
bool PlotShapeErrors(const std::string& dir, const std::string& name, const std::string& link);

// What a run was (its configuration as main-job.sh wrote it).
struct RunInfo {
  bool found = false;
  std::string scenario;
  bool identified = false;  // robot.parameters set: heft-identify's model as nominal
  bool calibration = false;
  bool adaptation = true;
  bool kf = false;
  bool floating = false;
  bool ft_cells = false;
  bool gating = true;
  double load_after = 0.0;
  std::string deviations;  // simulation.deviations as written; "" when absent
};
RunInfo DescribeRun(const std::string& yaml_path);
// "URDF" / "identified", "on" / "off" ..., for the report's tables.
std::string DescribeDeviations(const RunInfo& info);

}  // namespace heft::report

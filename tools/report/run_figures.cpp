#include "run_figures.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "heft/host/json.hpp"
#include "plot.hpp"

namespace heft::report {
namespace {

// An enumeration column as its numbers, whether written as numbers or as names (`names[k]` is
// the name of value k).
std::vector<int> Codes(const Table& t, const std::string& column,
                       const std::vector<std::string>& names) {
  std::vector<int> out;
  for (const std::string& cell : t.strings(column)) {
    const auto it = std::find(names.begin(), names.end(), cell);
    out.push_back(it != names.end() ? static_cast<int>(it - names.begin())
                                    : static_cast<int>(std::strtol(cell.c_str(), nullptr, 10)));
  }
  return out;
}

constexpr int kCalibrating = 2, kEstimating = 3;

// heftd's tick_status names in the order of their codes (hal::TickStatus), and the codes read here.
const std::vector<std::string> kTickStatusNames = {
    "calibrating", "updated", "gated", "released", "rejected_numeric", "invalid_input"};
constexpr int kUpdated = 1, kGated = 2, kReleased = 3;

// A link's ten parameters in row i, from the columns `cols` (mass, first moment, inertia about the
// link origin).
std::array<double, 10> Parameters(const Table& tb, std::size_t i, const std::vector<int>& cols) {
  std::array<double, 10> p{};
  for (int k = 0; k < 10; ++k) p[k] = tb.rows[i][cols[k]];
  return p;
}
// The columns of `link`'s raw estimate, truth and handed parameters (10 each). False when one
// is missing.
bool ParameterColumns(const Table& tb, const std::string& link, std::vector<int>& est,
                      std::vector<int>& tru, std::vector<int>& hand) {
  est.resize(10), tru.resize(10), hand.resize(10);
  for (int q = 0; q < 10; ++q) {
    est[q] = tb.col(LinkColumn(tb, link, "est_", q));
    tru[q] = tb.col(LinkColumn(tb, link, "true_", q));
    hand[q] = tb.col(LinkColumn(tb, link, "", q));
    if (est[q] < 0 || tru[q] < 0 || hand[q] < 0) return false;
  }
  return true;
}
// Distance between the centres of mass of a and b, m.
double ComDistance(const std::array<double, 10>& a, const std::array<double, 10>& b) {
  double d = 0;
  for (int k = 1; k < 4; ++k) d += std::pow(a[k] / a[0] - b[k] / b[0], 2);
  return std::sqrt(d);
}
// a's inertia about the link origin against the truth's, relative Frobenius (the six entries).
double InertiaError(const std::array<double, 10>& a, const std::array<double, 10>& truth) {
  double d = 0, n = 0;
  for (int k = 4; k < 10; ++k) d += std::pow(a[k] - truth[k], 2), n += truth[k] * truth[k];
  return std::sqrt(d / n);
}
// a's rotational inertia about its own centre of mass (the URDF's <inertia>) against the truth's
// about the truth's, relative Frobenius (the six entries). Unlike the inertia about the link
// origin it does not hold m c c: the CoM, checked on its own, does not enter it a second time.
double InertiaAboutComError(const std::array<double, 10>& a, const std::array<double, 10>& truth) {
  auto about_com = [](const std::array<double, 10>& p) {
    const double c[3] = {p[1] / p[0], p[2] / p[0], p[3] / p[0]};
    const double cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    // p[4..9]: xx, xy, xz, yy, yz, zz about the origin; minus m (|c|² 1 − c cᵀ).
    return std::array<double, 6>{
        p[4] - p[0] * (cc - c[0] * c[0]), p[5] + p[0] * c[0] * c[1],
        p[6] + p[0] * c[0] * c[2],        p[7] - p[0] * (cc - c[1] * c[1]),
        p[8] + p[0] * c[1] * c[2],        p[9] - p[0] * (cc - c[2] * c[2])};
  };
  const auto x = about_com(a), y = about_com(truth);
  double d = 0, n = 0;
  for (int k = 0; k < 6; ++k) d += std::pow(x[k] - y[k], 2), n += y[k] * y[k];
  return std::sqrt(d / n);
}

}  // namespace

std::string VoidRun::Reason() const {
  std::string out = Fmt("unstable at %.2f s", unstable_at);
  if (steps_beyond_effort > 0)
    out += Fmt("; torques beyond the drives' limits on %.0f steps", steps_beyond_effort) +
           (joints.empty() ? "" : " (" + joints + ")");
  return out;
}

std::optional<VoidRun> VoidOf(const std::string& telemetry_path) {
  std::ifstream in(host::SummaryPath(telemetry_path));
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  const std::optional<host::Json> summary = host::ParseJson(text.str());
  const host::Json* sim = summary ? summary->Find("simulation") : nullptr;
  if (sim == nullptr || !(sim->Number("unstable_at", -1.0) >= 0.0)) return std::nullopt;
  VoidRun v;
  v.unstable_at = sim->Number("unstable_at");
  v.steps_beyond_effort = sim->Number("steps_beyond_effort");
  std::vector<std::pair<double, std::string>> joints;
  if (const host::Json* per = sim->Find("beyond_effort_steps"))
    for (const host::Json::Member& m : per->object) joints.emplace_back(m.second.number, m.first);
  std::stable_sort(joints.begin(), joints.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  constexpr std::size_t kNamed = 3;  // the rest are in the run's log and summary
  for (std::size_t j = 0; j < joints.size() && j < kNamed; ++j)
    v.joints += (j ? ", " : "") + joints[j].second + Fmt(" %.0f", joints[j].first);
  if (joints.size() > kNamed) v.joints += ", …";
  return v;
}

Table Read(const std::string& path) {
  if (VoidOf(path)) return Table{};
  return host::ReadTelemetryTable(path);
}

double Rms(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return v.empty() ? NAN : std::sqrt(s / static_cast<double>(v.size()));
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

double Fraction(const std::vector<double>& v, double value) {
  return v.empty() ? 0.0
                   : static_cast<double>(std::count(v.begin(), v.end(), value)) /
                         static_cast<double>(v.size());
}

std::string Fmt(const char* format, double a) {
  char b[64];
  std::snprintf(b, sizeof(b), format, a);
  return b;
}

std::vector<double> Seconds(const Table& t) {
  if (t.col("t") >= 0) return t.column("t");
  return t.seconds("t_ns");
}

std::string Column(const Table& t, const std::vector<std::string>& names) {
  for (const std::string& n : names)
    if (t.col(n) >= 0) return n;
  return "";
}

std::string LinkColumn(const Table& t, const std::string& link, const std::string& kind, int q) {
  static const char* plain[] = {"m", "hx", "hy", "hz", "ixx", "ixy", "ixz", "iyy", "iyz", "izz"};
  static const char* units[] = {"mass_kg",   "hx_kg_m",   "hy_kg_m",   "hz_kg_m",   "ixx_kg_m2",
                                "ixy_kg_m2", "ixz_kg_m2", "iyy_kg_m2", "iyz_kg_m2", "izz_kg_m2"};
  const std::string base = link + "_" + kind;
  return Column(t, {base + plain[q], base + units[q]});
}

std::string ErrorColumn(const Table& t, const std::string& error) {
  return Column(t, {error, error + "_rad", error + "_m"});
}

MassSpikes MeasureMassSpikes(const Table& tb, const std::string& link, double after) {
  MassSpikes s;
  if (!tb.ok) return s;
  const int est = tb.col(LinkColumn(tb, link, "est_", 0)),
            tru = tb.col(LinkColumn(tb, link, "true_", 0));
  if (est < 0 || tru < 0) return s;
  const std::vector<double> t = Seconds(tb);
  const std::vector<int> status = Codes(tb, "tick_status", kTickStatusNames);
  std::vector<double> e;
  int used = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!(t[i] > after)) continue;
    e.push_back(tb.rows[i][est] - tb.rows[i][tru]);
    if (i < status.size() && (status[i] == kUpdated || status[i] == kReleased)) ++used;
  }
  if (e.size() < 2) return s;
  s.used = static_cast<double>(used) / static_cast<double>(e.size());
  s.ok = true;
  s.settled = Quantile(e, 0.5);
  std::vector<double> deviation;
  s.peak = 0.0;
  for (double x : e) {
    deviation.push_back(std::abs(x - s.settled));
    s.peak = std::max(s.peak, std::abs(x));
  }
  s.peak_about_settled = *std::max_element(deviation.begin(), deviation.end());
  s.spread = 1.4826 * Quantile(deviation, 0.5);
  return s;
}

namespace {

// One run's telemetry as Measure reads it: times, state codes and the link's parameter columns.
struct RunColumns {
  const Table& tb;
  std::vector<double> t;
  std::vector<int> state, model, status;
  std::vector<int> est, tru, hand;
  std::size_t n = 0;
  double origin = 0;  // the run's start (a real-time run's clock is the host's monotonic clock; a
                      // lockstep run's starts at 0)
  double at(std::size_t i, int c) const { return tb.rows[i][c]; }
};

// The load's arrival and the calibration's end, from the run's start.
void MeasureEvents(const RunColumns& c, RunFigures& f) {
  const double m0 = c.at(0, c.tru[0]);
  for (std::size_t i = 0; i < c.n && std::isnan(f.load_time); ++i)
    if (std::abs(c.at(i, c.tru[0]) - m0) > 1e-6 * std::max(1.0, std::abs(m0)))
      f.load_time = c.t[i] - c.origin;
  bool calibrating = false;
  for (std::size_t i = 0; i < c.n && std::isnan(f.calibrated_at); ++i) {
    calibrating = calibrating || c.state[i] == kCalibrating;
    if (calibrating && c.state[i] == kEstimating) f.calibrated_at = c.t[i] - c.origin;
  }
}

// The task error from the load on, and its mean over the second before the load; the handed mass's
// error over the same ticks as the task's RMSE.
void MeasureTaskError(const RunColumns& c, const std::string& error, RunFigures& f) {
  const int ec = c.tb.col(ErrorColumn(c.tb, error));
  if (ec < 0) return;
  std::vector<double> e, mass;
  double before = 0.0;
  int before_n = 0;
  for (std::size_t i = 0; i < c.n; ++i) {
    const double ti = c.t[i] - c.origin;
    if (std::isnan(f.load_time) || ti >= f.load_time) {
      e.push_back(c.at(i, ec));
      mass.push_back(c.at(i, c.hand[0]) - c.at(i, c.tru[0]));
    }
    if (f.load_time >= 1.0 && ti >= f.load_time - 1.0 && ti < f.load_time)
      before += c.at(i, ec), ++before_n;
  }
  f.rmse = Rms(e);
  f.handed_mass_rmse = Rms(mass);
  if (!e.empty()) {
    double sum = 0.0;
    for (const double v : e) sum += v;
    f.mean_error = sum / static_cast<double>(e.size());
  }
  if (before_n > 0) f.pre_load_error = before / before_n;
}

// Estimate against truth over the last quarter, while estimating.
void MeasureSteadyState(const RunColumns& c, const std::string& link, RunFigures& f) {
  double me = 0, ce = 0, ie = 0, ne = 0, mne = 0, pe = 0, ke = 0, ke2 = 0, pke = 0, pme = 0,
         pce = 0;
  int count = 0;
  const int nees = c.tb.col(link + "_nees"), mh_nees = c.tb.col(link + "_mh_nees");
  const int sd_mass = c.tb.col(LinkColumn(c.tb, link, "sd_", 0));
  std::vector<double> sd_ratio;
  // The prior: the filter's estimate before it ran (row 0, the nominal link), and the truth then.
  const auto prior = Parameters(c.tb, 0, c.est), truth0 = Parameters(c.tb, 0, c.tru);
  for (std::size_t i = 0; i < c.n; ++i) {
    if (c.t[i] < 0.75 * c.t.back() || c.state[i] != kEstimating) continue;
    if (nees >= 0) ne += c.at(i, nees);
    if (mh_nees >= 0) mne += c.at(i, mh_nees);
    if (sd_mass >= 0 && c.at(i, c.hand[0]) > 0.0)
      sd_ratio.push_back(c.at(i, sd_mass) / c.at(i, c.hand[0]));
    const auto truth = Parameters(c.tb, i, c.tru), raw = Parameters(c.tb, i, c.est);
    me += std::abs(raw[0] - truth[0]) / truth[0];
    ce += ComDistance(raw, truth);
    ie += InertiaError(raw, truth);
    pe += InertiaError(prior, truth);
    const double k = InertiaAboutComError(raw, truth);
    ke += k, ke2 += k * k;
    pke += InertiaAboutComError(prior, truth);
    // The nominal link plus the true payload (the truth's change since row 0).
    std::array<double, 10> reachable = prior;
    for (int q = 0; q < 10; ++q) reachable[q] += truth[q] - truth0[q];
    pme += std::abs(reachable[0] - truth[0]) / truth[0];
    pce += ComDistance(reachable, truth);
    ++count;
  }
  if (count) {
    f.mass_error = me / count, f.com_error = ce / count, f.inertia_error = ie / count;
    f.prior_inertia_error = pe / count;
    f.com_inertia_error = ke / count;
    f.com_inertia_jitter =
        std::sqrt(std::max(0.0, ke2 / count - f.com_inertia_error * f.com_inertia_error));
    f.prior_com_inertia_error = pke / count;
    f.prior_mass_error = pme / count, f.prior_com_error = pce / count;
  }
  if (count && nees >= 0) f.nees = ne / count;
  if (count && mh_nees >= 0) f.mh_nees = mne / count;
  if (!sd_ratio.empty()) f.handed_mass_sd = Quantile(std::move(sd_ratio), 0.5);
}

// Convergence after each jump of the true mass, or after the estimator starts; the true mass's
// span and the nominal mass's error.
void MeasureConvergence(const RunColumns& c, RunFigures& f) {
  std::vector<double> conv;
  bool jumps = false;
  for (std::size_t i = 1; i < c.n; ++i)
    jumps = jumps || std::abs(c.at(i, c.tru[0]) - c.at(i - 1, c.tru[0])) > 0.5;
  double event = -1;
  for (std::size_t i = 1; i < c.n; ++i) {
    if (!jumps && c.state[i] == kEstimating && c.state[i - 1] != kEstimating) event = c.t[i];
    if (jumps && std::abs(c.at(i, c.tru[0]) - c.at(i - 1, c.tru[0])) > 0.5) event = c.t[i];
    if (event >= 0 && std::abs(c.at(i, c.est[0]) - c.at(i, c.tru[0])) < 0.05 * c.at(i, c.tru[0])) {
      conv.push_back(c.t[i] - event);
      event = -1;
    }
  }
  if (!conv.empty()) f.converge_s = Quantile(conv, 0.5);
  const double m0 = c.at(0, c.tru[0]);
  double lo = m0, hi = m0;
  for (std::size_t i = 0; i < c.n; ++i)
    lo = std::min(lo, c.at(i, c.tru[0])), hi = std::max(hi, c.at(i, c.tru[0]));
  f.true_mass_span = hi - lo;
  f.nominal_mass_error =
      std::abs(c.at(0, c.hand[0]) - c.at(c.n - 1, c.tru[0])) / c.at(c.n - 1, c.tru[0]);
}

// Per tick: gated, released, the null-space measurement, the handed parameters' consistency
// (from the CSV: triangle inequalities about the CoM); the rate limit, the raw estimate's
// consistency and the compute time.
void MeasureTicks(const RunColumns& c, RunFigures& f) {
  for (std::size_t i = 0; i < c.n; ++i) {
    f.gated += i < c.status.size() && c.status[i] == kGated;
    f.released += i < c.status.size() && c.status[i] == kReleased;
    f.null_space += i < c.model.size() && c.model[i] == 2;
    const double mm = c.at(i, c.hand[0]);
    const double cx = c.at(i, c.hand[1]) / mm, cy = c.at(i, c.hand[2]) / mm,
                 cz = c.at(i, c.hand[3]) / mm;
    const double ixx = c.at(i, c.hand[4]) - mm * (cy * cy + cz * cz),
                 iyy = c.at(i, c.hand[7]) - mm * (cx * cx + cz * cz),
                 izz = c.at(i, c.hand[9]) - mm * (cx * cx + cy * cy);
    if (!(mm > 0 && ixx > 0 && iyy > 0 && izz > 0 && ixx + iyy >= izz && ixx + izz >= iyy &&
          iyy + izz >= ixx))
      ++f.handed_inconsistent;
  }
  f.null_space /= static_cast<double>(c.n);
  f.rate_limited = Fraction(c.tb.column("rate_limited"), 1.0);
  f.raw_consistent = Fraction(c.tb.column("consistent"), 1.0);
  const std::vector<double> cu = c.tb.column("compute_us");
  f.tick_p50 = Quantile(cu, 0.5);
  f.tick_p999 = Quantile(cu, 0.999);
  f.tick_worst = Quantile(cu, 1.0);
  f.overruns =
      static_cast<double>(std::count_if(cu.begin(), cu.end(), [](double x) { return x > 3000; }));
}

}  // namespace

RunFigures Measure(const Table& tb, const std::string& link, const std::string& error) {
  RunFigures f;
  if (!tb.ok) return f;
  RunColumns c{tb, Seconds(tb), {}, {}, {}, {}, {}, {}, 0, 0.0};
  c.state = Codes(tb, "state",
                  {"inactive", "wait_for_walking", "calibrating_bias", "estimating", "holding"});
  // A hold by the gate alone is a tick the filter judged and refused: estimating, for every figure
  // (a sensor's hold is not).
  const std::vector<std::string> reasons = tb.strings("hold_reason");
  for (std::size_t i = 0; i < c.state.size() && i < reasons.size(); ++i)
    if (reasons[i] == "gated") c.state[i] = kEstimating;
  c.model = Codes(tb, "model", {"none", "full_wrench", "torque_null_space"});
  c.status = Codes(tb, "tick_status", kTickStatusNames);
  if (!ParameterColumns(tb, link, c.est, c.tru, c.hand)) return f;
  c.n = c.t.size();
  if (c.n == 0 || c.state.size() != c.n) return f;
  c.origin = c.t.front() > 1.0 ? c.t.front() : 0.0;
  f.ok = true;
  f.rows = static_cast<int>(c.n);
  MeasureEvents(c, f);
  MeasureTaskError(c, error, f);
  MeasureSteadyState(c, link, f);
  MeasureConvergence(c, f);
  MeasureTicks(c, f);
  return f;
}

std::string GateHeldNote(const RunFigures& f) {
  const double share = f.rows > 0 ? f.gated / f.rows : 0.0;
  return share >= 0.5 ? Fmt(", %.0f %% gated", 100 * share) : std::string();
}

bool WriteShapeErrors(const Table& tb, const std::string& link, const std::string& path) {
  if (!tb.ok || tb.rows.empty()) return false;
  std::vector<int> est, tru, hand;
  if (!ParameterColumns(tb, link, est, tru, hand)) return false;
  std::ofstream out(path);
  out << "t_s,com_raw_mm,com_handed_mm,com_prior_mm,inertia_raw_pct,inertia_handed_pct,"
         "inertia_prior_pct,inertia_com_raw_pct,inertia_com_handed_pct,inertia_com_prior_pct\n";
  const std::vector<double> t = Seconds(tb);
  const double origin = t.front() > 1.0 ? t.front() : 0.0;
  const auto prior = Parameters(tb, 0, est);
  char line[256];
  for (std::size_t i = 0; i < tb.rows.size(); ++i) {
    const auto truth = Parameters(tb, i, tru), raw = Parameters(tb, i, est),
               handed = Parameters(tb, i, hand);
    std::snprintf(line, sizeof line, "%.4f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n",
                  t[i] - origin, 1000 * ComDistance(raw, truth), 1000 * ComDistance(handed, truth),
                  1000 * ComDistance(prior, truth), 100 * InertiaError(raw, truth),
                  100 * InertiaError(handed, truth), 100 * InertiaError(prior, truth),
                  100 * InertiaAboutComError(raw, truth), 100 * InertiaAboutComError(handed, truth),
                  100 * InertiaAboutComError(prior, truth));
    out << line;
  }
  return static_cast<bool>(out);
}

bool PlotShapeErrors(const std::string& dir, const std::string& name, const std::string& link) {
  const std::string csv = dir + "/" + name + "-shape.csv";
  // One figure per error: the raw estimate, the handed one and the prior, columns
  // <prefix>_raw_<unit>…
  auto plot = [&](const std::string& png, const std::string& what, const std::string& axis,
                  const std::string& prefix, const std::string& unit) {
    return Plot(
        dir, name + png, name + ": " + link + " " + what, axis,
        {{csv, "t_s", prefix + "_raw_" + unit, "raw estimate (EKF)", Style::kPrimary},
         {csv, "t_s", prefix + "_handed_" + unit, "handed on", Style::kSecondary},
         {csv, "t_s", prefix + "_prior_" + unit, "the prior (nominal model)", Style::kTertiary}});
  };
  const bool com = plot("-com-error.png", "centre of mass, distance to the truth", "CoM error [mm]",
                        "com", "mm");
  const bool inertia =
      plot("-inertia-error.png", "inertia about the link origin, relative error to the truth",
           "inertia error [%]", "inertia", "pct");
  const bool about_com = plot("-inertia-com-error.png",
                              "inertia about its centre of mass, relative error to the truth",
                              "inertia error [%]", "inertia_com", "pct");
  return com && inertia && about_com;
}

RunInfo DescribeRun(const std::string& yaml_path) {
  RunInfo r;
  std::ifstream in(yaml_path);
  if (!in) return r;
  r.found = true;
  auto after = [](const std::string& line, const std::string& key) {
    const auto at = line.find(key);
    return at == std::string::npos ? std::string() : line.substr(at + key.size());
  };
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  parameters:", 0) == 0) r.identified = true;
    if (line.rfind("  calibration: {enabled: true", 0) == 0) r.calibration = true;
    if (line.rfind("  adaptation: false", 0) == 0) r.adaptation = false;
    if (line.rfind("  filter: kf", 0) == 0) r.kf = true;
    if (line.rfind("  floating_base: true", 0) == 0) r.floating = true;
    if (line.rfind("  ft_cells:", 0) == 0) r.ft_cells = true;
    if (line.rfind("  gating: {enabled: false", 0) == 0) r.gating = false;
    if (line.rfind("  scenario: ", 0) == 0) r.scenario = after(line, "  scenario: ");
    if (line.rfind("  load_after: ", 0) == 0)
      r.load_after = std::strtod(after(line, "  load_after: ").c_str(), nullptr);
    if (line.rfind("  deviations: ", 0) == 0) r.deviations = after(line, "  deviations: ");
  }
  return r;
}

std::string DescribeDeviations(const RunInfo& info) {
  return info.deviations.empty() ? "none: the URDF exactly" : info.deviations;
}

bool PlotMassEstimates(const std::string& dir, const std::string& png, const std::string& title,
                       const std::string& link, const PlottedRun& a, const PlottedRun& b) {
  const std::string time = Column(a.table, {"t", "t_ns"});
  return Plot(
      dir, png, title, link + " mass m [kg]",
      {{dir + "/" + a.file, time, LinkColumn(a.table, link, "est_", 0), a.title, Style::kPrimary},
       {dir + "/" + b.file, time, LinkColumn(b.table, link, "est_", 0), b.title, Style::kSecondary},
       {dir + "/" + a.file, time, LinkColumn(a.table, link, "true_", 0), "truth", Style::kTruth}});
}

}  // namespace heft::report

#include "options.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "heft/recording/candump_convert.hpp"

namespace heft::identify {

const char* const kUsageText = R"(usage: heft-identify --urdf FILE [options] RECORDING...
       heft-identify convert --config HEFT.yaml --out FILE.heftrec [--max-gap S]
                             [--max-log-size MB] CANDUMP.log...
       heft-identify --help | --version

Identifies the robot's nominal inertial parameters (and joint friction) from .heftrec recordings
(heftd's host.recording) and writes them as a URDF and as the YAML robot.parameters reads.

  --urdf FILE              robot description (the prior: its inertials)
  --floating-base          the URDF's root link is a floating base (automatic with a floating joint)
  --validate FILE          a recording to evaluate on (repeatable; not used for fitting)
  --bodies a,b,...         links to identify (default: every moving body)
  --methods LIST           of wls, contact, nullspace, sdp (default: chosen by the recording:
                           all four on a floating base with F/T cells, else wls,sdp)
  --sdp-rows wls|nullspace rows the SDP fits (default nullspace when available, as Khorshidi
                           et al., else wls)
  --friction               identify Coulomb and viscous friction per joint alongside, from
                           the samples where the joint slides (|v| >= 0.03 rad/s); a joint
                           that never slides keeps 0, one that slides at nearly one speed
                           gets Coulomb alone
  --offsets                identify a constant torque-sensor offset per joint alongside (nuisance
                           unknowns: logged and commented in the YAML, not used by the service,
                           which calibrates its own at start-up; without them a sensor's offset
                           is fitted as gravity of the bodies it can be traded against)
  --gains                  identify a gain error per joint torque sensor alongside
                           (τ_measured = (1 + gain) τ; the floating base's wrench fixes their
                           scale, so on the wls rows; written as torque_sensors)
  --config HEFT.yaml       heftd's configuration: each joint whose torque comes from a motor
                           current (drivers.joints[].torque_constant) gets a gain unknown sized
                           by its torque_uncertainty (the others' gains as --gains says)
  --ft-offsets             identify the F/T cells' constant offsets alongside (six per cell,
                           nuisance unknowns: logged and commented in the YAML)
  --cutoff HZ              zero-phase low-pass cut-off (default 8)
  --rate HZ                identification rate after filtering (default 100)
  --contact-force N        a foot is in contact above this force (default 50)
  --noise TAU,F,N          measurement sigma: joint torque N·m, force N, moment N·m (0.3,2,0.2)
  --rank-tolerance R       relative singular value kept as identified (default 1e-6)
  --regularisation MU      SDP pull toward the URDF's values, per plausible size squared
                           (default 1e3; docs/identification.md)
  --sdp-margin K           SDP: every body's pseudo-inertia keeps K of the URDF's smallest
                           eigenvalue (default 0.1; 0: the absolute 1e-7 alone, point masses allowed)
  --ellipsoid-scale S      bounding ellipsoids from the prior's inertia ×S where the URDF has no
                           collision geometry (default 2; 0: collision geometry only)
  --no-ellipsoids          no bounding-ellipsoid constraints
  --output-method M        which result to write (default: sdp if run, else the first)
  --out-urdf FILE          the input URDF with the identified inertials
  --out-yaml FILE          the identified parameters with their identifiability and fit statistics
  -h, --help               this text
  --version                heft's version

convert reads candump logs (regular files only) through heftd's drivers into a recording:
  --max-gap S              longest time without frames on the configured buses (default 10)
  --max-log-size MB        the logs together at most (default 1024): a larger log is refused
                           before it is read (the conversion holds the logs in memory)

Progress goes to stderr: a bar when stderr is a terminal, else a line every 10 s.

Exit codes:
  0  identified; every requested file written
  1  runtime failure: unreadable or malformed recording or URDF, a file could not be written
  2  usage or configuration error: unknown option, bad value, a method the recording cannot
     support (contact/nullspace on a fixed base), an unreadable heft.yaml (convert)
  3  a method failed (e.g. the SDP did not converge): the finished results were printed and the
     output files hold the best finished one (named in them and on stderr)
)";

namespace {

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

double Number(const std::string& opt, const std::string& v) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(x))
    throw UsageError(opt + ": not a finite number: '" + v + "'");
  return x;
}

double Positive(const std::string& opt, const std::string& v) {
  const double x = Number(opt, v);
  if (x <= 0) throw UsageError(opt + ": must be positive, got " + v);
  return x;
}

// Calls take(a, value) for each argument a from argv[first] on but -h and --help, which set
// `help`; value() consumes the next argument as a's value (or throws UsageError: "a needs a
// value").
template <typename Take>
void EachArgument(int argc, char** argv, int first, bool& help, Take take) {
  for (int i = first; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      help = true;
      continue;
    }
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(a + " needs a value");
      return argv[++i];
    };
    take(a, value);
  }
}

}  // namespace

Options ParseOptions(int argc, char** argv) {
  Options o;
  EachArgument(argc, argv, 1, o.help, [&](const std::string& a, const auto& value) {
    if (a == "--version") {
      o.version = true;
    } else if (a == "--urdf") {
      o.urdf_path = value();
    } else if (a == "--floating-base") {
      o.floating = true;
    } else if (a == "--validate") {
      o.validations.push_back(value());
    } else if (a == "--bodies") {
      o.bodies = Split(value());
    } else if (a == "--methods") {
      o.methods = Split(value());
      if (o.methods.empty()) throw UsageError("--methods: give at least one method");
      for (const auto& m : o.methods)
        if (m != "wls" && m != "contact" && m != "nullspace" && m != "sdp")
          throw UsageError("--methods: unknown method '" + m +
                           "' (allowed: wls, contact, nullspace, sdp)");
    } else if (a == "--sdp-rows") {
      o.sdp_rows = value();
      if (o.sdp_rows != "wls" && o.sdp_rows != "nullspace")
        throw UsageError("--sdp-rows: '" + o.sdp_rows + "' (allowed: wls, nullspace)");
    } else if (a == "--friction") {
      o.friction = true;
    } else if (a == "--offsets") {
      o.offsets = true;
    } else if (a == "--gains") {
      o.gains = true;
    } else if (a == "--config") {
      o.config_path = value();
    } else if (a == "--ft-offsets") {
      o.ft_offsets = true;
    } else if (a == "--cutoff") {
      o.dataset.cutoff_hz = Positive(a, value());
    } else if (a == "--rate") {
      o.dataset.rate_hz = Positive(a, value());
    } else if (a == "--contact-force") {
      o.dataset.contact_force = Number(a, value());
    } else if (a == "--noise") {
      const auto parts = Split(value());
      if (parts.size() != 3) throw UsageError("--noise: three numbers TAU,F,N");
      o.noise.joint_torque = Positive(a, parts[0]);
      o.noise.force = Positive(a, parts[1]);
      o.noise.moment = Positive(a, parts[2]);
    } else if (a == "--rank-tolerance") {
      o.least_squares.rank_tolerance = Positive(a, value());
    } else if (a == "--regularisation") {
      o.sdp.regularisation = Positive(a, value());
    } else if (a == "--sdp-margin") {
      o.sdp.margin = Number(a, value());
      if (!(o.sdp.margin >= 0 && o.sdp.margin < 1)) throw UsageError("--sdp-margin: 0 to below 1");
    } else if (a == "--ellipsoid-scale") {
      o.ellipsoid_scale = Number(a, value());
      if (o.ellipsoid_scale < 0) throw UsageError("--ellipsoid-scale: must be 0 or more");
    } else if (a == "--no-ellipsoids") {
      o.ellipsoids = false;
    } else if (a == "--output-method") {
      o.output_method = value();
    } else if (a == "--out-urdf") {
      o.out_urdf = value();
    } else if (a == "--out-yaml") {
      o.out_yaml = value();
    } else if (!a.empty() && a[0] == '-') {
      throw UsageError("unknown option " + a + " (heft-identify --help lists them)");
    } else {
      o.recordings.push_back(a);
    }
  });
  if (o.help || o.version) return o;
  if (o.urdf_path.empty()) throw UsageError("--urdf is required (heft-identify --help)");
  if (o.recordings.empty()) throw UsageError("no recordings given (heft-identify --help)");
  if (!o.output_method.empty() && !o.methods.empty()) {
    bool listed = false;
    for (const auto& m : o.methods) listed = listed || m == o.output_method;
    if (!listed) throw UsageError("--output-method " + o.output_method + " is not among --methods");
  }
  return o;
}

ConvertOptions ParseConvertOptions(int argc, char** argv) {
  ConvertOptions o;
  EachArgument(argc, argv, 2, o.help, [&](const std::string& a, const auto& value) {
    if (a == "--config") {
      o.config_path = value();
    } else if (a == "--out") {
      o.out = value();
    } else if (a == "--max-gap") {
      const double seconds = Number(a, value());
      const double max = 1e-9 * static_cast<double>(recording::kMaxConvertGapNs);
      if (!(seconds > 0.0 && seconds <= max))
        throw UsageError("--max-gap: seconds in (0, " + std::to_string(max) + "], not " +
                         std::to_string(seconds));
      o.max_gap_ns = static_cast<std::int64_t>(seconds * 1e9);
    } else if (a == "--max-log-size") {
      const double mb = Number(a, value());
      if (!(mb > 0.0 && mb <= 1e7))
        throw UsageError("--max-log-size: megabytes in (0, 1e7], not " + std::to_string(mb));
      o.max_log_bytes = static_cast<std::uint64_t>(mb * 1e6);
    } else if (!a.empty() && a[0] == '-') {
      throw UsageError("convert: unknown option " + a + " (heft-identify --help)");
    } else {
      o.logs.push_back(a);
    }
  });
  if (!o.help && (o.config_path.empty() || o.out.empty() || o.logs.empty()))
    throw UsageError("convert needs --config, --out and at least one candump log");
  return o;
}

}  // namespace heft::identify

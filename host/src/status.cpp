#include "heft/host/status.hpp"

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <utility>

#include "heft/hal/enum_name.hpp"
#include "heft/host/json.hpp"

namespace heft::host {
namespace {

// The estimator's HoldReason bits (estimator/include/heft/estimator/sample_mapping.hpp; a test
// checks this table against it so that heft_host_io need not depend on the estimator).
constexpr std::array<const char*, 6> kHoldNames{"encoders", "torques",    "base",
                                                "history",  "non_finite", "gated"};

void Number(std::string& out, double v) {
  if (!std::isfinite(v)) {  // JSON has no inf/NaN: null (read back as inf)
    out += "null";
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  out += buf;
}

void Unsigned(std::string& out, std::uint64_t v) {
  out += std::to_string(v);
}

void Key(std::string& out, const char* key) {
  out.push_back('"');
  out += key;
  out += "\":";
}

// "\"a\":1,\"b\":2": the members of an object of counters (the caller writes the braces).
void UnsignedMembers(std::string& out,
                     std::initializer_list<std::pair<const char*, std::uint64_t>> members) {
  bool first = true;
  for (const auto& [key, value] : members) {
    if (!first) out.push_back(',');
    first = false;
    Key(out, key);
    Unsigned(out, value);
  }
}

void Vec3(std::string& out, const std::array<double, 3>& v) {
  out.push_back('[');
  for (std::size_t i = 0; i < 3; ++i) {
    if (i != 0) out.push_back(',');
    Number(out, v[i]);
  }
  out.push_back(']');
}

double Num(const Json& j, std::string_view key) {
  const Json* v = j.Find(key);
  if (v == nullptr) return 0.0;
  if (v->type == Json::Type::kNull) return std::numeric_limits<double>::infinity();
  return v->type == Json::Type::kNumber ? v->number : 0.0;
}

// A counter: JSON numbers are doubles, so one at or beyond 2^64 (a counter near its maximum
// reads back as 2^64, or a malformed reply) saturates instead of an undefined conversion.
std::uint64_t U64(const Json& j, std::string_view key) {
  const double v = j.Number(key, 0.0);
  if (!(v > 0.0)) return 0U;
  if (v >= 18446744073709551616.0) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(v);
}

// A signed 64-bit time stamp, saturating the same way.
std::int64_t I64(const Json& j, std::string_view key) {
  const double v = j.Number(key, 0.0);
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775808.0) return std::numeric_limits<std::int64_t>::max();
  if (v < -9223372036854775808.0) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(v);
}

bool Vec3From(const Json* j, std::array<double, 3>& out) {
  if (j == nullptr || j->type != Json::Type::kArray || j->array.size() != 3) return false;
  for (std::size_t i = 0; i < 3; ++i) {
    const Json& e = j->array[i];
    out[i] = e.type == Json::Type::kNumber ? e.number : std::numeric_limits<double>::infinity();
  }
  return true;
}

template <typename Enum, std::size_t N>
Enum EnumFromName(const std::string& name, const char* (*to_name)(Enum), Enum fallback) {
  for (std::size_t i = 0; i < N; ++i)
    if (name == to_name(static_cast<Enum>(i))) return static_cast<Enum>(i);
  return fallback;
}

}  // namespace

LinkStatus LinkFromParameters(const char* name, const hal::InertialParameters& pi,
                              const std::array<double, 100>& P) {
  LinkStatus l;
  l.name = name;
  l.mass = pi[0];
  l.mass_sigma = std::sqrt(std::max(P[0], 0.0));
  const double m = pi[0];
  for (std::size_t i = 0; i < 3; ++i) {
    if (!(m > 0.0)) {
      l.com[i] = 0.0;
      l.com_sigma[i] = std::numeric_limits<double>::infinity();
      continue;
    }
    const double h = pi[i + 1];
    const std::size_t k = i + 1;  // index of h_i in π
    // var(c_i) = J P J^T with J = [-h_i/m², e_i/m] over (m, h).
    const double var = (h * h * P[0] / (m * m) - 2.0 * h * P[k] / m + P[k * 10 + k]) / (m * m);
    l.com[i] = h / m;
    l.com_sigma[i] = std::sqrt(std::max(var, 0.0));
  }
  return l;
}

void FillFromEstimate(const hal::InertialEstimate& e, StatusSnapshot& out) {
  out.have_estimate = e.sequence != 0;
  out.sequence = e.sequence;
  out.stamp_ns = e.stamp_ns;
  out.estimator = e.status;
  out.links.clear();
  const std::size_t n = std::min<std::size_t>(e.num_links, hal::kMaxEstimatedLinks);
  for (std::size_t k = 0; k < n; ++k) {
    std::array<char, hal::kLinkNameLength> name = e.links[k].name;
    name.back() = '\0';
    out.links.push_back(
        LinkFromParameters(name.data(), e.links[k].parameters, e.links[k].covariance));
  }
}

std::vector<std::string> HoldReasonNames(std::uint32_t bits) {
  std::vector<std::string> names;
  for (std::uint32_t b = 0; b < 32; ++b) {
    if ((bits & (1U << b)) == 0) continue;
    names.push_back(b < kHoldNames.size() ? kHoldNames[b] : "bit" + std::to_string(b));
  }
  return names;
}

namespace {

// In the enums' declaration order (hal/include/heft/hal/{inertial_estimate,robot_state}.hpp).
constexpr std::array<const char*, 5> kStateNames{"inactive", "wait_for_walking", "calibrating_bias",
                                                 "estimating", "holding"};
static_assert(kStateNames.size() == hal::EnumCount(hal::EstimatorState::kHolding));
constexpr std::array<const char*, 3> kModelNames{"none", "full_wrench", "torque_null_space"};
static_assert(kModelNames.size() == hal::EnumCount(hal::MeasurementModel::kTorqueNullSpace));
constexpr std::array<const char*, 4> kChannelNames{"ok", "never_seen", "stale", "fault"};
static_assert(kChannelNames.size() == hal::EnumCount(hal::ChannelState::kFault));

}  // namespace

const char* EstimatorStateName(hal::EstimatorState state) {
  return hal::EnumName(state, kStateNames, "unknown");
}

const char* MeasurementModelName(hal::MeasurementModel model) {
  return hal::EnumName(model, kModelNames, "unknown");
}

const char* ChannelStateName(hal::ChannelState state) {
  return hal::EnumName(state, kChannelNames, "unknown");
}

std::string EncodeStatusJson(const StatusSnapshot& s) {
  std::string o;
  o.reserve(1024 + 256 * s.links.size());
  o += "{\"ok\":true,";
  Key(o, "have_estimate");
  o += s.have_estimate ? "true," : "false,";
  Key(o, "sequence");
  Unsigned(o, s.sequence);
  o += ',';
  Key(o, "stamp_ns");
  o += std::to_string(s.stamp_ns);
  o += ',';
  Key(o, "state");
  AppendJsonString(o, EstimatorStateName(s.estimator.state));
  o += ',';
  Key(o, "model");
  AppendJsonString(o, MeasurementModelName(s.estimator.model));
  o += ',';
  Key(o, "hold_reason");
  o += "{\"bits\":";
  Unsigned(o, s.estimator.hold_reason);
  o += ",\"names\":[";
  const auto names = HoldReasonNames(s.estimator.hold_reason);
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i != 0) o += ',';
    AppendJsonString(o, names[i]);
  }
  o += "]},";
  const auto& e = s.estimator;
  Key(o, "counters");
  o += '{';
  UnsignedMembers(o, {{"ticks", e.ticks},
                      {"updates", e.updates},
                      {"gated", e.gated},
                      {"gate_releases", e.gate_releases},
                      {"numeric_rejects", e.numeric_rejects},
                      {"rate_limited", e.rate_limited}});
  o += ',';
  Key(o, "last_nis");
  Number(o, e.last_nis);
  o += "},";
  Key(o, "drivers");
  o += '{';
  UnsignedMembers(o, {{"published", s.drivers.published},
                      {"rejected", s.drivers.rejected},
                      {"lost", s.drivers.lost},
                      {"stale", s.drivers.stale}});
  o += "},";
  Key(o, "input");
  if (!s.input.present) {
    o += "null,";
  } else {
    o += "{\"state\":";
    AppendJsonString(o, ChannelStateName(s.input.state));
    o += ',';
    UnsignedMembers(o, {{"accepted", s.input.accepted},
                        {"rejected", s.input.rejected},
                        {"commands", s.input.commands}});
    o += "},";
  }
  Key(o, "links");
  o += '[';
  for (std::size_t k = 0; k < s.links.size(); ++k) {
    const LinkStatus& l = s.links[k];
    if (k != 0) o += ',';
    o += "{\"name\":";
    AppendJsonString(o, l.name);
    o += ",\"mass\":";
    Number(o, l.mass);
    o += ",\"mass_sigma\":";
    Number(o, l.mass_sigma);
    o += ",\"com\":";
    Vec3(o, l.com);
    o += ",\"com_sigma\":";
    Vec3(o, l.com_sigma);
    o += '}';
  }
  o += "]}";
  return o;
}

bool DecodeStatusJson(const std::string& text, StatusSnapshot& out, std::string* error) {
  auto fail = [&](std::string what) {
    if (error != nullptr) *error = std::move(what);
    return false;
  };
  std::string parse_error;
  const auto doc = ParseJson(text, &parse_error);
  if (!doc) return fail("not JSON: " + parse_error);
  if (doc->type != Json::Type::kObject) return fail("not a JSON object");
  const Json* ok = doc->Find("ok");
  if (ok == nullptr || ok->type != Json::Type::kBool) return fail("no \"ok\" member");
  if (!ok->boolean) return fail("error reply: " + doc->String("error", "(no message)"));
  const Json* counters = doc->Find("counters");
  const Json* drivers = doc->Find("drivers");
  const Json* hold = doc->Find("hold_reason");
  const Json* links = doc->Find("links");
  if (counters == nullptr || drivers == nullptr || hold == nullptr || links == nullptr ||
      links->type != Json::Type::kArray)
    return fail("not a status reply (counters, drivers, hold_reason, links)");
  StatusSnapshot s;
  const Json* have = doc->Find("have_estimate");
  s.have_estimate = have != nullptr && have->type == Json::Type::kBool && have->boolean;
  s.sequence = U64(*doc, "sequence");
  s.stamp_ns = I64(*doc, "stamp_ns");
  s.estimator.state = EnumFromName<hal::EstimatorState, 5>(
      doc->String("state"), &EstimatorStateName, hal::EstimatorState::kInactive);
  s.estimator.model = EnumFromName<hal::MeasurementModel, 3>(
      doc->String("model"), &MeasurementModelName, hal::MeasurementModel::kNone);
  s.estimator.hold_reason = static_cast<std::uint32_t>(U64(*hold, "bits"));
  s.estimator.ticks = U64(*counters, "ticks");
  s.estimator.updates = U64(*counters, "updates");
  s.estimator.gated = U64(*counters, "gated");
  s.estimator.gate_releases = U64(*counters, "gate_releases");
  s.estimator.numeric_rejects = U64(*counters, "numeric_rejects");
  s.estimator.rate_limited = U64(*counters, "rate_limited");
  s.estimator.last_nis = Num(*counters, "last_nis");
  s.drivers = {U64(*drivers, "published"), U64(*drivers, "rejected"), U64(*drivers, "lost"),
               U64(*drivers, "stale")};
  const Json* input = doc->Find("input");
  if (input != nullptr && input->type == Json::Type::kObject) {
    s.input.present = true;
    s.input.state = EnumFromName<hal::ChannelState, 4>(input->String("state"), &ChannelStateName,
                                                       hal::ChannelState::kNeverSeen);
    s.input.accepted = U64(*input, "accepted");
    s.input.rejected = U64(*input, "rejected");
    s.input.commands = U64(*input, "commands");
  }
  for (const Json& j : links->array) {
    LinkStatus l;
    l.name = j.String("name");
    l.mass = Num(j, "mass");
    l.mass_sigma = Num(j, "mass_sigma");
    if (!Vec3From(j.Find("com"), l.com) || !Vec3From(j.Find("com_sigma"), l.com_sigma))
      return fail("link '" + l.name + "': com and com_sigma must be arrays of 3 numbers");
    s.links.push_back(std::move(l));
  }
  out = std::move(s);
  return true;
}

}  // namespace heft::host

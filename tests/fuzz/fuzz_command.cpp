// heftd's command socket messages both ways: the server's request parser
// (host/src/command_server.cpp CommandServer::Handle, fed as Serve() feeds it: at most
// kMaxRequest + 1 bytes and the truncation flag) and what heftctl does with a reply (json.cpp
// ParseJson, status.cpp DecodeStatusJson), plus the status reply's own round trip
// (EncodeStatusJson → DecodeStatusJson). Checks beyond "no crash, leak, UB":
//   - every reply to a request is one JSON object with a boolean "ok"; ok exactly for the six
//     words (a trailing newline / carriage return / space ignored); a command reaches the host
//     once, and only for its word; "status" decodes back to the host's snapshot;
//   - a document ParseJson accepts has only finite numbers, and if the text is valid UTF-8 so is
//     every string it yields; DecodeStatusJson never fails on what EncodeStatusJson wrote;
//   - a snapshot (fuzzed names, counters, non-finite numbers) survives Encode → Decode: counters
//     below 2^53 exactly, numbers to the 9 digits written, non-finite ones as inf.
//
// Input: the first byte chooses (mod 3) request / reply / snapshot; the rest is the request, the
// reply text, or the snapshot's fields (see Snapshot() below).
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "fuzz_bytes.hpp"
#include "heft/host/command_server.hpp"
#include "heft/host/json.hpp"
#include "heft/host/status.hpp"

namespace {

using heft::fuzz::Bytes;
using heft::host::CommandServer;
using heft::host::Json;
using heft::host::StatusSnapshot;
using heft::plugin::Command;

// RFC 3629 UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool ValidUtf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int n = 0;
    std::uint32_t cp = 0, min = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1FU, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0FU, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07U, min = 0x10000;
    } else {
      return false;
    }
    if (i + static_cast<std::size_t>(n) >= s.size()) return false;  // cut short
    for (int k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3FU);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += static_cast<std::size_t>(n) + 1;
  }
  return true;
}

// Every number finite and every string valid UTF-8 (when `utf8`), recursively.
bool WellFormed(const Json& j, bool utf8) {
  switch (j.type) {
    case Json::Type::kNumber:
      return std::isfinite(j.number);
    case Json::Type::kString:
      return !utf8 || ValidUtf8(j.string);
    case Json::Type::kArray:
      for (const Json& e : j.array)
        if (!WellFormed(e, utf8)) return false;
      return true;
    case Json::Type::kObject:
      for (const auto& [k, v] : j.object)
        if ((utf8 && !ValidUtf8(k)) || !WellFormed(v, utf8)) return false;
      return true;
    default:
      return true;
  }
}

// A decoded number against what was encoded: the 9 significant digits EncodeStatusJson writes;
// a non-finite one comes back as inf.
bool Close(double decoded, double original) {
  if (!std::isfinite(original)) return decoded == std::numeric_limits<double>::infinity();
  return std::abs(decoded - original) <= 1e-8 * std::abs(original) ||
         std::abs(decoded - original) <= std::numeric_limits<double>::denorm_min() * 4;
}

std::uint64_t Exact(std::uint64_t v) {  // counters travel as JSON numbers (doubles)
  return std::min<std::uint64_t>(v, std::uint64_t{1} << 53);
}

// Decode(Encode(s)) against s.
void CheckRoundTrip(const StatusSnapshot& s) {
  const std::string text = heft::host::EncodeStatusJson(s);
  StatusSnapshot d;
  std::string error;
  if (!heft::host::DecodeStatusJson(text, d, &error)) std::abort();
  const auto& a = s.estimator;
  const auto& b = d.estimator;
  if (d.have_estimate != s.have_estimate || Exact(d.sequence) != Exact(s.sequence) ||
      b.state != a.state || b.model != a.model || b.hold_reason != a.hold_reason ||
      Exact(b.ticks) != Exact(a.ticks) || Exact(b.updates) != Exact(a.updates) ||
      Exact(b.gated) != Exact(a.gated) || Exact(b.gate_releases) != Exact(a.gate_releases) ||
      Exact(b.numeric_rejects) != Exact(a.numeric_rejects) ||
      Exact(b.rate_limited) != Exact(a.rate_limited) || !Close(b.last_nis, a.last_nis))
    std::abort();
  if (std::llabs(d.stamp_ns) < (std::int64_t{1} << 53) && d.stamp_ns != s.stamp_ns) std::abort();
  if (Exact(d.drivers.published) != Exact(s.drivers.published) ||
      Exact(d.drivers.rejected) != Exact(s.drivers.rejected) ||
      Exact(d.drivers.lost) != Exact(s.drivers.lost) ||
      Exact(d.drivers.stale) != Exact(s.drivers.stale))
    std::abort();
  if (d.input.present != s.input.present) std::abort();
  if (s.input.present &&
      (d.input.state != s.input.state || Exact(d.input.accepted) != Exact(s.input.accepted) ||
       Exact(d.input.rejected) != Exact(s.input.rejected) ||
       Exact(d.input.commands) != Exact(s.input.commands)))
    std::abort();
  if (d.links.size() != s.links.size()) std::abort();
  for (std::size_t k = 0; k < s.links.size(); ++k) {
    const auto& x = s.links[k];
    const auto& y = d.links[k];
    if (y.name != x.name || !Close(y.mass, x.mass) || !Close(y.mass_sigma, x.mass_sigma))
      std::abort();
    for (std::size_t i = 0; i < 3; ++i)
      if (!Close(y.com[i], x.com[i]) || !Close(y.com_sigma[i], x.com_sigma[i])) std::abort();
  }
}

StatusSnapshot Snapshot(Bytes& in) {
  StatusSnapshot s;
  s.have_estimate = (in.Take(1) & 1U) != 0;
  s.sequence = in.Take(8);
  s.stamp_ns = static_cast<std::int64_t>(in.Take(8));
  s.estimator.state = static_cast<heft::hal::EstimatorState>(in.Take(1) % 5);
  s.estimator.model = static_cast<heft::hal::MeasurementModel>(in.Take(1) % 3);
  s.estimator.hold_reason = static_cast<std::uint32_t>(in.Take(4));
  s.estimator.ticks = in.Take(8);
  s.estimator.updates = in.Take(6);
  s.estimator.gated = in.Take(4);
  s.estimator.gate_releases = in.Take(2);
  s.estimator.numeric_rejects = in.Take(2);
  s.estimator.rate_limited = in.Take(4);
  s.estimator.last_nis = in.Double();
  s.drivers = {in.Take(8), in.Take(4), in.Take(4), in.Take(4)};
  s.input.present = (in.Take(1) & 1U) != 0;
  s.input.state = static_cast<heft::hal::ChannelState>(in.Take(1) % 4);
  s.input.accepted = in.Take(8);
  s.input.rejected = in.Take(4);
  s.input.commands = in.Take(4);
  const auto links = in.Take(1) % 5;
  for (std::uint64_t k = 0; k < links; ++k) {
    heft::host::LinkStatus l;
    l.name = in.String(47);
    l.mass = in.Double();
    l.mass_sigma = in.Double();
    for (auto& c : l.com) c = in.Double();
    for (auto& c : l.com_sigma) c = in.Double();
    s.links.push_back(l);
  }
  return s;
}

// The host behind the server: counts the commands it gets, answers status with a fixed snapshot.
struct Host {
  int commands = 0;
  Command last{};
  StatusSnapshot status;
};
Host g_host;

CommandServer& Server() {
  static const std::unique_ptr<CommandServer> server = [] {
    g_host.status.have_estimate = true;
    g_host.status.sequence = 42;
    g_host.status.estimator.state = heft::hal::EstimatorState::kHolding;
    g_host.status.estimator.hold_reason = 0x80000005U;
    g_host.status.input.present = true;
    g_host.status.links.push_back({"left_forearm\"\\\n", 6.94, 0.1, {0.01, -0.02, 0.2}, {}});
    g_host.status.links.back().com_sigma = {std::numeric_limits<double>::quiet_NaN(), 1e-3, 0};
    heft::host::CommandServerOptions o;
    // In the temporary folder (TMPDIR: under ctest the tree's own), not a fixed one.
    o.path = (std::filesystem::temp_directory_path() /
              ("heft_fuzz_command_" + std::to_string(getpid()) + ".sock"))
                 .string();
    return std::make_unique<CommandServer>(
        o,
        [](Command c) {
          ++g_host.commands;
          g_host.last = c;
        },
        [] { return g_host.status; });
  }();
  return *server;
}

void Request(const std::uint8_t* data, std::size_t size) {
  CommandServer& server = Server();
  const std::size_t kMax = CommandServer::kMaxRequest;
  const int before = g_host.commands;
  // As Serve() passes a message: its first kMaxRequest + 1 bytes, truncated when longer.
  const std::string reply =
      server.Handle(reinterpret_cast<const char*>(data), std::min(size, kMax + 1), size > kMax);
  const auto doc = heft::host::ParseJson(reply);
  if (!doc || doc->type != Json::Type::kObject) std::abort();
  const Json* ok = doc->Find("ok");
  if (ok == nullptr || ok->type != Json::Type::kBool) std::abort();
  std::string word(reinterpret_cast<const char*>(data), size);
  while (!word.empty() && (word.back() == '\n' || word.back() == '\r' || word.back() == ' '))
    word.pop_back();
  Command expected{};
  const bool command = size <= kMax && heft::host::ParseCommand(word, expected);
  const bool status = size <= kMax && word == "status";
  if (ok->boolean != (command || status)) std::abort();
  if (g_host.commands != before + (command ? 1 : 0)) std::abort();
  if (command && g_host.last != expected) std::abort();
  if (!ok->boolean && doc->String("error").empty()) std::abort();
  if (status) {
    StatusSnapshot d;
    if (!heft::host::DecodeStatusJson(reply, d, nullptr)) std::abort();
    if (d.links.size() != 1 || d.links[0].name != g_host.status.links[0].name) std::abort();
  }
}

void Reply(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto doc = heft::host::ParseJson(text);
  if (doc && !WellFormed(*doc, ValidUtf8(text))) std::abort();
  StatusSnapshot s;
  std::string error;
  if (heft::host::DecodeStatusJson(std::string(text), s, &error)) {
    CheckRoundTrip(s);  // what heftctl decoded, encoded again, decodes to the same
  } else if (error.empty()) {
    std::abort();  // a refusal names its reason
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  switch (data[0] % 3) {
    case 0:
      Request(data + 1, size - 1);
      break;
    case 1:
      Reply(data + 1, size - 1);
      break;
    default: {
      Bytes in(data + 1, size - 1);
      CheckRoundTrip(Snapshot(in));
      break;
    }
  }
  return 0;
}

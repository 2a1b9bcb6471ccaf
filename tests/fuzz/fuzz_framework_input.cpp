// heftd's reader of the framework input segment (host/src/framework_input.cpp over
// hal/framework_input.h) on a segment the fuzzer writes: whole samples through the framework's
// writer, raw bytes patched anywhere (header, command counters, the seqlock counter, the sample
// words: torn, odd, garbage), commands, and time passing between reads. Checks beyond "no crash,
// no UB":
//   - an accepted base state (health ok) is finite, its quaternion a unit one, |w|, |f| and |v|
//     within the limits, at least one of specific force / velocity, and no older than the
//     timeout; a refused one is never handed on (the last accepted values stand);
//   - every read is counted once: accepted + refused + empty = reads;
//   - commands: an edge only for a counter that moved, never more than the counter shows, the
//     newest one among those that arrived; and while nothing but the framework's own
//     heft_input_command touched the counters, every command sent is delivered exactly once.
//
// Input: one byte of options (bit 0: the next 320 bytes are the segment heftd finds when it
// attaches, instead of a fresh one; bits 1..7: the timeout in ms, 1 + value), then operations,
// each one byte (bits 0..1 the kind, bits 2..7 the time to the read that follows, in 0.5 ms):
//   0 sample: 128 bytes as heft_input_sample, its stamp replaced by now − (its low 24 bits) µs
//   1 patch: offset u16 (mod 320), length u8 (mod 64), that many bytes copied into the segment
//   2 command: one byte, the command id (ids beyond the five are ignored by the writer)
//   3 raw sample: 128 bytes as heft_input_sample, the stamp as it is
// and after each operation one FrameworkInput::Read.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "fuzz_bytes.hpp"
#include "heft/host/framework_input.hpp"

namespace {

using heft::fuzz::Bytes;
using heft::host::CommandEdges;
using heft::host::FrameworkInput;
using heft::host::FrameworkInputLimits;
using heft::host::kNumCommands;

template <std::size_t N>
double Norm(const std::array<double, N>& v) {
  double s = 0.0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

template <std::size_t N>
bool Finite(const std::array<double, N>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

// One operation on the segment (op's bits 0..1): a sample (its stamp made `now` minus its low
// 24 bits in µs, or as it is), a patch of raw bytes (which makes the counters unclean where it
// reaches them), or a command through the framework's writer (counted in `sent`).
void Operate(Bytes& in, std::uint64_t op, heft_input_segment& seg, std::int64_t now, bool& clean,
             std::uint64_t& sent) {
  switch (op & 3U) {
    case 0:
    case 3: {
      heft_input_sample s;
      in.Copy(&s, sizeof s);
      if ((op & 3U) == 0)
        s.stamp_ns = now - static_cast<std::int64_t>(s.stamp_ns & 0xFFFFFF) * 1000;
      heft_input_write(&seg, &s);
      break;
    }
    case 1: {
      const auto offset = static_cast<std::size_t>(in.Take(2) % sizeof seg);
      const auto length = std::min<std::size_t>(in.Take(1) % 64, sizeof seg - offset);
      in.Copy(reinterpret_cast<std::uint8_t*>(&seg) + offset, length);
      if (offset < offsetof(heft_input_segment, seq) &&
          offset + length > offsetof(heft_input_segment, commands))
        clean = false;
      break;
    }
    case 2: {
      const auto id = static_cast<unsigned>(in.Take(1));
      heft_input_command(&seg, static_cast<heft_input_command_id>(id % 8));
      if (id % 8 < kNumCommands) ++sent;
      break;
    }
  }
}

// The base state: finite always; when accepted, a unit quaternion, within the limits, with a
// specific force or a velocity, and no older than the timeout.
void CheckBase(bool ok, const heft::hal::BaseSample& out, const FrameworkInputLimits& limits) {
  if (ok != out.health.ok()) std::abort();
  if (!Finite(out.orientation) || !Finite(out.angular_velocity) || !Finite(out.specific_force) ||
      !Finite(out.linear_velocity))
    std::abort();
  if (ok) {
    if (std::abs(Norm(out.orientation) - 1.0) > 1e-9) std::abort();
    if (Norm(out.angular_velocity) > limits.max_angular_velocity) std::abort();
    if (!out.has_specific_force && !out.has_linear_velocity) std::abort();
    if (out.has_specific_force && Norm(out.specific_force) > limits.max_specific_force)
      std::abort();
    if (out.has_linear_velocity && Norm(out.linear_velocity) > limits.max_linear_velocity)
      std::abort();
    if (static_cast<std::int64_t>(out.health.age_us) * 1000 > limits.timeout_ns) std::abort();
  }
}

// The commands: an edge only for a counter that moved (from `previous` to `c`), never more than
// the counter shows, the newest among those that arrived. Returns the edges delivered.
std::uint64_t CheckCommands(const heft_input_commands& c, const heft_input_commands& previous,
                            const CommandEdges& edges) {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < kNumCommands; ++i) {
    if (c.count[i] == previous.count[i] && edges.count[i] != 0) std::abort();  // not moved
    if (edges.count[i] > c.count[i]) std::abort();  // more than the counter shows
    n += edges.count[i];
  }
  if (edges.last >= 0 && edges.count[static_cast<std::size_t>(edges.last)] == 0) std::abort();
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes in(data, size);
  const auto options = in.Take(1);
  FrameworkInputLimits limits;
  limits.timeout_ns = static_cast<std::int64_t>(1 + (options >> 1)) * 1'000'000;
  static heft_input_segment seg;  // 320 bytes, as heftd maps it
  if ((options & 1U) != 0) {
    in.Copy(&seg, sizeof seg);  // whatever a previous run (or another program) left there
  } else {
    std::memset(static_cast<void*>(&seg), 0, sizeof seg);
  }
  FrameworkInput reader(&seg, limits);

  std::int64_t now = 1'000'000'000'000;  // 1000 s of CLOCK_MONOTONIC
  heft_input_commands previous;
  heft_input_read_commands(&seg, &previous);
  // Only heft_input_command has touched the counters since the reader attached (and a foreign
  // segment's counters are not so close to 2^64 that they wrap: 2^62 commands take 146 000 years
  // at 1 MHz).
  bool clean = true;
  for (const std::uint64_t n : previous.count) clean = clean && n < (std::uint64_t{1} << 62);
  std::uint64_t sent = 0, delivered = 0;
  heft::hal::BaseSample out;
  while (in.left() > 0) {
    const auto op = in.Take(1);
    Operate(in, op, seg, now, clean, sent);
    now += static_cast<std::int64_t>(op >> 2) * 500'000;

    CommandEdges edges;
    heft_input_commands c;
    heft_input_read_commands(&seg, &c);
    const bool ok = reader.Read(now, out, edges);
    CheckBase(ok, out, limits);
    const auto counters = reader.counters();
    if (counters.accepted + counters.rejected_total() + counters.empty != counters.reads)
      std::abort();
    delivered += CheckCommands(c, previous, edges);
    if (clean && delivered != sent) std::abort();  // lost or repeated
    previous = c;
  }
  return 0;
}

// The status snapshot (heft/host/status.hpp) and its JSON (json.hpp): the centre of mass's σ
// against a finite-difference propagation, the reader's refusals (not JSON, not UTF-8, numbers
// beyond a double, bad escapes), mutated replies that never crash the decoder, and counters and
// stamps beyond their range that saturate. heftd's command socket is in test_command_server.cpp.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "example_status.hpp"
#include "heft/host/json.hpp"
#include "heft/host/status.hpp"

namespace heft::host {
namespace {

using test::ExampleStatus;

// σ of the centre of mass against an independent reference: the covariance of c = h/m propagated
// with a finite-difference Jacobian. Fails if the first-order formula is wrong (e.g. the m–h
// correlation term is dropped).
TEST(Status, ComSigmaIsFirstOrderPropagation) {
  const hal::InertialParameters pi{2.5, 0.05, -0.1, 0.4, 0.1, 0, 0, 0.1, 0, 0.1};
  std::array<double, 100> P{};
  // A valid covariance over (m, h): A Aᵀ with an arbitrary A, the rest diagonal.
  const double A[4][4] = {
      {0.1, 0, 0, 0}, {0.02, 0.01, 0, 0}, {-0.03, 0.004, 0.02, 0}, {0.05, 0, 0.01, 0.03}};
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 4; ++j) {
      double s = 0.0;
      for (std::size_t k = 0; k < 4; ++k) s += A[i][k] * A[j][k];
      P[i * 10 + j] = s;
    }
  for (std::size_t i = 4; i < 10; ++i) P[i * 10 + i] = 1e-3;
  const LinkStatus l = LinkFromParameters("x", pi, P);
  EXPECT_DOUBLE_EQ(l.mass_sigma, std::sqrt(P[0]));
  for (std::size_t i = 0; i < 3; ++i) {
    std::array<double, 4> J{};  // ∂c_i/∂(m, hx, hy, hz) by central differences
    for (std::size_t k = 0; k < 4; ++k) {
      auto c = [&](double d) {
        hal::InertialParameters q = pi;
        q[k] += d;
        return q[i + 1] / q[0];
      };
      J[k] = (c(1e-6) - c(-1e-6)) / 2e-6;
    }
    double var = 0.0;
    for (std::size_t a = 0; a < 4; ++a)
      for (std::size_t b = 0; b < 4; ++b) var += J[a] * P[a * 10 + b] * J[b];
    EXPECT_NEAR(l.com[i], pi[i + 1] / pi[0], 1e-15);
    EXPECT_NEAR(l.com_sigma[i], std::sqrt(var), 1e-8 * std::sqrt(var));
  }
  const LinkStatus massless = LinkFromParameters("y", hal::InertialParameters{}, P);
  EXPECT_TRUE(std::isinf(massless.com_sigma[0]));
  EXPECT_NE(EncodeStatusJson(StatusSnapshot{false, 0, 0, {}, {}, {}, {massless}}).find("null"),
            std::string::npos);  // JSON has no inf
}

TEST(Json, ParsesAndRefuses) {
  std::string error;
  const auto ok =
      ParseJson(R"({"a":[1,2.5e1,-3],"b":"x\"\u00e9\n","c":true,"d":null,"e":{}})", &error);
  ASSERT_TRUE(ok) << error;
  EXPECT_EQ(ok->Find("a")->array[1].number, 25.0);
  EXPECT_EQ(ok->String("b"), "x\"\xC3\xA9\n");
  for (const char* bad :
       {"", "{", "{\"a\":}", "[1,]", "{\"a\":1} x", "\"abc", "tru", "[1 2]", "{\"a\" 1}", "nul"}) {
    EXPECT_FALSE(ParseJson(bad, &error)) << bad;
    EXPECT_FALSE(error.empty());
  }
  EXPECT_FALSE(ParseJson(std::string(100, '[') + std::string(100, ']')));  // depth limit
  std::string s;
  AppendJsonString(s, "a\"b\\c\x01");
  EXPECT_EQ(ParseJson(s)->string, "a\"b\\c\x01");
}

// Fails if the reader accepts what is not JSON or yields what is not UTF-8 (fuzz_command found
// the first two: a number beyond a double read as inf, a lone surrogate escape turned into bytes
// that are not UTF-8; the old \\u parser, strtol, also took a sign or "0x"), or if it mangles a
// character outside the basic plane written as a surrogate pair.
TEST(Json, NumbersBeyondADoubleAndBadEscapesAreRefused) {
  for (const char* bad : {"2e308", "[-1e999]", R"("\ud800")", R"("\udc00x")", R"("\ud800\u0041")",
                          R"("\u-001")", R"("\u0x1f")", R"("\u 7ff")", R"("\u12")"}) {
    std::string error;
    EXPECT_FALSE(ParseJson(bad, &error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
  const auto pair = ParseJson(R"("\ud83d\ude00 \u00E9")");
  ASSERT_TRUE(pair);
  EXPECT_EQ(pair->string, "\xF0\x9F\x98\x80 \xC3\xA9");
  const auto big = ParseJson("[1.7976931348623157e308, -4.9e-324]");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->array[0].number, std::numeric_limits<double>::max());
}

// Mutated status replies (bytes flipped, cut short) are refused or decoded, never a crash (run it
// under the asan preset to catch out-of-bounds reads).
TEST(Json, MutatedRepliesDoNotCrashTheDecoder) {
  const std::string good = EncodeStatusJson(ExampleStatus());
  std::uint64_t state = 12345;
  auto next = [&] {  // xorshift64: deterministic
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int decoded = 0;
  for (int k = 0; k < 5000; ++k) {
    std::string m = good;
    const int flips = 1 + static_cast<int>(next() % 4);
    for (int f = 0; f < flips; ++f) m[next() % m.size()] = static_cast<char>(next() & 0xFF);
    if (k % 5 == 0) m.resize(next() % m.size());
    StatusSnapshot s;
    std::string error;
    if (DecodeStatusJson(m, s, &error)) ++decoded;
  }
  EXPECT_LT(decoded, 5000);  // most mutations are refused
}

// Fails if a counter at its maximum (2^64 - 1 travels as the JSON number 18446744073709551615,
// which reads back as the double 2^64) or a number beyond any counter or time stamp is converted
// with undefined behaviour instead of saturating (fuzz_command found it: UBSan's
// float-cast-overflow; on x86 the old conversion gave 0 for 2^64 and INT64_MIN for 1e30).
TEST(Json, CountersAndStampsBeyondTheirRangeSaturate) {
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  StatusSnapshot s = ExampleStatus();
  s.estimator.ticks = kMax;
  s.drivers.lost = kMax;
  StatusSnapshot got;
  std::string error;
  ASSERT_TRUE(DecodeStatusJson(EncodeStatusJson(s), got, &error)) << error;
  EXPECT_EQ(got.estimator.ticks, kMax);
  EXPECT_EQ(got.drivers.lost, kMax);
  EXPECT_EQ(got.estimator.updates, s.estimator.updates);  // in range: exact

  std::string text = EncodeStatusJson(ExampleStatus());
  auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace("\"sequence\":42", "\"sequence\":1e300");
  replace("\"stamp_ns\":12345000000", "\"stamp_ns\":1e30");
  ASSERT_TRUE(DecodeStatusJson(text, got, &error)) << error;
  EXPECT_EQ(got.sequence, kMax);
  EXPECT_EQ(got.stamp_ns, std::numeric_limits<std::int64_t>::max());
  replace("\"stamp_ns\":1e30", "\"stamp_ns\":-1e30");
  ASSERT_TRUE(DecodeStatusJson(text, got, &error)) << error;
  EXPECT_EQ(got.stamp_ns, std::numeric_limits<std::int64_t>::min());
}

}  // namespace
}  // namespace heft::host

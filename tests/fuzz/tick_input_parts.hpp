// What the estimator's tick harness (fuzz_tick_input.cpp) is built from: its bounds, the models
// of config/robots loaded once, the configurations the input's first byte chooses from, the
// generator of a tick's values, the decoding of sizes, spans and special values from the input,
// and the tick Step is told. Defined in tick_input_parts.cpp, compiled into the harness only.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz_bytes.hpp"
#include "heft/dynamics/model.hpp"
#include "heft/estimator/inertial_estimator.hpp"

namespace heft::fuzz {

inline constexpr int kMaxCalls = 64;        // per input: bounded work (-timeout=10 in run.sh)
inline constexpr std::size_t kMaxSpan = 8;  // the longest wrench / flag span a tick passes
inline constexpr int kLarge = 300;          // a "large" vector, beyond any model's size
inline constexpr double kPeriod = 0.003;    // control_period of every configuration (333 Hz)

// HEFT_FUZZ_TRACE=1: each Step's time, sizes, spans and result on stderr (reproducing an input).
bool Trace();

// Aborts with the call's number and what broke.
[[noreturn]] void Fail(int call, const char* what);

struct Models {
  dynamics::Model fixed, floating;
};

// The humanoid of config/robots, fixed and floating, loaded once.
const Models& LoadModels();

// The configurations the first byte chooses from: each path of Step at least once.
struct Setup {
  const dynamics::Model* model;
  estimator::EstimatorConfig config;
};

inline constexpr int kConfigs = 4;

Setup MakeSetup(int which, const Models& models);

// A small deterministic generator (splitmix64) for the tick's values: four input bytes seed it,
// so that a tick costs a few bytes whatever the model's size.
class Generator {
 public:
  explicit Generator(std::uint64_t seed) : s_(seed) {}
  double Uniform(double half_width) {  // in [−half_width, half_width]
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return half_width * (static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0);
  }

 private:
  std::uint64_t s_;
};

// For this tick alone: NaN, ±inf, 1e300, ... (one byte) or any bit pattern (eight more bytes).
double Special(Bytes& in);

// A vector's size from a shape code: the model's size, off by one, empty, large, the other
// vector's size, nv − 6.
int SizeFor(std::uint64_t code, int right, int other, int nv);

// A span's length from a count code: the contact frames' count (twice as likely), 0, 1, one more,
// kMaxSpan.
std::size_t SpanFor(std::uint64_t code, std::size_t contacts);

// What Step is told, owned here; estimator::TickInput views it.
// What Step is told, owned here; TickInput views it.
struct Tick {
  double time = 0.0;
  Eigen::VectorXd q, v, a, tau;
  std::array<dynamics::Vector6, kMaxSpan> wrenches{};
  std::array<unsigned char, kMaxSpan> valid{}, contact{};
  std::size_t n_wrenches = 0, n_valid = 0, n_contact = 0;
  estimator::TickInput View() const {
    return estimator::TickInput{time,
                                q,
                                v,
                                a,
                                tau,
                                std::span<const dynamics::Vector6>(wrenches.data(), n_wrenches),
                                std::span<const unsigned char>(valid.data(), n_valid),
                                std::span<const unsigned char>(contact.data(), n_contact)};
  }
};

}  // namespace heft::fuzz

// A whole candump log: ReadCandump, the time-order check, the replay of each bus through
// CandumpReplay, and heft-identify's conversion (candump_convert.cpp) through the reference
// drivers. Bounded: the conversion's gap limit is set to 50 ms here, so an input of N frames costs
// at most ~50·N driver ticks (the default 10 s limit would make each input take seconds).
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>

#include "heft/drivers/candump.hpp"
#include "heft/recording/candump_convert.hpp"

namespace {

const heft::drivers::DriverConfig& Config() {
  static const heft::drivers::DriverConfig cfg = heft::drivers::ReferenceDriverConfig(
      {"j0", "j1", "j2", "j3"}, {"left_foot_ft", "right_foot_ft"});
  return cfg;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace heft;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::vector<drivers::CandumpError> errors;
  const std::vector<drivers::CandumpRecord> records = drivers::ReadCandump(in, errors);
  for (const auto& e : errors)
    if (e.line <= 0 || e.reason.empty()) std::abort();
  const drivers::CandumpError reversal = drivers::FindTimeReversal(records);
  for (const char* bus : {"can0", "can1"}) {
    try {
      drivers::CandumpReplay replay(bus, records);
      std::int64_t previous = INT64_MIN;
      hal::CanFrame f;
      for (const auto& r : records) {
        if (r.bus != bus) continue;
        replay.AdvanceTo(r.stamp_ns);
        while (replay.receive(f) == hal::IoStatus::kOk) {
          if (f.stamp_ns < previous || f.stamp_ns > r.stamp_ns) std::abort();  // out of order
          previous = f.stamp_ns;
        }
      }
      if (!replay.done()) std::abort();
    } catch (const std::invalid_argument&) {
      if (reversal.line == 0) std::abort();  // refused a bus that is in order
    }
  }
  try {
    recording::ConvertOptions options;
    options.max_gap_ns = 50'000'000;
    std::size_t samples = 0;
    recording::ConvertCandump(Config(), records, false, "fuzz.log", options,
                              [&](const recording::RecordSample&) { ++samples; });
    if (samples > records.size() * 51 + 2) std::abort();  // the bound the gap limit promises
  } catch (const recording::RecordingError&) {
  }
  return 0;
}

// heft-identify convert's bounds: a gap between frames longer than the limit is refused
// with its line instead of being ticked through millisecond by millisecond (a mangled time stamp
// made a two-line log allocate 21 GB), and a bus going back in time is refused with its line
// instead of being re-sorted or replayed out of order. Small logs written here.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "heft/drivers/candump.hpp"
#include "heft/recording/candump_convert.hpp"
#include "heft/test/driver_rig.hpp"

namespace heft::recording {
namespace {

using drivers::CandumpError;
using drivers::CandumpRecord;

std::vector<CandumpRecord> Parse(const std::string& text) {
  std::istringstream in(text);
  std::vector<CandumpError> errors;
  auto records = drivers::ReadCandump(in, errors);
  EXPECT_TRUE(errors.empty());
  return records;
}

std::string Line(const std::string& stamp, const std::string& bus = "can0") {
  return "(" + stamp + ") " + bus + " 101#0000000000000000\n";
}

// Returns the RecordingError's message, or "" when the conversion was accepted.
std::string Refusal(const drivers::DriverConfig& cfg, const std::vector<CandumpRecord>& log,
                    const recording::ConvertOptions& options = {}) {
  try {
    recording::ConvertCandump(cfg, log, false, "test.log", options);
  } catch (const recording::RecordingError& e) {
    return e.what();
  }
  return "";
}

// Fails (or, before the fix, allocates 100 000 samples and returns) if a 100 s gap is accepted
// under the default 10 s limit, or the refusal does not name both lines.
TEST(CandumpConvertBounds, AGapLongerThanTheLimitIsRefusedWithItsLine) {
  heft::test::DriverRig rig;
  const auto log =
      Parse(Line("1700000000.000000") + Line("1700000000.001000") + Line("1700000100.001000"));
  const std::string why = Refusal(rig.cfg, log);
  EXPECT_NE(why.find("test.log:3:"), std::string::npos) << why;
  EXPECT_NE(why.find("100.000 s without frames"), std::string::npos) << why;
  EXPECT_NE(why.find("line 2"), std::string::npos) << why;
}

// Fails if a gap under the limit is refused, if the limit is not configurable, or if the samples
// are not one per millisecond from the first frame to the last (the existing contract).
TEST(CandumpConvertBounds, GapsWithinTheLimitAreTickedThrough) {
  heft::test::DriverRig rig;
  const auto log = Parse(Line("1700000000.000000") + Line("1700000002.000000"));
  const recording::Recording rec = recording::ConvertCandump(rig.cfg, log, false, "test.log");
  EXPECT_EQ(rec.samples.size(), 2001u);
  recording::ConvertOptions strict;
  strict.max_gap_ns = 1'000'000'000;
  EXPECT_NE(Refusal(rig.cfg, log, strict).find("test.log:2:"), std::string::npos);
}

// The size of the output is bounded by the log's content: at most max_gap worth of ticks per frame.
// Fails if the sample sink is called more often than that for a log that stays within the limit.
TEST(CandumpConvertBounds, OutputIsBoundedByTheFramesTimesTheGapLimit) {
  heft::test::DriverRig rig;
  std::string text;
  for (int k = 0; k < 5; ++k) text += Line("17000000" + std::to_string(10 + k) + ".000000");
  const auto log = Parse(text);
  recording::ConvertOptions options;
  options.max_gap_ns = 2'000'000'000;
  std::size_t count = 0;
  recording::ConvertCandump(rig.cfg, log, false, "test.log", options,
                            [&](const recording::RecordSample&) { ++count; });
  EXPECT_EQ(count, 4001u);
  EXPECT_LE(count, log.size() * 2000u + 1u);
}

// Fails if a bus going back in time is silently re-sorted or replayed out of order (the refusal
// names the line), or if another bus's earlier frame is taken for a reversal.
TEST(CandumpConvertBounds, ABusGoingBackInTimeIsRefusedWithItsLine) {
  heft::test::DriverRig rig;
  const auto interleaved = Parse(Line("1700000000.000200") + Line("1700000000.000100", "can1") +
                                 Line("1700000000.001200"));
  EXPECT_EQ(Refusal(rig.cfg, interleaved), "");
  const auto reversed =
      Parse(Line("1700000000.000200") + Line("1700000000.001200") + Line("1700000000.000700"));
  const std::string why = Refusal(rig.cfg, reversed);
  EXPECT_NE(why.find("test.log:3: can0 goes back in time by 0.000500 s (after line 2)"),
            std::string::npos)
      << why;
}

}  // namespace
}  // namespace heft::recording

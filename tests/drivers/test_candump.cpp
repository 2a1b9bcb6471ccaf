// candump -l logs: what the writer writes replays to identical samples; malformed lines are refused
// one by one with their reason.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <tuple>

#include "heft/drivers/candump.hpp"
#include "heft/drivers/driver_loop.hpp"
#include "heft/drivers/memory_bus.hpp"
#include "heft/drivers/sample_encoder.hpp"
#include "heft/test/driver_rig.hpp"

namespace heft::drivers {
namespace {

TEST(Candump, LinesRoundTrip) {
  const char* lines[] = {
      "(1700000000.000001) can0 105#0000040030F80107",
      "(1700000000.250000) can1 12345678#00",
      "(1700000001.000000) can0 123##1DEADBEEF",
      "(1700000001.000000) can0 123#R",
      "(1700000002.999999) can0 20000040#0000000000000000",
  };
  for (const char* line : lines) {
    CandumpRecord r;
    ASSERT_EQ(ParseCandumpLine(line, r), "") << line;
    EXPECT_EQ(FormatCandumpLine(r), line);
  }
  CandumpRecord r;
  ParseCandumpLine(lines[4], r);
  EXPECT_TRUE(r.frame.is_error());
  EXPECT_EQ(r.frame.id, 0x40u);
  ParseCandumpLine(lines[2], r);
  EXPECT_TRUE(r.frame.is_fd());
  EXPECT_EQ(r.frame.len, 4);
}

TEST(Candump, MalformedLinesAreRefusedLineByLine) {
  std::istringstream in(
      "(1700000000.000001) can0 105#0000040030F80107\n"
      "1700000000.000001 can0 105#00\n"
      "(1700000000.0000000001) can0 105#00\n"
      "(1700000000.000001) can0 105 00\n"
      "(1700000000.000001) can0 1050#00\n"
      "(1700000000.000001) can0 105#0G\n"
      "(1700000000.000001) can0 105#000\n"
      "(1700000000.000001) can0 105#000000000000000000\n"
      "(1700000000.000001) can0 800#00\n"
      "(1700000000.000002) can0 106#00\n");
  std::vector<CandumpError> errors;
  const auto records = ReadCandump(in, errors);
  EXPECT_EQ(records.size(), 2u);
  const std::vector<std::pair<int, std::string>> expected = {
      {2, "expected '(seconds.micros)' at the start"},
      {3, "the fraction of a second must have 1 to 9 digits (candump writes 6)"},
      {4, "expected '#' between identifier and data"},
      {5, "identifier must have 3 (standard) or 8 (extended) hex digits"},
      {6, "data is not hexadecimal"},
      {7, "odd number of data hex digits"},
      {8, "data length not allowed"},
      {9, "standard identifier beyond 0x7FF"},
  };
  ASSERT_EQ(errors.size(), expected.size());
  for (std::size_t i = 0; i < errors.size(); ++i) {
    EXPECT_EQ(errors[i].line, expected[i].first);
    EXPECT_EQ(errors[i].reason, expected[i].second);
  }
}

// A line with no end (a binary file, /dev/zero) is cut at kMaxCandumpLine and reported, and the
// reading goes on; a log of garbage lists the first kMaxCandumpErrors errors and counts the rest.
// Fails if a long line is accepted or stops the reading, or the error list grows with the input.
TEST(Candump, EndlessLinesAndEndlessGarbageAreBounded) {
  std::istringstream in(std::string(3 * kMaxCandumpLine, 'x') + "\n" +
                        "(1700000000.000002) can0 106#00\n" + std::string(100, '\0'));
  std::vector<CandumpError> errors;
  auto records = ReadCandump(in, errors);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].line, 2);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].line, 1);
  EXPECT_EQ(errors[0].reason, "longer than 4096 characters: not a candump line");
  EXPECT_EQ(errors[1].line, 3);  // the NULs, without a newline at the end

  std::string garbage;
  for (int i = 0; i < 2500; ++i) garbage += "garbage\n";
  std::istringstream many(garbage);
  errors.clear();
  records = ReadCandump(many, errors);
  EXPECT_TRUE(records.empty());
  ASSERT_EQ(errors.size(), kMaxCandumpErrors + 1);
  EXPECT_EQ(errors.back().line, 2500);
  EXPECT_EQ(errors.back().reason, "and 1500 more malformed lines (only the first 1000 are listed)");
}

// Issue 17: the time stamp was read with from_chars up to the first non-digit, so garbage inside it
// was ignored, a sign was accepted and seconds × 1e9 overflowed int64 (undefined behaviour) after
// 2262. Fails if any of these lines is accepted or a refusal does not name its line and reason.
TEST(Candump, TimeStampsAreParsedWholeAndStrictly) {
  std::istringstream in(
      "(17638x0000.000100) can0 105#00\n"
      "(1763800000.0001x0) can0 105#00\n"
      "(-5.000000) can0 105#00\n"
      "(+5.000000) can0 105#00\n"
      "(.000001) can0 105#00\n"
      "(5.) can0 105#00\n"
      "(5) can0 105#00\n"
      "(9300000000.000000) can0 105#00\n"
      "(9223372036.854775808) can0 105#00\n"
      "(99999999999999999999999.000000) can0 105#00\n"
      "( 5.000000) can0 105#00\n");
  std::vector<CandumpError> errors;
  const auto records = ReadCandump(in, errors);
  EXPECT_TRUE(records.empty());
  const std::string digits = "the time stamp must be (seconds.fraction), digits only";
  const std::string fraction =
      "the fraction of a second must have 1 to 9 digits (candump writes 6)";
  const std::string overflow = "the time stamp is beyond 2262-04-11 (int64 nanoseconds overflow)";
  const std::vector<std::string> expected = {digits, digits,   digits,   digits,   digits, fraction,
                                             digits, overflow, overflow, overflow, digits};
  ASSERT_EQ(errors.size(), expected.size());
  for (std::size_t i = 0; i < errors.size(); ++i) {
    EXPECT_EQ(errors[i].line, static_cast<int>(i) + 1);
    EXPECT_EQ(errors[i].reason, expected[i]) << "line " << i + 1;
  }
}

// Fails if a valid fraction of 1..9 digits is refused or scaled wrongly, or the int64 limit is off.
TEST(Candump, TimeStampFractionsOfOneToNineDigits) {
  const std::pair<const char*, std::int64_t> cases[] = {
      {"(1700000000.5) can0 105#00", 1'700'000'000'500'000'000},
      {"(1700000000.000001) can0 105#00", 1'700'000'000'000'001'000},
      {"(1700000000.123456789) can0 105#00", 1'700'000'000'123'456'789},
      {"(0.000000) can0 105#00", 0},
      {"(9223372036.854775807) can0 105#00", 9'223'372'036'854'775'807},
  };
  for (const auto& [line, ns] : cases) {
    CandumpRecord r;
    ASSERT_EQ(ParseCandumpLine(line, r), "") << line;
    EXPECT_EQ(r.stamp_ns, ns) << line;
    EXPECT_EQ(r.frame.stamp_ns, ns) << line;
  }
}

// Issue 17: CandumpReplay replayed a log that goes back in time out of order. Fails if a frame
// earlier than its bus's previous frame is accepted silently (the refusal names the line); frames
// of other buses may interleave freely (candump reads several sockets in turn).
TEST(Candump, ReplayRefusesABusGoingBackInTime) {
  std::istringstream in(
      "(1700000000.000100) can0 105#00\n"
      "(1700000000.000050) can1 105#00\n"
      "(1700000000.000200) can0 105#00\n"
      "(1700000000.000150) can0 105#00\n");
  std::vector<CandumpError> errors;
  const auto records = ReadCandump(in, errors);
  ASSERT_TRUE(errors.empty());
  EXPECT_NO_THROW(CandumpReplay("can1", records));
  try {
    CandumpReplay replay("can0", records);
    ADD_FAILURE() << "can0 goes back in time at line 4 and was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("line 4"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
  }
  const CandumpError reversal = FindTimeReversal(records);
  EXPECT_EQ(reversal.line, 4);
  EXPECT_EQ(reversal.reason, "can0 goes back in time by 0.000050 s (after line 3)");
}

// A parsed line keeps its line number (for messages about it later). Fails if it is lost.
TEST(Candump, RecordsKeepTheirLine) {
  std::istringstream in("\n(1700000000.000001) can0 123#00\n");
  std::vector<CandumpError> errors;
  const auto records = ReadCandump(in, errors);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].line, 2);
}

// Found by fuzz_candump_line (corpus/fuzz_candump_line/crash-bus-name-with-nul.txt): an interface
// name with NUL bytes was accepted and written back truncated (FormatCandumpLine used %s). Found
// reading FormatCandumpLine for that fix: a name longer than ~220 characters overflowed its
// 256-byte buffer (snprintf's return value was used as the length). Fails if such names are
// accepted, or if formatting a record with a long name does not give the whole name (before the
// fix: a read past the buffer, ASan reports it).
TEST(Candump, InterfaceNamesAreLinuxNamesAndFormatHasNoLengthLimit) {
  CandumpRecord r;
  std::string nul("(1700000001.000000) c0\0\0.000an0 123#", 36);
  nul.push_back('\0');  // NULs inside the name and at the end
  EXPECT_EQ(ParseCandumpLine(nul, r), "the interface name must be 1 to 15 printable characters");
  EXPECT_EQ(ParseCandumpLine("(1700000001.000000) can0123456789abc 123#", r),
            "the interface name must be 1 to 15 printable characters");
  EXPECT_EQ(ParseCandumpLine("(1700000001.000000) can0123456789ab 123#", r), "");
  r.bus = std::string(300, 'x');
  r.stamp_ns = 1'700'000'001'000'000'000;
  r.frame = hal::CanFrame{};
  r.frame.id = 0x123;
  EXPECT_EQ(FormatCandumpLine(r), "(1700000001.000000) " + r.bus + " 123#");
}

// Found writing fuzz_candump_line's round-trip check: a remote frame with a length ("123#R5", as
// candump writes it) lost its length when written back. Fails if the round trip changes it.
TEST(Candump, RemoteFrameLengthRoundTrips) {
  CandumpRecord r;
  ASSERT_EQ(ParseCandumpLine("(1700000000.000001) can0 123#R5", r), "");
  EXPECT_EQ(r.frame.len, 5);
  EXPECT_EQ(FormatCandumpLine(r), "(1700000000.000001) can0 123#R5");
}

TEST(Candump, WrittenTrafficReplaysToIdenticalSamples) {
  // Live: encoder → buses → loop, while everything sent is also logged.
  heft::test::DriverRig live;
  const DriverConfig& cfg = live.cfg;
  hal::RobotStateSample& truth = live.truth;
  MemoryBus tap0{"can0"}, tap1{"can1"};
  std::vector<hal::CanTransport*> taps{&tap0, &tap1};
  std::ostringstream log;
  std::vector<hal::RobotStateSample> live_samples;
  const std::int64_t t0 = 1'700'000'000'000'000'000;
  auto set_truth = [&](int k) {
    for (std::size_t i = 0; i < cfg.joints.size(); ++i) {
      truth.joints[i].position = std::sin(0.01 * k + static_cast<double>(i));
      truth.joints[i].torque = 3.0 * std::cos(0.02 * k);
    }
    truth.wrenches[0].wrench[2] = 400.0 + k;
  };
  for (int k = 1; k <= 50; ++k) {
    const std::int64_t now = t0 + k * 1'000'000;
    set_truth(k);
    live.encoder.Emit(truth, now, live.buses);
    live.loop.Tick(now);
    live_samples.push_back(live.loop.last_sample());
  }
  // The same emission into taps, every frame logged.
  SampleEncoder encoder2(cfg);
  for (int k = 1; k <= 50; ++k) {
    set_truth(k);
    encoder2.Emit(truth, t0 + k * 1'000'000, taps);
    for (MemoryBus* tap : {&tap0, &tap1}) {
      hal::CanFrame f;
      while (tap->receive(f) == hal::IoStatus::kOk)
        log << FormatCandumpLine({f.stamp_ns, std::string(tap->name()), f}) << "\n";
    }
  }
  // Replay the log through a fresh loop.
  std::istringstream in(log.str());
  std::vector<CandumpError> errors;
  const auto records = ReadCandump(in, errors);
  ASSERT_TRUE(errors.empty());
  CandumpReplay r0("can0", records), r1("can1", records);
  std::vector<hal::CanTransport*> replay{&r0, &r1};
  hal::StateBuffer buffer;
  DriverLoop loop(cfg, replay, buffer);
  for (int k = 1; k <= 50; ++k) {
    const std::int64_t now = t0 + k * 1'000'000;
    r0.AdvanceTo(now);
    r1.AdvanceTo(now);
    loop.Tick(now);
    const hal::RobotStateSample& a = live_samples[k - 1];
    const hal::RobotStateSample& b = loop.last_sample();
    ASSERT_EQ(a.stamp_ns, b.stamp_ns);
    for (std::size_t i = 0; i < cfg.joints.size(); ++i) {
      ASSERT_EQ(a.joints[i].position, b.joints[i].position);
      ASSERT_EQ(a.joints[i].torque, b.joints[i].torque);
      ASSERT_EQ(a.joints[i].encoder.state, b.joints[i].encoder.state);
    }
    for (int c = 0; c < 2; ++c)
      for (int i = 0; i < 6; ++i) ASSERT_EQ(a.wrenches[c].wrench[i], b.wrenches[c].wrench[i]);
  }
  EXPECT_TRUE(r0.done());
  EXPECT_TRUE(r1.done());
}

// A replayed frame's age counts from its line's stamp, as a live frame's from its receive time.
// Fails if the replay's frames carry no receive time (a sample logged 3.9 ms before the first tick
// that drains it would be 0 ms old and ok with the 3 ms timeout) or if one logged 2.9 ms before is
// not ok.
TEST(Candump, ReplayAgesSamplesFromTheLogsStamps) {
  const std::int64_t t0 = 1'700'000'000'000'000'000;
  for (const auto& [logged_ns, state, age_us] :
       {std::tuple{t0 + 100'000, hal::ChannelState::kStale, 3900u},
        std::tuple{t0 + 1'100'000, hal::ChannelState::kOk, 2900u}}) {
    heft::test::DriverRig rig;  // its configuration, encoder and truth; replayed, not its buses
    ASSERT_DOUBLE_EQ(rig.cfg.joints[0].timeout, 0.003);
    MemoryBus tap0{"can0"}, tap1{"can1"};
    std::vector<hal::CanTransport*> taps{&tap0, &tap1};
    rig.encoder.Emit(rig.truth, logged_ns, taps);
    std::ostringstream log;
    for (MemoryBus* tap : {&tap0, &tap1}) {
      hal::CanFrame f;
      while (tap->receive(f) == hal::IoStatus::kOk)
        log << FormatCandumpLine({f.stamp_ns, std::string(tap->name()), f}) << "\n";
    }
    std::istringstream in(log.str());
    std::vector<CandumpError> errors;
    const auto records = ReadCandump(in, errors);
    ASSERT_TRUE(errors.empty());
    CandumpReplay r0("can0", records), r1("can1", records);
    std::vector<hal::CanTransport*> replay{&r0, &r1};
    hal::StateBuffer buffer;
    DriverLoop loop(rig.cfg, replay, buffer);
    const std::int64_t tick = t0 + 4'000'000;  // the first tick: every frame is drained here
    r0.AdvanceTo(tick);
    r1.AdvanceTo(tick);
    loop.Tick(tick);
    ASSERT_TRUE(r0.done() && r1.done());
    for (std::size_t j = 0; j < rig.cfg.joints.size(); ++j) {
      EXPECT_EQ(loop.last_sample().joints[j].encoder.state, state) << "joint " << j;
      EXPECT_EQ(loop.last_sample().joints[j].encoder.age_us, age_us) << "joint " << j;
    }
    EXPECT_EQ(loop.last_sample().wrenches[1].health.state, state);
  }
}

}  // namespace
}  // namespace heft::drivers

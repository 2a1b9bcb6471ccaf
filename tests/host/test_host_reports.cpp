// What heftd tells systemd and the journal while it runs: the STATUS= text, the periodic counter
// line (and when it is a warning), and the journal stream's priority prefixes.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "heft/estimator/sample_mapping.hpp"
#include "heft/host/logging.hpp"
#include "heft/host/periodic.hpp"

namespace heft::host {
namespace {

hal::InertialEstimate Estimate(hal::EstimatorState state, std::uint32_t hold) {
  hal::InertialEstimate e;
  e.sequence = 7;
  e.num_links = 2;
  e.status.state = state;
  e.status.hold_reason = hold;
  e.status.gated = 3;
  std::strcpy(e.links[0].name.data(), "left_forearm");
  e.links[0].parameters[0] = 6.9444;
  std::strcpy(e.links[1].name.data(), "torso");
  e.links[1].parameters[0] = 30.0;
  return e;
}

// Fails if a state is shown by number, a hold without its reasons, or a mass is missing.
TEST(StatusText, StateReasonsMassesAndCounts) {
  EXPECT_EQ(StatusText(Estimate(hal::EstimatorState::kEstimating, 0), true, 0),
            "estimating; left_forearm 6.94 kg; torso 30.00 kg; holds 0, gated 3");
  EXPECT_EQ(StatusText(Estimate(hal::EstimatorState::kHolding,
                                estimator::kHoldTorques | estimator::kHoldBase),
                       true, 2),
            "holding: torques+base; left_forearm 6.94 kg; torso 30.00 kg; holds 2, gated 3");
  EXPECT_EQ(StatusText(Estimate(hal::EstimatorState::kInactive, 0), true, 0).substr(0, 9),
            "disabled;");
  EXPECT_EQ(StatusText(Estimate(hal::EstimatorState::kCalibratingBias, 0), true, 0).substr(0, 12),
            "calibrating;");
  EXPECT_EQ(StatusText(Estimate(hal::EstimatorState::kWaitForWalking, 0), true, 0).substr(0, 20),
            "waiting for walking;");
  EXPECT_EQ(StatusText(hal::InertialEstimate{}, false, 0), "starting");
}

// Fails if the line loses a total or a delta, or if a period in which samples were lost or error
// frames arrived is not flagged (it is logged as a warning), or a quiet period is.
TEST(CountersLine, TotalsDeltasAndTrouble) {
  CounterSnapshot before, now;
  before.buses.resize(2);
  before.drivers.published = 1000;
  before.buses[0].frames = 5000;
  now = before;
  now.drivers.published = 61000;
  now.buses[0].frames = 3'905'000;
  now.buses[1].frames = 100;
  bool trouble = true;
  std::string line = CountersLine(now, before, {"can0", "can1"}, 60.0, trouble);
  EXPECT_FALSE(trouble);
  EXPECT_EQ(line,
            "counters (last 60 s): drivers 61000 (+60000) samples published, 0 frames rejected, 0 "
            "lost samples, 0 stale events; bus can0: 3905000 (+3900000) frames, 0 error frames (0 "
            "bus-off), 0 ticks down, 0 restart requests; bus can1: 100 (+100) frames, 0 error "
            "frames (0 bus-off), 0 ticks down, 0 restart requests; 0 bus restarts");
  CounterSnapshot lossy = now;
  lossy.drivers.lost_samples = 4;
  line = CountersLine(lossy, now, {"can0", "can1"}, 60.0, trouble);
  EXPECT_TRUE(trouble);
  EXPECT_NE(line.find("4 (+4) lost samples"), std::string::npos) << line;
  CounterSnapshot erroring = now;
  erroring.buses[1].error_frames = 2;
  erroring.buses[1].bus_off = 1;
  line = CountersLine(erroring, now, {"can0", "can1"}, 60.0, trouble);
  EXPECT_TRUE(trouble);
  EXPECT_NE(line.find("bus can1: 100 frames, 2 (+2) error frames (1 (+1) bus-off)"),
            std::string::npos)
      << line;
  CounterSnapshot dumping = now;
  dumping.candump = true;
  dumping.candump_written = 10;
  dumping.candump_dropped = 1;
  line = CountersLine(dumping, now, {"can0", "can1"}, 60.0, trouble);
  EXPECT_TRUE(trouble);
  EXPECT_NE(line.find("candump log 10 (+10) frames written, 1 (+1) dropped"), std::string::npos);
}

// The control thread starved (real time): nothing on a clean run's line (it stays as it was); once
// a tick was late, its totals and deltas, flagged as trouble while they grow. Fails if a clean
// line changes, a late tick or a tick without a new driver sample is not flagged, or a count is
// missing.
TEST(CountersLine, TheControlThreadStarved) {
  CounterSnapshot before, now;
  bool trouble = true;
  const std::string clean = CountersLine(now, before, {}, 1.0, trouble);
  EXPECT_FALSE(trouble);
  EXPECT_EQ(clean.find("control thread"), std::string::npos) << clean;
  now.control.late = 1;
  now.control.skipped = 166;
  now.control.longest_ns = 500'400'000;
  std::string line = CountersLine(now, before, {}, 1.0, trouble);
  EXPECT_TRUE(trouble);
  EXPECT_NE(line.find("; control thread 1 (+1) late ticks (longest 500.4 ms late), 166 (+166) "
                      "periods skipped, 0 ticks without a new driver sample"),
            std::string::npos)
      << line;
  line = CountersLine(now, now, {}, 1.0, trouble);  // nothing grew: a quiet period
  EXPECT_FALSE(trouble);
  CounterSnapshot stale = now;
  stale.control.stale = 2;
  line = CountersLine(stale, now, {}, 1.0, trouble);
  EXPECT_TRUE(trouble);
  EXPECT_NE(line.find("2 (+2) ticks without a new driver sample"), std::string::npos) << line;
}

// Fails if a level maps to another priority than sd-daemon(3)'s, or a continuation line of a
// message loses its priority (journald would file it at info).
TEST(Journal, PrioritiesAndPrefixes) {
  EXPECT_EQ(JournalPriority(spdlog::level::err), 3);
  EXPECT_EQ(JournalPriority(spdlog::level::warn), 4);
  EXPECT_EQ(JournalPriority(spdlog::level::info), 6);
  EXPECT_EQ(JournalPriority(spdlog::level::debug), 7);
  EXPECT_EQ(JournalPriority(spdlog::level::critical), 2);
  EXPECT_EQ(WithPriority(4, "one"), "<4>one");
  EXPECT_EQ(WithPriority(3, "one\ntwo"), "<3>one\n<3>two");
}

// $JOURNAL_STREAM is "<device>:<inode>" of the stream (systemd.exec(5)). Fails if another file,
// a malformed value or no value counts as the journal.
TEST(Journal, TheStreamIsRecognisedByDeviceAndInode) {
  const std::string path = testing::TempDir() + "/journal_stream_probe";
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  struct stat st {};
  ASSERT_EQ(fstat(fileno(f), &st), 0);
  const std::string same = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  const std::string other = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino + 1);
  EXPECT_TRUE(IsJournalStream(fileno(f), same.c_str()));
  EXPECT_FALSE(IsJournalStream(fileno(f), other.c_str()));
  EXPECT_FALSE(IsJournalStream(fileno(f), (same + "x").c_str()));
  EXPECT_FALSE(IsJournalStream(fileno(f), "garbage"));
  EXPECT_FALSE(IsJournalStream(fileno(f), nullptr));
  std::fclose(f);
}

// heftd run by hand (as user heft, no systemd LogsDirectory=) meets a missing /var/log/heft. Fails
// if AddLogFile throws (heftd stopped at "Failed opening file"), adds a sink for a file it could
// not open, or does not say on the console which file it could not open; and if a writable file is
// not added or does not receive the log.
TEST(LogFile, AFileThatCannotBeOpenedLeavesTheConsoleAndSaysSo) {
  std::ostringstream console;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(console);
  spdlog::logger log("heftd", sink);
  // spdlog creates missing folders, and root may write anywhere: a path through a plain file
  // cannot be opened by anyone (the tests run as root in CI).
  const std::string blocker = testing::TempDir() + "/heftd_log_blocker";
  std::ofstream(blocker) << "a file, not a folder\n";
  const std::string missing = blocker + "/heftd.log";
  EXPECT_FALSE(AddLogFile(log, missing));
  EXPECT_EQ(log.sinks().size(), 1u);
  EXPECT_NE(console.str().find(missing), std::string::npos) << console.str();

  const std::string writable = testing::TempDir() + "/heftd_log_file_probe.log";
  std::remove(writable.c_str());
  EXPECT_TRUE(AddLogFile(log, writable));
  EXPECT_EQ(log.sinks().size(), 2u);
  log.info("into the file");
  log.flush();
  std::ifstream in(writable);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("into the file"), std::string::npos) << text;
  std::remove(writable.c_str());
  std::remove(blocker.c_str());
}

}  // namespace
}  // namespace heft::host

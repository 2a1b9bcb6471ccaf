// The framework input segment (hal/framework_input.h) and heftd's validated reader
// (heft/host/framework_input.hpp): round trip, every validation case, staleness, torn reads under
// a concurrent writer, command edges across rates and resets, no allocation in Read().
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

#include "heft/host/framework_input.hpp"
#include "heft/test/alloc_counter.hpp"

namespace heft::host {
namespace {

constexpr std::int64_t kNow = 1'000'000'000'000;  // 1000 s of CLOCK_MONOTONIC

std::string UniqueName(const char* what) {
  return std::string("heft_test_input_") + what + "_" + std::to_string(getpid());
}

// A segment in this process's memory, initialised as heftd would.
struct LocalSegment {
  LocalSegment() { heft_input_init(&seg, 1); }
  heft_input_segment seg{};
};

heft_input_sample GoodSample(std::uint64_t sequence, std::int64_t stamp_ns) {
  heft_input_sample s{};
  s.sequence = sequence;
  s.stamp_ns = stamp_ns;
  s.flags = HEFT_INPUT_HAS_SPECIFIC_FORCE | HEFT_INPUT_HAS_LINEAR_VELOCITY;
  const double half = 0.25;  // 0.5 rad about z
  s.orientation[0] = std::cos(half);
  s.orientation[3] = std::sin(half);
  s.angular_velocity[0] = 0.1;
  s.angular_velocity[1] = -0.2;
  s.angular_velocity[2] = 0.3;
  s.specific_force[2] = 9.81;
  s.linear_velocity[0] = 0.5;
  return s;
}

TEST(FrameworkInput, RoundTripThroughSharedMemory) {
  const std::string name = UniqueName("roundtrip");
  InputMapping::Unlink(name);
  FrameworkInput reader(name);
  FrameworkInputWriter writer(name);
  EXPECT_EQ(reader.segment()->header.writer_pid, static_cast<std::uint32_t>(getpid()));
  EXPECT_EQ(reader.segment()->header.reader_pid, static_cast<std::uint32_t>(getpid()));

  hal::BaseSample out;
  CommandEdges cmds;
  EXPECT_FALSE(reader.Read(kNow, out, cmds));  // nothing written yet
  EXPECT_EQ(out.health.state, hal::ChannelState::kNeverSeen);

  heft_input_sample s = GoodSample(1, kNow - 1'000'000);
  s.orientation[0] *= 1.004;  // within the tolerance: accepted, then normalised
  s.orientation[3] *= 1.004;
  writer.Write(s);
  ASSERT_TRUE(reader.Read(kNow, out, cmds));
  EXPECT_EQ(out.health.state, hal::ChannelState::kOk);
  EXPECT_EQ(out.health.age_us, 1000U);
  EXPECT_NEAR(out.orientation[0], std::cos(0.25), 1e-15);
  EXPECT_NEAR(out.orientation[3], std::sin(0.25), 1e-15);
  EXPECT_EQ(out.angular_velocity, (std::array<double, 3>{0.1, -0.2, 0.3}));
  EXPECT_EQ(out.specific_force, (std::array<double, 3>{0, 0, 9.81}));
  EXPECT_EQ(out.specific_force_point, (std::array<double, 3>{0, 0, 0}));  // base origin
  EXPECT_EQ(out.linear_velocity, (std::array<double, 3>{0.5, 0, 0}));
  EXPECT_TRUE(out.has_specific_force);
  EXPECT_TRUE(out.has_linear_velocity);
  EXPECT_FALSE(cmds.any());
  EXPECT_EQ(reader.counters().accepted, 1U);
  InputMapping::Unlink(name);
}

// Fails if the umask narrows the segment: the framework's user (group heft) could not write.
TEST(FrameworkInput, SegmentIsGroupWritableDespiteUmask) {
  const std::string name = UniqueName("mode");
  InputMapping::Unlink(name);
  const mode_t old = umask(0077);
  { FrameworkInput reader(name); }
  umask(old);
  struct stat st {};
  ASSERT_EQ(stat(("/dev/shm/" + name).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660U);
  EXPECT_EQ(static_cast<std::size_t>(st.st_size), sizeof(heft_input_segment));
  InputMapping::Unlink(name);
}

TEST(FrameworkInput, WriterWithoutHeftdSaysSo) {
  const std::string name = UniqueName("missing");
  InputMapping::Unlink(name);
  try {
    FrameworkInputWriter writer(name);
    FAIL() << "opened a missing segment";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("is heftd running"), std::string::npos) << e.what();
  }
}

// heftd restarting keeps the framework's segment (and its commands); a segment of another size is
// re-initialised rather than misread.
TEST(FrameworkInput, ReattachKeepsSegmentAndReinitialisesForeignOnes) {
  const std::string name = UniqueName("reattach");
  InputMapping::Unlink(name);
  {
    FrameworkInput first(name);
    FrameworkInputWriter writer(name);
    writer.Write(GoodSample(7, kNow));
    writer.Command(plugin::Command::kRobotWalking);
  }
  {
    FrameworkInput second(name);
    hal::BaseSample out;
    CommandEdges cmds;
    EXPECT_TRUE(second.Read(kNow, out, cmds));  // the sample is still there
    EXPECT_FALSE(cmds.any());                   // commands before heftd attached are not replayed
  }
  {
    InputMapping m(name, true);
    m.get()->header.layout_version = 99;  // as an old/new build would have left it
  }
  EXPECT_THROW(FrameworkInputWriter{name}, std::runtime_error);
  {
    FrameworkInput third(name);
    EXPECT_TRUE(heft_input_compatible(third.segment()));
    hal::BaseSample out;
    CommandEdges cmds;
    third.Read(kNow, out, cmds);
    EXPECT_EQ(out.health.state, hal::ChannelState::kNeverSeen);
  }
  InputMapping::Unlink(name);
}

struct BadCase {
  const char* what;
  void (*mutate)(heft_input_sample&);
  InputReject reason;
  hal::ChannelState state;
};

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

const BadCase kBadCases[] = {
    {"nan orientation", [](heft_input_sample& s) { s.orientation[1] = kNaN; },
     InputReject::kNonFinite, hal::ChannelState::kFault},
    {"inf angular velocity", [](heft_input_sample& s) { s.angular_velocity[2] = kInf; },
     InputReject::kNonFinite, hal::ChannelState::kFault},
    {"nan specific force", [](heft_input_sample& s) { s.specific_force[0] = kNaN; },
     InputReject::kNonFinite, hal::ChannelState::kFault},
    {"-inf linear velocity", [](heft_input_sample& s) { s.linear_velocity[1] = -kInf; },
     InputReject::kNonFinite, hal::ChannelState::kFault},
    {"quaternion norm 1.1",
     [](heft_input_sample& s) {
       for (double& q : s.orientation) q *= 1.1;
     },
     InputReject::kQuaternion, hal::ChannelState::kFault},
    {"zero quaternion",
     [](heft_input_sample& s) {
       for (double& q : s.orientation) q = 0.0;
     },
     InputReject::kQuaternion, hal::ChannelState::kFault},
    {"angular velocity 40 rad/s", [](heft_input_sample& s) { s.angular_velocity[0] = 40.0; },
     InputReject::kAngularVelocity, hal::ChannelState::kFault},
    {"specific force 200 m/s^2", [](heft_input_sample& s) { s.specific_force[1] = -200.0; },
     InputReject::kSpecificForce, hal::ChannelState::kFault},
    {"linear velocity 12 m/s", [](heft_input_sample& s) { s.linear_velocity[2] = 12.0; },
     InputReject::kLinearVelocity, hal::ChannelState::kFault},
    {"no motion flag", [](heft_input_sample& s) { s.flags = 0; }, InputReject::kFlags,
     hal::ChannelState::kFault},
    {"unknown flag", [](heft_input_sample& s) { s.flags |= 0x80; }, InputReject::kFlags,
     hal::ChannelState::kFault},
    {"stamp 2 ms in the future", [](heft_input_sample& s) { s.stamp_ns = kNow + 2'000'000; },
     InputReject::kFuture, hal::ChannelState::kFault},
    {"stamp in the far future",
     [](heft_input_sample& s) { s.stamp_ns = std::numeric_limits<std::int64_t>::max(); },
     InputReject::kFuture, hal::ChannelState::kFault},
    {"stamp 21 ms old", [](heft_input_sample& s) { s.stamp_ns = kNow - 21'000'000; },
     InputReject::kOld, hal::ChannelState::kStale},
    {"stamp in the far past",
     [](heft_input_sample& s) { s.stamp_ns = std::numeric_limits<std::int64_t>::min(); },
     InputReject::kOld, hal::ChannelState::kStale},
};

// Each bad sample is refused with its reason, counted, and the output keeps the last good values
// (so a NaN never reaches the estimator); the next good sample is accepted again. Fails if a check
// is missing, mislabelled, or lets the bad value through.
TEST(FrameworkInput, EveryValidationCaseIsRefusedAndCounted) {
  LocalSegment local;
  FrameworkInput reader(&local.seg, FrameworkInputLimits{});
  FrameworkInputWriter writer(&local.seg);
  hal::BaseSample out;
  CommandEdges cmds;
  std::uint64_t sequence = 1;
  writer.Write(GoodSample(sequence++, kNow));
  ASSERT_TRUE(reader.Read(kNow, out, cmds));
  const hal::BaseSample good = out;
  for (const BadCase& c : kBadCases) {
    SCOPED_TRACE(c.what);
    heft_input_sample s = GoodSample(sequence++, kNow);
    c.mutate(s);
    writer.Write(s);
    const auto before = reader.counters().rejected[static_cast<std::size_t>(c.reason)];
    EXPECT_FALSE(reader.Read(kNow, out, cmds));
    EXPECT_EQ(out.health.state, c.state);
    EXPECT_EQ(out.health.status_bits, static_cast<std::uint16_t>(c.reason));
    EXPECT_EQ(reader.counters().rejected[static_cast<std::size_t>(c.reason)], before + 1);
    EXPECT_EQ(out.orientation, good.orientation);
    EXPECT_EQ(out.angular_velocity, good.angular_velocity);
    EXPECT_EQ(out.specific_force, good.specific_force);
    EXPECT_EQ(out.linear_velocity, good.linear_velocity);
    writer.Write(GoodSample(sequence++, kNow));
    EXPECT_TRUE(reader.Read(kNow, out, cmds));
  }
  EXPECT_EQ(reader.counters().rejected_total(), std::size(kBadCases));
  EXPECT_EQ(out.health.rejected_frames, std::size(kBadCases));
}

// Fields not flagged as set are not checked (a velocity-only framework may leave garbage in the
// specific force) and not handed on.
TEST(FrameworkInput, UnflaggedFieldsAreIgnored) {
  LocalSegment local;
  FrameworkInput reader(&local.seg, FrameworkInputLimits{});
  FrameworkInputWriter writer(&local.seg);
  heft_input_sample s = GoodSample(1, kNow);
  s.flags = HEFT_INPUT_HAS_LINEAR_VELOCITY;
  s.specific_force[0] = kNaN;
  writer.Write(s);
  hal::BaseSample out;
  CommandEdges cmds;
  ASSERT_TRUE(reader.Read(kNow, out, cmds));
  EXPECT_FALSE(out.has_specific_force);
  EXPECT_EQ(out.specific_force, (std::array<double, 3>{0, 0, 0}));
}

// A writer that keeps refreshing its stamp but stops counting is stale once the sequence has not
// moved for longer than the timeout; a writer that stops altogether goes stale by its stamp.
TEST(FrameworkInput, FrozenSequenceAndSilentWriterGoStale) {
  LocalSegment local;
  FrameworkInputLimits limits;
  limits.timeout_ns = 20'000'000;
  FrameworkInput reader(&local.seg, limits);
  FrameworkInputWriter writer(&local.seg);
  hal::BaseSample out;
  CommandEdges cmds;
  std::int64_t t = kNow;
  for (int k = 0; k <= 20; ++k, t += 1'000'000) {  // 20 ms of the same sequence: still ok
    writer.Write(GoodSample(5, t));
    EXPECT_TRUE(reader.Read(t, out, cmds)) << k;
  }
  writer.Write(GoodSample(5, t));
  EXPECT_FALSE(reader.Read(t, out, cmds));  // 21 ms without a new sequence
  EXPECT_EQ(out.health.state, hal::ChannelState::kStale);
  EXPECT_EQ(out.health.status_bits, static_cast<std::uint16_t>(InputReject::kFrozen));
  writer.Write(GoodSample(6, t));
  EXPECT_TRUE(reader.Read(t, out, cmds));  // counting again
  // Silent writer: the same sample read on and on until its stamp is too old.
  EXPECT_TRUE(reader.Read(t + 20'000'000, out, cmds));
  EXPECT_FALSE(reader.Read(t + 20'000'001, out, cmds));
  EXPECT_EQ(out.health.state, hal::ChannelState::kStale);
  EXPECT_EQ(out.health.age_us, 20'000U);
}

// Raw seqlock: every field of the sample is written from one counter; a reader running against a
// writer at full speed must never see two counters in one sample. Fails on a torn copy.
TEST(FrameworkInputConcurrent, NoMixedSampleUnderConcurrentWriter) {
  LocalSegment local;
  constexpr std::uint64_t kSamples = 200'000;
  constexpr std::uint64_t kMinReads = 20'000;  // the writer keeps going until the reader had these
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> reads{0};
  std::uint64_t ok = 0, torn = 0, mixed = 0, backwards = 0;
  std::thread reader([&] {
    heft_input_sample s{};
    std::uint64_t last = 0;
    while (!done.load(std::memory_order_acquire)) {
      const int r = heft_input_read(&local.seg, &s, 2);
      reads.fetch_add(1, std::memory_order_relaxed);  // relaxed: a progress count
      if (r == HEFT_INPUT_TORN) ++torn;
      if (r != HEFT_INPUT_OK) continue;
      ++ok;
      const auto c = static_cast<double>(s.sequence);
      bool same = s.stamp_ns == static_cast<std::int64_t>(s.sequence) &&
                  s.flags == static_cast<std::uint32_t>(s.sequence) &&
                  s.reserved0 == static_cast<std::uint32_t>(s.sequence >> 32);
      for (double x : s.orientation) same = same && x == c;
      for (double x : s.angular_velocity) same = same && x == c;
      for (double x : s.specific_force) same = same && x == c;
      for (double x : s.linear_velocity) same = same && x == c;
      if (!same) ++mixed;
      if (s.sequence < last) ++backwards;
      last = s.sequence;
    }
  });
  heft_input_sample s{};
  // relaxed: a progress count.
  for (std::uint64_t i = 1; i <= kSamples || reads.load(std::memory_order_relaxed) < kMinReads;
       ++i) {
    const auto c = static_cast<double>(i);
    s.sequence = i;
    s.stamp_ns = static_cast<std::int64_t>(i);
    s.flags = static_cast<std::uint32_t>(i);
    s.reserved0 = static_cast<std::uint32_t>(i >> 32);
    for (double& x : s.orientation) x = c;
    for (double& x : s.angular_velocity) x = c;
    for (double& x : s.specific_force) x = c;
    for (double& x : s.linear_velocity) x = c;
    heft_input_write(&local.seg, &s);
    // Alternate bursts at full speed (the reader overlaps writes) with yields (it also gets
    // through): a writer spinning without pause would starve a single-slot seqlock's reader.
    if ((i & 1024U) != 0) std::this_thread::yield();
  }
  done.store(true, std::memory_order_release);
  reader.join();
  EXPECT_EQ(mixed, 0U);
  EXPECT_EQ(backwards, 0U);
  EXPECT_GT(ok, 0U);
  RecordProperty("ok_reads", static_cast<int>(ok));
  RecordProperty("torn_reads", static_cast<int>(torn));
}

// The validated reader against a concurrent writer: every accepted output is one sample (its
// angular velocity, specific force and velocity all derive from the same counter), torn reads are
// reported as such (counted, never handed on).
TEST(FrameworkInputConcurrent, ValidatedReaderNeverHandsOnAMixedSample) {
  LocalSegment local;
  FrameworkInputLimits limits;
  limits.timeout_ns = std::numeric_limits<std::int64_t>::max() / 2;
  limits.max_read_attempts = 1;  // make torn reads likely, so that the reporting path runs
  FrameworkInput reader(&local.seg, limits);
  FrameworkInputWriter writer(&local.seg);
  constexpr std::uint64_t kSamples = 200'000;
  constexpr std::uint64_t kMinAccepted = 20'000;
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> accepted{0};
  std::uint64_t mixed = 0;
  std::thread thread([&] {
    hal::BaseSample out;
    CommandEdges cmds;
    while (!done.load(std::memory_order_acquire)) {
      if (!reader.Read(kNow, out, cmds) || out.health.status_bits != 0) continue;
      accepted.fetch_add(1, std::memory_order_relaxed);  // relaxed: a progress count
      const double w = out.angular_velocity[0];
      const bool same = out.angular_velocity[1] == w && out.angular_velocity[2] == -w &&
                        out.specific_force[0] == 10.0 * w && out.linear_velocity[2] == 2.0 * w;
      if (!same) ++mixed;
    }
  });
  heft_input_sample s = GoodSample(0, kNow);
  // relaxed: a progress count.
  for (std::uint64_t i = 1;
       i <= kSamples || accepted.load(std::memory_order_relaxed) < kMinAccepted; ++i) {
    const double w = static_cast<double>(i % 1000) * 1e-3;
    s.sequence = i;
    s.angular_velocity[0] = w;
    s.angular_velocity[1] = w;
    s.angular_velocity[2] = -w;
    s.specific_force[0] = 10.0 * w;
    s.linear_velocity[2] = 2.0 * w;
    writer.Write(s);
  }
  done.store(true, std::memory_order_release);
  thread.join();
  EXPECT_EQ(mixed, 0U);
  const auto c = reader.counters();
  EXPECT_EQ(c.rejected_total(), c.rejected[static_cast<std::size_t>(InputReject::kTorn)]);
  EXPECT_GE(accepted.load(), kMinAccepted);
  RecordProperty("accepted", static_cast<int>(accepted.load()));
  RecordProperty("torn",
                 static_cast<int>(c.rejected[static_cast<std::size_t>(InputReject::kTorn)]));
}

// Commands issued at ~10 kHz (two threads, all five kinds) and read at ~333 Hz: the edges add up
// to exactly what was sent, whatever the interleaving. Fails if one is lost or counted twice.
TEST(FrameworkInputConcurrent, CommandEdgesAreNeitherLostNorRepeated) {
  LocalSegment local;
  FrameworkInput reader(&local.seg, FrameworkInputLimits{});
  FrameworkInputWriter writer(&local.seg);
  constexpr int kPerThread = 3000;
  std::atomic<int> writers_done{0};
  std::array<std::uint64_t, kNumCommands> sent{}, received{};
  auto send = [&](int offset, std::array<std::uint64_t, kNumCommands>& mine) {
    for (int k = 0; k < kPerThread; ++k) {
      const int id = (k * 7 + offset) % static_cast<int>(kNumCommands);
      writer.Command(static_cast<plugin::Command>(id));
      ++mine[static_cast<std::size_t>(id)];
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    writers_done.fetch_add(1, std::memory_order_release);
  };
  std::array<std::uint64_t, kNumCommands> a{}, b{};
  std::thread t1(send, 0, std::ref(a)), t2(send, 3, std::ref(b));
  hal::BaseSample out;
  CommandEdges cmds;
  std::uint64_t reads = 0;
  while (true) {
    const bool finished = writers_done.load(std::memory_order_acquire) == 2;
    reader.Read(kNow, out, cmds);
    ++reads;
    for (std::size_t i = 0; i < kNumCommands; ++i) received[i] += cmds.count[i];
    if (cmds.last >= 0) {
      EXPECT_GT(cmds.count[static_cast<std::size_t>(cmds.last)], 0U);
    }
    if (finished) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  t1.join();
  t2.join();
  for (std::size_t i = 0; i < kNumCommands; ++i) sent[i] = a[i] + b[i];
  EXPECT_EQ(received, sent);
  EXPECT_EQ(reader.counters().commands, 2U * kPerThread);
  reader.Read(kNow, out, cmds);
  EXPECT_FALSE(cmds.any());  // nothing repeated afterwards
  RecordProperty("reads", static_cast<int>(reads));
}

// A re-initialised segment (writer reset) makes the counters go backwards: what was counted since
// is delivered, not 2^64 − n commands.
TEST(FrameworkInput, CounterResetIsNotAFlood) {
  LocalSegment local;
  FrameworkInput reader(&local.seg, FrameworkInputLimits{});
  FrameworkInputWriter writer(&local.seg);
  hal::BaseSample out;
  CommandEdges cmds;
  for (int k = 0; k < 5; ++k) writer.Command(plugin::Command::kRobotWalking);
  reader.Read(kNow, out, cmds);
  EXPECT_EQ(cmds.count[HEFT_INPUT_CMD_WALKING], 5U);
  EXPECT_EQ(cmds.last, HEFT_INPUT_CMD_WALKING);
  heft_input_init(&local.seg, 1);
  writer.Command(plugin::Command::kRobotWalking);
  writer.Command(plugin::Command::kRobotWalking);
  reader.Read(kNow, out, cmds);
  EXPECT_EQ(cmds.count[HEFT_INPUT_CMD_WALKING], 2U);
  EXPECT_EQ(reader.counters().writer_resets, 1U);
  reader.Read(kNow, out, cmds);
  EXPECT_FALSE(cmds.any());
}

// Several commands between two reads: each kind once, the newest last (stopped after walking
// means stopped).
TEST(FrameworkInput, NewestCommandIsAppliedLast) {
  LocalSegment local;
  FrameworkInput reader(&local.seg, FrameworkInputLimits{});
  FrameworkInputWriter writer(&local.seg);
  hal::BaseSample out;
  CommandEdges cmds;
  writer.Command(plugin::Command::kRobotStopped);
  writer.Command(plugin::Command::kReset);
  writer.Command(plugin::Command::kRobotWalking);
  writer.Command(plugin::Command::kRobotStopped);
  reader.Read(kNow, out, cmds);
  std::vector<plugin::Command> applied;
  cmds.ForEach([&](plugin::Command c) { applied.push_back(c); });
  EXPECT_EQ(applied,
            (std::vector<plugin::Command>{plugin::Command::kReset, plugin::Command::kRobotWalking,
                                          plugin::Command::kRobotStopped}));
}

// Read() on the 1 kHz thread: accepted, refused, torn-free and command paths allocate nothing.
TEST(FrameworkInput, ReadDoesNotAllocate) {
  LocalSegment local;
  FrameworkInput reader(&local.seg, FrameworkInputLimits{});
  FrameworkInputWriter writer(&local.seg);
  hal::BaseSample out;
  CommandEdges cmds;
  heft_input_sample good = GoodSample(1, kNow), bad = GoodSample(2, kNow);
  bad.angular_velocity[0] = kNaN;
  writer.Write(good);
  reader.Read(kNow, out, cmds);  // warm-up
  heft::test::AllocationScope scope;
  for (std::uint64_t i = 0; i < 200; ++i) {
    good.sequence = 2 * i + 3;
    writer.Write(i % 2 == 0 ? good : bad);
    writer.Command(plugin::Command::kEnable);
    reader.Read(kNow + static_cast<std::int64_t>(i), out, cmds);
  }
  EXPECT_EQ(scope.count(), 0U);
}

TEST(FrameworkInput, RefusesNonsenseLimits) {
  LocalSegment local;
  FrameworkInputLimits limits;
  limits.quaternion_tolerance = 0.0;
  EXPECT_THROW(FrameworkInput(&local.seg, limits), std::invalid_argument);
  limits = FrameworkInputLimits{};
  limits.timeout_ns = 0;
  EXPECT_THROW(FrameworkInput(&local.seg, limits), std::invalid_argument);
  EXPECT_THROW(FrameworkInput("a/b"), std::invalid_argument);
}

}  // namespace
}  // namespace heft::host

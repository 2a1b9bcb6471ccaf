#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "heft/hal/inertial_estimate.hpp"
#include "heft/hal/state_buffer.hpp"
#include "heft/test/alloc_counter.hpp"

namespace heft::hal {
namespace {

// Fills every numeric field of a sample from one counter, so that a torn read shows as a mismatch.
RobotStateSample MakeSample(std::uint64_t counter) {
  RobotStateSample s;
  s.sequence = counter;
  s.stamp_ns = static_cast<std::int64_t>(counter);
  s.num_joints = static_cast<std::uint16_t>(counter & 0xFFFF);
  const auto c = static_cast<double>(counter);
  for (auto& j : s.joints) {
    j.position = c;
    j.velocity = c;
    j.torque = c;
    j.encoder.age_us = static_cast<std::uint32_t>(counter);
  }
  for (auto& w : s.wrenches) w.wrench.fill(c);
  s.base.position.fill(c);
  return s;
}

bool Consistent(const RobotStateSample& s) {
  const auto c = static_cast<double>(s.sequence);
  if (s.stamp_ns != static_cast<std::int64_t>(s.sequence)) return false;
  if (s.num_joints != static_cast<std::uint16_t>(s.sequence & 0xFFFF)) return false;
  for (const auto& j : s.joints) {
    if (j.position != c || j.velocity != c || j.torque != c) return false;
    if (j.encoder.age_us != static_cast<std::uint32_t>(s.sequence)) return false;
  }
  for (const auto& w : s.wrenches)
    for (double x : w.wrench)
      if (x != c) return false;
  for (double x : s.base.position)
    if (x != c) return false;
  return true;
}

TEST(SeqlockRing, EmptyReadsFail) {
  StateBuffer buffer;
  RobotStateSample s;
  EXPECT_EQ(buffer.latest_index(), 0U);
  EXPECT_FALSE(buffer.read_latest(s));
  EXPECT_FALSE(buffer.read_back(0, s));
}

TEST(SeqlockRing, HistoryKeepsTheLastValues) {
  SeqlockRing<RobotStateSample, 8> ring;
  for (std::uint64_t i = 1; i <= 20; ++i) ring.publish(MakeSample(i));
  RobotStateSample s;
  ASSERT_TRUE(ring.read_latest(s));
  EXPECT_EQ(s.sequence, 20U);
  for (std::size_t back = 0; back < 7; ++back) {
    ASSERT_TRUE(ring.read_back(back, s)) << back;
    EXPECT_EQ(s.sequence, 20U - back);
    EXPECT_TRUE(Consistent(s));
  }
  EXPECT_FALSE(ring.read_back(7, s));    // one slot of slack is never handed out
  EXPECT_FALSE(ring.read_index(12, s));  // overwritten
}

// A million samples written at full speed while a reader checks every field for tearing.
TEST(SeqlockRing, NoTornReadsUnderRealThreads) {
  static StateBuffer buffer;  // large: keep it off the stack
  constexpr std::uint64_t kSamples = 1'000'000;
  std::atomic<bool> done{false};
  std::uint64_t reads = 0, torn = 0, history_reads = 0, backwards = 0;
  std::thread reader([&] {
    RobotStateSample s;
    std::uint64_t last = 0;
    while (!done.load(std::memory_order_acquire)) {
      if (buffer.read_latest(s)) {
        ++reads;
        if (!Consistent(s)) ++torn;
        if (s.sequence < last) ++backwards;
        last = s.sequence;
      }
      if (buffer.read_back(3, s)) {
        ++history_reads;
        if (!Consistent(s)) ++torn;
      }
    }
  });
  for (std::uint64_t i = 1; i <= kSamples; ++i) buffer.publish(MakeSample(i));
  done.store(true, std::memory_order_release);
  reader.join();
  RobotStateSample s;
  ASSERT_TRUE(buffer.read_latest(s));
  EXPECT_EQ(s.sequence, kSamples);
  EXPECT_EQ(torn, 0U);
  EXPECT_EQ(backwards, 0U);
  EXPECT_GT(reads + history_reads, 0U);
  RecordProperty("reads", static_cast<int>(reads));
}

TEST(SeqlockRing, PublishAndReadDoNotAllocate) {
  static StateBuffer buffer;
  static RobotStateSample in = MakeSample(7), out;
  {
    heft::test::AllocationScope scope;
    std::vector<int> probe(3);  // the counter itself must see this one
    EXPECT_EQ(scope.count(), 1U);
  }
  heft::test::AllocationScope scope;
  for (std::uint64_t i = 1; i < 100; ++i) {
    in.sequence = i;
    buffer.publish(in);
    ASSERT_TRUE(buffer.read_latest(out));
  }
  EXPECT_EQ(scope.count(), 0U);
}

TEST(InertialEstimate, IsTriviallyCopyableAndBounded) {
  static_assert(std::is_trivially_copyable_v<InertialEstimate>);
  SeqlockRing<InertialEstimate, 4> mailbox;
  InertialEstimate e;
  e.num_links = 1;
  e.links[0].parameters = {1.5, 0, 0, 0.1, 0.01, 0, 0, 0.01, 0, 0.002};
  mailbox.publish(e);
  InertialEstimate got;
  ASSERT_TRUE(mailbox.read_latest(got));
  EXPECT_EQ(got.links[0].parameters, e.links[0].parameters);
}

}  // namespace
}  // namespace heft::hal

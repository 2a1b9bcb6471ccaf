// The C view of the hand-off (hal/shared_hand_off.h) against the C++ original, and the C framework
// example end to end: it writes the input segment heftd's reader validates, sends `walking`, and
// prints the estimate it reads from a hand-off segment published by the C++ ring.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <new>
#include <string>
#include <thread>

#include "heft/hal/shared_hand_off.h"
#include "heft/hal/shared_hand_off.hpp"
#include "heft/host/framework_input.hpp"
#include "heft/host/shared_memory.hpp"

namespace heft::host {
namespace {

static_assert(sizeof(heft_handoff_segment) == sizeof(hal::SharedHandOff));
static_assert(sizeof(heft_inertial_estimate) == sizeof(hal::InertialEstimate));
static_assert(offsetof(heft_inertial_estimate, status) == offsetof(hal::InertialEstimate, status));
static_assert(offsetof(heft_inertial_estimate, links) == offsetof(hal::InertialEstimate, links));
static_assert(offsetof(heft_estimator_status, hold_reason) ==
              offsetof(hal::EstimatorStatus, hold_reason));
static_assert(offsetof(heft_estimator_status, last_nis) ==
              offsetof(hal::EstimatorStatus, last_nis));
static_assert(offsetof(heft_link_estimate, covariance) == offsetof(hal::LinkEstimate, covariance));
static_assert(HEFT_HANDOFF_MAGIC == hal::kSharedHandOffMagic);
static_assert(HEFT_HANDOFF_LAYOUT_VERSION == hal::kSharedHandOffLayout);
static_assert(HEFT_HANDOFF_DEPTH == hal::kSharedHandOffDepth);

hal::InertialEstimate Estimate(std::uint64_t i) {
  hal::InertialEstimate e;
  e.sequence = i;
  e.stamp_ns = static_cast<std::int64_t>(i) * 3;
  e.num_links = 2;
  e.nominal_model = 0x9e3779b9U ^ static_cast<std::uint32_t>(i);
  e.status.state = hal::EstimatorState::kEstimating;
  e.status.hold_reason = static_cast<std::uint32_t>(i);
  e.status.last_nis = static_cast<double>(i) * 0.5;
  std::snprintf(e.links[1].name.data(), e.links[1].name.size(), "link%llu",
                static_cast<unsigned long long>(i));
  e.links[1].parameters[0] = static_cast<double>(i);
  e.links[1].covariance[99] = static_cast<double>(i) * 2.0;
  return e;
}

// Fails if the C structs or the C reader disagree with the C++ ring about any byte it reads.
TEST(SharedHandOffC, ReadsWhatTheCppRingPublished) {
  static hal::SharedHandOff shared;  // large: off the stack
  const auto* c = reinterpret_cast<const heft_handoff_segment*>(&shared);
  EXPECT_TRUE(heft_handoff_compatible(c));
  heft_inertial_estimate got;
  EXPECT_EQ(heft_handoff_read_latest(c, &got), 0);  // nothing published
  for (std::uint64_t i = 1; i <= 21; ++i) {         // wraps the 8 slots twice
    shared.ring.publish(Estimate(i));
    ASSERT_EQ(heft_handoff_read_latest(c, &got), 1) << i;
    EXPECT_EQ(got.sequence, i);
    EXPECT_EQ(got.stamp_ns, static_cast<std::int64_t>(i) * 3);
    EXPECT_EQ(got.num_links, 2U);
    EXPECT_EQ(got.nominal_model, 0x9e3779b9U ^ static_cast<std::uint32_t>(i));
    EXPECT_EQ(got.status.state, HEFT_STATE_ESTIMATING);
    EXPECT_EQ(got.status.hold_reason, i);
    EXPECT_EQ(got.status.last_nis, static_cast<double>(i) * 0.5);
    EXPECT_EQ(std::string(got.links[1].name), "link" + std::to_string(i));
    EXPECT_EQ(got.links[1].parameters[0], static_cast<double>(i));
    EXPECT_EQ(got.links[1].covariance[99], static_cast<double>(i) * 2.0);
  }
}

std::int64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Fails if the example cannot write a sample heftd's reader accepts, loses its `walking`, or
// cannot read the hand-off.
TEST(FrameworkExample, WritesInputAndReadsHandOff) {
  const std::string input = "heft_test_example_in_" + std::to_string(getpid());
  const std::string handoff = "heft_test_example_out_" + std::to_string(getpid());
  InputMapping::Unlink(input);
  FrameworkInputLimits limits;
  limits.timeout_ns = 60'000'000'000;  // the reader looks after the example has exited
  FrameworkInput reader(input, limits);

  // The hand-off as heftd creates it, with a heartbeat every 3 ms while the example runs.
  auto shared = std::make_unique<SharedHandOffSegment>(handoff);
  hal::InertialEstimate e = Estimate(5);
  std::snprintf(e.links[0].name.data(), e.links[0].name.size(), "torso");
  e.links[0].parameters[0] = 1.5;
  shared->Publish(e);
  std::atomic<bool> beating{true};
  std::thread heart([&] {
    while (beating.load()) {
      shared->Heartbeat(MonotonicNs());
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
  });

  const std::string cmd = std::string(HEFT_FRAMEWORK_EXAMPLE) + " --input " + input +
                          " --handoff " + handoff + " --seconds 0.3 2>&1";
  std::string output;
  std::FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buf[1024];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) output.append(buf, n);
  const int status = pclose(pipe);
  beating.store(false);
  heart.join();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  EXPECT_NE(output.find("torso m=1.500 kg"), std::string::npos) << output;

  hal::BaseSample base;
  CommandEdges cmds;
  EXPECT_TRUE(reader.Read(MonotonicNs(), base, cmds)) << base.health.status_bits;
  EXPECT_EQ(cmds.count[HEFT_INPUT_CMD_WALKING], 1U);
  EXPECT_EQ(cmds.last, HEFT_INPUT_CMD_WALKING);
  EXPECT_TRUE(base.has_specific_force);
  EXPECT_NEAR(base.specific_force[2], 9.81, 1e-12);
  EXPECT_NE(reader.segment()->header.writer_pid, 0U);

  shared.reset();  // stopped cleanly: the name is removed
  EXPECT_NE(access(("/dev/shm/" + handoff).c_str(), F_OK), 0);
  InputMapping::Unlink(input);
  // Without heftd's segment the example says what is wrong.
  pipe = popen(cmd.c_str(), "r");
  output.clear();
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) output.append(buf, n);
  EXPECT_EQ(WEXITSTATUS(pclose(pipe)), 1);
  EXPECT_NE(output.find("is heftd running"), std::string::npos) << output;
}

}  // namespace
}  // namespace heft::host

// EstimatePersister's thread (heft/host/persistence.hpp) against a hand-off published at the
// control rate by another thread, with a third reading its counter, then a clean stop: what heftd
// does while running. Labelled concurrent: the ThreadSanitizer pass runs it (tools/heft test).
#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "heft/host/persistence.hpp"

namespace heft::host {
namespace {

// Estimate number k: every parameter and covariance entry derived from k, so that a file mixing
// two publications (a torn copy) is detected.
hal::InertialEstimate Numbered(std::uint64_t k) {
  hal::InertialEstimate e;
  e.sequence = k;
  e.num_links = 1;
  std::snprintf(e.links[0].name.data(), e.links[0].name.size(), "%s", "left_forearm");
  for (std::size_t i = 0; i < 10; ++i)
    e.links[0].parameters[i] = static_cast<double>(k) + 0.1 * static_cast<double>(i);
  for (std::size_t i = 0; i < 100; ++i)
    e.links[0].covariance[i] = 1e-3 * static_cast<double>(k) + 1e-6 * static_cast<double>(i);
  e.status.state = hal::EstimatorState::kEstimating;
  e.status.updates = k;  // updated since every earlier look: settled
  return e;
}

// Fails if ThreadSanitizer reports a race between the persister's thread, the publisher and the
// counter's reader (or Stop()); if the final file is not the last publication (the clean stop
// writes the last settled estimate once more); if it mixes two publications; or if nothing was
// written while running (interval 0.1 s over about 0.6 s of publishing).
TEST(PersisterConcurrent, WritesWholeEstimatesWhilePublishedAndTheLastOnStop) {
  const std::string path =
      testing::TempDir() + "/heft_persister_" + std::to_string(getpid()) + ".yaml";
  std::filesystem::remove(path);
  plugin::HandOffMailbox hand_off;
  auto log = std::make_shared<spdlog::logger>("persister-test");  // no sinks: silent
  PersistenceConfig config;
  config.file = path;
  config.interval = 0.1;
  EstimatePersister persister(config, "fnv1a64:0123456789abcdef", hand_off, log);

  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> published{0};
  std::thread publisher([&] {  // the control thread: one estimate every 3 ms
    for (std::uint64_t k = 1; !stop.load(std::memory_order_acquire); ++k) {
      hand_off.publish(Numbered(k));
      published.store(k, std::memory_order_release);
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
  });
  std::uint64_t seen_writes = 0;
  std::thread counter([&] {  // the main thread's summary / reports read the counter
    while (!stop.load(std::memory_order_acquire)) {
      seen_writes = std::max(seen_writes, persister.writes());
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  stop.store(true, std::memory_order_release);
  publisher.join();
  counter.join();
  persister.Stop();

  EXPECT_GE(seen_writes, 1u) << "nothing written while running";
  const PersistedEstimate p = ReadEstimateFile(path);
  ASSERT_EQ(p.estimate.num_links, 1u);
  const double k = p.estimate.links[0].parameters[0];
  EXPECT_EQ(k, static_cast<double>(published.load()));  // the last one, on the clean stop
  const hal::InertialEstimate expected = Numbered(static_cast<std::uint64_t>(k));
  for (std::size_t i = 0; i < 10; ++i)
    EXPECT_EQ(p.estimate.links[0].parameters[i], expected.links[0].parameters[i]) << i;
  for (std::size_t i = 0; i < 100; ++i)
    EXPECT_EQ(p.estimate.links[0].covariance[i], expected.links[0].covariance[i]) << i;
  EXPECT_GE(persister.writes(), seen_writes);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace heft::host

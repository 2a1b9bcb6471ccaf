// No allocation in the plugin's update(), counted where the allocations really happen: the plugin's
// sources are linked into this test (not dlopen'd, see heft/test/alloc_counter.hpp), so the
// counter's --wrap of the malloc family reaches every call the plugin, the estimator and Eigen
// make. The control test proves it: allocations made inside the plugin's own code are counted.
#include <gtest/gtest.h>

#include <memory>

#include "heft/plugin/controller_interface.hpp"
#include "heft/test/alloc_counter.hpp"
#include "robot_samples.hpp"

namespace heft::plugin {
namespace {

using Plugin = std::unique_ptr<ControllerInterface, void (*)(ControllerInterface*)>;

struct Linked {
  Plugin plugin{nullptr, heft_plugin_destroy};
  hal::StateBuffer state;
  HandOffMailbox hand_off;
  std::int64_t now = 0;
  std::uint64_t seq = 0;

  // Publishes `n` 1 kHz samples of the 29-joint robot (every channel good).
  void Publish(int n) {
    for (int i = 0; i < n; ++i) state.publish(JointSample(++seq, now += 1'000'000));
  }
};

const std::string kConfig = std::string(HEFT_CONFIG_DIR) + "/sim/forearm-load.yaml";

// Negative control: create() and init() allocate on purpose (the plugin object, the model, the
// filter's Eigen matrices). Fails if the counter misses them — in particular the malloc family,
// which it could not see inside the dlopen'd module — i.e. if a zero below could mean "not seen".
TEST(PluginAllocations, TheCounterSeesAllocationsInsideThePlugin) {
  Linked rig;
  std::uint64_t created = 0, initialised_malloc = 0, initialised = 0;
  {
    heft::test::AllocationScope scope;
    char error[256];
    rig.plugin.reset(heft_plugin_create(kApiVersion, error, sizeof(error)));
    created = scope.count();
  }
  ASSERT_NE(rig.plugin, nullptr);
  {
    heft::test::AllocationScope scope;
    rig.plugin->init(kConfig, HardwareInterface{&rig.state, &rig.hand_off});
    rig.plugin->configure();
    initialised = scope.count();
    initialised_malloc = scope.malloc_count();
  }
  EXPECT_GE(created, 1U);  // `new EstimatorPlugin` in heft_plugin_create
  EXPECT_GT(initialised_malloc, 0U);
  EXPECT_GT(initialised, initialised_malloc);  // operator new too (strings, vectors)
  RecordProperty("init_allocations", static_cast<int>(initialised));
  RecordProperty("init_malloc_calls", static_cast<int>(initialised_malloc));
}

// Fails on any allocation (operator new or the malloc family, by the plugin, the estimator or
// Eigen) on this thread during five update() calls after activation.
TEST(PluginAllocations, UpdateAllocatesNothingAfterActivation) {
  Linked rig;
  char error[256];
  rig.plugin.reset(heft_plugin_create(kApiVersion, error, sizeof(error)));
  ASSERT_NE(rig.plugin, nullptr) << error;
  rig.plugin->init(kConfig, HardwareInterface{&rig.state, &rig.hand_off});
  rig.plugin->configure();
  rig.plugin->activate();
  rig.plugin->command(Command::kRobotWalking);
  for (int k = 0; k < 5; ++k) {
    rig.Publish(3);
    rig.plugin->update(rig.now, 3'000'000);
  }
  rig.Publish(3);  // published first: only update() is measured
  heft::test::AllocationScope scope;
  for (int k = 0; k < 5; ++k) rig.plugin->update(rig.now, 3'000'000);
  EXPECT_EQ(scope.count(), 0U);
  hal::InertialEstimate e;
  ASSERT_TRUE(rig.hand_off.read_latest(e));  // update() ran and handed on
  EXPECT_EQ(e.status.state, hal::EstimatorState::kEstimating);
}

}  // namespace
}  // namespace heft::plugin

// One full millisecond of the reference robot through the drivers: 29 encoder and 29 torque frames
// and both F/T cells (4 frames) decoded and published; and the state buffer's write/read latency.
#include <benchmark/benchmark.h>

#include "heft/drivers/driver_loop.hpp"
#include "heft/drivers/memory_bus.hpp"
#include "heft/drivers/sample_encoder.hpp"
#include "heft/estimator/model.hpp"

namespace heft::drivers {
namespace {

void BM_DecodeAndPublishOneMillisecond(benchmark::State& st) {
  const dyn::Model model =
      dyn::LoadModelFromUrdfFile(std::string(HEFT_ROBOTS_DIR) + "/heft_humanoid.urdf", {});
  const DriverConfig cfg =
      ReferenceDriverConfig(model.joint_names(), {"left_foot_ft", "right_foot_ft"});
  MemoryBus can0{"can0"}, can1{"can1"};
  std::vector<hal::CanTransport*> buses{&can0, &can1};
  hal::StateBuffer buffer;
  DriverLoop loop(cfg, buses, buffer);
  SampleEncoder encoder(cfg);
  hal::RobotStateSample truth;
  truth.num_joints = static_cast<std::uint16_t>(cfg.joints.size());
  truth.num_wrenches = 2;
  std::int64_t now = 0;
  for (auto _ : st) {
    st.PauseTiming();
    now += 1'000'000;
    encoder.Emit(truth, now, buses);
    st.ResumeTiming();
    loop.Tick(now);
  }
  st.counters["frames_per_tick"] = static_cast<double>(2 * cfg.joints.size() + 4);
}
BENCHMARK(BM_DecodeAndPublishOneMillisecond);

void BM_StateBufferPublish(benchmark::State& st) {
  hal::StateBuffer buffer;
  hal::RobotStateSample s;
  for (auto _ : st) {
    ++s.sequence;
    benchmark::DoNotOptimize(buffer.publish(s));
  }
}
BENCHMARK(BM_StateBufferPublish);

void BM_StateBufferReadLatest(benchmark::State& st) {
  hal::StateBuffer buffer;
  hal::RobotStateSample s, out;
  buffer.publish(s);
  for (auto _ : st) benchmark::DoNotOptimize(buffer.read_latest(out));
}
BENCHMARK(BM_StateBufferReadLatest);

}  // namespace
}  // namespace heft::drivers

BENCHMARK_MAIN();

// One full millisecond of the reference robot through the drivers: 29 encoder and 29 torque frames
// and both F/T cells (4 frames) decoded and published; and the state buffer's write/read latency.
#include <benchmark/benchmark.h>

#include "heft/drivers/driver_loop.hpp"
#include "heft/test/driver_rig.hpp"

namespace heft::drivers {
namespace {

void BM_DecodeAndPublishOneMillisecond(benchmark::State& st) {
  heft::test::DriverRig rig;
  std::int64_t now = 0;
  for (auto _ : st) {
    st.PauseTiming();
    now += 1'000'000;
    rig.encoder.Emit(rig.truth, now, rig.buses);
    st.ResumeTiming();
    rig.loop.Tick(now);
  }
  st.counters["frames_per_tick"] = static_cast<double>(2 * rig.cfg.joints.size() + 4);
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

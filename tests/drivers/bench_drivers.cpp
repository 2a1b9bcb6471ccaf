// One full millisecond of the reference robot through the drivers: 29 encoder and 29 torque frames
// and both F/T cells (4 frames) decoded and published; the same robot with mixed joints (a third on
// heft's devices, a third MIT actuators with torque from current, a third CiA 402 drives with two
// TPDOs each); and the state buffer's write/read latency.
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

// The reference robot's joints in turn heft's, MIT (shared reply identifier, motor id per bus) and
// CiA 402 (node per bus), both F/T cells: mixed traffic as a robot with standard actuators sends
// it.
DriverConfig MixedConfig(DriverConfig cfg) {
  int motor[2] = {1, 1}, node[2] = {1, 1};
  for (std::size_t i = 0; i < cfg.joints.size(); ++i) {
    JointDevice& j = cfg.joints[i];
    if (i % 3 == 1) {
      j.protocol = JointProtocol::kMit;
      j.mit.motor_id = static_cast<std::uint8_t>(motor[j.bus]++);
      j.mit.t_max = 40.0;
      j.mit.current = {true, 0.1, 10.0, 0.1};
    } else if (i % 3 == 2) {
      j.protocol = JointProtocol::kCia402;
      Cia402Config& c = j.cia402;
      c.node = static_cast<std::uint8_t>(node[j.bus]++);
      c.tpdos[0] = {0x180u + c.node, {Cia402Object::kStatusword, Cia402Object::kPosition}, 2};
      c.tpdos[1] = {0x280u + c.node, {Cia402Object::kVelocity, Cia402Object::kTorque}, 2};
      c.num_tpdos = 2;
      c.gear_ratio = 100.0;
    }
  }
  return cfg;
}

void BM_DecodeAndPublishOneMillisecondMixed(benchmark::State& st) {
  heft::test::DriverRig reference;
  const DriverConfig cfg = MixedConfig(reference.cfg);
  MemoryBus can0{"can0"}, can1{"can1"};
  std::vector<hal::CanTransport*> buses{&can0, &can1};
  hal::StateBuffer buffer;
  DriverLoop loop(cfg, buses, buffer);
  SampleEncoder encoder(cfg);
  std::int64_t now = 0;
  int frames = 0;
  for (auto _ : st) {
    st.PauseTiming();
    now += 1'000'000;
    frames = encoder.Emit(reference.truth, now, buses);
    st.ResumeTiming();
    loop.Tick(now);
  }
  st.counters["frames_per_tick"] = static_cast<double>(frames);
  if (loop.counters().rejected_total() != 0) st.SkipWithError("frames rejected");
}
BENCHMARK(BM_DecodeAndPublishOneMillisecondMixed);

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

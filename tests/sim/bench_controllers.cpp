// Cost of one control tick of each whole-body controller (they run at 1 kHz inside the simulator
// loop), and of one plant step, on the reference humanoid.
#include <benchmark/benchmark.h>

#include "heft/sim/plant.hpp"
#include "heft/sim/scenario.hpp"

namespace heft::sim {
namespace {

struct Fixture {
  explicit Fixture(const char* name)
      : scenario(MakeScenario(name, ScenarioOptions{})),
        plant(scenario.urdf_path, scenario.wrench_links) {
    plant.Reset(scenario.initial_joints, scenario.floating_base);
    tau.assign(plant.num_joints(), 0.0);
    // A few hundred ticks so that the state is a settled, loaded one.
    for (int k = 0; k < 300; ++k) Tick();
  }
  void Tick() {
    plant.Sample(state);
    (void)scenario.controller->Compute(plant.time(), state, tau);
    plant.Step(tau);
  }
  Scenario scenario;
  Plant plant;
  hal::RobotStateSample state;
  std::vector<double> tau;
};

void BM_JointTaskCompute(benchmark::State& bench) {
  Fixture f("forearm-load");
  f.plant.Sample(f.state);
  for (auto _ : bench) {
    benchmark::DoNotOptimize(f.scenario.controller->Compute(0.3, f.state, f.tau));
  }
}
BENCHMARK(BM_JointTaskCompute)->Unit(benchmark::kMicrosecond);

void BM_BalanceComputeDoubleSupport(benchmark::State& bench) {
  Fixture f("torso-load");
  f.plant.Sample(f.state);
  for (auto _ : bench) {
    benchmark::DoNotOptimize(f.scenario.controller->Compute(0.3, f.state, f.tau));
  }
}
BENCHMARK(BM_BalanceComputeDoubleSupport)->Unit(benchmark::kMicrosecond);

void BM_FloatingPlantStep(benchmark::State& bench) {
  Fixture f("torso-load");
  for (auto _ : bench) f.plant.Step(f.tau);
}
BENCHMARK(BM_FloatingPlantStep)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace heft::sim

BENCHMARK_MAIN();

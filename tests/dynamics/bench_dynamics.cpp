// Google Benchmark of the dynamics core on the reference humanoid (floating base, nv = 35).
#include <benchmark/benchmark.h>

#include <random>

#include "heft/dynamics/dynamics.hpp"
#include "heft/dynamics/regressor.hpp"
#include "random_state.hpp"

namespace heft::dynamics {
namespace {

struct Fixture {
  Fixture()
      : model(LoadModelFromUrdfFile(std::string(HEFT_ROBOTS_DIR) + "/heft_humanoid.urdf", {})),
        ws(model) {
    std::mt19937_64 rng(1);
    s = test::RandomState(model, rng);
  }
  Model model;
  Workspace ws;
  test::State s;
};

void BM_Rnea(benchmark::State& st) {
  Fixture f;
  Eigen::VectorXd tau(f.model.nv);
  for (auto _ : st) {
    Rnea(f.model, f.ws, f.s.q, f.s.v, f.s.a, tau);
    benchmark::DoNotOptimize(tau.data());
  }
}
BENCHMARK(BM_Rnea);

void BM_Crba(benchmark::State& st) {
  Fixture f;
  Eigen::MatrixXd M(f.model.nv, f.model.nv);
  for (auto _ : st) {
    Crba(f.model, f.ws, f.s.q, M);
    benchmark::DoNotOptimize(M.data());
  }
}
BENCHMARK(BM_Crba);

void BM_CondensedRegressor(benchmark::State& st) {
  Fixture f;
  const std::vector<std::string> all = {"left_forearm", "torso", "right_forearm", "left_hand"};
  const RegressorSelection sel(f.model, {all.begin(), all.begin() + st.range(0)});
  Eigen::MatrixXd Y(f.model.nv, 10 * sel.size());
  Eigen::VectorXd tau_nom(f.model.nv);
  for (auto _ : st) {
    CondensedRegressor(f.model, f.ws, sel, f.s.q, f.s.v, f.s.a, Y, tau_nom);
    benchmark::DoNotOptimize(Y.data());
  }
}
BENCHMARK(BM_CondensedRegressor)->Arg(1)->Arg(4);

void BM_ContactTerm(benchmark::State& st) {
  Fixture f;
  const std::vector<int> frames = {f.model.frame_index("left_foot_ft"),
                                   f.model.frame_index("right_foot_ft")};
  const std::vector<Vector6> wrenches(2, Vector6::Constant(100.0));
  Eigen::VectorXd out(f.model.nv);
  ForwardKinematics(f.model, f.ws, f.s.q);
  for (auto _ : st) {
    ContactTerm(f.model, f.ws, frames, wrenches, out);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_ContactTerm);

}  // namespace
}  // namespace heft::dynamics

BENCHMARK_MAIN();

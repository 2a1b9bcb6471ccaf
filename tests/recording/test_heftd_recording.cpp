// The host's recorder on the simulated robot (heft-sim, MuJoCo): host.recording writes a 1 kHz
// .heftrec that heft-identify reads; a recording key without a path is refused with the file and
// key named.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "heft/drivers/candump.hpp"
#include "heft/host/configuration.hpp"
#include "heft/identification/dataset.hpp"
#include "heft/identification/identify.hpp"
#include "heft/identification/sdp.hpp"
#include "heft/recording/candump_convert.hpp"
#include "heft/recording/recording.hpp"
#include "heft/test/config_builder.hpp"
#include "heft/test/heftd_run.hpp"

namespace heft::recording {
namespace {

using heft::test::ConfigBuilder;
using heft::test::HeftdResult;
// heft-identify's side: what it makes of the recordings.
using identification::Accumulate;
using identification::Dataset;
using identification::DatasetOptions;
using identification::LeastSquaresResult;
using identification::MakeProblem;
using identification::Method;
using identification::NoiseModel;
using identification::NormalEquations;
using identification::PredictTorques;
using identification::PrepareDataset;
using identification::Problem;
using identification::SdpOptions;
using identification::SdpResult;
using identification::SolveLeastSquares;
using identification::SolveSdp;

HeftdResult Heftd(const std::string& config, const std::string& duration) {
  return heft::test::RunHeftSim({"--config", config, "--duration", duration});
}

// A scenario's configuration (config/sim/<scenario>.yaml) to edit through yaml-cpp, written into a
// fresh temporary directory of its own (heft/test/config_builder.hpp).
ConfigBuilder Scenario(const std::string& scenario) {
  return ConfigBuilder(std::string(HEFT_CONFIG_DIR) + "/sim/" + scenario + ".yaml");
}

// Fails if a sample of the 2 s run is missing from the recording (2000 at 1 kHz) or out of step,
// or if what it holds is not what heft-identify takes.
TEST(HeftdRecording, SimulatedRunRecordsEveryDriverSample) {
  ConfigBuilder config = Scenario("walk");
  const std::string rec_path = config.dir() + "/walk.heftrec";
  const HeftdResult r =
      Heftd(config.Set("host.recording.path", rec_path).Write("recording.yaml"), "2");
  ASSERT_EQ(r.code, 0) << r.output;
  const recording::Recording rec = recording::ReadRecording(rec_path);
  ASSERT_EQ(rec.samples.size(), 2000u);
  EXPECT_TRUE(rec.info.floating_base);
  EXPECT_EQ(rec.info.wrench_frames, (std::vector<std::string>{"left_foot_ft", "right_foot_ft"}));
  for (std::size_t i = 1; i < rec.samples.size(); ++i)
    ASSERT_EQ(rec.samples[i].stamp_ns - rec.samples[i - 1].stamp_ns, 1'000'000);
  // The robot stands on its feet: the foot cells carry its weight (~88.8 kg) once settled.
  const recording::RecordSample& s = rec.samples.back();
  EXPECT_TRUE(s.base_valid);
  EXPECT_NEAR(s.wrenches[0][2] + s.wrenches[1][2], 88.8 * 9.81, 150.0);
  // heft-identify's preparation accepts it.
  const dynamics::Model model = dynamics::LoadModelFromUrdfFile(
      std::string(HEFT_CONFIG_DIR) + "/robots/heft_humanoid.urdf", dynamics::ModelOptions{});
  const Dataset d = PrepareDataset(model, {rec}, DatasetOptions{});
  EXPECT_GT(d.samples.size(), 150u);
}

TEST(HeftdRecording, RecordingWithoutAPathIsRefused) {
  const HeftdResult r =
      Heftd(Scenario("walk").Set("host.recording.enabled", "true").Write("recording.yaml"), "0.1");
  EXPECT_EQ(r.code, 78) << r.output;  // EX_CONFIG: the configuration is refused
  EXPECT_NE(r.output.find("host.recording"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("path"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(".yaml"), std::string::npos) << r.output;
}

TEST(HeftdRecording, MujocoDumbbellCurlRecordingIdentifiesTheLoadedForearm) {
  // MuJoCo end to end: the simulated fixed-base robot curls a 5.44 kg dumbbell held 0.25 m down
  // the left forearm; heft-sim records; batch identification of the forearm (the rest known) finds
  // forearm + dumbbell.
  ConfigBuilder config = Scenario("dumbbell-curl");
  const std::string rec_path = config.dir() + "/dumbbell.heftrec";
  const HeftdResult r =
      Heftd(config.Set("host.recording.path", rec_path).Write("recording.yaml"), "6");
  ASSERT_EQ(r.code, 0) << r.output;
  const recording::Recording rec = recording::ReadRecording(rec_path);
  EXPECT_FALSE(rec.info.floating_base);
  const dynamics::Model model = dynamics::LoadModelFromUrdfFile(
      std::string(HEFT_CONFIG_DIR) + "/robots/heft_humanoid_fixed.urdf", dynamics::ModelOptions{});
  const Dataset d = PrepareDataset(model, {rec}, DatasetOptions{});
  const Problem p = MakeProblem(model, {"left_forearm"}, false);
  const NormalEquations ne = Accumulate(p, d, Method::kFullWls, NoiseModel{});
  const LeastSquaresResult ls = SolveLeastSquares(ne, p);
  const dynamics::Vector10 nominal = p.prior.head<10>();
  const double mass = nominal[0] + 5.44;
  const double hz = nominal[3] + 5.44 * -0.25;
  EXPECT_NEAR(ls.x[0], mass, 0.02 * mass);
  EXPECT_NEAR(ls.x[3], hz, 0.03 * std::abs(hz));
  EXPECT_LT(ls.report.relative_sigma[0], 0.1) << "the mass is identified";
  const SdpResult sdp = SolveSdp(ne, p, SdpOptions{});
  ASSERT_TRUE(sdp.ok) << sdp.message;
  EXPECT_TRUE(dynamics::IsPhysicallyConsistent(sdp.x.head<10>()));
  EXPECT_NEAR(sdp.x[0], mass, 0.02 * mass);
  const double before = PredictTorques(p, d, p.prior).rmse;
  const double after = PredictTorques(p, d, sdp.x).rmse;
  EXPECT_LT(after, 0.1 * before);
  std::printf(
      "forearm + dumbbell: mass %.3f kg (true %.3f), h_z %.4f (true %.4f); torque RMSE "
      "%.3f -> %.3f N·m\n",
      ls.x[0], mass, ls.x[3], hz, before, after);
}

TEST(HeftdRecording, CandumpOfTheSimulatedBusesConvertsToWhatHeftdRecorded) {
  // The simulator logs its CAN traffic (simulation.candump) while heft-sim records; converting the
  // log with the configuration gives the same joint and F/T channels, millisecond by millisecond.
  ConfigBuilder config = Scenario("walk");
  const std::string rec_path = config.dir() + "/both.heftrec";
  const std::string log_path = config.dir() + "/both.log";
  const std::string cfg = config.Set("host.recording.path", rec_path)
                              .Set("simulation.candump", log_path)
                              .Write("recording.yaml");
  const HeftdResult r = Heftd(cfg, "1");
  ASSERT_EQ(r.code, 0) << r.output;
  const recording::Recording live = recording::ReadRecording(rec_path);
  std::ifstream in(log_path);
  std::vector<drivers::CandumpError> errors;
  const auto records = drivers::ReadCandump(in, errors);
  EXPECT_TRUE(errors.empty());
  const plugin::PluginConfig pc = host::LoadConfiguration(cfg, host::Reader::kTool).plugin;
  const recording::Recording conv = recording::ConvertCandump(pc.drivers, records, true, log_path);
  ASSERT_FALSE(conv.samples.empty());
  const std::int64_t second = conv.samples.front().stamp_ns / 1'000'000'000 * 1'000'000'000;
  int matched = 0, equal = 0;
  for (const recording::RecordSample& c : conv.samples) {
    const std::int64_t k = (c.stamp_ns - second) / 1'000'000;  // the host stamps k ms in lockstep
    if (k < 1 || k > static_cast<std::int64_t>(live.samples.size())) continue;
    const recording::RecordSample& l = live.samples[static_cast<std::size_t>(k - 1)];
    ASSERT_EQ(l.stamp_ns, k * 1'000'000);
    ++matched;
    equal += c.q == l.q && c.v == l.v && c.tau == l.tau && c.wrenches == l.wrenches &&
             c.encoder_valid == l.encoder_valid && c.torque_valid == l.torque_valid;
  }
  EXPECT_GT(matched, 900);
  EXPECT_GE(equal, matched - 2) << "of " << matched;
}

}  // namespace
}  // namespace heft::recording

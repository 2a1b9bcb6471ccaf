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

#include "heft/config/configuration.hpp"
#include "heft/drivers/candump.hpp"
#include "heft/identification/dataset.hpp"
#include "heft/identification/identify.hpp"
#include "heft/identification/sdp.hpp"
#include "heft/recording/candump_convert.hpp"
#include "heft/recording/recording.hpp"
#include "heft/test/heftd_run.hpp"

namespace heft::ident {
namespace {

using heft::test::HeftdResult;
using heft::test::Slurp;

HeftdResult Heftd(const std::string& config, const std::string& duration) {
  return heft::test::RunHeftSim({"--config", config, "--duration", duration});
}

std::string Config(const std::string& recording_line, const std::string& scenario = "walk") {
  std::string text = Slurp(std::string(HEFT_CONFIG_DIR) + "/sim/" + scenario + ".yaml");
  text.replace(text.find("urdf: ../robots"), 15,
               std::string("urdf: ") + HEFT_CONFIG_DIR + "/robots");
  text.replace(text.find("host:\n"), 6, "host:\n" + recording_line);
  const std::string path = testing::TempDir() + "/heftd_rec_" + std::to_string(getpid()) + ".yaml";
  std::ofstream(path) << text;
  return path;
}

TEST(HeftdRecording, SimulatedRunRecordsEveryDriverSample) {
  const std::string rec_path = testing::TempDir() + "/heftd_walk.heftrec";
  const HeftdResult r = Heftd(Config("  recording: {path: " + rec_path + "}\n"), "2");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("recording: 2000 records written"), std::string::npos) << r.output;
  const Recording rec = ReadRecording(rec_path);
  ASSERT_EQ(rec.samples.size(), 2000u);
  EXPECT_TRUE(rec.info.floating_base);
  EXPECT_EQ(rec.info.wrench_frames, (std::vector<std::string>{"left_foot_ft", "right_foot_ft"}));
  for (std::size_t i = 1; i < rec.samples.size(); ++i)
    ASSERT_EQ(rec.samples[i].stamp_ns - rec.samples[i - 1].stamp_ns, 1'000'000);
  // The robot stands on its feet: the foot cells carry its weight (~88.8 kg) once settled.
  const RecordSample& s = rec.samples.back();
  EXPECT_TRUE(s.base_valid);
  EXPECT_NEAR(s.wrenches[0][2] + s.wrenches[1][2], 88.8 * 9.81, 150.0);
  // heft-identify's preparation accepts it.
  const dyn::Model model = dyn::LoadModelFromUrdfFile(
      std::string(HEFT_CONFIG_DIR) + "/robots/heft_humanoid.urdf", dyn::ModelOptions{});
  const Dataset d = PrepareDataset(model, {rec}, DatasetOptions{});
  EXPECT_GT(d.samples.size(), 150u);
}

TEST(HeftdRecording, RecordingWithoutAPathIsRefused) {
  const HeftdResult r = Heftd(Config("  recording: {enabled: true}\n"), "0.1");
  EXPECT_EQ(r.code, 78) << r.output;  // EX_CONFIG: the configuration is refused
  EXPECT_NE(r.output.find("host.recording"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("path"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(".yaml"), std::string::npos) << r.output;
}

TEST(HeftdRecording, MujocoDumbbellCurlRecordingIdentifiesTheLoadedForearm) {
  // MuJoCo end to end: the simulated fixed-base robot curls a 5.44 kg dumbbell held 0.25 m down
  // the left forearm; heft-sim records; batch identification of the forearm (the rest known) finds
  // forearm + dumbbell.
  const std::string rec_path = testing::TempDir() + "/heftd_dumbbell.heftrec";
  const HeftdResult r =
      Heftd(Config("  recording: {path: " + rec_path + "}\n", "dumbbell-curl"), "6");
  ASSERT_EQ(r.code, 0) << r.output;
  const Recording rec = ReadRecording(rec_path);
  EXPECT_FALSE(rec.info.floating_base);
  const dyn::Model model = dyn::LoadModelFromUrdfFile(
      std::string(HEFT_CONFIG_DIR) + "/robots/heft_humanoid_fixed.urdf", dyn::ModelOptions{});
  const Dataset d = PrepareDataset(model, {rec}, DatasetOptions{});
  const Problem p = MakeProblem(model, {"left_forearm"}, false);
  const NormalEquations ne = Accumulate(p, d, Method::kFullWls, NoiseModel{});
  const LeastSquaresResult ls = SolveLeastSquares(ne, p);
  const dyn::Vector10 nominal = p.prior.head<10>();
  const double mass = nominal[0] + 5.44;
  const double hz = nominal[3] + 5.44 * -0.25;
  EXPECT_NEAR(ls.x[0], mass, 0.02 * mass);
  EXPECT_NEAR(ls.x[3], hz, 0.03 * std::abs(hz));
  EXPECT_LT(ls.report.relative_sigma[0], 0.1) << "the mass is identified";
  const SdpResult sdp = SolveSdp(ne, p, SdpOptions{});
  ASSERT_TRUE(sdp.ok) << sdp.message;
  EXPECT_TRUE(dyn::IsPhysicallyConsistent(sdp.x.head<10>()));
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
  const std::string rec_path = testing::TempDir() + "/heftd_both.heftrec";
  const std::string log_path = testing::TempDir() + "/heftd_both.log";
  std::string cfg = Config("  recording: {path: " + rec_path + "}\n");
  {
    std::string text = Slurp(cfg);
    text.replace(text.find("  seed: 1"), 9, "  seed: 1\n  candump: " + log_path);
    std::ofstream(cfg) << text;
  }
  const HeftdResult r = Heftd(cfg, "1");
  ASSERT_EQ(r.code, 0) << r.output;
  const Recording live = ReadRecording(rec_path);
  std::ifstream in(log_path);
  std::vector<drivers::CandumpError> errors;
  const auto records = drivers::ReadCandump(in, errors);
  EXPECT_TRUE(errors.empty());
  const plugin::PluginConfig pc = config::LoadConfiguration(cfg, config::Reader::kTool).plugin;
  const Recording conv = ConvertCandump(pc.drivers, records, true, log_path);
  ASSERT_FALSE(conv.samples.empty());
  const std::int64_t second = conv.samples.front().stamp_ns / 1'000'000'000 * 1'000'000'000;
  int matched = 0, equal = 0;
  for (const RecordSample& c : conv.samples) {
    const std::int64_t k = (c.stamp_ns - second) / 1'000'000;  // the host stamps k ms in lockstep
    if (k < 1 || k > static_cast<std::int64_t>(live.samples.size())) continue;
    const RecordSample& l = live.samples[static_cast<std::size_t>(k - 1)];
    ASSERT_EQ(l.stamp_ns, k * 1'000'000);
    ++matched;
    equal += c.q == l.q && c.v == l.v && c.tau == l.tau && c.wrenches == l.wrenches &&
             c.encoder_valid == l.encoder_valid && c.torque_valid == l.torque_valid;
  }
  EXPECT_GT(matched, 900);
  EXPECT_GE(equal, matched - 2) << "of " << matched;
}

}  // namespace
}  // namespace heft::ident

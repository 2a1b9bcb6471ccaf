// Batch identification, fast parts: the zero-phase filter, the recording format and its refusals,
// the minimal-sensor test and the URDF/YAML output.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "heft/config/yaml.hpp"
#include "heft/drivers/memory_bus.hpp"
#include "heft/identification/filter.hpp"
#include "heft/identification/identify.hpp"
#include "heft/identification/output.hpp"
#include "heft/identification/sdp.hpp"
#include "heft/plugin/plugin_config.hpp"
#include "heft/recording/candump_convert.hpp"
#include "heft/test/driver_rig.hpp"
#include "motion.hpp"

namespace heft::identification {
namespace {

const std::string kUrdf = std::string(HEFT_ROBOTS_DIR) + "/heft_humanoid.urdf";

dynamics::Model Nominal() {
  return dynamics::LoadModelFromUrdfFile(kUrdf, dynamics::ModelOptions{});
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("heft_ident_" + name)).string();
}

TEST(ZeroPhaseFilter, SinusoidAttenuationAndNoLag) {
  const double rate = 1000.0, fc = 10.0;
  const Biquad f = ButterworthLowPass(fc, rate);
  for (double freq : {1.0, 10.0, 30.0}) {
    std::vector<double> x(4000);
    for (std::size_t i = 0; i < x.size(); ++i)
      x[i] = std::sin(2 * M_PI * freq * static_cast<double>(i) / rate);
    std::vector<double> y = x;
    FiltFilt(f, y);
    // Steady-state amplitude and phase from the middle part (correlation with sin and cos).
    double s = 0, c = 0;
    for (std::size_t i = 1000; i < 3000; ++i) {
      s += y[i] * std::sin(2 * M_PI * freq * static_cast<double>(i) / rate);
      c += y[i] * std::cos(2 * M_PI * freq * static_cast<double>(i) / rate);
    }
    s *= 2.0 / 2000.0;
    c *= 2.0 / 2000.0;
    // |H(f)|² of a 2nd-order Butterworth, with the bilinear transform's frequency warping.
    const double warped = std::tan(M_PI * freq / rate) / std::tan(M_PI * fc / rate);
    const double expected = 1.0 / (1.0 + std::pow(warped, 4));
    EXPECT_NEAR(std::hypot(s, c), expected, 2e-3) << freq << " Hz";
    EXPECT_NEAR(std::atan2(c, s), 0.0, 1e-3) << freq << " Hz: zero phase";
  }
  EXPECT_THROW(ButterworthLowPass(600.0, 1000.0), std::invalid_argument);
}

TEST(Recording, RoundTripAndRefusals) {
  recording::Recording rec;
  rec.info.joints = {"a", "b"};
  rec.info.wrench_frames = {"left_foot_ft"};
  const std::string path = TempPath("roundtrip.heftrec");
  {
    recording::RecordingWriter w(path, rec.info);
    for (int i = 0; i < 5; ++i) {
      recording::RecordSample s;
      s.stamp_ns = 1000000 * i;
      s.base[3] = 1.0;
      s.q = {0.1 * i, -0.2};
      s.v = {1.0, 2.0};
      s.tau = {3.0, 4.0 + i};
      s.wrenches = {{1, 2, 3, 4, 5, 6.5}};
      s.encoder_valid = {1, 1};
      s.torque_valid = {1, i != 3};
      s.wrench_valid = {1};
      w.Write(s);
    }
    w.Flush();
  }
  const recording::Recording back = recording::ReadRecording(path);
  ASSERT_EQ(back.samples.size(), 5u);
  EXPECT_EQ(back.info.joints, rec.info.joints);
  EXPECT_EQ(back.info.wrench_frames, rec.info.wrench_frames);
  EXPECT_DOUBLE_EQ(back.samples[4].q[0], 0.4);
  EXPECT_DOUBLE_EQ(back.samples[2].tau[1], 6.0);
  EXPECT_DOUBLE_EQ(back.samples[1].wrenches[0][5], 6.5);
  EXPECT_EQ(back.samples[3].torque_valid[1], 0);
  EXPECT_EQ(back.samples[4].torque_valid[1], 1);

  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto refused = [&](std::string data, const std::string& what) {
    const std::string bad = TempPath("bad.heftrec");
    std::ofstream(bad, std::ios::binary) << data;
    try {
      recording::ReadRecording(bad);
      ADD_FAILURE() << "accepted a recording with " << what;
    } catch (const recording::RecordingError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << "names the file";
    }
  };
  std::string b = bytes;
  b[0] = 'X';
  refused(b, "bad magic");
  b = bytes;
  b[8] = 9;
  refused(b, "unsupported version 9");
  refused(bytes.substr(0, bytes.size() - 3), "truncated record");
  refused(bytes.substr(0, 20), "truncated header");
  refused(bytes.substr(0, 5), "truncated header");
  // An endless input is refused by its first bytes, not read whole (would hang and fill memory).
  try {
    recording::ReadRecording("/dev/zero");
    ADD_FAILURE() << "accepted /dev/zero";
  } catch (const recording::RecordingError& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/zero: bad magic"), std::string::npos) << e.what();
  }
  b = bytes;
  b[16] = static_cast<char>(b[16] + 8);
  refused(b, "record size");
  // Time going backwards: swap the stamps of the first two records.
  const std::size_t header = bytes.size() - 5 * recording::RecordSize(2, 1);
  b = bytes;
  std::swap_ranges(b.begin() + header, b.begin() + header + 8,
                   b.begin() + header + recording::RecordSize(2, 1));
  refused(b, "time does not increase");
}

TEST(Identification, MinimalSensorTestFailsWithoutBaseInformation) {
  // A "contact" measured at a frame of the pelvis: its Jacobian spans the base directions, so the
  // null space of the unused sensors loses the base rows: rank(S_b V_x) < 6.
  const dynamics::Model nominal = Nominal();
  test::SimSpec spec;
  spec.duration = 1.5;
  const Problem p = MakeProblem(nominal, {"torso"}, false);
  Dataset bad = PrepareDataset(nominal, {test::Simulate(nominal, spec)}, DatasetOptions{});
  bad.samples.resize(50);
  const NormalEquations good = Accumulate(p, bad, Method::kNullSpace, NoiseModel{});
  EXPECT_EQ(good.sensor_test_failures, 0);
  EXPECT_EQ(good.min_base_rank, 6);
  const int pelvis_frame = nominal.frame_index("pelvis");
  bad.frames = {pelvis_frame};
  for (Sample& s : bad.samples) {
    s.wrenches = {dynamics::Vector6::Zero()};
    s.contact = {1};
    s.near_contact_switch = false;
  }
  const NormalEquations ne = Accumulate(p, bad, Method::kNullSpace, NoiseModel{});
  EXPECT_EQ(ne.sensor_test_failures, 50);
  EXPECT_EQ(ne.min_base_rank, 0);
}

TEST(Output, UrdfRoundTripKeepsIdentifiedParameters) {
  struct {
    dynamics::Model nominal = Nominal();
    dynamics::Model truth = test::PerturbedTruth(Nominal());
  } d;
  const Problem p = MakeProblem(d.nominal, {}, false);
  std::ifstream in(kUrdf);
  const std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const Eigen::VectorXd x = p.selection.Gather(d.truth);
  const std::string out = ReplaceInertials(xml, WithParameters(p, x), p);
  const dynamics::Model back = dynamics::LoadModelFromUrdfString(out, dynamics::ModelOptions{});
  for (std::size_t b = 0; b < back.bodies.size(); ++b)
    EXPECT_LT((back.bodies[b].parameters - d.truth.bodies[b].parameters).norm(), 1e-6)
        << back.bodies[b].name;
  Identifiability rep;
  rep.identifiable_share = Eigen::VectorXd::Ones(p.size());
  rep.sigma = Eigen::VectorXd::Zero(p.size());
  const std::string yaml = ParametersYaml(p, x, rep, FitStatistics{});
  EXPECT_NE(yaml.find("torso:"), std::string::npos);
}

TEST(CandumpConversion, ReplaysToTheSamplesTheLiveDriversPublished) {
  using namespace heft::drivers;
  heft::test::DriverRig live;
  const dynamics::Model& model = live.model;
  const DriverConfig& cfg = live.cfg;
  hal::RobotStateSample& truth = live.truth;
  const std::int64_t t0 = 1'700'000'000'000'000'000;
  std::ostringstream log;
  std::vector<hal::RobotStateSample> published;
  for (int k = 1; k <= 40; ++k) {
    for (std::size_t i = 0; i < cfg.joints.size(); ++i) {
      truth.joints[i].position = std::sin(0.01 * k + static_cast<double>(i));
      truth.joints[i].torque = 3.0 * std::cos(0.02 * k);
    }
    truth.wrenches[0].wrench[2] = 400.0 + k;
    live.encoder.Emit(truth, t0 + k * 1'000'000, live.buses);
    // Log what is on the buses, then let the live loop consume the same frames.
    std::vector<hal::CanFrame> frames[2];
    for (int b = 0; b < 2; ++b) {
      MemoryBus& bus = b == 0 ? live.can0 : live.can1;
      hal::CanFrame f;
      while (bus.receive(f) == hal::IoStatus::kOk) {
        log << FormatCandumpLine({f.stamp_ns, std::string(bus.name()), f}) << "\n";
        frames[b].push_back(f);
      }
    }
    for (int b = 0; b < 2; ++b)
      for (const auto& f : frames[b])
        ASSERT_EQ((b == 0 ? live.can0 : live.can1).send(f), hal::IoStatus::kOk);
    live.loop.Tick(t0 + k * 1'000'000);
    published.push_back(live.loop.last_sample());
  }
  std::istringstream in(log.str());
  std::vector<CandumpError> errors;
  const auto records = ReadCandump(in, errors);
  ASSERT_TRUE(errors.empty());
  const recording::Recording rec =
      recording::ConvertCandump(cfg, records, model.floating_base, "test.log");
  ASSERT_GE(rec.samples.size(), 40u);
  EXPECT_EQ(rec.info.joints, model.joint_names());
  int compared = 0;
  for (const auto& p : published) {
    for (const recording::RecordSample& s : rec.samples) {
      if (s.stamp_ns != p.stamp_ns) continue;
      ++compared;
      for (std::size_t i = 0; i < cfg.joints.size(); ++i) {
        EXPECT_EQ(s.q[i], p.joints[i].position);
        EXPECT_EQ(s.tau[i], p.joints[i].torque);
      }
      EXPECT_EQ(s.wrenches[0][2], p.wrenches[0].wrench[2]);
      EXPECT_FALSE(s.base_valid) << "the floating base is not on CAN";
    }
  }
  EXPECT_GE(compared, 38);
}

TEST(Output, EstimatorReadsTheYamlAsItsNominalModel) {
  const dynamics::Model nominal = Nominal();
  const dynamics::Model truth = test::PerturbedTruth(nominal);
  const Problem p = MakeProblem(nominal, {"torso", "left_forearm"}, false);
  Identifiability rep;
  rep.identifiable_share = Eigen::VectorXd::Ones(p.size());
  rep.sigma = Eigen::VectorXd::Zero(p.size());
  const std::string path = TempPath("params.yaml");
  std::ofstream(path) << ParametersYaml(p, p.selection.Gather(truth), rep, FitStatistics{});
  dynamics::Model m = nominal;
  plugin::ApplyNominalParameters(path, m);
  for (const char* link : {"torso", "left_forearm"}) {
    const int b = m.body_index(link);
    EXPECT_LT((m.bodies[b].parameters - truth.bodies[b].parameters).norm(), 1e-6) << link;
  }
  const int other = m.body_index("right_forearm");
  EXPECT_EQ(m.bodies[other].parameters, nominal.bodies[other].parameters);
  auto refused = [&](const std::string& text, const std::string& what) {
    const std::string bad = TempPath("bad_params.yaml");
    std::ofstream(bad) << text;
    dynamics::Model mm = nominal;
    try {
      plugin::ApplyNominalParameters(bad, mm);
      ADD_FAILURE() << "accepted " << text;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("bad_params.yaml"), std::string::npos) << e.what();
    }
  };
  refused("links:\n  torsoo: {pi: [1,0,0,0,1,0,0,1,0,1]}\n", "'torsoo' is not a moving link");
  refused("links:\n  torso: {pi: [1,0,0,0]}\n", "links.torso.pi");
  refused("links:\n  torso: {pi: [1,0,0,0,1,0,0,1,0,-1]}\n", "not physically consistent");
}

// The `fit:` section carries, for a program to read, what heft-identify's log prints: every
// method's fit on the recording, the written result's fit by the joints' speed and the wall time;
// the estimator's loader still takes the file. Would fail if an entry were missing, did not read
// back as YAML with its value, or made the file unloadable as a nominal model.
TEST(Output, TheFitSectionSaysEveryMethodsFitAndTheSplitByTheJointsSpeed) {
  const dynamics::Model nominal = Nominal();
  const Problem p = MakeProblem(nominal, {"torso"}, false);
  Identifiability rep;
  rep.identifiable_share = Eigen::VectorXd::Ones(p.size());
  rep.sigma = Eigen::VectorXd::Zero(p.size());
  FitStatistics st;
  st.method = "sdp";
  st.sliding_speed = 0.03;
  st.sliding_rmse = 0.1263;
  st.held_rmse = 0.1988;
  st.sliding_rows = 87158;
  st.held_rows = 86552;
  st.methods = {{"urdf", 1.4712, 0}, {"sdp", 0.1664, 1}};
  st.bodies = 1;
  st.seconds = 22.91;
  st.held_joints = {{"left_wrist_yaw", 1.0}, {"left_elbow", 0.72}};
  const std::string path = TempPath("fit_params.yaml");
  std::ofstream(path) << ParametersYaml(p, p.selection.Gather(nominal), rep, st);
  const config::Node fit = config::Document::Load(path).root()["fit"];
  EXPECT_EQ(fit.Get<std::string>("method"), "sdp");
  EXPECT_DOUBLE_EQ(fit["by_speed"].Get<double>("sliding_rmse"), 0.1263);
  EXPECT_DOUBLE_EQ(fit["by_speed"].Get<double>("held_rmse"), 0.1988);
  EXPECT_EQ(fit["by_speed"].Get<int>("sliding_rows"), 87158);
  EXPECT_EQ(fit["by_speed"].Get<int>("held_rows"), 86552);
  EXPECT_DOUBLE_EQ(fit["by_speed"].Get<double>("sliding_speed"), 0.03);
  EXPECT_EQ(fit["methods"].Keys(), (std::vector<std::string>{"urdf", "sdp"}));
  EXPECT_DOUBLE_EQ(fit["methods"]["urdf"].Get<double>("fit_rmse"), 1.4712);
  EXPECT_EQ(fit["methods"]["sdp"].Get<int>("consistent_bodies"), 1);
  EXPECT_EQ(fit.Get<int>("bodies"), 1);
  EXPECT_DOUBLE_EQ(fit.Get<double>("seconds"), 22.91);
  EXPECT_EQ(fit["held_joints"].Keys(), (std::vector<std::string>{"left_wrist_yaw", "left_elbow"}));
  EXPECT_DOUBLE_EQ(fit["held_joints"].Get<double>("left_elbow"), 0.72);
  dynamics::Model m = nominal;
  EXPECT_EQ(plugin::ApplyNominalParameters(path, m), (std::vector<std::string>{"torso"}));
}

// Version 2 of the recording carries the base IMU's specific force and its point; version 1 files
// (no such field, one validity byte less) still read. Would fail if the new field were lost on the
// way through the file, or a version 1 recording were refused or misread.
TEST(Recording, VersionTwoCarriesTheSpecificForceAndVersionOneStillReads) {
  recording::RecordingInfo info;
  info.joints = {"a"};
  info.wrench_frames = {};
  const std::string path = TempPath("v2.heftrec");
  {
    recording::RecordingWriter w(path, info);
    for (int i = 0; i < 3; ++i) {
      recording::RecordSample s;
      s.stamp_ns = 1000000 * (i + 1);
      s.base[3] = 1.0;
      s.specific_force = {0.1 * i, -0.2, 9.81, 0.05, 0.0, 0.12};
      s.has_specific_force = i != 1;
      s.q = {0.5};
      s.v = {0.0};
      s.tau = {1.5};
      s.encoder_valid = s.torque_valid = {1};
      w.Write(s);
    }
    w.Close();
  }
  const recording::Recording back = recording::ReadRecording(path);
  ASSERT_EQ(back.samples.size(), 3u);
  EXPECT_TRUE(back.samples[2].has_specific_force);
  EXPECT_FALSE(back.samples[1].has_specific_force);
  EXPECT_DOUBLE_EQ(back.samples[2].specific_force[0], 0.2);
  EXPECT_DOUBLE_EQ(back.samples[2].specific_force[5], 0.12);
  EXPECT_DOUBLE_EQ(back.samples[2].tau[0], 1.5);

  // The same by hand in version 1: no specific force, validity 1 + 2J + W bytes.
  std::string v1;
  auto put = [&](const auto& x) { v1.append(reinterpret_cast<const char*>(&x), sizeof(x)); };
  v1.append(recording::kRecordingMagic, 8);
  put(std::uint32_t{1});
  put(std::uint32_t{8 + 24 + 8 + 2 + 1});
  put(static_cast<std::uint32_t>(recording::RecordSize(1, 0, 1)));
  put(std::uint32_t{1});
  put(std::uint32_t{0});
  put(std::uint32_t{1});
  put(1000.0);
  put(std::uint16_t{1});
  v1.push_back('a');
  const std::size_t record = v1.size();
  put(std::int64_t{1000000});
  for (int k = 0; k < 13; ++k) put(k == 3 ? 1.0 : 0.0);
  for (double x : {0.25, 0.5, 2.5}) put(x);  // q, v, τ
  v1.append(3, '\1');                        // base, encoder, torque sensor
  v1.resize(record + recording::RecordSize(1, 0, 1), '\0');
  // 8 + 8 · (13 + 3) + 3 bytes padded to 144; version 2: 8 + 8 · (19 + 3) + 4 padded to 192.
  EXPECT_EQ(recording::RecordSize(1, 0, 1), 144u);
  EXPECT_EQ(recording::RecordSize(1, 0, 2), 192u);
  const recording::Recording old =
      recording::ParseRecording(std::vector<unsigned char>(v1.begin(), v1.end()), "v1");
  ASSERT_EQ(old.samples.size(), 1u);
  EXPECT_FALSE(old.samples[0].has_specific_force);
  EXPECT_DOUBLE_EQ(old.samples[0].tau[0], 2.5);
  EXPECT_TRUE(old.samples[0].torque_valid[0]);
}

// A floating base known from its IMU has no linear velocity (heft-sim's and a robot's recordings):
// the base's acceleration comes from the recorded specific force, as the online estimator forms
// it. A recording of the same motion with the velocity zeroed and the specific force of an IMU off
// the base origin gives the accelerations a differenced velocity gives. Would fail with the
// velocity-only dataset (the squats' and sway's acceleration would read as zero) or with a wrong
// transport of the specific force to the base origin.
TEST(Dataset, BaseAccelerationFromTheImusSpecificForce) {
  const dynamics::Model nominal = Nominal();
  test::SimSpec spec;
  spec.duration = 4.0;
  const recording::Recording rec = test::Simulate(nominal, spec);
  recording::Recording imu = rec;
  const Eigen::Vector3d p(0.05, -0.02, 0.1);  // the IMU's point S on the base
  const std::size_t n = rec.samples.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t lo = i == 0 ? 0 : i - 1, hi = i + 1 < n ? i + 1 : n - 1;
    const auto& a = rec.samples[lo].base;
    const auto& b = rec.samples[hi].base;
    const double dt =
        1e-9 * static_cast<double>(rec.samples[hi].stamp_ns - rec.samples[lo].stamp_ns);
    const auto& s = rec.samples[i].base;
    const Eigen::Vector3d acc((b[7] - a[7]) / dt, (b[8] - a[8]) / dt, (b[9] - a[9]) / dt);
    const Eigen::Vector3d w(s[10], s[11], s[12]);
    const Eigen::Vector3d w_dot((b[10] - a[10]) / dt, (b[11] - a[11]) / dt, (b[12] - a[12]) / dt);
    const Eigen::Matrix3d R = Eigen::Quaterniond(s[3], s[4], s[5], s[6]).toRotationMatrix();
    const Eigen::Vector3d f =
        R.transpose() * (acc - nominal.gravity) + w_dot.cross(p) + w.cross(w.cross(p));
    recording::RecordSample& r = imu.samples[i];
    for (int k = 7; k < 10; ++k) r.base[k] = 0.0;  // no linear velocity from an IMU
    for (int k = 0; k < 3; ++k) r.specific_force[k] = f[k], r.specific_force[3 + k] = p[k];
    r.has_specific_force = true;
  }
  const Dataset velocity = PrepareDataset(nominal, {rec}, DatasetOptions{});
  const Dataset from_imu = PrepareDataset(nominal, {imu}, DatasetOptions{});
  ASSERT_EQ(velocity.samples.size(), from_imu.samples.size());
  double signal = 0, error = 0;
  for (std::size_t i = 0; i < velocity.samples.size(); ++i) {
    signal += velocity.samples[i].a.head<3>().squaredNorm();
    error += (velocity.samples[i].a.head<3>() - from_imu.samples[i].a.head<3>()).squaredNorm();
  }
  const auto count = static_cast<double>(velocity.samples.size());
  signal = std::sqrt(signal / count);
  error = std::sqrt(error / count);
  std::printf("base acceleration: RMS %.3f m/s², from the specific force off by %.4f m/s²\n",
              signal, error);
  EXPECT_GT(signal, 0.05);  // the squats and sway of 4 s: 0.12 m/s² RMS
  EXPECT_LT(error, 0.02 * signal);
}

}  // namespace
}  // namespace heft::identification

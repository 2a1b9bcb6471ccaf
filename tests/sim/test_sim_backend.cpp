// heft-sim's simulated robot on its own (sim/src/sim_backend.cpp): its emulated CAN frames, decoded
// by heft's drivers, give back MuJoCo's state — joint positions, velocities, applied torques and
// the feet's contact wrenches in the F/T frames — within the spec's quantisation (no noise) and
// with the configured noise's statistics; its faults (bursts, random loss) are deterministic and
// counted; its candump log replays through the drivers to the very samples the live buses gave.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <string>
#include <vector>

#include "heft/drivers/candump.hpp"
#include "heft/drivers/driver_config.hpp"
#include "heft/drivers/driver_loop.hpp"
#include "heft/estimator/model.hpp"
#include "heft/sim/sim_backend.hpp"

namespace heft::sim {
namespace {

constexpr std::int64_t kMs = 1'000'000;
const std::string kConfigDir = HEFT_CONFIG_DIR;

// The drivers and robot of one of the simulated configurations (config/sim/<scenario>.yaml).
struct SimRig {
  drivers::DriverConfig drivers;
  dyn::Model model;
};
SimRig LoadSetup(const std::string& scenario) {
  const config::Document doc = config::Document::Load(kConfigDir + "/sim/" + scenario + ".yaml");
  SimRig s;
  s.drivers = drivers::ParseDriverConfig(doc.root()["drivers"]);
  const bool floating = doc.root()["robot"].Get<bool>("floating_base");
  const std::string urdf = doc.root()["robot"].Get<std::string>("urdf");
  s.model = dyn::LoadModelFromUrdfFile(kConfigDir + "/sim/" + urdf, dyn::ModelOptions{floating});
  return s;
}

SimOptions Options(const std::string& scenario, bool noise) {
  SimOptions o;
  o.scenario = scenario;
  o.seed = 1;
  if (!noise) o.noise = SimNoise{0, 0, 0, 0, 0, 0};
  return o;
}

// MuJoCo's own state after a step, in the drivers' order: joints by name, and the contact wrench on
// each foot from MuJoCo's cfrc_ext (mj_rnePostConstraint: contact forces summed per body, at the
// root's subtree centre of mass, world axes) moved to the F/T frame's origin and axes.
class MujocoTruth {
 public:
  MujocoTruth(const SimulatedRobot& sim, const SimRig& s) : sim_(sim) {
    const mjModel* m = sim.plant().model();
    copy_ = mj_makeData(m);
    for (const auto& j : s.drivers.joints) {
      const int id = mj_name2id(m, mjOBJ_JOINT, j.joint.c_str());
      EXPECT_GE(id, 0) << j.joint;
      qpos_.push_back(m->jnt_qposadr[id]);
      dof_.push_back(m->jnt_dofadr[id]);
    }
    for (std::size_t k = 0; k < s.drivers.ft_cells.size(); ++k) {
      const std::string& foot = sim.scenario().wrench_links[k];
      foot_body_.push_back(mj_name2id(m, mjOBJ_BODY, foot.c_str()));
      const dyn::Frame& ft = s.model.frames[s.model.frame_index(s.drivers.ft_cells[k].frame)];
      const dyn::Frame& f = s.model.frames[s.model.frame_index(foot)];
      EXPECT_EQ(ft.body, f.body);
      ft_in_foot_.push_back(f.R.transpose() * (ft.p - f.p));  // F/T origin in the foot frame
      ft_R_foot_.push_back(f.R.transpose() * ft.R);           // F/T axes in the foot frame
    }
  }
  ~MujocoTruth() { mj_deleteData(copy_); }
  MujocoTruth(const MujocoTruth&) = delete;
  MujocoTruth& operator=(const MujocoTruth&) = delete;

  void Update() {
    const mjModel* m = sim_.plant().model();
    mj_copyData(copy_, m, sim_.plant().data());
    mj_rnePostConstraint(m, copy_);
  }
  double position(std::size_t i) const { return copy_->qpos[qpos_[i]]; }
  double velocity(std::size_t i) const { return copy_->qvel[dof_[i]]; }
  double torque(std::size_t i) const { return copy_->qfrc_applied[dof_[i]]; }
  Eigen::Matrix<double, 6, 1> wrench(std::size_t k) const {
    const mjModel* m = sim_.plant().model();
    const int b = foot_body_[k];
    const Eigen::Map<const Eigen::Matrix<double, 6, 1>> cfrc(copy_->cfrc_ext + 6 * b);
    const Eigen::Vector3d n_c = cfrc.head<3>(), f = cfrc.tail<3>();
    const Eigen::Map<const Eigen::Vector3d> c(copy_->subtree_com + 3 * m->body_rootid[b]);
    const Eigen::Map<const Eigen::Vector3d> x(copy_->xpos + 3 * b);
    const Eigen::Matrix3d R =
        Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(copy_->xmat + 9 * b);
    const Eigen::Vector3d p = x + R * ft_in_foot_[k];  // the F/T frame's origin in the world
    const Eigen::Vector3d n_p = n_c + (c - p).cross(f);
    const Eigen::Matrix3d R_ft = R * ft_R_foot_[k];
    Eigen::Matrix<double, 6, 1> w;
    w << R_ft.transpose() * f, R_ft.transpose() * n_p;
    return w;
  }
  double total_normal_force() const {
    double fz = 0;
    for (std::size_t k = 0; k < foot_body_.size(); ++k)
      fz += copy_->cfrc_ext[6 * foot_body_[k] + 5];
    return fz;
  }

 private:
  const SimulatedRobot& sim_;
  mjData* copy_ = nullptr;
  std::vector<int> qpos_, dof_, foot_body_;
  std::vector<Eigen::Vector3d> ft_in_foot_;
  std::vector<Eigen::Matrix3d> ft_R_foot_;
};

// The spec's quantisation of each channel, from the drivers' configuration: the largest rounding
// error (half a count) and the rounding noise's standard deviation (count/√12).
struct Quantum {
  double position, velocity, torque;
  std::array<double, 6> wrench;  // per component: ½ Σ_j |C_ij| (every gauge rounds by ≤ ½ count)
  std::array<double, 6> wrench_rms;  // √(Σ_j C_ij² / 12)
};
Quantum QuantumOf(const drivers::DriverConfig& d, std::size_t joint, std::size_t cell) {
  Quantum q{};
  const auto& j = d.joints[joint];
  q.position = std::numbers::pi / static_cast<double>(j.encoder.counts_per_rev);
  q.velocity = 0.5 * j.encoder.velocity_lsb;
  q.torque = 0.5 * j.torque.nm_per_count;
  if (cell < d.ft_cells.size()) {
    const auto& C = d.ft_cells[cell].ft.calibration;
    for (int i = 0; i < 6; ++i) {
      q.wrench[i] = 0.5 * C.row(i).cwiseAbs().sum();
      q.wrench_rms[i] = std::sqrt(C.row(i).squaredNorm() / 12.0);
    }
  }
  return q;
}

// The simulated robot with heft's driver loop reading its buses.
struct SimLoop {
  SimLoop(const SimOptions& opt, const SimRig& s)
      : sim(opt, s.drivers, s.model), loop(s.drivers, buses, buffer) {}
  // Simulated millisecond k (from 1): the devices send, the loop ticks.
  void Step(int k) {
    sim.Step(nullptr);
    loop.Tick(k * kMs);
  }
  SimulatedRobot sim;
  hal::StateBuffer buffer;
  const std::vector<hal::CanTransport*> buses = sim.buses();
  drivers::DriverLoop loop;
};

// Steps the simulator `steps` ms with the driver loop reading its buses; `check` sees each decoded
// sample next to MuJoCo's state.
template <typename Check>
void RunWithDrivers(const SimOptions& opt, const SimRig& s, int steps, Check check) {
  SimLoop rig(opt, s);
  MujocoTruth truth(rig.sim, s);
  for (int k = 1; k <= steps; ++k) {
    rig.Step(k);
    truth.Update();
    check(k, rig.loop.last_sample(), truth);
  }
  EXPECT_EQ(rig.loop.counters().rejected_total(), 0u);
}

void DecodesWithinQuantisation(const std::string& scenario, int steps) {
  const SimRig s = LoadSetup(scenario);
  const std::size_t nj = s.drivers.joints.size(), nc = s.drivers.ft_cells.size();
  std::array<double, 4> worst{};  // position, velocity, torque, wrench: error / its bound
  double worst_support = 0, lightest_foot = 1e9;
  RunWithDrivers(
      Options(scenario, false), s, steps,
      [&](int k, const hal::RobotStateSample& out, const MujocoTruth& truth) {
        ASSERT_EQ(out.num_joints, nj);
        for (std::size_t i = 0; i < nj; ++i) {
          const Quantum q = QuantumOf(s.drivers, i, 0);
          ASSERT_TRUE(out.joints[i].encoder.ok() && out.joints[i].torque_sensor.ok())
              << k << " " << i;
          ASSERT_LT(std::abs(truth.velocity(i)), 32767 * s.drivers.joints[i].encoder.velocity_lsb)
              << "joint " << s.drivers.joints[i].joint << " beyond the encoder's velocity range";
          const double ep = std::abs(out.joints[i].position - truth.position(i));
          const double ev = std::abs(out.joints[i].velocity - truth.velocity(i));
          const double et = std::abs(out.joints[i].torque - truth.torque(i));
          ASSERT_LE(ep, q.position * (1 + 1e-6))
              << s.drivers.joints[i].joint << " at " << k << " ms";
          ASSERT_LE(ev, q.velocity * (1 + 1e-6))
              << s.drivers.joints[i].joint << " at " << k << " ms";
          ASSERT_LE(et, q.torque * (1 + 1e-6)) << s.drivers.joints[i].joint << " at " << k << " ms";
          worst[0] = std::max(worst[0], ep / q.position);
          worst[1] = std::max(worst[1], ev / q.velocity);
          worst[2] = std::max(worst[2], et / q.torque);
        }
        ASSERT_EQ(out.num_wrenches, nc);
        for (std::size_t c = 0; c < nc; ++c) {
          const Quantum q = QuantumOf(s.drivers, 0, c);
          const auto w = truth.wrench(c);
          ASSERT_TRUE(out.wrenches[c].health.ok());
          for (int i = 0; i < 6; ++i) {
            const double e = std::abs(out.wrenches[c].wrench[i] - w[i]);
            ASSERT_LE(e, q.wrench[i] * (1 + 1e-6) + 1e-9)
                << "cell " << c << " component " << i << " at " << k << " ms: " << w.transpose();
            worst[3] = std::max(worst[3], e / q.wrench[i]);
          }
        }
        if (nc > 0) worst_support = std::max(worst_support, truth.total_normal_force());
        for (std::size_t c = 0; c < nc; ++c)
          lightest_foot = std::min(lightest_foot, truth.wrench(c)[2]);
      });
  std::printf(
      "%s, %d ms without noise: worst decode error / half an LSB: position %.3f, velocity %.3f, "
      "torque %.3f; wrench / (½ Σ|C_ij|) %.3f; total normal force up to %.0f N, one foot down to "
      "%.0f N\n",
      scenario.c_str(), steps, worst[0], worst[1], worst[2], worst[3], worst_support,
      nc > 0 ? lightest_foot : 0.0);
  if (nc > 0) {
    EXPECT_GT(worst_support, 500.0);  // the feet carry the robot: contacts are checked
    EXPECT_LT(lightest_foot, 1.0);    // and a foot leaves the floor: a step is checked too
  }
}

TEST(SimBackend, EmulatedFramesDecodeToMujocosStateWithinQuantisationFixedBase) {
  DecodesWithinQuantisation("dumbbell-curl", 1500);
}

TEST(SimBackend, EmulatedFramesDecodeToMujocosStateWithinQuantisationFloatingBase) {
  // Standing 1 s, shifting the weight 1.5 s, then a foot lifts (0.35 s) and touches down again.
  DecodesWithinQuantisation("step-in-place", 3300);
}

TEST(SimBackend, DecodedErrorsHaveTheConfiguredNoisesStatistics) {
  const std::string scenario = "step-in-place";
  const SimRig s = LoadSetup(scenario);
  const SimOptions opt = Options(scenario, true);
  const std::size_t nj = s.drivers.joints.size(), nc = s.drivers.ft_cells.size();
  ASSERT_EQ(nc, 2u);
  // Sums of squared errors: position, velocity, torque, force, moment.
  std::array<double, 5> sq{}, expected_var{};
  std::array<std::size_t, 5> n{};
  RunWithDrivers(
      opt, s, 1500, [&](int, const hal::RobotStateSample& out, const MujocoTruth& truth) {
        for (std::size_t i = 0; i < nj; ++i) {
          const Quantum q = QuantumOf(s.drivers, i, 0);
          const double lsb_p = 2 * q.position, lsb_v = 2 * q.velocity, lsb_t = 2 * q.torque;
          sq[0] += std::pow(out.joints[i].position - truth.position(i), 2);
          sq[1] += std::pow(out.joints[i].velocity - truth.velocity(i), 2);
          sq[2] += std::pow(out.joints[i].torque - truth.torque(i), 2);
          expected_var[0] += lsb_p * lsb_p / 12;
          expected_var[1] += opt.noise.velocity * opt.noise.velocity + lsb_v * lsb_v / 12;
          expected_var[2] += opt.noise.joint_torque * opt.noise.joint_torque + lsb_t * lsb_t / 12;
          n[0]++, n[1]++, n[2]++;
        }
        for (std::size_t c = 0; c < nc; ++c) {
          const Quantum q = QuantumOf(s.drivers, 0, c);
          const auto w = truth.wrench(c);
          for (int i = 0; i < 6; ++i) {
            const int kind = i < 3 ? 3 : 4;
            const double sigma = i < 3 ? opt.noise.force : opt.noise.moment;
            sq[kind] += std::pow(out.wrenches[c].wrench[i] - w[i], 2);
            expected_var[kind] += sigma * sigma + q.wrench_rms[i] * q.wrench_rms[i];
            n[kind]++;
          }
        }
      });
  const char* names[] = {"position", "velocity", "torque", "force", "moment"};
  for (int k = 0; k < 5; ++k) {
    const double rms = std::sqrt(sq[k] / static_cast<double>(n[k]));
    const double expected = std::sqrt(expected_var[k] / static_cast<double>(n[k]));
    std::printf("%s: RMS decode error %.4g, configured noise ⊕ quantisation %.4g (ratio %.3f)\n",
                names[k], rms, expected, rms / expected);
    EXPECT_NEAR(rms / expected, 1.0, 0.2) << names[k];
  }
}

TEST(SimBackend, BurstsLoseEveryFrameOnTheirBusAndNothingElse) {
  const std::string scenario = "dumbbell-curl";  // arms on can0, legs on can1
  const SimRig s = LoadSetup(scenario);
  SimOptions opt = Options(scenario, true);
  SimFault burst;
  burst.kind = SimFault::Kind::kBurst;
  burst.device = 1;
  burst.from =
      0.1005;         // between two steps' times (the fault windows compare the time before a step)
  burst.to = 0.1055;  // 5 ms: longer than the 3 ms timeout
  burst.repeat = 3;
  burst.period = 0.050;
  opt.faults = {burst};
  SimLoop rig(opt, s);
  std::size_t on_can1 = 0;
  for (const auto& j : s.drivers.joints) on_can1 += j.bus == 1;
  int stale_ticks = 0;
  for (int k = 1; k <= 300; ++k) {
    rig.Step(k);
    const hal::RobotStateSample& out = rig.loop.last_sample();
    for (std::size_t i = 0; i < s.drivers.joints.size(); ++i) {
      if (s.drivers.joints[i].bus == 0) {
        ASSERT_TRUE(out.joints[i].encoder.ok() && out.joints[i].torque_sensor.ok()) << k;
      } else if (!out.joints[i].encoder.ok()) {
        ++stale_ticks;
        ASSERT_EQ(out.joints[i].encoder.state, hal::ChannelState::kStale);
      }
    }
  }
  // Each 5 ms burst: every can1 frame lost; the channels go stale for 2 ticks (ages 4 and 5 ms)
  // and recover with the next frame; the counter gaps account for every lost sample.
  const SimBusCounters& c1 = rig.sim.bus_counters()[1];
  EXPECT_EQ(c1.lost_burst, 3u * 5u * 2u * on_can1);
  EXPECT_EQ(rig.sim.bus_counters()[0].lost_burst, 0u);
  EXPECT_EQ(rig.loop.counters().lost_samples, c1.lost_burst);
  EXPECT_EQ(stale_ticks, static_cast<int>(3 * 2 * on_can1));
  EXPECT_EQ(rig.loop.counters().stale_events, 3u * 2u * on_can1);  // encoders and torque sensors
  EXPECT_TRUE(rig.loop.last_sample().joints[s.drivers.joints.size() - 1].encoder.ok());
}

TEST(SimBackend, RandomFrameLossIsDeterministicForTheSeedAndLeavesTheNoiseAlone) {
  const std::string scenario = "dumbbell-curl";
  const SimRig s = LoadSetup(scenario);
  auto run = [&](std::uint64_t seed, double loss) {
    SimOptions opt = Options(scenario, true);
    opt.seed = seed;
    if (loss > 0) {
      SimFault f;
      f.kind = SimFault::Kind::kLoss;
      f.device = -1;
      f.probability = loss;
      f.to = 1e6;
      opt.faults = {f};
    }
    SimLoop rig(opt, s);
    std::vector<double> torques;
    for (int k = 1; k <= 200; ++k) {
      rig.Step(k);
      torques.push_back(rig.loop.last_sample().joints[6].torque);
    }
    return std::make_pair(
        rig.sim.bus_counters()[0].lost_random + rig.sim.bus_counters()[1].lost_random, torques);
  };
  const auto a = run(7, 0.05), b = run(7, 0.05), c = run(8, 0.05), clean = run(7, 0.0);
  EXPECT_EQ(a.first, b.first);
  EXPECT_EQ(a.second, b.second);
  EXPECT_NE(a.first, c.first);
  EXPECT_GT(a.first, 0u);
  EXPECT_EQ(clean.first, 0u);
  // Where a sample arrived, the loss did not change the sensor noise drawn for it.
  int same = 0;
  for (std::size_t k = 0; k < a.second.size(); ++k) same += a.second[k] == clean.second[k];
  EXPECT_GT(same, 150);
}

TEST(SimBackend, CandumpLogReplaysThroughTheDriversToTheLiveSamples) {
  const std::string scenario = "step-in-place";  // joints and both F/T cells
  const SimRig s = LoadSetup(scenario);
  const std::string path = testing::TempDir() + "/sim_backend_candump.log";
  constexpr std::int64_t kEpoch = 1'700'000'000LL * 1'000'000'000LL;
  SimOptions opt = Options(scenario, true);
  opt.candump = path;
  opt.candump_epoch_ns = kEpoch;
  // Faults in the log too: random loss, a burst, and a bus-off the supervisor restarts.
  SimFault loss, burst, off;
  loss.kind = SimFault::Kind::kLoss;
  loss.device = -1;
  loss.probability = 0.02;
  loss.to = 1e6;
  burst.kind = SimFault::Kind::kBurst;
  burst.device = 0;
  burst.from = 0.1005;
  burst.to = 0.1045;
  off.kind = SimFault::Kind::kBusOff;
  off.device = 1;
  off.from = 0.2005;
  off.to = 0.2105;
  opt.faults = {loss, burst, off};
  constexpr int kSteps = 400;
  std::vector<hal::RobotStateSample> live;
  drivers::DriverCounters live_counters;
  std::uint64_t live_bus_off = 0, written = 0;
  {
    SimLoop rig(opt, s);
    drivers::BusSupervisor supervisor(rig.loop, rig.buses);
    for (int k = 1; k <= kSteps; ++k) {
      rig.Step(k);
      live.push_back(rig.loop.last_sample());
      if (k % 20 == 0) supervisor.Poll();
    }
    EXPECT_EQ(supervisor.restarts(), 1u);
    live_counters = rig.loop.counters();
    live_bus_off = rig.loop.bus(1).bus_off;
    rig.sim.CloseCandump();
    written = rig.sim.candump()->written();
    EXPECT_EQ(rig.sim.candump()->dropped(), 0u);
    std::uint64_t frames = 0;
    for (const auto& c : rig.sim.bus_counters()) frames += c.frames;
    EXPECT_EQ(written, frames);
  }
  EXPECT_EQ(live_bus_off, 1u);
  EXPECT_GT(live_counters.lost_samples, 100u);
  // The log, read back and replayed bus by bus through a fresh driver loop.
  std::ifstream in(path);
  std::vector<drivers::CandumpError> errors;
  const auto records = drivers::ReadCandump(in, errors);
  ASSERT_TRUE(errors.empty()) << errors.front().line << ": " << errors.front().reason;
  ASSERT_EQ(records.size(), written);
  drivers::CandumpReplay r0("can0", records), r1("can1", records);
  std::vector<hal::CanTransport*> replay{&r0, &r1};
  hal::StateBuffer buffer;
  drivers::DriverLoop loop(s.drivers, replay, buffer);
  for (int k = 1; k <= kSteps; ++k) {
    r0.AdvanceTo(kEpoch + k * kMs);
    r1.AdvanceTo(kEpoch + k * kMs);
    loop.Tick(k * kMs);
    const hal::RobotStateSample& a = live[static_cast<std::size_t>(k - 1)];
    const hal::RobotStateSample& b = loop.last_sample();
    for (std::size_t i = 0; i < s.drivers.joints.size(); ++i) {
      ASSERT_EQ(a.joints[i].position, b.joints[i].position) << k << " " << i;
      ASSERT_EQ(a.joints[i].velocity, b.joints[i].velocity) << k << " " << i;
      ASSERT_EQ(a.joints[i].torque, b.joints[i].torque) << k << " " << i;
      ASSERT_EQ(a.joints[i].encoder.state, b.joints[i].encoder.state) << k << " " << i;
      ASSERT_EQ(a.joints[i].torque_sensor.state, b.joints[i].torque_sensor.state) << k << " " << i;
      ASSERT_EQ(a.joints[i].encoder.lost_samples, b.joints[i].encoder.lost_samples) << k;
    }
    for (std::size_t c = 0; c < s.drivers.ft_cells.size(); ++c) {
      ASSERT_EQ(a.wrenches[c].health.state, b.wrenches[c].health.state) << k << " " << c;
      for (int i = 0; i < 6; ++i) ASSERT_EQ(a.wrenches[c].wrench[i], b.wrenches[c].wrench[i]) << k;
    }
  }
  EXPECT_TRUE(r0.done() && r1.done());
  EXPECT_EQ(loop.counters().lost_samples, live_counters.lost_samples);
  EXPECT_EQ(loop.counters().rejected_total(), live_counters.rejected_total());
  EXPECT_EQ(loop.bus(1).bus_off, live_bus_off);  // the error frame is in the log
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace heft::sim

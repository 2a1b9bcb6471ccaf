// Persistence of the last settled estimate (heft/host/persistence.hpp, host.persistence): the
// estimator's start from given parameters and covariance, the file (atomic write, exact round
// trip, malformed files named), which files are refused and why, what counts as settled, the
// model hash; then heft-sim killed with SIGKILL mid-run while a reader of its shared-memory
// hand-off polls (never a torn, non-finite or dead writer's estimate; the writer reported gone) and
// restarted on the same file: its first handed estimate is the persisted one, and a stale or
// mismatched file is refused with a line naming why.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "heft/config/yaml.hpp"
#include "heft/dynamics/model.hpp"
#include "heft/estimator/inertial_estimator.hpp"
#include "heft/hal/shared_hand_off.h"
#include "heft/host/persistence.hpp"
#include "heft/host/telemetry_table.hpp"
#include "heft/test/config_builder.hpp"
#include "heft/test/heftd_run.hpp"

namespace heft::host {
namespace {

using heft::test::ConfigBuilder;
using ::testing::HasSubstr;

const std::string kChainUrdf = HEFT_CHAIN_URDF;

dynamics::Model Chain() {
  return dynamics::LoadModelFromUrdfFile(kChainUrdf, dynamics::ModelOptions{});
}

// A symmetric positive definite 10×10 block with correlations.
Eigen::Matrix<double, 10, 10> Covariance(double scale) {
  Eigen::Matrix<double, 10, 10> a;
  for (int r = 0; r < 10; ++r)
    for (int c = 0; c < 10; ++c) a(r, c) = std::sin(1.0 + r * 10 + c);
  return scale * (a * a.transpose() + Eigen::Matrix<double, 10, 10>::Identity());
}

// Fails if the estimator does not start from the given π (handed on at once) and covariance
// (times the inflation, in π: G⁻¹ΣG⁻ᵀ mapped back by G·Gᵀ; the hand-off's within 1 % at a small
// spread), caps none of its variances at the prior's, for the EKF and the KF, or if it accepts an
// unusable start (covariance not positive definite, π inconsistent or outside the divergence
// bounds) or changes anything when it refuses one.
TEST(StartFrom, GivenParametersAndInflatedCovariance) {
  const dynamics::Model model = Chain();
  for (const auto kind : {estimator::FilterKind::kLogCholesky, estimator::FilterKind::kKalman}) {
    estimator::EstimatorConfig cfg;
    cfg.filter = kind;
    cfg.bodies = {"link2", "slider"};
    estimator::InertialEstimator e(model, cfg);
    const Eigen::VectorXd nominal = e.nominal();
    const Eigen::VectorXd pi = 1.5 * nominal;  // heavier, same shape: consistent
    // A spread small enough that neither the prior's cap nor the map's curvature matters.
    Eigen::MatrixXd cov(10, 20);
    cov << Covariance(1e-11), Covariance(2e-12);
    ASSERT_TRUE(e.StartFrom(pi, cov, 10.0));
    EXPECT_TRUE(e.handed().isApprox(pi, 1e-12));
    EXPECT_TRUE(e.estimate().isApprox(pi, 1e-12));
    // The state's covariance, mapped to π to first order, is the given one inflated; the
    // hand-off's (BodyCovariance) adds the map's curvature, second order at this spread.
    Eigen::MatrixXd first_order(20, 20);
    e.filter().ParameterCovariance(first_order);
    EXPECT_TRUE((first_order.block<10, 10>(0, 0).isApprox(10.0 * cov.leftCols<10>(), 1e-8)))
        << first_order.block<10, 10>(0, 0) - 10.0 * cov.leftCols<10>();
    EXPECT_TRUE((first_order.block<10, 10>(10, 10).isApprox(10.0 * cov.rightCols<10>(), 1e-8)));
    EXPECT_TRUE(e.parameter_covariance().isApprox(10.0 * cov, 1e-2))
        << e.parameter_covariance() - 10.0 * cov;
    // A spread wider than the prior's: no state's variance above a fresh start's.
    Eigen::MatrixXd wide(10, 20);
    wide << Covariance(1e-2), Covariance(1e-2);
    ASSERT_TRUE(e.StartFrom(pi, wide, 10.0));
    const estimator::InertialEstimator fresh(model, cfg);
    const Eigen::VectorXd p0 = fresh.filter().covariance().diagonal();
    const Eigen::VectorXd p = e.filter().covariance().diagonal();
    EXPECT_TRUE((p.array() <= p0.array() * (1.0 + 1e-12)).all()) << p.transpose() << "\n"
                                                                 << p0.transpose();
    EXPECT_TRUE((p.array() >= p0.array() * (1.0 - 1e-12)).any());  // the cap did bind
    ASSERT_TRUE(e.StartFrom(pi, cov, 10.0));

    Eigen::MatrixXd bad = cov;
    bad(3, 3) = -1.0;  // not positive definite
    EXPECT_FALSE(e.StartFrom(nominal, bad, 10.0));
    Eigen::VectorXd heavy = nominal;
    heavy.head<10>() *= 100.0;  // beyond nominal + max_added_mass (50 kg)
    EXPECT_FALSE(e.StartFrom(heavy, cov, 10.0));
    Eigen::VectorXd negative = nominal;
    negative[0] = -1.0;
    EXPECT_FALSE(e.StartFrom(negative, cov, 10.0));
    EXPECT_FALSE(e.StartFrom(nominal, cov, 0.5));  // an inflation below 1 shrinks it
    EXPECT_TRUE(e.handed().isApprox(pi, 1e-12));   // nothing changed by the refusals
  }
}

PersistedEstimate Example() {
  PersistedEstimate p;
  p.written_unix = 1764067000.125;
  p.model_hash = "fnv1a64:0123456789abcdef";
  p.estimate.num_links = 2;
  const char* names[] = {"left_forearm", "torso"};
  for (std::size_t k = 0; k < 2; ++k) {
    std::snprintf(p.estimate.links[k].name.data(), 48, "%s", names[k]);
    for (std::size_t i = 0; i < 10; ++i)
      p.estimate.links[k].parameters[i] = 1.0 / 3.0 + static_cast<double>(i + 7 * k);
    for (std::size_t i = 0; i < 100; ++i)
      p.estimate.links[k].covariance[i] = std::exp(-static_cast<double>(i)) * 1e-3;
  }
  return p;
}

std::string TempPath(const std::string& what) {
  return testing::TempDir() + "heft_persist_" + what + "_" + std::to_string(getpid()) + ".yaml";
}

// Fails if a value changes between writing and reading (17 significant digits: exact), if the
// write leaves its temporary file or a file others may read, or if a malformed file is read or
// refused without its file, line and key.
TEST(EstimateFile, RoundTripIsExactAndMalformedFilesAreNamed) {
  const std::string path = TempPath("file");
  const PersistedEstimate p = Example();
  WriteEstimateFile(path, p);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600U);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  const PersistedEstimate r = ReadEstimateFile(path);
  EXPECT_DOUBLE_EQ(r.written_unix, p.written_unix);
  EXPECT_EQ(r.model_hash, p.model_hash);
  ASSERT_EQ(r.estimate.num_links, 2);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_STREQ(r.estimate.links[k].name.data(), p.estimate.links[k].name.data());
    EXPECT_EQ(r.estimate.links[k].parameters, p.estimate.links[k].parameters);
    EXPECT_EQ(r.estimate.links[k].covariance, p.estimate.links[k].covariance);
  }

  // The written file edited through yaml-cpp (heft/test/config_builder.hpp), each edit into a file
  // of its own; ReadEstimateFile's refusal, or "accepted".
  int edits = 0;
  std::string edited;
  auto refused = [&](const std::function<void(ConfigBuilder&)>& edit) {
    ConfigBuilder file(path);
    edit(file);
    edited = file.Write("edit" + std::to_string(++edits) + ".yaml");
    try {
      ReadEstimateFile(edited);
    } catch (const config::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  // 101 numbers: refused at the list's line and column in the edited file, with its key.
  const std::string longer =
      refused([](ConfigBuilder& f) { f.Append("links[0].covariance", "1"); });
  EXPECT_THAT(longer, HasSubstr(edited + ":" + heft::test::Where(edited, "links[0].covariance") +
                                ": links[0].covariance"));
  EXPECT_THAT(refused([](ConfigBuilder& f) { f.Set("links[0].parameters[0]", ".nan"); }),
              HasSubstr("links[0].parameters"));
  EXPECT_THAT(refused([](ConfigBuilder& f) { f.Set("format", "2"); }), HasSubstr("format"));
  const std::string renamed = refused([](ConfigBuilder& f) {
    f.Set("model_hush", f.Get("model_hash").Scalar()).Remove("model_hash");
  });
  EXPECT_THAT(renamed, HasSubstr(edited));
  EXPECT_EQ(refused([](ConfigBuilder&) {}), "accepted");  // the edits' copy itself reads
  std::filesystem::remove(path);
}

// Fails if a file that is too old, from the future (a clock change), for other links or another
// nominal model is accepted, or a good one refused.
TEST(EstimateFile, RefusedWhenStaleOrMismatchedWithTheReason) {
  const PersistedEstimate p = Example();
  const std::vector<std::string> links{"left_forearm", "torso"};
  const double now = p.written_unix + 30.0;
  EXPECT_EQ(RefuseReason(p, now, 600.0, links, p.model_hash), "");
  EXPECT_THAT(RefuseReason(p, p.written_unix + 601.0, 600.0, links, p.model_hash),
              HasSubstr("older than host.persistence.max_age 600 s"));
  EXPECT_THAT(RefuseReason(p, p.written_unix - 3600.0, 600.0, links, p.model_hash),
              HasSubstr("in the future"));
  EXPECT_THAT(RefuseReason(p, now, 600.0, {"torso", "left_forearm"}, p.model_hash),
              HasSubstr("are not this configuration's estimator.links [torso, left_forearm]"));
  EXPECT_THAT(RefuseReason(p, now, 600.0, {"left_forearm"}, p.model_hash),
              HasSubstr("estimator.links"));
  EXPECT_THAT(RefuseReason(p, now, 600.0, links, "fnv1a64:0000000000000000"),
              HasSubstr("the nominal model changed"));
}

// Fails if an estimate counts as settled while the estimator is not estimating, holds, is rate
// limited since the previous look, has not updated since, or carries a non-finite number.
TEST(EstimateFile, SettledMeansEstimatingUpdatedAndNotRateLimited) {
  hal::InertialEstimate before = Example().estimate;
  before.status.state = hal::EstimatorState::kEstimating;
  before.status.updates = 100;
  before.status.rate_limited = 7;
  hal::InertialEstimate e = before;
  e.status.updates = 130;
  EXPECT_TRUE(Settled(e, before));
  EXPECT_FALSE(Settled(before, before));  // no update since
  hal::InertialEstimate x = e;
  x.status.rate_limited = 8;
  EXPECT_FALSE(Settled(x, before));
  x = e;
  x.status.state = hal::EstimatorState::kHolding;
  EXPECT_FALSE(Settled(x, before));
  x = e;
  x.status.state = hal::EstimatorState::kCalibratingBias;
  EXPECT_FALSE(Settled(x, before));
  x = e;
  x.links[1].covariance[3] = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(Settled(x, before));
}

// Fails if the hash does not change with a nominal parameter or a joint axis, or changes without
// a change.
TEST(EstimateFile, ModelHashFollowsTheNominalModel) {
  dynamics::Model m = Chain();
  const std::string h = ModelHash(m);
  EXPECT_EQ(ModelHash(Chain()), h);
  EXPECT_THAT(h, ::testing::MatchesRegex("fnv1a64:[0-9a-f]{16}"));
  dynamics::Model heavier = m;
  heavier.bodies[1].parameters *= 1.0001;
  EXPECT_NE(ModelHash(heavier), h);
  dynamics::Model turned = m;
  turned.bodies[1].axis = -turned.bodies[1].axis;
  EXPECT_NE(ModelHash(turned), h);
}

// ---- heft-sim killed and restarted on the same file ---------------------------------------

// The first telemetry row of a lockstep run: left_forearm's handed mass and the filter's own, and
// the control ticks up to it (its time over the 3 ms period): the hand-off moves by at most one
// tick's rate limit per tick, and the filter's estimate is the start's until its first update.
struct FirstRow {
  double handed = 0.0, estimate = 0.0;
  long ticks = 0;
};
FirstRow ReadFirstRow(const std::string& csv) {
  const TelemetryTable table = ReadTelemetryTable(csv);
  return {table.number(0, "left_forearm_mass_kg"), table.number(0, "left_forearm_est_mass_kg"),
          std::lround(table.number(0, "t_ns") / 3e6)};
}

// dumbbell-curl persisting into the directory of `builder` (its own temporary one), and what the
// steps below check against.
struct PersistenceRun {
  std::string dir, state, shm, config, csv, log;
  double nominal = 0.0;   // the forearm's nominal mass
  double one_tick = 0.0;  // how far the handed mass may move in the first control tick
};
PersistenceRun SetUpPersistenceRun(ConfigBuilder& builder) {
  PersistenceRun s;
  s.dir = builder.dir();
  s.state = s.dir + "/state.yaml";
  // The hand-off in shared memory too, read like the controller reads it while heft-sim runs and
  // after the SIGKILL.
  s.shm = "heft_persist_kill_" + std::to_string(getpid());
  s.config = builder.Set("host.persistence.file", s.state)
                 .Set("host.persistence.interval", "0.5")
                 .Set("host.shm", s.shm)
                 .Write("config.yaml");
  s.csv = s.dir + "/telemetry.csv";
  // The forearm's nominal mass, and how far the handed mass may move in the first control tick:
  // the configuration's mass rate limit (600 kg/s) over one 3 ms period.
  const dynamics::Model urdf = dynamics::LoadModelFromUrdfFile(
      std::string(HEFT_CONFIG_DIR) + "/robots/heft_humanoid_fixed.urdf", dynamics::ModelOptions{});
  s.nominal = urdf.bodies[urdf.body_index("left_forearm")].parameters[0];
  s.one_tick = 600.0 * 0.003;
  s.log = s.dir + "/run.log";
  return s;
}

// heft-sim on `config` for 60 s (lockstep, faster than real time), its output into `log`.
pid_t StartHeftSim(const std::string& config, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::FILE* f = std::freopen(log.c_str(), "w", stdout);
    (void)f;
    dup2(fileno(stdout), fileno(stderr));
    execl(HEFT_HEFT_SIM, HEFT_HEFT_SIM, "--config", config.c_str(), "--duration", "60",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// The controller's reader of the hand-off in shared memory, and what it handed on.
struct HandOffWatch {
  explicit HandOffWatch(const std::string& shm) {
    heft_handoff_reader_init(&reader, shm.c_str(), HEFT_HANDOFF_DEFAULT_MAX_AGE_NS);
  }
  // One poll of the controller's reader: every estimate it hands on is whole, finite and newer.
  std::pair<int, std::int64_t> Poll() {
    heft_inertial_estimate e;
    const std::int64_t now = heft_handoff_now_ns();
    const int result = heft_handoff_reader_poll(&reader, now, &e);
    if (result == HEFT_HANDOFF_OK) {
      ++live;
      bool whole = e.num_links == 1 && e.sequence >= last_sequence;
      for (double x : e.links[0].parameters) whole = whole && std::isfinite(x);
      for (double x : e.links[0].covariance) whole = whole && std::isfinite(x);
      bad += !whole;
      last_sequence = e.sequence;
    }
    return std::make_pair(result, now);
  }
  heft_handoff_reader reader;
  int live = 0, bad = 0;
  std::uint64_t last_sequence = 0;
};

// Polls the hand-off until the file `state` exists (60 s at most), then 0.6 s more (one more
// write, probably); returns the wall time the file took to appear [s].
double PollUntilPersisted(HandOffWatch& watch, const std::string& state) {
  const auto t0 = std::chrono::steady_clock::now();
  while (!std::filesystem::exists(state) &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60)) {
    watch.Poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const double appeared =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto end = t0 + std::chrono::duration<double>(appeared + 0.6);
       std::chrono::steady_clock::now() < end;)  // one more write, probably
    watch.Poll(), std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return appeared;
}

// SIGKILL mid-run: the reader never hands on the dead writer's estimate later than its age
// bound after the kill, and says GONE (a zombie first, then no such process). Then the killed
// heft-sim reaped, the reader closed and what it handed on checked.
void KillAndCheckTheHandOff(pid_t pid, HandOffWatch& watch, const std::string& shm) {
  const std::int64_t killed = heft_handoff_now_ns();
  kill(pid, SIGKILL);
  std::int64_t gone_at = 0;
  while (gone_at == 0 && heft_handoff_now_ns() - killed < 1'000'000'000) {
    const auto [result, now] = watch.Poll();
    if (result == HEFT_HANDOFF_OK)
      EXPECT_LE(now - killed, HEFT_HANDOFF_DEFAULT_MAX_AGE_NS) << "a dead heft-sim handed on";
    else if (result == HEFT_HANDOFF_GONE)
      gone_at = now;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  int status = 0;
  pid_t reaped = -1;
  do reaped = waitpid(pid, &status, 0);
  while (reaped < 0 && errno == EINTR);
  ASSERT_EQ(reaped, pid) << "waitpid: " << std::strerror(errno);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
  EXPECT_EQ(watch.Poll().first, HEFT_HANDOFF_GONE);
  heft_handoff_reader_close(&watch.reader);
  shm_unlink(("/" + shm).c_str());
  EXPECT_GT(watch.live, 100) << "the reader never saw heft-sim live";
  EXPECT_EQ(watch.bad, 0) << "torn, non-finite or older estimates handed on";
  ASSERT_NE(gone_at, 0) << "the killed heft-sim was never reported gone";
  EXPECT_LE(gone_at - killed, HEFT_HANDOFF_DEFAULT_MAX_AGE_NS + 10'000'000);
  std::printf("[   info   ] %d live hand-off reads, none bad; gone %.1f ms after SIGKILL\n",
              watch.live, 1e-6 * static_cast<double>(gone_at - killed));
}

// A restart's first row: the filter starts from `kg` exactly (to the file's 9 digits); the
// hand-off within the ticks' rate limit, at most 10 ticks (the run is 0.03 s in lockstep).
void ExpectFirst(const PersistenceRun& s, const FirstRow& first, double kg,
                 const std::string& output) {
  EXPECT_GE(first.ticks, 1) << output;
  EXPECT_LE(first.ticks, 10) << output;
  EXPECT_NEAR(first.estimate, kg, 1e-6 * kg) << output;
  EXPECT_NEAR(first.handed, kg, static_cast<double>(first.ticks) * s.one_tick) << output;
}

// Restart on the same file: the first handed estimate is the persisted `mass`.
void ExpectRestartStartsFrom(const PersistenceRun& s, double mass) {
  const heft::test::HeftdResult r =
      heft::test::RunHeftSim({"--config", s.config, "--duration", "0.03", "--telemetry", s.csv});
  ASSERT_EQ(r.code, 0) << r.output;
  ExpectFirst(s, ReadFirstRow(s.csv), mass, r.output);
}

// A restart on the persisted file `good` edited through yaml-cpp by `edit`: refused, the first
// handed estimate nominal; returns the run's output (the reason is in the log).
std::string RestartWith(const PersistenceRun& s, const std::string& good,
                        const std::function<void(ConfigBuilder&)>& edit) {
  ConfigBuilder file(good);  // the persisted file edited through yaml-cpp
  edit(file);
  file.WriteTo(s.state);
  const heft::test::HeftdResult r =
      heft::test::RunHeftSim({"--config", s.config, "--duration", "0.03", "--telemetry", s.csv});
  EXPECT_EQ(r.code, 0) << r.output;
  ExpectFirst(s, ReadFirstRow(s.csv), s.nominal, r.output);
  return r.output;
}

// Fails if heft-sim does not persist a settled estimate while it runs (file written atomically,
// so a SIGKILL leaves a whole one), if after the kill a restart on the same file hands on nominal
// instead of the persisted estimate, or if a stale, mismatched or malformed file is used or
// refused without a log line naming why.
TEST(PersistenceOnHeftSim, KilledAndRestartedStartsFromThePersistedEstimate) {
  // dumbbell-curl persisting into its own temporary directory.
  ConfigBuilder builder(std::string(HEFT_CONFIG_DIR) + "/sim/dumbbell-curl.yaml");
  const PersistenceRun s = SetUpPersistenceRun(builder);

  // Run until the file exists (lockstep, faster than real time), then SIGKILL.
  const pid_t pid = StartHeftSim(s.config, s.log);
  HandOffWatch watch(s.shm);
  const double appeared = PollUntilPersisted(watch, s.state);
  ASSERT_NO_FATAL_FAILURE(KillAndCheckTheHandOff(pid, watch, s.shm));
  ASSERT_TRUE(std::filesystem::exists(s.state)) << heft::test::Slurp(s.log);
  const PersistedEstimate persisted = ReadEstimateFile(s.state);  // whole, despite the kill
  const double mass = persisted.estimate.links[0].parameters[0];
  std::printf(
      "[   info   ] state file after %.2f s of wall time; persisted left_forearm mass %.4f kg "
      "(nominal %.3f kg), written_unix %.3f\n",
      appeared, mass, s.nominal, persisted.written_unix);
  std::fflush(stdout);  // before RunHeftSim forks
  ASSERT_GT(std::abs(mass - s.nominal), 2 * s.one_tick) << "the load was not learnt";
  // The killed run's file, kept: every restart below may write its own settled estimate at its
  // clean stop (a 0.03 s run estimates from its sixth millisecond), so the control and the
  // refusals start from this copy, not from what the previous restart left.
  const std::string good = s.state + ".good";
  std::filesystem::copy_file(s.state, good);

  // Restart on the same file: the first handed estimate is the persisted one.
  ASSERT_NO_FATAL_FAILURE(ExpectRestartStartsFrom(s, mass));

  // Refused: the first handed estimate nominal, and the reason in the log (a refused file is not
  // fatal: the line naming why is all the operator gets, so its wording is checked).
  // The control: the file as yaml-cpp writes it back, unedited, is still the persisted estimate.
  ConfigBuilder(good).WriteTo(s.state);
  ASSERT_NO_FATAL_FAILURE(ExpectRestartStartsFrom(s, mass));
  const auto restart_with = [&](const std::function<void(ConfigBuilder&)>& edit) {
    return RestartWith(s, good, edit);
  };
  EXPECT_THAT(restart_with([](ConfigBuilder& f) { f.Set("written_unix", "1000000000"); }),
              HasSubstr("older than host.persistence.max_age 600 s"));
  EXPECT_THAT(restart_with([](ConfigBuilder& f) { f.Set("links[0].name", "right_forearm"); }),
              HasSubstr("its links [right_forearm] are not this configuration's"));
  EXPECT_THAT(restart_with([](ConfigBuilder& f) {
                const std::string hash = f.Get("model_hash").Scalar();  // fnv1a64:<16 hex digits>
                f.Set("model_hash", "fnv1a64:f" + hash.substr(hash.find(':') + 1));
              }),
              HasSubstr("the nominal model changed"));
  EXPECT_THAT(restart_with([](ConfigBuilder& f) { f.Set("links[0].covariance[0]", "x"); }),
              HasSubstr(s.state + ":"));  // file:line:column of the bad number
}

}  // namespace
}  // namespace heft::host

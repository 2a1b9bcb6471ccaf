#include "heft/host/persistence.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <stdexcept>

#include "heft/config/yaml.hpp"
#include "heft/host/schedule.hpp"  // Now()

namespace heft::host {
namespace {

class Fnv1a {
 public:
  void Bytes(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) {
      h_ ^= p[i];
      h_ *= 0x100000001b3ULL;
    }
  }
  void String(const std::string& s) {
    Bytes(s.data(), s.size());
    Bytes("\0", 1);  // "ab"+"c" and "a"+"bc" differ
  }
  void Double(double d) {
    if (d == 0.0) d = 0.0;  // -0 and +0 are the same model
    Bytes(&d, sizeof d);
  }
  template <typename M>
  void Matrix(const M& m) {
    for (Eigen::Index i = 0; i < m.size(); ++i) Double(m.data()[i]);
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string Utc(double unix_seconds) {
  const auto t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string LinkName(const hal::LinkEstimate& l) {
  return std::string(l.name.data(), strnlen(l.name.data(), l.name.size()));
}

[[noreturn]] void Fail(const std::string& path, const char* what, int err) {
  throw std::runtime_error("persisted estimate " + path + ": " + what + ": " + std::strerror(err));
}

}  // namespace

std::string ModelHash(const dynamics::Model& model) {
  Fnv1a h;
  const std::uint8_t floating = model.floating_base ? 1 : 0;
  h.Bytes(&floating, 1);
  h.Matrix(model.gravity);
  for (const dynamics::Body& b : model.bodies) {
    h.String(b.name);
    h.Bytes(&b.parent, sizeof b.parent);
    h.String(b.joint.name);
    const auto type = static_cast<int>(b.joint.type);
    h.Bytes(&type, sizeof type);
    h.Matrix(b.placement_R);
    h.Matrix(b.placement_p);
    h.Matrix(b.axis);
    h.Matrix(b.parameters);
  }
  return fmt::format("fnv1a64:{:016x}", h.value());
}

std::string NominalModelHash(const plugin::PluginConfig& config) {
  dynamics::Model model = dynamics::LoadModelFromUrdfFile(
      config.urdf_path, dynamics::ModelOptions{config.floating_base, config.repair_inertia});
  if (!config.parameters_path.empty())
    plugin::ApplyNominalParameters(config.parameters_path, model);
  return ModelHash(model);
}

void WriteEstimateFile(const std::string& path, const PersistedEstimate& e) {
  std::string text = fmt::format(
      "# heftd's last settled estimate (host.persistence in config/README.md). Written by heftd,\n"
      "# read at its start; not meant to be edited.\n"
      "format: 1\nwritten_unix: {:.3f}\nwritten_utc: \"{}\"\nmodel_hash: \"{}\"\nlinks:\n",
      e.written_unix, Utc(e.written_unix), e.model_hash);
  for (std::size_t k = 0; k < e.estimate.num_links; ++k) {
    const hal::LinkEstimate& l = e.estimate.links[k];
    text += fmt::format("  - name: \"{}\"\n    parameters: [{:.17g}]\n    covariance: [{:.17g}]\n",
                        LinkName(l), fmt::join(l.parameters, ", "), fmt::join(l.covariance, ", "));
  }
  const std::filesystem::path target(path);
  const std::filesystem::path dir =
      target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  const std::string tmp = path + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) Fail(tmp, "open", errno);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      close(fd);
      unlink(tmp.c_str());
      Fail(tmp, "write", err);
    }
    done += static_cast<std::size_t>(n);
  }
  if (fsync(fd) != 0) {
    const int err = errno;
    close(fd);
    unlink(tmp.c_str());
    Fail(tmp, "fsync", err);
  }
  close(fd);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    Fail(path, "rename", err);
  }
  // The rename itself on disk: fsync of the directory.
  const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) Fail(dir.string(), "open directory", errno);
  const int synced = fsync(dfd);
  const int err = errno;
  close(dfd);
  if (synced != 0) Fail(dir.string(), "fsync directory", err);
}

PersistedEstimate ReadEstimateFile(const std::string& path) {
  const config::Document doc = config::Document::Load(path);
  const config::Node root = doc.root();
  root.AllowOnly({"format", "written_unix", "written_utc", "model_hash", "links"});
  if (root.Get<int>("format", {1, 1}) != 1) root["format"].Fail("expected 1");
  PersistedEstimate e;
  e.written_unix = root.Get<double>("written_unix", {0.0, 1e11});
  e.model_hash = root.Get<std::string>("model_hash");
  const config::Node links = root["links"];
  const std::vector<config::Node> list = links.Elements();
  if (list.empty() || list.size() > hal::kMaxEstimatedLinks)
    links.Fail(
        fmt::format("expected 1 to {} links, found {}", hal::kMaxEstimatedLinks, list.size()));
  e.estimate.num_links = static_cast<std::uint16_t>(list.size());
  for (std::size_t k = 0; k < list.size(); ++k) {
    const config::Node& l = list[k];
    l.AllowOnly({"name", "parameters", "covariance"});
    hal::LinkEstimate& out = e.estimate.links[k];
    const std::string name = l.Get<std::string>("name");
    if (name.empty() || name.size() >= out.name.size())
      l["name"].Fail(fmt::format("a link name has 1 to {} characters", out.name.size() - 1));
    std::memcpy(out.name.data(), name.c_str(), name.size() + 1);
    const std::vector<double> pi = l["parameters"].Numbers(10);
    const std::vector<double> cov = l["covariance"].Numbers(100);
    for (std::size_t i = 0; i < 10; ++i) out.parameters[i] = pi[i];
    for (std::size_t i = 0; i < 100; ++i) out.covariance[i] = cov[i];
    for (double x : pi)
      if (!std::isfinite(x)) l["parameters"].Fail("a number that is not finite");
    for (double x : cov)
      if (!std::isfinite(x)) l["covariance"].Fail("a number that is not finite");
  }
  return e;
}

std::string RefuseReason(const PersistedEstimate& e, double now_unix, double max_age,
                         const std::vector<std::string>& links, const std::string& model_hash) {
  const double age = now_unix - e.written_unix;
  if (age > max_age)
    return fmt::format("written {:.0f} s ago ({}), older than host.persistence.max_age {:.0f} s",
                       age, Utc(e.written_unix), max_age);
  if (age < -60.0)
    return fmt::format("written {:.0f} s in the future ({}): the clock changed since", -age,
                       Utc(e.written_unix));
  std::vector<std::string> got;
  for (std::size_t k = 0; k < e.estimate.num_links; ++k)
    got.push_back(LinkName(e.estimate.links[k]));
  if (got != links)
    return fmt::format("its links [{}] are not this configuration's estimator.links [{}]",
                       fmt::join(got, ", "), fmt::join(links, ", "));
  if (e.model_hash != model_hash)
    return fmt::format(
        "the nominal model changed (URDF or robot.parameters): model hash {} in the file, {} now",
        e.model_hash, model_hash);
  return {};
}

bool RestorePersistedEstimate(const PersistenceConfig& config, const std::string& model_hash,
                              plugin::ControllerInterface& plugin, spdlog::logger& log) {
  if (config.file.empty()) return false;
  std::error_code ec;
  if (!std::filesystem::exists(config.file, ec)) {
    log.info("persisted estimate {}: none yet; starting from the nominal model", config.file);
    return false;
  }
  PersistedEstimate e;
  try {
    e = ReadEstimateFile(config.file);
  } catch (const std::exception& ex) {
    log.warn("persisted estimate not used, starting from the nominal model: {}", ex.what());
    return false;
  }
  std::vector<std::string> links;
  for (std::size_t k = 0; k < plugin.num_links(); ++k) links.emplace_back(plugin.link_name(k));
  const std::string why = RefuseReason(e, UnixNow(), config.max_age, links, model_hash);
  if (!why.empty()) {
    log.warn("persisted estimate {} not used, starting from the nominal model: {}", config.file,
             why);
    return false;
  }
  try {
    plugin.start_from(e.estimate, config.covariance_inflation);
  } catch (const std::exception& ex) {
    log.warn("persisted estimate {} not used, starting from the nominal model: {}", config.file,
             ex.what());
    return false;
  }
  std::string masses;
  for (std::size_t k = 0; k < e.estimate.num_links; ++k)
    masses += fmt::format("{}{} m = {:.3f} kg", k ? ", " : "", links[k],
                          e.estimate.links[k].parameters[0]);
  log.info("persisted estimate {}: starting from it (written {:.0f} s ago; {}; covariance × {:g})",
           config.file, UnixNow() - e.written_unix, masses, config.covariance_inflation);
  return true;
}

bool Settled(const hal::InertialEstimate& e, const hal::InertialEstimate& before) noexcept {
  if (e.status.state != hal::EstimatorState::kEstimating || e.status.hold_reason != 0) return false;
  if (e.status.rate_limited != before.status.rate_limited) return false;
  if (e.status.updates == before.status.updates) return false;
  if (e.num_links == 0 || e.num_links > hal::kMaxEstimatedLinks) return false;
  for (std::size_t k = 0; k < e.num_links; ++k) {
    for (double x : e.links[k].parameters)
      if (!std::isfinite(x)) return false;
    for (double x : e.links[k].covariance)
      if (!std::isfinite(x)) return false;
  }
  return true;
}

EstimatePersister::EstimatePersister(PersistenceConfig config, std::string model_hash,
                                     const plugin::HandOffMailbox& hand_off,
                                     std::shared_ptr<spdlog::logger> log)
    : config_(std::move(config)),
      model_hash_(std::move(model_hash)),
      hand_off_(hand_off),
      log_(std::move(log)) {
  thread_ = std::thread([this] { Run(); });
}

EstimatePersister::~EstimatePersister() {
  stop_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
}

void EstimatePersister::Stop() {
  stop_.store(true, std::memory_order_release);  // release: pairs with Run()'s acquire
  if (!thread_.joinable()) return;
  thread_.join();
  Look();
  if (settled_ && settled_->sequence != written_sequence_) Write();
}

void EstimatePersister::Run() {
  // acquire: pairs with Stop()'s release.
  while (!stop_.load(std::memory_order_acquire)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    Look();
    const bool due = Now() - last_write_ns_ >= static_cast<std::int64_t>(config_.interval * 1e9);
    if (settled_ && settled_->sequence != written_sequence_ && due) Write();
  }
}

void EstimatePersister::Look() {
  hal::InertialEstimate e;
  if (!hand_off_.read_latest(e)) return;
  if (previous_ && Settled(e, *previous_)) settled_ = e;
  previous_ = e;
}

void EstimatePersister::Write() {
  PersistedEstimate p;
  p.written_unix = UnixNow();
  p.model_hash = model_hash_;
  p.estimate = *settled_;
  last_write_ns_ = Now();
  try {
    WriteEstimateFile(config_.file, p);
  } catch (const std::exception& ex) {
    if (!write_failed_) log_->warn("{} (keeps trying every {:g} s)", ex.what(), config_.interval);
    write_failed_ = true;
    return;
  }
  if (write_failed_) log_->info("persisted estimate {}: written again", config_.file);
  write_failed_ = false;
  written_sequence_ = settled_->sequence;
  writes_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
}

}  // namespace heft::host

// A heft plugin for the watchdog test (test_watchdog.cpp): the estimator plugin, loaded with
// dlopen and every call forwarded, except that update() — the control thread — hangs while the
// file <configuration>.hang exists. What a plugin stuck in update() or a dead lock does to heftd,
// without a test hook in heftd itself.
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "heft/plugin/controller_interface.hpp"

namespace {

using heft::plugin::ControllerInterface;

class HangingPlugin final : public ControllerInterface {
 public:
  HangingPlugin(void* handle, ControllerInterface* inner, void (*destroy)(ControllerInterface*))
      : handle_(handle), inner_(inner), destroy_(destroy) {}
  ~HangingPlugin() override {
    destroy_(inner_);
    dlclose(handle_);
  }
  const char* name() const noexcept override { return "heft_hanging_test_plugin"; }
  void init(const std::string& config, const heft::plugin::HardwareInterface& hw) override {
    hang_file_ = config + ".hang";
    inner_->init(config, hw);
  }
  void start_from(const heft::hal::InertialEstimate& e, double inflation) override {
    inner_->start_from(e, inflation);
  }
  void configure() override { inner_->configure(); }
  void activate() override { inner_->activate(); }
  heft::plugin::UpdateResult update(std::int64_t time_ns,
                                    std::int64_t period_ns) noexcept override {
    while (access(hang_file_.c_str(), F_OK) == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return inner_->update(time_ns, period_ns);
  }
  void deactivate() override { inner_->deactivate(); }
  void command(heft::plugin::Command c) noexcept override { inner_->command(c); }
  bool pop_telemetry(heft::plugin::TelemetryRecord& r) noexcept override {
    return inner_->pop_telemetry(r);
  }
  std::size_t num_links() const noexcept override { return inner_->num_links(); }
  const char* link_name(std::size_t i) const noexcept override { return inner_->link_name(i); }

 private:
  void* handle_;
  ControllerInterface* inner_;
  void (*destroy_)(ControllerInterface*);
  std::string hang_file_;
};

}  // namespace

extern "C" {
std::uint32_t heft_plugin_api_version() {
  return heft::plugin::kApiVersion;
}

ControllerInterface* heft_plugin_create(std::uint32_t host_api_version, char* error,
                                        std::size_t error_size) {
  void* handle = dlopen(HEFT_ESTIMATOR_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::snprintf(error, error_size, "%s", dlerror());
    return nullptr;
  }
  auto create =
      reinterpret_cast<decltype(&heft_plugin_create)>(dlsym(handle, "heft_plugin_create"));
  auto destroy =
      reinterpret_cast<void (*)(ControllerInterface*)>(dlsym(handle, "heft_plugin_destroy"));
  ControllerInterface* inner = create != nullptr && destroy != nullptr
                                   ? create(host_api_version, error, error_size)
                                   : nullptr;
  if (inner == nullptr) {
    dlclose(handle);
    return nullptr;
  }
  return new HangingPlugin(handle, inner, destroy);
}

void heft_plugin_destroy(ControllerInterface* controller) {
  delete controller;
}
}

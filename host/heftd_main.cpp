// heftd: the service that runs on the robot — the host (host.hpp: drivers, the estimator plugin,
// the 1 kHz and 333 Hz threads, hand-off, telemetry, recorder, systemd) on the robot's SocketCAN
// buses. No simulator here: a configuration with `backend: simulated` runs in heft-sim.
#include "heft/host/host.hpp"
#include "heft/host/socketcan_backend.hpp"

namespace heft::host {
namespace {

class SocketCanFactory final : public BackendFactory {
 public:
  // backend: socketcan is checked by host::LoadConfiguration (Reader::kHeftd).
  void Configure(const config::Node&, const CommandLine&, HostConfig&) override {}
  bool lockstep() const override { return false; }
  std::unique_ptr<Backend> Create(const HostConfig&, const plugin::PluginConfig& config,
                                  const dynamics::Model&, spdlog::logger&) override {
    return std::make_unique<SocketCanBackend>(config.drivers.buses);
  }
};

}  // namespace
}  // namespace heft::host

int main(int argc, char** argv) {
  heft::host::SocketCanFactory factory;
  return heft::host::Main({"heftd", false}, argc, argv, factory);
}

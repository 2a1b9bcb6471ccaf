// heftd's backend: the robot's SocketCAN buses (drivers/socketcan_transport), one per
// drivers.buses entry. Real time, no step hook, no extra telemetry.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "heft/drivers/socketcan_transport.hpp"
#include "heft/host/backend.hpp"

namespace heft::host {

class SocketCanBackend final : public Backend {
 public:
  // Opens every bus (throws naming the interface when it cannot).
  explicit SocketCanBackend(const std::vector<std::string>& bus_names);
  std::vector<hal::CanTransport*> buses() override { return buses_; }

 private:
  std::vector<std::unique_ptr<drivers::SocketCanTransport>> sockets_;
  std::vector<hal::CanTransport*> buses_;
};

}  // namespace heft::host

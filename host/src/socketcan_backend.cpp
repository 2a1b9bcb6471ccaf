#include "heft/host/socketcan_backend.hpp"

namespace heft::host {

SocketCanBackend::SocketCanBackend(const std::vector<std::string>& bus_names) {
  for (const auto& name : bus_names) {
    sockets_.push_back(std::make_unique<drivers::SocketCanTransport>(name));
    buses_.push_back(sockets_.back().get());
  }
}

}  // namespace heft::host

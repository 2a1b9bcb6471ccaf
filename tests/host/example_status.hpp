// A status snapshot with every field set (a holding estimator of two links, drivers and input
// counters): what the command server hands out in test_command_server.cpp and what the JSON tests
// in test_status_json.cpp encode and decode.
#pragma once

#include <cstddef>
#include <cstdio>

#include "heft/host/status.hpp"

namespace heft::host::test {

inline StatusSnapshot ExampleStatus() {
  hal::InertialEstimate e;
  e.sequence = 42;
  e.stamp_ns = 12'345'000'000;
  e.num_links = 2;
  e.status.state = hal::EstimatorState::kHolding;
  e.status.model = hal::MeasurementModel::kFullWrench;
  e.status.hold_reason = 4U | 8U;  // base, history (estimator/sample_mapping.hpp)
  e.status.ticks = 1000;
  e.status.updates = 900;
  e.status.gated = 7;
  e.status.gate_releases = 1;
  e.status.numeric_rejects = 2;
  e.status.rate_limited = 30;
  e.status.last_nis = 11.5;
  const char* names[] = {"torso", "left_forearm"};
  for (std::size_t k = 0; k < 2; ++k) {
    std::snprintf(e.links[k].name.data(), e.links[k].name.size(), "%s", names[k]);
    e.links[k].parameters = {
        2.0 + static_cast<double>(k), 0.02, -0.04, 0.3, 0.1, 0, 0, 0.1, 0, 0.05};
    for (std::size_t i = 0; i < 10; ++i)
      e.links[k].covariance[i * 10 + i] = 1e-4 * (1.0 + static_cast<double>(i));
    e.links[k].covariance[1] = e.links[k].covariance[10] = 2e-5;  // m–hx correlation
  }
  StatusSnapshot s;
  FillFromEstimate(e, s);
  s.drivers = {3000, 4, 5, 6};
  s.input = {true, hal::ChannelState::kOk, 2990, 10, 3};
  return s;
}

}  // namespace heft::host::test

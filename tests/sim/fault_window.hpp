// A simulated fault of `kind` on device (or bus) index `device`, active from `from` to `to` (s):
// the fields every fault test sets (the rest keep SimFault's defaults).
#pragma once

#include "heft/sim/sim_backend.hpp"

namespace heft::sim {

inline SimFault FaultWindow(SimFault::Kind kind, int device, double from, double to) {
  SimFault f;
  f.kind = kind;
  f.device = device;
  f.from = from;
  f.to = to;
  return f;
}

}  // namespace heft::sim

// The URDF model loader (estimator/src/model.cpp over urdfdom) on fuzzed XML. The only exception
// allowed out is dynamics::ModelError; a model it accepts must be self-consistent (parents before
// children, q/v indices inside nq/nv, every frame on an existing body, finite parameters).
#include <console_bridge/console.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "heft/dynamics/model.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  console_bridge::setLogLevel(console_bridge::CONSOLE_BRIDGE_LOG_NONE);  // urdfdom's chatter
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace heft::dynamics;
  if (size < 1) return 0;
  ModelOptions options;
  options.floating_base = (data[0] & 1) != 0;
  options.repair_inertia = (data[0] & 2) != 0;
  const std::string xml(reinterpret_cast<const char*>(data + 1), size - 1);
  Model model;
  try {
    model = LoadModelFromUrdfString(xml, options, "fuzz.urdf");
  } catch (const ModelError&) {
    return 0;
  }
  const int nb = model.num_bodies();
  for (int b = 0; b < nb; ++b) {
    const Body& body = model.bodies[b];
    if (body.parent >= b || body.parent < kWorld) std::abort();
    if (body.q_index < 0 || body.q_index >= model.nq || body.v_index < 0 ||
        body.v_index >= model.nv)
      std::abort();
    if (!body.parameters.allFinite() || !body.axis.allFinite()) std::abort();
    if (model.body_index(body.name) != b) std::abort();
  }
  for (const Frame& f : model.frames)
    if (f.body < kWorld || f.body >= nb || !f.p.allFinite() || !f.R.allFinite()) std::abort();
  if (!std::isfinite(TotalMass(model))) std::abort();
  (void)model.joint_names();
  return 0;
}

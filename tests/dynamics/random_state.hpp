// Random states of a model for the dynamics tests (reproducible: fixed seeds).
#pragma once

#include <Eigen/Geometry>
#include <random>

#include "heft/dynamics/model.hpp"

namespace heft::dynamics::test {

struct State {
  Eigen::VectorXd q, v, a;
};

inline State RandomState(const Model& model, std::mt19937_64& rng, double speed = 2.0) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  State s{Eigen::VectorXd(model.nq), Eigen::VectorXd(model.nv), Eigen::VectorXd(model.nv)};
  int first = 0;
  if (model.floating_base) {
    s.q.head<3>() << u(rng), u(rng), 1.0 + 0.2 * u(rng);
    Eigen::Vector4d quat(u(rng), u(rng), u(rng), u(rng));
    s.q.segment<4>(3) = quat.normalized();
    first = 1;
  }
  for (int i = first; i < model.num_bodies(); ++i) {
    const Body& b = model.bodies[i];
    const double lo = b.joint.continuous ? -3.0 : b.joint.lower;
    const double hi = b.joint.continuous ? 3.0 : b.joint.upper;
    s.q[b.q_index] = lo + (hi - lo) * 0.5 * (1.0 + u(rng));
  }
  for (int i = 0; i < model.nv; ++i) {
    s.v[i] = speed * u(rng);
    s.a[i] = 5.0 * speed * u(rng);
  }
  return s;
}

}  // namespace heft::dynamics::test

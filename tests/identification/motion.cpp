#include "motion.hpp"

#include <Eigen/Geometry>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "heft/dynamics/dynamics.hpp"
#include "heft/identification/identify.hpp"

namespace heft::identification::test {

dynamics::Model PerturbedTruth(const dynamics::Model& nominal, std::uint64_t seed) {
  dynamics::Model truth = nominal;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (dynamics::Body& b : truth.bodies) {
    if (b.parameters[0] <= 0.0) continue;
    dynamics::RigidBodyInertia in = dynamics::InertiaFromParameters10(b.parameters);
    const double scale = 1.0 + 0.15 * u(rng);
    in.mass *= scale;
    in.com += 0.015 * Eigen::Vector3d(u(rng), u(rng), u(rng));
    // The mass distribution's second moments Σ = ½ tr(I) 1 − I scaled along the body axes
    // (S Σ S stays positive definite, so I = tr(Σ) 1 − Σ stays physical).
    const Eigen::Vector3d f(1.0 + 0.2 * u(rng), 1.0 + 0.2 * u(rng), 1.0 + 0.2 * u(rng));
    const Eigen::Matrix3d S = f.cwiseSqrt().asDiagonal();
    const Eigen::Matrix3d sigma =
        S * (0.5 * in.inertia_com.trace() * Eigen::Matrix3d::Identity() - in.inertia_com) * S *
        scale;
    in.inertia_com = sigma.trace() * Eigen::Matrix3d::Identity() - sigma;
    b.parameters = dynamics::ParametersFromInertia(in);
  }
  // A cable bundle along the torso's back: a thin rod of 1.8 kg, 0.4 m long along z.
  const int torso = truth.body_index("torso");
  dynamics::RigidBodyInertia cable;
  cable.mass = 1.8;
  cable.com = Eigen::Vector3d(-0.12, 0.04, 0.15);
  const double l = 0.4, r = 0.02;
  const double it = cable.mass * (3 * r * r + l * l) / 12.0;
  cable.inertia_com = Eigen::Vector3d(it, it, 0.5 * cable.mass * r * r).asDiagonal();
  truth.bodies[torso].parameters += dynamics::ParametersFromInertia(cable);
  return truth;
}

namespace {

struct Wave {  // Σ a sin(w t + p)
  std::vector<double> a, w, p;
  double offset = 0;
  void Eval(double t, double& x, double& dx, double& ddx) const {
    x = offset;
    dx = ddx = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      x += a[i] * std::sin(w[i] * t + p[i]);
      dx += a[i] * w[i] * std::cos(w[i] * t + p[i]);
      ddx -= a[i] * w[i] * w[i] * std::sin(w[i] * t + p[i]);
    }
  }
};

// Smooth 0 → 1 → 0 bump over [t0, t0 + len] (1 − cos), value and derivatives.
void Bump(double t, double t0, double len, double& x, double& dx, double& ddx) {
  x = dx = ddx = 0;
  if (t < t0 || t > t0 + len) return;
  const double w = 2 * M_PI / len;
  x = 0.5 * (1 - std::cos(w * (t - t0)));
  dx = 0.5 * w * std::sin(w * (t - t0));
  ddx = 0.5 * w * w * std::cos(w * (t - t0));
}

bool Has(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

double TorqueOffset(const SimSpec& spec, int vi) {
  if (spec.torque_offset == 0.0) return 0.0;
  std::mt19937_64 rng(0x0ff5e7u + static_cast<std::uint64_t>(vi));
  std::uniform_real_distribution<double> u(1.0 / 3.0, 1.0);
  const double size = u(rng);
  return (rng() & 1u ? 1.0 : -1.0) * size * spec.torque_offset;
}

double TorqueGain(const SimSpec& spec, int vi) {
  if (spec.torque_gain == 0.0) return 0.0;
  std::mt19937_64 rng(0x6a1417u + static_cast<std::uint64_t>(vi));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  return u(rng) * spec.torque_gain;
}

double FtOffset(const SimSpec& spec, int cell, int k) {
  const double size = k < 3 ? spec.ft_force : spec.ft_moment;
  if (size == 0.0) return 0.0;
  std::mt19937_64 rng(0xf70ff5u + static_cast<std::uint64_t>(6 * cell + k));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  return u(rng) * size;
}

namespace {

// Per joint: a wave (squat and lift couplings are added on top), its amplitudes, frequencies and
// phases drawn from `rng` body by body.
std::vector<Wave> JointWaves(const dynamics::Model& m, const SimSpec& spec, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uni(0.0, 2 * M_PI);
  const double kTwoPi = 2 * M_PI;
  std::vector<Wave> joint(m.bodies.size());
  for (std::size_t b = 0; b < m.bodies.size(); ++b) {
    const dynamics::Body& body = m.bodies[b];
    if (body.joint.type == dynamics::JointType::kFree) continue;
    const std::string& n = body.joint.name;
    Wave& w = joint[b];
    if (Has(n, "knee")) w.offset = 0.5;
    if (Has(n, "hip_pitch") || Has(n, "ankle_pitch")) w.offset = -0.25;
    if (Has(n, "elbow")) w.offset = -0.7;
    if (Has(n, "left_shoulder_roll")) w.offset = 0.25;
    if (Has(n, "right_shoulder_roll")) w.offset = -0.25;
    const bool arm = Has(n, "shoulder") || Has(n, "elbow") || Has(n, "wrist");
    const bool waist = Has(n, "waist");
    double amp = arm ? 0.45 : waist ? 0.15 : 0.06;
    std::vector<double> freqs = {0.23, 0.41, 0.67};
    if (spec.motion == Motion::kStepping) freqs = {0.9, 1.4};
    if (spec.motion == Motion::kReaching) {
      amp = arm ? 0.7 : waist ? 0.3 : 0.03;
      freqs = {0.12, 0.31};
    }
    if (spec.motion == Motion::kStanding) amp = 0.0;
    if (std::find(spec.held.begin(), spec.held.end(), n) != spec.held.end()) amp = 0.0;
    for (double f : freqs) {
      w.a.push_back(amp / static_cast<double>(freqs.size()) * (0.6 + 0.8 * uni(rng) / kTwoPi));
      w.w.push_back(kTwoPi * f * (0.8 + 0.4 * uni(rng) / kTwoPi));
      w.p.push_back(uni(rng));
    }
  }
  return joint;
}

// The joints in v-index order (the recording's), and an empty recording of them at 1 kHz.
std::vector<std::pair<int, std::string>> JointOrder(const dynamics::Model& m) {
  std::vector<std::pair<int, std::string>> order;
  for (const dynamics::Body& b : m.bodies)
    if (b.joint.type != dynamics::JointType::kFree) order.emplace_back(b.v_index, b.joint.name);
  std::sort(order.begin(), order.end());
  return order;
}
recording::Recording EmptyRecording(const dynamics::Model& m,
                                    const std::vector<std::pair<int, std::string>>& order) {
  recording::Recording rec;
  rec.source = "simulated";
  for (const auto& [vi, n] : order) rec.info.joints.push_back(n);
  rec.info.wrench_frames = {"left_foot_ft", "right_foot_ft"};
  rec.info.floating_base = m.floating_base;
  rec.info.nominal_rate = 1000.0;
  return rec;
}

// The whole body's motion at time t: squat depth (several speeds in turn), sway and foot lifts,
// each with its first and second derivative.
struct BodyMotion {
  double sq = 0, dsq = 0, ddsq = 0;
  double liftL = 0, dL = 0, ddL = 0, liftR = 0, dR = 0, ddR = 0;
  double sway = 0, dsway = 0, ddsway = 0;
};
BodyMotion WholeBodyMotion(const SimSpec& spec, double t) {
  const double kTwoPi = 2 * M_PI;
  BodyMotion bm;
  // Squat depth (several speeds in turn), sway, foot lifts.
  double sway_amp = 0.03, lift_period = 4.0, lift_len = 1.2;
  if (spec.motion == Motion::kSquatSway) {
    // 8 s at each speed in turn: whole periods, so position and velocity stay continuous.
    const double speeds[3] = {0.25, 0.5, 1.0};
    const double f = speeds[static_cast<int>(t / 8.0) % 3];
    const double tb = std::fmod(t, 8.0);
    const double w = kTwoPi * f;
    bm.sq = 0.5 * (1 - std::cos(w * tb));
    bm.dsq = 0.5 * w * std::sin(w * tb);
    bm.ddsq = 0.5 * w * w * std::cos(w * tb);
  } else if (spec.motion == Motion::kStepping) {
    sway_amp = 0.045;
    lift_period = 1.6;
    lift_len = 0.6;
  } else if (spec.motion == Motion::kReaching) {
    sway_amp = 0.01;
    lift_period = 0.0;
  } else {
    sway_amp = 0.0;
    lift_period = 0.0;
  }
  // Lifts: left foot in the first half of every lift_period, right foot in the second half.
  if (lift_period > 0) {
    const double k = std::floor(t / lift_period) * lift_period;
    Bump(t, k + 0.1 * lift_period, lift_len * 0.9, bm.liftL, bm.dL, bm.ddL);
    Bump(t, k + 0.55 * lift_period, lift_len * 0.9, bm.liftR, bm.dR, bm.ddR);
  }
  const double ws_ = kTwoPi * (spec.motion == Motion::kStepping ? 0.3125 : 0.25);
  bm.sway = sway_amp * std::sin(ws_ * t);
  bm.dsway = sway_amp * ws_ * std::cos(ws_ * t);
  bm.ddsway = -sway_amp * ws_ * ws_ * std::sin(ws_ * t);
  return bm;
}

// The floating base's position and orientation (a pitch about `axis`) at time t, into the first
// 7 of q and the first 6 of v and a.
void SetBase(const SimSpec& spec, double t, const BodyMotion& bm, Eigen::VectorXd& q,
             Eigen::VectorXd& v, Eigen::VectorXd& a) {
  const Eigen::Vector3d axis = Eigen::Vector3d(1.0, 0.7, 0.3).normalized();
  const double depth = spec.motion == Motion::kSquatSway ? 0.12 : 0.0;
  const double still = spec.motion == Motion::kStanding ? 0.0 : 1.0;
  q.head<3>() << still * 0.01 * std::sin(0.7 * t), bm.sway, 0.92 - depth * bm.sq;
  v.head<3>() << still * 0.007 * std::cos(0.7 * t), bm.dsway, -depth * bm.dsq;
  a.head<3>() << -still * 0.0049 * std::sin(0.7 * t), bm.ddsway, -depth * bm.ddsq;
  const double ps = still * (0.06 * std::sin(0.9 * t) + 0.04 * std::sin(1.7 * t + 1.0));
  const double dps = still * (0.054 * std::cos(0.9 * t) + 0.068 * std::cos(1.7 * t + 1.0));
  const double ddps = still * (-0.0486 * std::sin(0.9 * t) - 0.1156 * std::sin(1.7 * t + 1.0));
  const Eigen::Quaterniond quat(Eigen::AngleAxisd(ps, axis));
  q.segment<4>(3) << quat.w(), quat.x(), quat.y(), quat.z();
  v.segment<3>(3) = axis * dps;
  a.segment<3>(3) = axis * ddps;
}

// Every joint's wave at time t with the squat, sway and lift couplings added, into q, v and a.
void SetJoints(const dynamics::Model& m, const std::vector<Wave>& joint, double t,
               const BodyMotion& bm, Eigen::VectorXd& q, Eigen::VectorXd& v, Eigen::VectorXd& a) {
  for (std::size_t b = 0; b < m.bodies.size(); ++b) {
    const dynamics::Body& body = m.bodies[b];
    if (body.joint.type == dynamics::JointType::kFree) continue;
    double x, dx, ddx;
    joint[b].Eval(t, x, dx, ddx);
    const std::string& jn = body.joint.name;
    const bool left = Has(jn, "left");
    const double gain = Has(jn, "knee")                                    ? 1.2
                        : (Has(jn, "hip_pitch") || Has(jn, "ankle_pitch")) ? -0.6
                                                                           : 0.0;
    x += gain * bm.sq;
    dx += gain * bm.dsq;
    ddx += gain * bm.ddsq;
    if (Has(jn, "hip_roll") || Has(jn, "ankle_roll")) {
      const double g = (Has(jn, "hip_roll") ? -3.0 : 3.0);
      x += g * bm.sway;
      dx += g * bm.dsway;
      ddx += g * bm.ddsway;
    }
    const double lg = Has(jn, "knee")          ? 0.7
                      : Has(jn, "hip_pitch")   ? -0.4
                      : Has(jn, "ankle_pitch") ? -0.3
                                               : 0.0;
    if (lg != 0.0) {
      x += lg * (left ? bm.liftL : bm.liftR);
      dx += lg * (left ? bm.dL : bm.dR);
      ddx += lg * (left ? bm.ddL : bm.ddR);
    }
    q[body.q_index] = x;
    v[body.v_index] = dx;
    a[body.v_index] = ddx;
  }
}

// The feet's wrenches that carry the base's share of the inverse dynamics' `tau`; a foot carries
// load unless it is lifted (bump above 5 %). G and out are the caller's workspace.
Eigen::Matrix<double, 12, 1> FootWrenches(const dynamics::Model& m, dynamics::Workspace& ws,
                                          const std::vector<int>& feet, const BodyMotion& bm,
                                          const Eigen::VectorXd& tau, Eigen::MatrixXd& G,
                                          Eigen::VectorXd& out) {
  // Contact: a foot carries load unless it is lifted (bump above 5 %).
  const bool inL = bm.liftL < 0.05, inR = bm.liftR < 0.05;
  for (int c = 0; c < 12; ++c) {
    std::vector<dynamics::Vector6> w2(2, dynamics::Vector6::Zero());
    w2[c / 6][c % 6] = 1.0;
    dynamics::ContactTerm(m, ws, feet, w2, out);
    G.col(c) = out;
    if ((c < 6 && !inL) || (c >= 6 && !inR)) G.col(c).setZero();
  }
  return G.topRows<6>().jacobiSvd(Eigen::ComputeThinU | Eigen::ComputeThinV).solve(tau.head<6>());
}

// Sample `s` as the sensors measure it: torques with friction, gain, offset, noise and
// quantisation, velocities with noise, the feet's wrenches with offsets and noise (drawn from
// `gauss` in that order).
recording::RecordSample Measure(const dynamics::Model& m, const SimSpec& spec,
                                const std::vector<std::pair<int, std::string>>& order, int s,
                                const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                const Eigen::VectorXd& joint_tau,
                                const Eigen::Matrix<double, 12, 1>& lambda,
                                std::normal_distribution<double>& gauss, std::mt19937_64& rng) {
  recording::RecordSample r;
  r.stamp_ns = static_cast<std::int64_t>(s) * 1'000'000;
  for (int k = 0; k < 7; ++k) r.base[k] = q[k];
  for (int k = 0; k < 6; ++k) r.base[7 + k] = v[k];
  for (const auto& [vi, jn] : order) {
    const int b = m.joint_body_index(jn);
    double tm = (1.0 + TorqueGain(spec, vi)) *
                    (joint_tau[vi] + spec.coulomb * FrictionSign(v[vi]) + spec.viscous * v[vi]) +
                TorqueOffset(spec, vi);
    tm += spec.noise.joint_torque * gauss(rng);
    if (spec.noise.torque_quantum > 0)
      tm = spec.noise.torque_quantum * std::round(tm / spec.noise.torque_quantum);
    r.q.push_back(q[m.bodies[b].q_index]);
    r.v.push_back(v[vi] + spec.noise.velocity * gauss(rng));
    r.tau.push_back(tm);
  }
  for (int f = 0; f < 2; ++f) {
    std::array<double, 6> w{};
    for (int k = 0; k < 6; ++k)
      w[k] = lambda[6 * f + k] + FtOffset(spec, f, k) +
             (k < 3 ? spec.noise.force : spec.noise.moment) * gauss(rng);
    r.wrenches.push_back(w);
  }
  r.encoder_valid.assign(order.size(), 1);
  r.torque_valid.assign(order.size(), 1);
  r.wrench_valid.assign(2, 1);
  return r;
}

}  // namespace

recording::Recording Simulate(const dynamics::Model& truth, const SimSpec& spec) {
  const dynamics::Model& m = truth;
  const int nv = m.nv;
  std::mt19937_64 rng(spec.seed);
  std::normal_distribution<double> gauss(0.0, 1.0);
  const std::vector<Wave> joint = JointWaves(m, spec, rng);

  const std::vector<std::pair<int, std::string>> order = JointOrder(m);
  recording::Recording rec = EmptyRecording(m, order);
  const std::vector<int> feet = {m.frame_index("left_foot_ft"), m.frame_index("right_foot_ft")};

  dynamics::Workspace ws(m);
  Eigen::VectorXd q(m.nq), v(nv), a(nv), tau(nv), out(nv);
  Eigen::MatrixXd G(nv, 12);
  const double dt = 0.001;
  const int n = static_cast<int>(spec.duration / dt);
  rec.samples.reserve(n);
  for (int s = 0; s < n; ++s) {
    const double t = s * dt;
    const BodyMotion bm = WholeBodyMotion(spec, t);
    SetBase(spec, t, bm, q, v, a);
    SetJoints(m, joint, t, bm, q, v, a);
    dynamics::Rnea(m, ws, q, v, a, tau);
    const Eigen::Matrix<double, 12, 1> lambda = FootWrenches(m, ws, feet, bm, tau, G, out);
    Eigen::VectorXd joint_tau = tau - G * lambda;
    rec.samples.push_back(Measure(m, spec, order, s, q, v, joint_tau, lambda, gauss, rng));
  }
  return rec;
}

}  // namespace heft::identification::test

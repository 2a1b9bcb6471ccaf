#include "trajectory.hpp"

#include <Eigen/Geometry>
#include <Eigen/SVD>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace heft::estimator::test {

dynamics::Model ReferenceHumanoid() {
  return dynamics::LoadModelFromUrdfFile(std::string(HEFT_ROBOTS_DIR) + "/heft_humanoid.urdf",
                                         dynamics::ModelOptions{});
}

dynamics::Vector10 WithCylinder(const dynamics::Vector10& pi, double m, const Eigen::Vector3d& at,
                                double r, double l) {
  dynamics::RigidBodyInertia c;
  c.mass = m;
  c.com = at;
  const double it = m * (3 * r * r + l * l) / 12.0;
  c.inertia_com = Eigen::Vector3d(it, 0.5 * m * r * r, it).asDiagonal();
  return pi + dynamics::ParametersFromInertia(c);
}

dynamics::Vector10 ScaledToMass(const dynamics::Vector10& pi, double mass) {
  return pi * (mass / pi[0]);
}

namespace {

struct Sample {
  double t;
  Eigen::VectorXd q, v, tau;
  std::vector<dynamics::Vector6> wrenches;
  Eigen::VectorXd truth;
};

// Per moving joint: offset (a mild standing posture) and a sum of two sines.
struct JointMotion {
  int q, v;
  double offset, a1, w1, p1, a2, w2, p2;
};

// Every joint's motion (`spec`'s moving joints with their phases drawn from `rng`, body by body).
std::vector<JointMotion> JointMotions(const dynamics::Model& nominal, const DataSpec& spec,
                                      std::mt19937_64& rng) {
  std::uniform_real_distribution<double> phase(0.0, 2 * M_PI);
  std::vector<JointMotion> motion;
  for (const dynamics::Body& b : nominal.bodies) {
    if (b.joint.type == dynamics::JointType::kFree) continue;
    JointMotion jm{b.q_index, b.v_index, 0, 0, 0, 0, 0, 0, 0};
    const std::string& n = b.joint.name;
    if (n.find("knee") != std::string::npos) jm.offset = 0.4;
    if (n.find("hip_pitch") != std::string::npos) jm.offset = -0.2;
    if (n.find("ankle_pitch") != std::string::npos) jm.offset = -0.2;
    if (n.find("elbow") != std::string::npos) jm.offset = -0.6;
    if (n.find("left_shoulder_roll") != std::string::npos) jm.offset = 0.2;
    if (n.find("right_shoulder_roll") != std::string::npos) jm.offset = -0.2;
    for (std::size_t k = 0; k < spec.motion.joints.size(); ++k) {
      if (spec.motion.joints[k] != n) continue;
      const auto& f = spec.motion.frequencies;
      jm.a1 = spec.motion.amplitude;
      jm.w1 = 2 * M_PI * f[k % f.size()];
      jm.p1 = phase(rng);
      jm.a2 = 0.5 * spec.motion.amplitude;
      jm.w2 = 2 * M_PI * f[(k + 2) % f.size()] * 1.7;
      jm.p2 = phase(rng);
    }
    motion.push_back(jm);
  }
  return motion;
}

// Base: sway in x/y and a pitch oscillation about the body y axis, at time t, into the first 7 of
// q and the first 6 of v and a. (A robot that starts still keeps its base still.)
void SetBase(const DataSpec& spec, double t, Eigen::VectorXd& q, Eigen::VectorXd& v,
             Eigen::VectorXd& a) {
  const Eigen::Vector3d pitch_axis = Eigen::Vector3d::UnitY();
  const double ba = spec.motion.still_until > 0.0 ? 0.0 : spec.motion.base_amplitude;
  const double w = 2 * M_PI * 0.4;
  q.head<3>() << ba * std::sin(w * t), ba * std::sin(1.3 * w * t),
      0.95 + 0.5 * ba * std::sin(0.7 * w * t);
  v.head<3>() << ba * w * std::cos(w * t), ba * 1.3 * w * std::cos(1.3 * w * t),
      0.5 * ba * 0.7 * w * std::cos(0.7 * w * t);
  a.head<3>() << -ba * w * w * std::sin(w * t), -ba * 1.69 * w * w * std::sin(1.3 * w * t),
      -0.5 * ba * 0.49 * w * w * std::sin(0.7 * w * t);
  const double phi = ba * std::sin(w * t);
  const Eigen::Quaterniond quat(Eigen::AngleAxisd(phi, pitch_axis));
  q.segment<4>(3) << quat.w(), quat.x(), quat.y(), quat.z();
  v.segment<3>(3) = pitch_axis * ba * w * std::cos(w * t);
  a.segment<3>(3) = -pitch_axis * ba * w * w * std::sin(w * t);
}

// The joints at time t: envelope e(t), 0 while still, then a 1 s cosine fade-in;
// q = offset + e·s(t).
void SetJoints(const DataSpec& spec, const std::vector<JointMotion>& motion, double t,
               Eigen::VectorXd& q, Eigen::VectorXd& v, Eigen::VectorXd& a) {
  double e = 1.0, de = 0.0, dde = 0.0;
  const double tau_in = t - spec.motion.still_until;
  if (spec.motion.still_until > 0.0) {
    if (tau_in <= 0.0) {
      e = 0.0;
    } else if (tau_in < 1.0) {
      e = 0.5 - 0.5 * std::cos(M_PI * tau_in);
      de = 0.5 * M_PI * std::sin(M_PI * tau_in);
      dde = 0.5 * M_PI * M_PI * std::cos(M_PI * tau_in);
    }
  }
  for (const JointMotion& jm : motion) {
    const double s0 = jm.a1 * std::sin(jm.w1 * t + jm.p1) + jm.a2 * std::sin(jm.w2 * t + jm.p2);
    const double s1 =
        jm.a1 * jm.w1 * std::cos(jm.w1 * t + jm.p1) + jm.a2 * jm.w2 * std::cos(jm.w2 * t + jm.p2);
    const double s2 = -jm.a1 * jm.w1 * jm.w1 * std::sin(jm.w1 * t + jm.p1) -
                      jm.a2 * jm.w2 * jm.w2 * std::sin(jm.w2 * t + jm.p2);
    q[jm.q] = jm.offset + e * s0;
    v[jm.v] = de * s0 + e * s1;
    a[jm.v] = dde * s0 + 2 * de * s1 + e * s2;
  }
}

// The true sample at time t: joint torques and the contact wrenches, the smallest pair that
// produces the floating-base rows of the inverse dynamics' `tau` (Sᵀτ has none). C and unit_out
// are the caller's workspace.
Sample TrueSample(const dynamics::Model& truth, dynamics::Workspace& ws,
                  const std::vector<int>& feet, double t, const Eigen::VectorXd& q,
                  const Eigen::VectorXd& v, const Eigen::VectorXd& tau, Eigen::MatrixXd& C,
                  Eigen::VectorXd& unit_out) {
  for (int c = 0; c < 12; ++c) {
    std::vector<dynamics::Vector6> w2(2, dynamics::Vector6::Zero());
    w2[c / 6][c % 6] = 1.0;
    dynamics::ContactTerm(truth, ws, feet, w2, unit_out);
    C.col(c) = unit_out;
  }
  const Eigen::Matrix<double, 12, 1> lambda =
      C.topRows<6>().jacobiSvd(Eigen::ComputeThinU | Eigen::ComputeThinV).solve(tau.head<6>());
  Sample smp;
  smp.t = t;
  smp.q = q;
  smp.v = v;
  smp.tau = tau - C * lambda;  // joint torques; base rows ≈ 0
  smp.tau.head<6>().setZero();
  smp.wrenches = {lambda.head<6>(), lambda.tail<6>()};
  return smp;
}

// Sensor effects on `smp` (noise drawn from `unit` in this order, quantisation, bias) and, every
// impulse_period, a touchdown's contact impulse.
void AddSensorEffects(const DataSpec& spec, int nv, const Eigen::VectorXd& bias, Sample& smp,
                      std::normal_distribution<double>& unit, std::mt19937_64& rng) {
  const double t = smp.t;
  for (int i = 6; i < nv; ++i) {
    double m = smp.tau[i] + bias[i] + spec.noise.tau_sigma * unit(rng);
    if (spec.noise.tau_quantum > 0)
      m = spec.noise.tau_quantum * std::round(m / spec.noise.tau_quantum);
    smp.tau[i] = m;
    smp.v[i] += spec.noise.v_sigma * unit(rng);
  }
  if (spec.noise.gyro_sigma > 0.0)  // drawn only when asked: other tests keep their sequence
    for (int i = 3; i < 6; ++i) smp.v[i] += spec.noise.gyro_sigma * unit(rng);
  for (auto& wr : smp.wrenches) {
    for (int i = 0; i < 3; ++i) wr[i] += spec.noise.force_sigma * unit(rng);
    for (int i = 3; i < 6; ++i) wr[i] += spec.noise.torque_sigma * unit(rng);
  }
  if (spec.noise.impulse_period > 0) {
    const double phase_in = std::fmod(t, spec.noise.impulse_period);
    if (phase_in < spec.noise.impulse_length) {
      // A touchdown: a force spike on the landing foot and a torque spike through the leg.
      const double shape = std::sin(M_PI * phase_in / spec.noise.impulse_length);
      const int foot = static_cast<int>(t / spec.noise.impulse_period) % 2;
      smp.wrenches[foot][2] += spec.noise.impulse_force * shape;
      for (int i = 6; i < nv; ++i)
        smp.tau[i] += 0.05 * spec.noise.impulse_force * shape * ((i % 3) - 1);
    }
  }
}

// 333 Hz ticks: a(t − h) = (v(t) − v(t − 2h)) / 2h with h = 2 ms; q, v, τ, λ at t − h.
std::vector<Tick> Ticks(const std::vector<Sample>& samples, int n_samples, double dt) {
  std::vector<Tick> ticks;
  const int h = 2;
  for (int s = 2 * h; s < n_samples; s += 3) {
    const Sample& now = samples[s];
    const Sample& mid = samples[s - h];
    const Sample& old = samples[s - 2 * h];
    Tick tk;
    tk.t = mid.t;
    tk.q = mid.q;
    tk.v = mid.v;
    tk.a = (now.v - old.v) / (2 * h * dt);
    // The base velocity comes from the state estimator; its acceleration is differenced the same
    // way.
    tk.tau = mid.tau;
    tk.wrenches = mid.wrenches;
    tk.truth = mid.truth;
    ticks.push_back(std::move(tk));
  }
  return ticks;
}

}  // namespace

std::vector<Tick> Generate(const DataSpec& spec) {
  const dynamics::Model nominal = ReferenceHumanoid();
  dynamics::Model truth = nominal;
  dynamics::Workspace ws(truth);
  std::mt19937_64 rng(spec.seed);
  std::normal_distribution<double> unit(0.0, 1.0);
  const int nv = nominal.nv;
  const std::vector<JointMotion> motion = JointMotions(nominal, spec, rng);
  const std::vector<int> feet = {nominal.frame_index("left_foot_ft"),
                                 nominal.frame_index("right_foot_ft")};
  std::vector<int> watched;
  for (const auto& name : spec.watched) watched.push_back(nominal.body_index(name));

  const double dt = 0.001;
  const int n_samples = static_cast<int>(spec.duration / dt) + 1;
  std::vector<Sample> samples;
  samples.reserve(n_samples);
  Eigen::VectorXd q(nominal.nq), v(nv), a(nv), tau(nv), unit_out(nv);
  Eigen::MatrixXd C(nv, 12);  // generalized force of the 12 wrench components
  Eigen::VectorXd bias(nv);
  for (int i = 0; i < nv; ++i)
    bias[i] = spec.noise.tau_bias;  // e.g. cables pulling every joint the same way
  for (int s = 0; s < n_samples; ++s) {
    const double t = s * dt;
    if (spec.payload) spec.payload(t, nominal, truth);
    SetBase(spec, t, q, v, a);
    SetJoints(spec, motion, t, q, v, a);
    dynamics::Rnea(truth, ws, q, v, a, tau);
    Sample smp = TrueSample(truth, ws, feet, t, q, v, tau, C, unit_out);
    AddSensorEffects(spec, nv, bias, smp, unit, rng);
    smp.truth.resize(10 * watched.size());
    for (std::size_t k = 0; k < watched.size(); ++k)
      smp.truth.segment<10>(10 * k) = truth.bodies[watched[k]].parameters;
    samples.push_back(std::move(smp));
  }
  return Ticks(samples, n_samples, dt);
}

}  // namespace heft::estimator::test

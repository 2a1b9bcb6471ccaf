// heft's estimator as a library (heft::estimator, built against the installed heft-dev:
// tools/examples/CMakeLists.txt): InertialEstimator driven tick by tick through TickInput, without
// heftd, the plugin or any configuration file.
//
// The robot is a URDF with its base fixed (the arm of a humanoid on a stand). The "measured"
// torques come from the dynamics core itself: inverse dynamics (RNEA) of a copy of the model whose
// link carries a point mass the nominal model does not know, plus white noise. The estimator,
// given the nominal model, should find the added mass. A program with real sensors fills the same
// TickInput from its own q, v, a (a finite difference of v), τ and, on a floating base, the foot
// wrenches (estimator/include/heft/estimator/inertial_estimator.hpp says what each field is).
//
// usage: heft-estimator-example [--urdf FILE] [--link NAME] [--joints A,B,...] [--load KG]
//                               [--seconds S]
// Exit status 0 when the estimated mass of the link ends within 4 σ of the truth (σ the filter's
// own statement of its error) and every handed estimate was physically consistent, 1 when not, 2
// for a usage error.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "heft/dynamics/dynamics.hpp"
#include "heft/dynamics/inertia.hpp"
#include "heft/dynamics/model.hpp"
#include "heft/estimator/inertial_estimator.hpp"

#ifndef HEFT_EXAMPLE_URDF
#define HEFT_EXAMPLE_URDF "/usr/share/heft/robots/heft_humanoid.urdf"
#endif

namespace {

namespace dyn = heft::dynamics;
namespace est = heft::estimator;

struct Options {
  std::string urdf = HEFT_EXAMPLE_URDF;
  std::string link = "left_forearm";
  std::vector<std::string> joints = {"left_shoulder_pitch", "left_shoulder_roll", "left_elbow",
                                     "left_wrist_pitch"};
  double load = 1.5;      // kg, 0.27 m along the link's -z (a dumbbell in the hand)
  double seconds = 12.0;  // of 333 Hz control ticks
};

// π of a point mass m at p in a link's frame: [m, m p, inertia about the origin].
dyn::Vector10 PointMass(double m, const Eigen::Vector3d& p) {
  dyn::Vector10 pi;
  const double xx = m * (p.y() * p.y() + p.z() * p.z());
  const double yy = m * (p.x() * p.x() + p.z() * p.z());
  const double zz = m * (p.x() * p.x() + p.y() * p.y());
  pi << m, m * p.x(), m * p.y(), m * p.z(), xx, -m * p.x() * p.y(), -m * p.x() * p.z(), yy,
      -m * p.y() * p.z(), zz;
  return pi;
}

bool Parse(int argc, char** argv, Options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--urdf") {
      o.urdf = v;
    } else if (a == "--link") {
      o.link = v;
    } else if (a == "--load") {
      o.load = std::atof(v.c_str());
    } else if (a == "--seconds") {
      o.seconds = std::atof(v.c_str());
    } else if (a == "--joints") {
      o.joints.clear();
      std::istringstream in(v);
      for (std::string j; std::getline(in, j, ',');) o.joints.push_back(j);
    } else {
      return false;
    }
  }
  return argc % 2 == 1 && o.load >= 0.0 && o.seconds >= 2.0 && o.seconds <= 600.0 &&
         !o.joints.empty();
}

// The estimator's configuration for one link of a fixed-base robot: the joints' torque rows only
// (no contact frames), σ of the torque noise the data carry, no start-up calibration (the data
// have no bias to calibrate away).
est::EstimatorConfig Config(const std::string& link, double torque_sigma) {
  est::EstimatorConfig c;
  c.bodies = {link};
  c.joint_torque_sigma = torque_sigma;
  c.control_period = 0.003;
  c.calibration.enabled = false;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!Parse(argc, argv, opt)) {
    std::fprintf(stderr,
                 "usage: heft-estimator-example [--urdf FILE] [--link NAME] [--joints A,B,...] "
                 "[--load KG] [--seconds S]\n");
    return 2;
  }
  try {
    // Set-up (allocates, throws with a message naming what is wrong).
    dyn::ModelOptions model_options;
    model_options.floating_base = false;
    const dyn::Model nominal = dyn::LoadModelFromUrdfFile(opt.urdf, model_options);
    dyn::Model truth = nominal;
    const int body = truth.body_index(opt.link);
    const dyn::Vector10 pi_truth =
        truth.bodies[body].parameters + PointMass(opt.load, {0.0, 0.0, -0.27});
    dyn::SetBodyParameters(truth, body, pi_truth);
    std::vector<int> moving;
    for (const std::string& j : opt.joints)
      moving.push_back(nominal.bodies[nominal.joint_body_index(j)].v_index);

    constexpr double kTorqueSigma = 0.3;  // N·m of white noise on every measured torque
    est::InertialEstimator estimator(nominal, Config(opt.link, kTorqueSigma));
    estimator.SkipCalibration();

    dyn::Workspace ws(truth);
    Eigen::VectorXd q = Eigen::VectorXd::Zero(nominal.nq), v = Eigen::VectorXd::Zero(nominal.nv),
                    a = Eigen::VectorXd::Zero(nominal.nv), tau = Eigen::VectorXd::Zero(nominal.nv);
    std::mt19937 rng(1);
    std::normal_distribution<double> noise(0.0, kTorqueSigma);
    const double kFrequencies[] = {0.31, 0.53, 0.87, 1.23};  // Hz, one per moving joint in turn
    constexpr double kAmplitude = 0.5;                       // rad
    const int ticks = static_cast<int>(opt.seconds / 0.003);
    bool consistent = true;
    for (int k = 1; k <= ticks; ++k) {
      // The motion, and what the robot's sensors would report of it.
      const double t = 0.003 * k;
      for (std::size_t i = 0; i < moving.size(); ++i) {
        const double w = 2.0 * M_PI * kFrequencies[i % 4];
        q[moving[i]] = kAmplitude * std::sin(w * t);
        v[moving[i]] = kAmplitude * w * std::cos(w * t);
        a[moving[i]] = -kAmplitude * w * w * std::sin(w * t);
      }
      dyn::Rnea(truth, ws, q, v, a, tau);
      for (int i = 0; i < tau.size(); ++i) tau[i] += noise(rng);
      // One tick: no wrenches on a fixed base (empty spans).
      const est::TickInput in{t, q, v, a, tau, {}, {}, {}};
      const est::TickResult r = estimator.Step(in);
      consistent = consistent && dyn::IsPhysicallyConsistent(estimator.handed().head<10>());
      if (k % static_cast<int>(1.0 / 0.003) == 0)
        std::printf("t %5.1f s  %-8s mass %.3f kg (truth %.3f)  σ %.3f kg  status %d\n", t,
                    opt.link.c_str(), estimator.estimate()[0], pi_truth[0],
                    std::sqrt(estimator.estimate_covariance()(0, 0)), static_cast<int>(r.status));
    }
    const double error = std::abs(estimator.estimate()[0] - pi_truth[0]);
    const double sigma = std::sqrt(estimator.estimate_covariance()(0, 0));
    std::printf(
        "%s: estimated mass %.3f kg, truth %.3f kg (nominal %.3f): error %.3f kg = %.1f σ\n",
        opt.link.c_str(), estimator.estimate()[0], pi_truth[0], nominal.bodies[body].parameters[0],
        error, error / sigma);
    if (!consistent) std::printf("FAIL: a handed estimate was not physically consistent\n");
    if (error > 4.0 * sigma) std::printf("FAIL: the mass error is above 4 σ\n");
    return consistent && error <= 4.0 * sigma ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heft-estimator-example: %s\n", e.what());
    return 1;
  }
}

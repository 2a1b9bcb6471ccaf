// The nominal model from heft-identify's file (robot.parameters: each link's π and covariance, the
// joints' friction) and the estimated links' nominal π held to the estimator's margin.
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "heft/plugin/plugin_config.hpp"

namespace heft::plugin {

namespace {

// A link's `covariance` (heft-identify's posterior of π: 100 numbers, row major), when given:
// finite, symmetric and positive semidefinite within the rounding of its printed digits.
std::optional<Eigen::Matrix<double, 10, 10>> ReadCovariance(const config::Node& link) {
  const std::optional<config::Node> node = link.Optional("covariance");
  if (!node) return std::nullopt;
  const std::vector<double> v = node->Numbers(100);
  Eigen::Matrix<double, 10, 10> c;
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 10; ++j)
      c(i, j) = v[static_cast<std::size_t>(i) * 10 + static_cast<std::size_t>(j)];
  if (!c.allFinite()) node->Fail("not finite (π's 10 x 10 covariance, row major)");
  const double scale = c.cwiseAbs().maxCoeff();
  // heft-identify prints 9 significant digits: an honest matrix is symmetric to ~1e-9 of its
  // largest entry and its eigenvalues ≥ −1e-9 of the largest.
  constexpr double kTolerance = 1e-6;
  if ((c - c.transpose()).cwiseAbs().maxCoeff() > kTolerance * scale)
    node->Fail("not symmetric (π's 10 x 10 covariance, row major)");
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 10, 10>> eig(c);
  const double lmax = eig.eigenvalues().maxCoeff(), lmin = eig.eigenvalues().minCoeff();
  if (lmin < -kTolerance * std::max(lmax, 0.0) || (lmax <= 0.0 && scale > 0.0)) {
    std::ostringstream msg;
    msg.precision(3);
    msg << "not positive semidefinite: smallest eigenvalue " << lmin << " against the largest "
        << lmax << " (π's 10 x 10 covariance, row major)";
    node->Fail(msg.str());
  }
  return Eigen::Matrix<double, 10, 10>(0.5 * (c + c.transpose()));
}

}  // namespace

std::vector<std::string> ApplyNominalParameters(const std::string& path, dynamics::Model& model) {
  return ApplyNominalParameters(config::Document::Load(path), model);
}

std::vector<std::string> ApplyNominalParameters(const config::Document& doc,
                                                dynamics::Model& model) {
  std::vector<std::string> applied;
  const config::Node links = doc.root()["links"];
  if (!links.IsMap()) links.Fail("expected a map of link names");
  for (const std::string& name : links.Keys()) {
    const config::Node link = links[name];
    int body = -1;
    try {
      body = model.body_index(name);
    } catch (const std::exception&) {
      link.Fail("'" + name + "' is not a moving link of the URDF");
    }
    const std::vector<double> v = link["pi"].Numbers(10);
    dynamics::Vector10 pi;
    for (int k = 0; k < 10; ++k) pi[k] = v[k];
    // A body on the boundary (a point mass, rod or plate) is realisable and fine for the
    // dynamics; an estimated one is refused as degenerate, with its repair, by
    // CheckEstimatedNominals.
    const dynamics::PseudoInertiaExtremes e = dynamics::PseudoInertiaEigenvalues(pi);
    if (!pi.allFinite() || !(pi[0] > 0.0) || e.min < -dynamics::kDegenerateTolerance * e.max)
      link["pi"].Fail(
          "not physically consistent (mass not positive, or pseudo-inertia with a negative "
          "eigenvalue: an inertia about the centre of mass that is not positive semidefinite or "
          "breaks the triangle inequalities)");
    dynamics::SetBodyParameters(model, body, pi);
    model.bodies[body].covariance = ReadCovariance(link);
    applied.push_back(name);
  }
  return applied;
}

void CheckEstimatedNominals(const PluginConfig& cfg,
                            const std::vector<std::string>& from_parameters,
                            dynamics::Model& model) {
  for (const std::string& name : cfg.estimator.bodies) {
    const int body = model.body_index(name);
    const dynamics::Vector10 pi = dynamics::GetBodyParameters(model, body);
    // Massless or clearly inconsistent: the estimator's own check says so (InertialEstimator). A
    // body on the boundary (a point mass, rod or plate: λ_min(J) zero up to rounding, either sign)
    // is degenerate, named here with its file and the repair.
    if (!(pi[0] > 0.0) || !pi.allFinite() || dynamics::HasConsistencyMargin(pi)) continue;
    if (const dynamics::PseudoInertiaExtremes x = dynamics::PseudoInertiaEigenvalues(pi);
        x.min < -dynamics::kDegenerateTolerance * x.max)
      continue;
    const bool param =
        std::find(from_parameters.begin(), from_parameters.end(), name) != from_parameters.end();
    const std::string& source = param ? cfg.parameters_path : cfg.urdf_path;
    const dynamics::PseudoInertiaExtremes e = dynamics::PseudoInertiaEigenvalues(pi);
    std::ostringstream msg;
    msg.precision(3);
    msg << source << ": estimated link '" << name << "' is nearly degenerate (a point mass, rod or "
        << "plate): its pseudo-inertia's smallest eigenvalue " << e.min << " is below the "
        << "estimator's margin " << e.threshold() << " (" << dynamics::kConsistencyMargin
        << " x its largest, " << e.max << ")";
    if (!cfg.repair_inertia)
      throw config::ConfigError(
          msg.str() + "; " +
          (param ? "re-identify with heft-identify (its SDP keeps a margin, --sdp-margin)"
                 : "fix the link's <inertial> in the URDF") +
          ", stop estimating the link (estimator.links), or set robot.repair_inertia: true to "
          "inflate its inertia to the margin");
    // Repair: J + δ·1 (mass +δ, inertia about the origin +2δ·1), δ ≤ 2e-6 λ_max(J).
    const dynamics::Vector10 repaired = dynamics::InflateToMargin(pi);
    dynamics::SetBodyParameters(model, body, repaired);
    const dynamics::PseudoInertiaExtremes r = dynamics::PseudoInertiaEigenvalues(repaired);
    std::ostringstream fixed;
    fixed.precision(3);
    fixed << msg.str() << "; repaired (robot.repair_inertia): mass + " << repaired[0] - pi[0]
          << " kg, inertia + " << repaired[4] - pi[4]
          << " kg m^2 on each axis, smallest eigenvalue now " << r.min;
    model.warnings.push_back(fixed.str());
  }
}

std::vector<estimator::JointFriction> ReadNominalFriction(const std::string& path,
                                                          const dynamics::Model& model) {
  const config::Document doc = config::Document::Load(path);
  std::vector<estimator::JointFriction> out;
  const auto friction = doc.root().Optional("friction");
  if (!friction) return out;
  if (!friction->IsMap()) friction->Fail("expected a map of joint names");
  for (const std::string& name : friction->Keys()) {
    const config::Node joint = (*friction)[name];
    bool known = false;
    for (const dynamics::Body& b : model.bodies)
      known = known || (b.joint.type != dynamics::JointType::kFree && b.joint.name == name);
    if (!known) joint.Fail("'" + name + "' is not a moving joint of the URDF");
    joint.AllowOnly({"fc", "fv", "fc_sigma"});
    estimator::JointFriction f;
    f.joint = name;
    f.coulomb = joint.Get<double>("fc", 0.0, {-1e4, 1e4});
    f.viscous = joint.Get<double>("fv", 0.0, {-1e4, 1e4});
    f.coulomb_sigma = joint.Get<double>("fc_sigma", 0.0, {0.0, 1e4});
    out.push_back(f);
  }
  return out;
}

}  // namespace heft::plugin

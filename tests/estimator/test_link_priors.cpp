// estimator.link_priors: each estimated link its own initial σ, random walk and pull
// (docs/estimator.md, "Where the data say nothing"), so that a torso with the rigid prior and a
// forearm with the paper's loose one can be estimated together.
#include <gtest/gtest.h>

#include <stdexcept>

#include "fixtures.hpp"
#include "heft/dynamics/model.hpp"
#include "heft/estimator/inertial_estimator.hpp"

namespace heft::estimator {
namespace {

dynamics::Model Humanoid() {
  return dynamics::LoadModelFromUrdfFile(std::string(HEFT_ROBOTS_DIR) + "/heft_humanoid.urdf",
                                         dynamics::ModelOptions{});
}

EstimatorConfig RigidTorsoLooseForearm() {
  EstimatorConfig c = test::ArmConfig({"left_forearm", "torso"});
  EstimatorConfig::LinkPrior rigid;
  rigid.link = "torso";
  dynamics::Vector10 sigma = dynamics::Vector10::Constant(0.03);
  sigma[0] = 0.3;
  rigid.initial_sigma = sigma;
  dynamics::Vector10 q = dynamics::Vector10::Constant(1e-6);
  q[0] = 1e-3;
  rigid.process_noise = q;
  rigid.prior_time_constant = 2.0;
  c.link_priors = {rigid};
  return c;
}

// Fails if a link's prior is not its own: the forearm (not listed) keeps the estimator-wide σ₀,
// the torso gets its entry's, in the filter's coordinates. (The per-state random walk and pull
// go through the same per-link vectors; PriorPull.EachBodyKeepsItsOwnPriorAndPull checks the
// filter's side.)
TEST(LinkPriors, EachLinkStartsFromItsOwnPrior) {
  const dynamics::Model model = Humanoid();
  const EstimatorConfig c = RigidTorsoLooseForearm();
  InertialEstimator est(model, c);
  const Eigen::MatrixXd& P = est.filter().covariance();
  for (int i = 0; i < 10; ++i) {
    EXPECT_DOUBLE_EQ(P(i, i), c.initial_sigma[i] * c.initial_sigma[i]) << i;
    EXPECT_DOUBLE_EQ(P(10 + i, 10 + i),
                     (*c.link_priors[0].initial_sigma)[i] * (*c.link_priors[0].initial_sigma)[i])
        << i;
  }
}

// Fails if a wrong entry is taken silently: a link that is not estimated, a link given twice, a
// σ₀ that is not positive.
TEST(LinkPriors, RefusesEntriesThatDoNotBelong) {
  const dynamics::Model model = Humanoid();
  EstimatorConfig c = RigidTorsoLooseForearm();
  c.link_priors[0].link = "pelvis";
  EXPECT_THROW(InertialEstimator(model, c), std::invalid_argument);
  c = RigidTorsoLooseForearm();
  c.link_priors.push_back(c.link_priors[0]);
  EXPECT_THROW(InertialEstimator(model, c), std::invalid_argument);
  c = RigidTorsoLooseForearm();
  (*c.link_priors[0].initial_sigma)[3] = 0.0;
  EXPECT_THROW(InertialEstimator(model, c), std::invalid_argument);
}

}  // namespace
}  // namespace heft::estimator

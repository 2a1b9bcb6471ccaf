// URDF → Model: the reference humanoid's structure, merging of fixed links, and every refusal case
// with a message that names the URDF element.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Geometry>

#include "heft/estimator/model.hpp"

namespace heft::dyn {
namespace {

using ::testing::HasSubstr;

Model Reference(bool floating) {
  return LoadModelFromUrdfFile(std::string(HEFT_ROBOTS_DIR) +
                                   (floating ? "/heft_humanoid.urdf" : "/heft_humanoid_fixed.urdf"),
                               ModelOptions{});
}

TEST(Model, ReferenceHumanoidFloating) {
  const Model m = Reference(true);
  EXPECT_TRUE(m.floating_base);
  EXPECT_EQ(m.nv, 35);
  EXPECT_EQ(m.nq, 36);
  EXPECT_EQ(m.bodies[0].name, "pelvis");
  EXPECT_EQ(m.bodies[0].joint.type, JointType::kFree);
  EXPECT_NEAR(TotalMass(m), 88.8, 1e-9);
  EXPECT_NEAR(m.bodies[m.body_index("torso")].parameters[0], 30.0, 1e-12);  // head merged
  EXPECT_NEAR(m.bodies[m.body_index("left_forearm")].parameters[0], 1.5, 1e-12);
  EXPECT_EQ(m.frames[m.frame_index("left_foot_ft")].body, m.body_index("left_foot"));
  EXPECT_EQ(m.frames[m.frame_index("base_root")].body, kWorld);
  for (const Body& b : m.bodies)
    if (b.parent != kWorld) {
      EXPECT_LT(b.parent, &b - m.bodies.data()) << "parents precede children";
    }
  for (const Body& b : m.bodies)
    if (b.parameters[0] > 0) {
      EXPECT_TRUE(IsPhysicallyConsistent(b.parameters, 0.0)) << b.name;
    }
}

TEST(Model, ReferenceHumanoidFixedAndForcedFloating) {
  const Model fixed = Reference(false);
  EXPECT_FALSE(fixed.floating_base);
  EXPECT_EQ(fixed.nv, 29);
  EXPECT_EQ(fixed.frames[fixed.frame_index("pelvis")].body, kWorld);
  EXPECT_NEAR(TotalMass(fixed), 88.8 - 12.0, 1e-9);  // the welded pelvis belongs to the world
  ModelOptions opt;
  opt.floating_base = true;
  const Model floating =
      LoadModelFromUrdfFile(std::string(HEFT_ROBOTS_DIR) + "/heft_humanoid_fixed.urdf", opt);
  EXPECT_TRUE(floating.floating_base);
  EXPECT_EQ(floating.nv, 35);
}

TEST(Model, SmallChainMergesFixedLinksAndReadsTags) {
  const Model m =
      LoadModelFromUrdfFile(std::string(HEFT_DYN_DATA_DIR) + "/chain.urdf", ModelOptions{});
  ASSERT_EQ(m.num_bodies(), 3);
  const Body& slider = m.bodies[m.body_index("slider")];
  EXPECT_EQ(slider.joint.type, JointType::kPrismatic);
  EXPECT_NEAR(slider.parameters[0], 1.1, 1e-12);  // slider + tool
  EXPECT_TRUE(m.bodies[m.body_index("link2")].joint.continuous);
  EXPECT_NEAR(m.bodies[m.body_index("link2")].axis.norm(), 1.0, 1e-15);
  EXPECT_EQ(m.bodies[m.body_index("link1")].joint.effort, 50.0);
  EXPECT_EQ(m.frames[m.frame_index("tool_tip")].body, m.body_index("slider"));
  EXPECT_THAT([&] { (void)m.body_index("tool"); },
              ::testing::ThrowsMessage<ModelError>(HasSubstr("merged into body 'slider'")));
  EXPECT_THAT(
      [&] { (void)m.frame_index("nope"); },
      ::testing::ThrowsMessage<ModelError>(HasSubstr("unknown frame (link) 'nope'; known: base")));
}

// A one-joint robot whose child link / joint can be replaced to build each bad case.
std::string Robot(const std::string& child_inertial, const std::string& joint_type = "revolute",
                  const std::string& extra = "") {
  return R"(<robot name="r"><link name="base"/>
    <link name="a">)" +
         child_inertial + R"(</link>
    <joint name="j" type=")" +
         joint_type + R"("><parent link="base"/><child link="a"/>
      <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>)" +
         extra + R"(</joint>
    </robot>)";
}
std::string Inertial(double m, double ixx, double iyy, double izz) {
  return "<inertial><mass value=\"" + std::to_string(m) + "\"/><inertia ixx=\"" +
         std::to_string(ixx) + "\" ixy=\"0\" ixz=\"0\" iyy=\"" + std::to_string(iyy) +
         "\" iyz=\"0\" izz=\"" + std::to_string(izz) + "\"/></inertial>";
}

std::string ZeroAxis(std::string xml) {
  return xml.replace(xml.find("0 0 1"), 5, "0 0 0");
}

struct BadCase {
  const char* name;
  std::string xml;
  const char* message;
};

TEST(Model, RefusesWithAMessageNamingTheElement) {
  const std::string good = Inertial(1, 0.01, 0.01, 0.01);
  const std::vector<BadCase> cases = {
      {"planar", Robot(good, "planar"), "joint 'j': planar joints are not supported"},
      {"mimic", Robot(good, "revolute", R"(<mimic joint="k"/>)"), "joint 'j': mimic joints"},
      {"negative mass", Robot(Inertial(-1, 0.01, 0.01, 0.01)),
       "link 'a' <inertial>: negative mass"},
      {"not positive definite", Robot(Inertial(1, 0.01, -0.01, 0.01)),
       "link 'a' <inertial>: the inertia about the centre of mass is not positive definite"},
      {"triangle", Robot(Inertial(1, 0.01, 0.01, 0.05)),
       "link 'a' <inertial>: the inertia about the centre of mass breaks the triangle inequality"},
      {"floating below root",
       R"(<robot name="r"><link name="base"/><link name="a">)" + good +
           R"(</link><link name="b">)" + good +
           R"(</link><joint name="j" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
           <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
           <joint name="f" type="floating"><parent link="a"/><child link="b"/></joint></robot>)",
       "joint 'f': a floating joint is only supported as the single child of a massless root"},
      {"zero axis", ZeroAxis(Robot(good)), "joint 'j' <axis>: zero axis"},
      {"no moving joint", Robot(good, "fixed"), "no moving joint"},
      {"not xml", "<robot", "not a valid URDF"},
  };
  for (const BadCase& c : cases) {
    try {
      (void)LoadModelFromUrdfString(c.xml, ModelOptions{}, "test.urdf");
      ADD_FAILURE() << c.name << ": accepted";
    } catch (const ModelError& e) {
      EXPECT_THAT(e.what(), HasSubstr(c.message)) << c.name;
      EXPECT_THAT(e.what(), HasSubstr("test.urdf")) << c.name;
    }
  }
}

TEST(Model, RepairsInertiaOnlyWhenAskedAndSaysSo) {
  ModelOptions opt;
  opt.repair_inertia = true;
  const Model m = LoadModelFromUrdfString(Robot(Inertial(1, 0.01, 0.01, 0.05)), opt, "test.urdf");
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_THAT(m.warnings[0], HasSubstr("link 'a' <inertial>"));
  EXPECT_THAT(m.warnings[0], HasSubstr("repaired"));
  EXPECT_TRUE(IsPhysicallyConsistent(m.bodies[0].parameters, -1e-12));
}

TEST(Inertia, ConversionsRoundTripAndConsistency) {
  RigidBodyInertia body;
  body.mass = 2.0;
  body.com = {0.1, -0.2, 0.05};
  body.inertia_com << 0.03, 0.001, 0.0, 0.001, 0.02, 0.002, 0.0, 0.002, 0.04;
  const Vector10 pi = ParametersFromInertia(body);
  const RigidBodyInertia back = InertiaFromParameters10(pi);
  EXPECT_NEAR(back.mass, 2.0, 1e-15);
  EXPECT_LT((back.com - body.com).norm(), 1e-15);
  EXPECT_LT((back.inertia_com - body.inertia_com).norm(), 1e-15);
  EXPECT_TRUE(IsPhysicallyConsistent(pi));
  Vector10 bad = pi;
  bad[0] = -1.0;
  EXPECT_FALSE(IsPhysicallyConsistent(bad));
  RigidBodyInertia rod = body;
  rod.inertia_com =
      Eigen::Vector3d(0.01, 0.01, 0.03).asDiagonal();  // breaks the triangle inequality
  EXPECT_FALSE(IsPhysicallyConsistent(ParametersFromInertia(rod)));
  // Transforming into another frame and back is the identity.
  const Eigen::Matrix3d R =
      Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
  const Eigen::Vector3d p(0.3, -0.1, 0.2);
  const Vector10 there = TransformParameters(pi, R, p);
  const Vector10 back_again = TransformParameters(there, R.transpose(), -R.transpose() * p);
  EXPECT_LT((back_again - pi).norm(), 1e-14);
}

}  // namespace
}  // namespace heft::dyn

// URDF → Model: the reference humanoid's structure, merging of fixed links, and every refusal case
// with a message that names the URDF element.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <cmath>

#include "heft/dynamics/dynamics.hpp"
#include "heft/dynamics/model.hpp"
#include "heft/estimator/inertial_estimator.hpp"

namespace heft::dynamics {
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
      // Each number finite, their product not: m·c overflows in the first moment (the fuzzer's
      // find). Accepting it would hand infinities to the dynamics.
      {"overflow", Robot(R"(<inertial><origin xyz="1e300 0 0"/><mass value="1e300"/>
           <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>)"),
       "link 'a': its inertia or placement overflows"},
      {"no moving joint", Robot(good, "fixed"), "no moving joint"},
      {"not xml", "<robot", "not a valid URDF"},
      // A truncated multi-byte sequence in a name: TinyXML would read past the string's end.
      {"not utf-8", R"(<robot name=")" + std::string("\xDA\xDA") + R"("/>)",
       "test.urdf:1: not valid UTF-8 (byte 0xDA at offset 13)"},
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

// Issue 17: urdfdom drops a link's whole <inertial> when one number does not parse, says so only on
// stderr, and the link loaded as massless. Each case must be refused naming the file, the line, the
// link and the offending value (before the check, every one of them loaded without an error).
TEST(Model, RefusesInertialNumbersUrdfdomWouldDrop) {
  auto with = [](const std::string& from, const std::string& to) {
    std::string xml = Robot(R"(
      <inertial><origin xyz="0 0 0.1" rpy="0 0 0"/><mass value="1.5"/>
        <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>)");
    xml.replace(xml.find(from), from.size(), to);
    return xml;
  };
  const std::vector<BadCase> cases = {
      {"nan mass", with("\"1.5\"", "\"nan\""),
       "test.urdf:3: link 'a' <inertial><mass value='nan'>"},
      {"decimal comma", with("\"1.5\"", "\"0,08\""), "<mass value='0,08'>: not a finite number"},
      {"overflow", with("\"1.5\"", "\"1e999\""), "<mass value='1e999'>: not a finite number"},
      {"inf inertia", with("izz=\"0.01\"", "izz=\"inf\""), "<inertia izz='inf'>"},
      {"word inertia", with("ixy=\"0\"", "ixy=\"zero\""), "<inertia ixy='zero'>"},
      {"trailing space", with("\"1.5\"", "\"1.5 \""), "<mass value='1.5 '>"},
      {"missing inertia key", with("iyz=\"0\"", ""), "<inertia iyz>: missing attribute"},
      {"comma in origin", with("0 0 0.1", "0 0 0,1"), "<origin xyz='0 0 0,1'>"},
      {"short origin", with("rpy=\"0 0 0\"", "rpy=\"0 0\""), "<origin rpy='0 0'>"},
      {"no mass", with("<mass value=\"1.5\"/>", ""), "link 'a' <inertial><mass>: missing element"},
  };
  for (const BadCase& c : cases) {
    try {
      const Model m = LoadModelFromUrdfString(c.xml, ModelOptions{}, "test.urdf");
      ADD_FAILURE() << c.name << ": accepted, mass " << TotalMass(m);
    } catch (const ModelError& e) {
      EXPECT_THAT(e.what(), HasSubstr(c.message)) << c.name;
      EXPECT_THAT(e.what(), HasSubstr("test.urdf:")) << c.name;
    }
  }
  // What urdfdom does parse still loads: leading white space and '+', exponents.
  const Model m = LoadModelFromUrdfString(with("\"1.5\"", "\" +15e-1\""), ModelOptions{}, "ok");
  EXPECT_DOUBLE_EQ(TotalMass(m), 1.5);
}

// A <mimic> on a fixed joint (Talos's grippers) means nothing: loaded, with a warning; on a moving
// joint it is still refused (RefusesWithAMessageNamingTheElement). Failed before: refused.
TEST(Model, IgnoresMimicOnAFixedJointWithAWarning) {
  const std::string xml = R"(<robot name="r"><link name="base"/>
    <link name="a"><inertial><mass value="1"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
    <link name="finger"><inertial><origin xyz="0.1 0 0"/><mass value="0.2"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
    <joint name="j" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
      <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
    <joint name="finger_joint" type="fixed"><parent link="a"/><child link="finger"/>
      <mimic joint="j" multiplier="1" offset="0"/></joint></robot>)";
  const Model m = LoadModelFromUrdfString(xml, ModelOptions{}, "test.urdf");
  EXPECT_EQ(m.nv, 1);
  EXPECT_NEAR(TotalMass(m), 1.2, 1e-12);  // the finger merged into 'a'
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_THAT(m.warnings[0],
              HasSubstr("test.urdf: joint 'finger_joint': <mimic> on a fixed joint ignored"));
}

// A point mass (mass > 0, zero rotational inertia) is what MuJoCo accepts and is physically
// realisable: its pseudo-inertia m [c; 1][c; 1]ᵀ is positive semidefinite (rank 1). Loaded without
// repair (refused before); the dynamics use it (gravity torque m g × lever); IsPhysicallyConsistent
// stays strict (definite), so the estimator refuses to estimate such a link, naming it.
// An axis written with huge components is still a direction: it normalises to a unit vector rather
// than overflowing its norm to infinity and collapsing to zero.
TEST(Model, NormalisesAnAxisWithHugeComponents) {
  std::string xml = Robot(Inertial(1, 0.01, 0.01, 0.01));
  xml.replace(xml.find("0 0 1"), 5, "0 1e300 1e300");
  const Model m = LoadModelFromUrdfString(xml, ModelOptions{}, "test.urdf");
  EXPECT_NEAR(m.bodies[0].axis.norm(), 1.0, 1e-12);
  EXPECT_NEAR(m.bodies[0].axis.y(), std::sqrt(0.5), 1e-12);
}

TEST(Model, AcceptsUtf8NamesAndComments) {
  std::string xml = Robot(Inertial(1, 0.01, 0.01, 0.01));
  xml.replace(xml.find("name=\"a\""), 8, "name=\"bras_\xC3\xA9\xE2\x82\xAC\xF0\x9F\xA6\xBE\"");
  xml.replace(xml.find("<child link=\"a\""), 15,
              "<child link=\"bras_\xC3\xA9\xE2\x82\xAC\xF0\x9F\xA6\xBE\"");
  xml.insert(xml.find("<link"),
             "<!-- l'avant-bras \xE2\x80\x94 m\xC3\xA9"
             "canique -->");
  const Model m = LoadModelFromUrdfString(xml, ModelOptions{}, "test.urdf");
  EXPECT_EQ(m.bodies[0].name, "bras_\xC3\xA9\xE2\x82\xAC\xF0\x9F\xA6\xBE");
}

// An endless input is refused at the limit instead of filling the memory.
TEST(Model, AnEndlessUrdfFileIsRefusedAtTheLimit) {
  try {
    (void)LoadModelFromUrdfFile("/dev/zero", ModelOptions{});
    ADD_FAILURE() << "accepted";
  } catch (const ModelError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/dev/zero: the URDF file is larger than 64 MiB"));
  }
}

// Fails if the dynamics refuse a point mass, or the estimator refuses one for another reason than
// its degeneracy (as massless, or as inconsistent): the reason must say what to do.
TEST(Model, AcceptsAPointMass) {
  const std::string xml = Robot(R"(<inertial><origin xyz="0.3 0 0"/><mass value="2"/>
      <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial>)");
  std::string rotated = xml;  // the joint about y, so gravity pulls on the lever
  rotated.replace(rotated.find("0 0 1"), 5, "0 1 0");
  const Model m = LoadModelFromUrdfString(rotated, ModelOptions{}, "test.urdf");
  EXPECT_TRUE(m.warnings.empty());
  const Vector10& pi = m.bodies[0].parameters;
  EXPECT_DOUBLE_EQ(pi[0], 2.0);
  EXPECT_DOUBLE_EQ(pi[1], 0.6);                   // m c_x
  EXPECT_FALSE(IsPhysicallyConsistent(pi, 0.0));  // on the boundary, not inside
  const Eigen::Vector4d eig =
      Eigen::SelfAdjointEigenSolver<Eigen::Matrix4d>(PseudoInertia(pi)).eigenvalues();
  EXPECT_GT(eig[0], -1e-12);  // positive semidefinite
  EXPECT_NEAR(eig[3], 2.0 * (1.0 + 0.09), 1e-12);
  Workspace ws(m);
  Eigen::VectorXd q = Eigen::VectorXd::Zero(1), tau(1);
  Rnea(m, ws, q, q, q, tau);
  // Holding it: τ = −(c × m g)·y = −m g c_x.
  EXPECT_NEAR(tau[0], -2.0 * 9.81 * 0.3, 1e-12);
  estimator::EstimatorConfig cfg;
  cfg.bodies = {"a"};
  EXPECT_THAT([&] { estimator::InertialEstimator(m, cfg); },
              ::testing::Throws<std::invalid_argument>(::testing::Property(
                  &std::exception::what, HasSubstr("'a' are degenerate (a point mass"))));
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
  // A translation alone is linear in π: TranslationMatrix is its matrix, X(p)⁻¹ = X(−p).
  const Vector10 shifted = TransformParameters(pi, Eigen::Matrix3d::Identity(), p);
  EXPECT_LT((TranslationMatrix(p) * pi - shifted).norm(), 1e-14);
  EXPECT_LT(
      (TranslationMatrix(-p) * TranslationMatrix(p) - Eigen::Matrix<double, 10, 10>::Identity())
          .norm(),
      1e-14);
}

}  // namespace
}  // namespace heft::dynamics

// heft_config: every malformed input gets a message naming the file, the key path and what is
// allowed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "heft/config/yaml.hpp"

namespace heft::config {
namespace {

using ::testing::HasSubstr;

struct Case {
  const char* name;
  const char* yaml;
  const char* message;
};

// Reads a small schema: estimator: {filter: ekf|kf, rate: number in [0, 10], bodies: [strings]}.
void ReadSchema(const Node& root) {
  root.AllowOnly({"estimator"});
  const Node est = root["estimator"];
  est.AllowOnly({"filter", "rate", "bodies", "enabled", "window", "matrix"});
  (void)est.Enum("filter", {"ekf", "kf"}, "ekf");
  (void)est.Get<double>("rate", 3.0, {0.0, 10.0});
  (void)est.Get<bool>("enabled", true, {});
  (void)est.Get<int>("window", 100, {1, 1000});
  if (auto m = est.Optional("matrix")) (void)m->Numbers(4);
  for (const Node& b : est["bodies"].Elements()) (void)b.As<std::string>();
}

TEST(ConfigYaml, EachMalformedInputHasItsOwnClearMessage) {
  const std::vector<Case> cases = {
      {"unknown top-level key", "estimater: {}\n",
       "heft.yaml:1:1: estimater: unknown key 'estimater'; allowed: estimator"},
      {"unknown nested key", "estimator:\n  bodies: [a]\n  rates: 1\n",
       "heft.yaml:3:3: estimator.rates: unknown key 'rates'; allowed: filter, rate, bodies, "
       "enabled, window, matrix"},
      {"missing key", "estimator:\n  rate: 1\n", "estimator: missing required key 'bodies'"},
      {"bad enum", "estimator:\n  filter: ukf\n  bodies: [a]\n",
       "heft.yaml:2:11: estimator.filter: 'ukf' is not allowed; allowed: ekf, kf"},
      {"out of range", "estimator:\n  rate: 12\n  bodies: [a]\n",
       "estimator.rate: value 12 is out of range; allowed: [0, 10]"},
      {"wrong type", "estimator:\n  rate: fast\n  bodies: [a]\n",
       "estimator.rate: expected a number in [0, 10], found 'fast'"},
      {"not a bool", "estimator:\n  enabled: maybe\n  bodies: [a]\n",
       "estimator.enabled: expected true or false, found 'maybe'"},
      {"not an integer", "estimator:\n  window: 1.5\n  bodies: [a]\n",
       "heft.yaml:2:11: estimator.window: expected an integer in [1, 1000]: '1.5' is not a whole "
       "number"},
      {"integer with garbage", "estimator:\n  window: 12abc\n  bodies: [a]\n",
       "heft.yaml:2:11: estimator.window: expected an integer in [1, 1000]: '12abc' has 'abc' "
       "after the number"},
      {"integer too large", "estimator:\n  window: 99999999999999999999\n  bodies: [a]\n",
       "estimator.window: expected an integer in [1, 1000]: '99999999999999999999' is too large"},
      {"integer beyond int", "estimator:\n  window: 4294967296\n  bodies: [a]\n",
       "estimator.window: value 4294967296 is out of range; allowed: [1, 1000]"},
      {"number overflows", "estimator:\n  rate: 1e999\n  bodies: [a]\n",
       "heft.yaml:2:9: estimator.rate: expected a number in [0, 10]: '1e999' is beyond the range "
       "of a double"},
      {"not a number (nan)", "estimator:\n  rate: nan\n  bodies: [a]\n",
       "heft.yaml:2:9: estimator.rate: expected a number in [0, 10]: 'nan' is not a finite number"},
      {"YAML's .nan", "estimator:\n  rate: .NaN\n  bodies: [a]\n",
       "estimator.rate: expected a number in [0, 10]: '.NaN' is not a finite number"},
      {"YAML's -.inf", "estimator:\n  rate: -.inf\n  bodies: [a]\n",
       "estimator.rate: expected a number in [0, 10]: '-.inf' is not a finite number"},
      {"number with garbage", "estimator:\n  rate: 3.0 m/s\n  bodies: [a]\n",
       "heft.yaml:2:9: estimator.rate: expected a number in [0, 10]: '3.0 m/s' has ' m/s' after "
       "the number"},
      {"list element not finite", "estimator:\n  matrix: [1, 2, inf, 4]\n  bodies: [a]\n",
       "heft.yaml:2:18: estimator.matrix[2]: expected a number in [-inf, inf]: 'inf' is not a "
       "finite number"},
      {"duplicate top-level key", "estimator:\n  bodies: [a]\nestimator:\n  bodies: [b]\n",
       "heft.yaml:3:1: estimator: duplicate key 'estimator' (first at line 1:1)"},
      {"duplicate nested key", "estimator:\n  rate: 1\n  bodies: [a]\n  rate: 2\n",
       "heft.yaml:4:3: estimator.rate: duplicate key 'rate' (first at line 2:3)"},
      {"duplicate key in a flow map", "estimator: {bodies: [a], filter: kf, filter: ekf}\n",
       "heft.yaml:1:38: estimator.filter: duplicate key 'filter' (first at line 1:26)"},
      {"duplicate key in a list element",
       "estimator:\n  bodies: [a]\n  matrix:\n    - {x: 1, x: 2}\n",
       "heft.yaml:4:14: estimator.matrix[0].x: duplicate key 'x' (first at line 4:8)"},
      {"not a list", "estimator:\n  bodies: torso\n",
       "estimator.bodies: expected a list, found 'torso'"},
      {"list element type", "estimator:\n  bodies: [[a]]\n",
       "estimator.bodies[0]: expected a string, found a list"},
      {"wrong length", "estimator:\n  matrix: [1, 2, 3]\n  bodies: [a]\n",
       "estimator.matrix: expected a list of 4 numbers, found a list of 3"},
      {"not yaml", "estimator: [\n", "heft.yaml:2:1: not valid YAML"},
      {"not a map", "- a\n", "heft.yaml:1:1: the top level must be a map"},
      // Found by fuzz_config (tests/fuzz/corpus/fuzz_config/crash-list-as-key.yaml): yaml-cpp's
      // own exception escaped AllowOnly and Keys instead of a ConfigError.
      {"list as a key", "? [estimator]\n: 1\n",
       "heft.yaml:1:3: (top level): a key must be a name, found a list as a key"},
      {"map as a key", "estimator:\n  ? {a: 1}\n  : 2\n",
       "estimator: a key must be a name, found a map as a key"},
  };
  for (const Case& c : cases) {
    try {
      ReadSchema(Document::Parse(c.yaml, "heft.yaml").root());
      ADD_FAILURE() << c.name << ": accepted";
    } catch (const ConfigError& e) {
      EXPECT_THAT(e.what(), HasSubstr(c.message)) << c.name;
      EXPECT_THAT(e.what(), HasSubstr("heft.yaml")) << c.name;
    }
  }
}

TEST(ConfigYaml, ReadsValuesAndDefaults) {
  const Node root =
      Document::Parse("estimator:\n  filter: kf\n  bodies: [torso, left_forearm]\n", "x.yaml")
          .root();
  EXPECT_NO_THROW(ReadSchema(root));
  const Node est = root["estimator"];
  EXPECT_EQ(est.Enum("filter", {"ekf", "kf"}, "ekf"), 1u);
  EXPECT_EQ(est.Get<double>("rate", 3.0, {0.0, 10.0}), 3.0);
  EXPECT_EQ(est["bodies"].Elements()[1].As<std::string>(), "left_forearm");
  EXPECT_THROW(Document::Load("/nonexistent/heft.yaml"), ConfigError);
}

// Numbers in the forms YAML allows are read exactly; would fail if the own number parser refused
// a sign, hexadecimal/octal integers or exponents, or rounded.
TEST(ConfigYaml, ReadsEveryNumberForm) {
  const Node root =
      Document::Parse("a: +2.5\nb: -1e-3\nc: 0x10\nd: -0o17\ne: '7'\nf: -2147483648\ng: 3.\n",
                      "n.yaml")
          .root();
  EXPECT_EQ(root.Get<double>("a"), 2.5);
  EXPECT_EQ(root.Get<double>("b"), -1e-3);
  EXPECT_EQ(root.Get<int>("c"), 16);
  EXPECT_EQ(root.Get<int>("d"), -15);
  EXPECT_EQ(root.Get<int>("e"), 7);
  EXPECT_EQ(root.Get<int>("f"), -2147483648);
  EXPECT_EQ(root.Get<double>("g"), 3.0);
  EXPECT_EQ(root.Get<double>("c"), 16.0) << "hexadecimal where a real number is read";
}

// A missing file names the file and the system's reason; would fail without the errno text.
TEST(ConfigYaml, MissingFileNamesTheReason) {
  try {
    Document::Load("/nonexistent/heft.yaml");
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/heft.yaml: cannot open the configuration file: "
                                    "No such file or directory"));
  }
}

// An endless input (/dev/zero, a FIFO nobody closes) is refused at the limit instead of filling
// the memory; would hang or be killed without it.
TEST(ConfigYaml, AnEndlessFileIsRefusedAtTheLimit) {
  try {
    Document::Load("/dev/zero");
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/dev/zero: the configuration file is larger than 64 MiB"));
  }
}

}  // namespace
}  // namespace heft::config

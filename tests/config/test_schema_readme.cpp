// The configuration's documentation against its schema (heft/config/schema.hpp, the key tables the
// parsers refuse every other key with): every key of every section appears in the schema block of
// config/README.md (the `drivers:` section in drivers/README.md's block), and every key of those
// blocks is in the schema. Fails when a key is added to a parser's table but not documented, or
// documented but not read (the README once missed `host.shm` and `estimator.control_period`).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "heft/config/schema.hpp"

namespace heft::config {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The first ```yaml block after `heading` (or from the start when empty).
std::string YamlBlock(const std::string& markdown, const std::string& heading) {
  const std::size_t from = heading.empty() ? 0 : markdown.find(heading);
  if (from == std::string::npos) return {};
  const std::string open = "```yaml\n";
  const std::size_t begin = markdown.find(open, from);
  if (begin == std::string::npos) return {};
  const std::size_t end = markdown.find("```", begin + open.size());
  return markdown.substr(begin + open.size(), end - begin - open.size());
}

// Every key path of a YAML tree: "host.shm", "simulation.faults[].name", ...
void KeyPaths(const YAML::Node& node, const std::string& path, std::set<std::string>& out) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      const std::string key = path.empty() ? kv.first.Scalar() : path + "." + kv.first.Scalar();
      out.insert(key);
      KeyPaths(kv.second, key, out);
    }
  } else if (node.IsSequence()) {
    for (const auto& element : node) KeyPaths(element, path + "[]", out);
  }
}

std::set<std::string> SchemaPaths() {
  std::set<std::string> out;
  for (const schema::Section& s : schema::kSections)
    for (const char* key : s.keys)
      out.insert(s.path.empty() ? std::string(key) : std::string(s.path) + "." + key);
  return out;
}

// The documented configuration: config/README.md's schema block with drivers/README.md's
// `drivers:`.
YAML::Node Documented(const std::string& config_readme, const std::string& drivers_readme) {
  YAML::Node doc = YAML::Load(YamlBlock(config_readme, "## Schema"));
  const YAML::Node drivers = YAML::Load(YamlBlock(drivers_readme, ""));
  doc["drivers"] = drivers["drivers"];
  return doc;
}

// Its key paths.
std::set<std::string> DocumentedPaths(const YAML::Node& documented) {
  std::set<std::string> out;
  KeyPaths(documented, "", out);
  return out;
}

// What one set has and the other has not, one per line.
std::string Missing(const std::set<std::string>& from, const std::set<std::string>& in) {
  std::string out;
  for (const std::string& k : from)
    if (!in.count(k)) out += k + "\n";
  return out;
}

const std::string kConfigReadme = std::string(HEFT_SOURCE_DIR) + "/config/README.md";
const std::string kDriversReadme = std::string(HEFT_SOURCE_DIR) + "/drivers/README.md";

TEST(ConfigSchema, EveryKeyIsDocumentedAndEveryDocumentedKeyExists) {
  const std::set<std::string> schema = SchemaPaths();
  const std::set<std::string> documented =
      DocumentedPaths(Documented(Slurp(kConfigReadme), Slurp(kDriversReadme)));
  ASSERT_GT(documented.size(), 50u) << "the README's schema block was not found";
  EXPECT_EQ(Missing(schema, documented), "")
      << "in heft/config/schema.hpp but not in the schema block of config/README.md "
         "(drivers: drivers/README.md)";
  EXPECT_EQ(Missing(documented, schema), "")
      << "documented in config/README.md (or drivers/README.md) but not in "
         "heft/config/schema.hpp: the parsers refuse it";
}

// The negative controls: the same comparison on the documented configuration with one key taken
// out, and with one key too many (edited as yaml-cpp nodes), names that key. Fails if the check
// could not see a missing or a stray key.
TEST(ConfigSchema, TheCheckNamesAMissingAndAStrayKey) {
  const std::set<std::string> schema = SchemaPaths();
  const YAML::Node documented = Documented(Slurp(kConfigReadme), Slurp(kDriversReadme));
  ASSERT_TRUE(documented["host"]["shm"]) << "the schema block documents host.shm no more";
  YAML::Node without = YAML::Clone(documented);
  without["host"].remove("shm");
  EXPECT_EQ(Missing(schema, DocumentedPaths(without)), "host.shm\n");
  YAML::Node stray = YAML::Clone(documented);
  stray["host"]["shm_size"] = 4096;
  EXPECT_EQ(Missing(DocumentedPaths(stray), schema), "host.shm_size\n");
}

}  // namespace
}  // namespace heft::config

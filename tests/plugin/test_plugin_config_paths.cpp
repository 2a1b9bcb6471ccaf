// The files named under `robot:` (urdf, parameters): a path the OS refuses or that is not a regular
// file is a ConfigError naming the key, never another exception.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "heft/config/yaml.hpp"
#include "heft/plugin/plugin_config.hpp"

namespace heft::plugin {
namespace {

using ::testing::HasSubstr;

std::string Refusal(const std::string& yaml) {
  try {
    ParsePluginConfig(config::Document::Parse(yaml, "heft.yaml").root(), HEFT_CONFIG_DIR);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

// Found writing fuzz_config (a crafted input, now tests/fuzz/corpus/fuzz_config/
// crash-urdf-name-too-long.yaml, on which the harness aborts): a file name longer than NAME_MAX
// made std::filesystem::exists throw filesystem_error ("File name too long") out of the parser.
// Fails if that exception escapes (the test then errors) or the message does not name the key.
TEST(PluginConfigPaths, ANameTheSystemRefusesIsNoSuchFile) {
  EXPECT_THAT(Refusal("robot:\n  urdf: " + std::string(300, 'a') + "\n"),
              HasSubstr("robot.urdf: no such file"));
}

// Fails if a directory (or a device) is taken for a URDF: reading it would fail later or block.
TEST(PluginConfigPaths, ADirectoryIsNotARegularFile) {
  EXPECT_THAT(Refusal("robot:\n  urdf: robots\n"), HasSubstr("robot.urdf: not a regular file"));
  EXPECT_THAT(Refusal("robot:\n  urdf: /dev/zero\n"), HasSubstr("robot.urdf: not a regular file"));
}

}  // namespace
}  // namespace heft::plugin

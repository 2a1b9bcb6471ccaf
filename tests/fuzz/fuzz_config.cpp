// heft's YAML configuration: the config::Node reader (config/src/yaml.cpp) walked over every node
// of a fuzzed document with each accessor, then the plugin's parser (config/src/plugin_config.cpp:
// robot, drivers, estimator sections) and its check against the URDF, and the identified-parameter
// file reader on a chain model. The only exception allowed out is config::ConfigError (the
// documented error with file, line and key); anything else escaping is a bug and aborts.
#include <console_bridge/console.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "heft/config/yaml.hpp"
#include "heft/drivers/driver_config.hpp"
#include "heft/dynamics/model.hpp"
#include "heft/plugin/driver_check.hpp"
#include "heft/plugin/plugin_config.hpp"

namespace {

using heft::config::ConfigError;
using heft::config::Node;

template <typename F>
void Try(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    if (std::string(e.what()).rfind("fuzz.yaml", 0) != 0) std::abort();  // must name the file
  }
}

void Walk(const Node& node, int depth) {
  if (depth > 64) return;
  Try([&] { (void)node.As<double>({-1.0, 1.0}); });
  Try([&] { (void)node.As<int>({-5.0, 1e6}); });
  Try([&] { (void)node.As<bool>(); });
  Try([&] { (void)node.As<std::string>(); });
  Try([&] { (void)node.Numbers(3, {0.0, 10.0}); });
  Try([&] { node.AllowOnly({"robot", "drivers", "estimator"}); });
  Try([&] { (void)node.Enum("filter", {"ekf", "kf"}, "ekf"); });
  Try([&] { (void)node.Get<double>("timeout_ms", 3.0, {0.5, 1000.0}); });
  Try([&] {
    for (const Node& e : node.Elements()) Walk(e, depth + 1);
  });
  Try([&] {
    for (const std::string& key : node.Keys()) Walk(node[key], depth + 1);
  });
}

const heft::dynamics::Model& Chain() {
  static const heft::dynamics::Model model =
      heft::dynamics::LoadModelFromUrdfFile(HEFT_FUZZ_CHAIN_URDF, heft::dynamics::ModelOptions{});
  return model;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  console_bridge::setLogLevel(console_bridge::CONSOLE_BRIDGE_LOG_NONE);  // urdfdom's chatter
  (void)Chain();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace heft;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::optional<config::Document> doc;
  Try([&] { doc = config::Document::Parse(text, "fuzz.yaml"); });
  if (!doc) return 0;
  Walk(doc->root(), 0);
  Try([&] {
    // Relative file names resolve against config/ (where heft.yaml's robots/ lives).
    plugin::PluginConfig cfg = plugin::ParsePluginConfig(doc->root(), HEFT_FUZZ_CONFIG_DIR);
    // Only regular files: a fuzzed absolute path could name /dev/zero or a FIFO.
    if (std::filesystem::is_regular_file(cfg.urdf_path)) {
      const dynamics::Model model = dynamics::LoadModelFromUrdfFile(
          cfg.urdf_path, dynamics::ModelOptions{cfg.floating_base, cfg.repair_inertia});
      plugin::CheckDriverConfig(cfg.drivers, model, cfg.urdf_path, doc->root()["drivers"]);
    }
  });
  Try([&] {
    dynamics::Model model = Chain();
    plugin::ApplyNominalParameters(*doc, model);
  });
  return 0;
}

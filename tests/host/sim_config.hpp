// A simulated-robot configuration (config/sim/<scenario>.yaml) copied where a test wants it, with
// its URDF path made absolute and lines added to its `host:` section (e.g. host.plugin,
// host.persistence). The including target defines HEFT_CONFIG_DIR.
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace heft::test {

inline std::string SimConfigWithHost(const std::string& scenario, const std::string& host_lines,
                                     const std::string& out_path) {
  const std::string dir = HEFT_CONFIG_DIR;
  std::ifstream in(dir + "/sim/" + scenario + ".yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    if (at == std::string::npos) throw std::runtime_error(scenario + ": no '" + from + "'");
    text.replace(at, from.size(), to);
  };
  replace("urdf: ../robots/", "urdf: " + dir + "/robots/");
  replace("\nhost:\n", "\nhost:\n" + host_lines);
  std::ofstream(out_path) << text;
  return out_path;
}

}  // namespace heft::test

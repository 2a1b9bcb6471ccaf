// A robot's role-map file (config/robots/<robot>_roles.yaml) as the `roles:` entry of a
// configuration's `simulation:` section, for the tests that write their own configurations.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace heft::sim::test {

// "  roles:\n    pelvis: ...\n ...": the file's `roles:` map, indented under `simulation:`.
inline std::string RolesYaml(const std::string& roles_file) {
  std::ifstream in(roles_file);
  std::string line, out;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line == "roles:") inside = true;
    if (inside && !line.empty() && line[0] != '#') out += "  " + line + "\n";
  }
  return out;
}

}  // namespace heft::sim::test

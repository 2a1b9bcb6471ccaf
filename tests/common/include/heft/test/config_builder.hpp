// A configuration for a test, built through yaml-cpp's nodes instead of editing the file's text:
// load a YAML file, set or remove values by key path, write the result into a fresh temporary
// directory of its own.
//
//   heft::test::ConfigBuilder config(config_dir + "/sim/dumbbell-curl.yaml");
//   config.Set("estimator.control_period", "0.002")
//       .SetYaml("simulation.faults", "[{device: loss, probability: 0.03}]")
//       .Remove("host.realtime");
//   const std::string path = config.Write("period.yaml");  // config.dir() + "/period.yaml"
//
// Key paths are dotted map keys with list indices: "estimator.calibration.enabled",
// "drivers.joints[6].name", "estimator.links[1]". Set and SetYaml create missing maps on the way;
// an index one past a list's end appends.
//
// Paths in the file: robot.urdf and robot.parameters are resolved by the programs relative to the
// configuration's folder (plugin_config.cpp), so a relative one is made absolute against the loaded
// file's folder when it is loaded; the written copy names the same files from anywhere. Other paths
// (host.telemetry, simulation.candump, ...) are the working directory's: give them absolute, under
// dir().
//
// Where() and WhereKey() give "line:column" (1-based, as heft's configuration errors print them) of
// a value or of its key in a written file: the expected position of an error message, whatever
// layout the emitter chose.
//
// The directory is made with mkdtemp under std::filesystem::temp_directory_path() (TMPDIR: under
// ctest the tree's test folder, emptied at the start of each run) and left for a look after a
// failure. Header only; the including target links yaml-cpp (heft_test_config).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace heft::test {

// A new, empty directory under the temporary folder: <tmp>/<prefix>-XXXXXX.
inline std::string FreshTempDir(const std::string& prefix = "heft") {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
  return pattern;
}

namespace config_builder_detail {

// One step of a key path: a map key, or a list index when `key` is empty.
struct Step {
  std::string key;
  std::size_t index = 0;
};

inline std::vector<Step> Parse(const std::string& path) {
  std::vector<Step> steps;
  std::size_t at = 0;
  while (at < path.size()) {
    const std::size_t end = path.find_first_of(".[", at);
    const std::string key = path.substr(at, end == std::string::npos ? end : end - at);
    if (!key.empty()) steps.push_back({key, 0});
    if (end == std::string::npos) break;
    if (path[end] == '.') {
      at = end + 1;
      continue;
    }
    const std::size_t close = path.find(']', end);
    if (close == std::string::npos) throw std::invalid_argument("key path '" + path + "': no ]");
    steps.push_back({"", std::stoul(path.substr(end + 1, close - end - 1))});
    at = close + 1;
    if (at < path.size() && path[at] == '.') ++at;
  }
  if (steps.empty()) throw std::invalid_argument("empty key path");
  return steps;
}

inline std::string Describe(const std::vector<Step>& steps, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n && i < steps.size(); ++i) {
    if (steps[i].key.empty()) {
      s.append("[").append(std::to_string(steps[i].index)).append("]");
    } else {
      if (!s.empty()) s.append(".");
      s.append(steps[i].key);
    }
  }
  return s.empty() ? "(top level)" : s;
}

// The node at steps[0, n) below `root`; with `create`, missing map keys become empty maps.
inline YAML::Node Walk(YAML::Node root, const std::vector<Step>& steps, std::size_t n,
                       bool create) {
  YAML::Node node = root;
  for (std::size_t i = 0; i < n; ++i) {
    const Step& s = steps[i];
    YAML::Node next;
    if (s.key.empty()) {
      if (!node.IsSequence() || s.index >= node.size())
        throw std::out_of_range(Describe(steps, i + 1) + ": no such list element");
      next.reset(node[s.index]);
    } else {
      if (!node.IsMap() && !(create && node.IsNull()))
        throw std::out_of_range(Describe(steps, i) + " is not a map (looking for '" + s.key + "')");
      const YAML::Node& view = node;  // const: looking does not add the key
      if (!view[s.key]) {
        if (!create) throw std::out_of_range(Describe(steps, i + 1) + ": no such key");
        node[s.key] = YAML::Node(YAML::NodeType::Map);
      }
      next.reset(node[s.key]);
    }
    node.reset(next);
  }
  return node;
}

// "line:column", 1-based.
inline std::string Position(const YAML::Mark& m) {
  return std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

// The mark of the node at `path` in `file`, or of its key (the last step must be a map key).
inline std::string Find(const std::string& file, const std::string& path, bool of_key) {
  const std::vector<Step> steps = Parse(path);
  const YAML::Node root = YAML::LoadFile(file);
  const YAML::Node parent = Walk(root, steps, steps.size() - 1, false);
  const Step& last = steps.back();
  if (last.key.empty()) {
    if (of_key) throw std::invalid_argument(path + ": a list element has no key");
    if (!parent.IsSequence() || last.index >= parent.size())
      throw std::out_of_range(file + ": " + path + ": no such list element");
    return Position(parent[last.index].Mark());
  }
  if (parent.IsMap())
    for (const auto& kv : parent)
      if (kv.first.IsScalar() && kv.first.Scalar() == last.key)
        return Position(of_key ? kv.first.Mark() : kv.second.Mark());
  throw std::out_of_range(file + ": " + path + ": no such key");
}

}  // namespace config_builder_detail

class ConfigBuilder {
 public:
  // Loads `file` (a parse error throws YAML::Exception); robot.urdf and robot.parameters made
  // absolute against its folder.
  explicit ConfigBuilder(const std::string& file) : root_(YAML::LoadFile(file)) {
    const std::filesystem::path folder =
        std::filesystem::absolute(std::filesystem::path(file)).parent_path();
    for (const char* key : {"urdf", "parameters"}) {
      if (!root_.IsMap() || !root_["robot"] || !root_["robot"][key] ||
          !root_["robot"][key].IsScalar())
        continue;
      const std::filesystem::path p = root_["robot"][key].Scalar();
      if (p.is_relative()) root_["robot"][key] = (folder / p).lexically_normal().string();
    }
  }

  // `value` as a plain scalar (the emitter quotes it only where YAML would read it otherwise).
  ConfigBuilder& Set(const std::string& path, const std::string& value) {
    return Set(path, YAML::Node(value));
  }
  ConfigBuilder& Set(const std::string& path, const char* value) {
    return Set(path, std::string(value));
  }
  ConfigBuilder& Set(const std::string& path, const YAML::Node& value) {
    namespace d = config_builder_detail;
    const std::vector<d::Step> steps = d::Parse(path);
    YAML::Node parent = d::Walk(root_, steps, steps.size() - 1, true);
    const d::Step& last = steps.back();
    if (last.key.empty()) {
      if (!parent.IsSequence() || last.index > parent.size())
        throw std::out_of_range(path + ": no such list element");
      if (last.index == parent.size())
        parent.push_back(value);
      else
        parent[last.index] = value;
    } else {
      if (parent.IsNull()) parent = YAML::Node(YAML::NodeType::Map);
      if (!parent.IsMap()) throw std::out_of_range(path + ": the parent is not a map");
      parent[last.key] = value;
    }
    return *this;
  }
  // `yaml` parsed as the value: lists and maps in flow style ("[0, 1000]", "{bus: can0}").
  ConfigBuilder& SetYaml(const std::string& path, const std::string& yaml) {
    return Set(path, YAML::Load(yaml));
  }
  // Appends `yaml` (parsed) to the list at `path`, which must exist.
  ConfigBuilder& Append(const std::string& path, const std::string& yaml) {
    YAML::Node list = Get(path);
    if (!list.IsSequence()) throw std::out_of_range(path + ": not a list");
    list.push_back(YAML::Load(yaml));
    return *this;
  }
  // Removes the key or list element at `path`, which must exist.
  ConfigBuilder& Remove(const std::string& path) {
    namespace d = config_builder_detail;
    const std::vector<d::Step> steps = d::Parse(path);
    YAML::Node parent = d::Walk(root_, steps, steps.size() - 1, false);
    const d::Step& last = steps.back();
    const bool removed = last.key.empty() ? parent.remove(last.index) : parent.remove(last.key);
    if (!removed) throw std::out_of_range(path + ": nothing to remove");
    return *this;
  }
  // The node at `path` (which must exist); it refers into the configuration.
  [[nodiscard]] YAML::Node Get(const std::string& path) const {
    namespace d = config_builder_detail;
    const std::vector<d::Step> steps = d::Parse(path);
    return d::Walk(root_, steps, steps.size(), false);
  }
  [[nodiscard]] const YAML::Node& root() const { return root_; }

  // The builder's own fresh temporary directory (made on first use).
  const std::string& dir() {
    if (dir_.empty()) dir_ = FreshTempDir("heft-config");
    return dir_;
  }
  // Writes the configuration as it stands to dir()/`name` and returns that path. Later changes
  // and writes leave the file as it is.
  std::string Write(const std::string& name = "config.yaml") {
    return WriteTo((std::filesystem::path(dir()) / name).string());
  }
  // The same to a path of the caller's (which should be in a temporary directory).
  std::string WriteTo(const std::string& path) const {
    YAML::Emitter out;
    out << root_;
    if (!out.good()) throw std::runtime_error(path + ": " + out.GetLastError());
    std::ofstream file(path, std::ios::trunc);
    file << out.c_str() << '\n';
    file.close();
    if (!file) throw std::runtime_error("cannot write " + path);
    return path;
  }

 private:
  YAML::Node root_;
  std::string dir_;
};

// "line:column" (1-based) of the value at `path` in the YAML file `file`.
inline std::string Where(const std::string& file, const std::string& path) {
  return config_builder_detail::Find(file, path, false);
}
// "line:column" (1-based) of the key at `path` (a map key) in the YAML file `file`.
inline std::string WhereKey(const std::string& file, const std::string& path) {
  return config_builder_detail::Find(file, path, true);
}

}  // namespace heft::test

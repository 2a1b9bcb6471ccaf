#include "task.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "heft/host/telemetry_table.hpp"

namespace heft::report {
namespace {

std::string Trim(const std::string& s) {
  const auto a = s.find_first_not_of(' ');
  const auto b = s.find_last_not_of(' ');
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The items of a YAML flow sequence or the key/value pairs of a flow map written on one line:
// the text between `open` and `close`, split at commas.
std::vector<std::string> FlowItems(const std::string& line, char open, char close) {
  std::vector<std::string> items;
  const auto a = line.find(open), b = line.rfind(close);
  if (a == std::string::npos || b == std::string::npos || b < a) return items;
  std::istringstream in(line.substr(a + 1, b - a - 1));
  for (std::string item; std::getline(in, item, ',');) items.push_back(Trim(item));
  return items;
}

// What the run's configuration says: its estimated links and, from its role map, each arm's
// forearm → elbow.
struct RunRoles {
  std::vector<std::string> links;
  std::map<std::string, std::string> elbow_of_forearm;
};

RunRoles ReadRoles(const std::string& yaml_path) {
  RunRoles r;
  if (yaml_path.empty()) return r;
  std::ifstream in(yaml_path);
  bool in_roles = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  links: [", 0) == 0) r.links = FlowItems(line, '[', ']');
    if (!line.empty() && line[0] != ' ' && line[0] != '#') in_roles = false;
    if (line.rfind("  roles:", 0) == 0) {
      in_roles = true;
      continue;
    }
    if (!in_roles || line.rfind("    ", 0) != 0 || line.find('{') == std::string::npos) continue;
    std::map<std::string, std::string> role;
    for (const std::string& item : FlowItems(line, '{', '}')) {
      const auto colon = item.find(':');
      if (colon != std::string::npos)
        role[Trim(item.substr(0, colon))] = Trim(item.substr(colon + 1));
    }
    if (role.count("forearm") > 0 && role.count("elbow") > 0)
      r.elbow_of_forearm[role["forearm"]] = role["elbow"];
  }
  return r;
}

// The estimated link: the configuration's first with columns in the telemetry, else the
// telemetry's first link with a truth.
std::string EstimatedLink(const Table& t, const RunRoles& roles) {
  for (const std::string& link : roles.links)
    if (!LinkColumn(t, link, "true_", 0).empty()) return link;
  for (const std::string& name : t.names)
    for (const char* tail : {"_true_mass_kg", "_true_m"})
      if (EndsWith(name, tail)) return name.substr(0, name.size() - std::string(tail).size());
  return roles.links.empty() ? std::string() : roles.links.front();
}

// The balance controller's task errors (heft-sim's, no robot's names), without their units.
bool IsBalanceError(const std::string& error) {
  return error == "pelvis_height_error" || error == "com_x_error" || error == "com_y_error";
}

// The telemetry's joint errors (`<joint>_error_rad`, or `<joint>_error` in the layout before
// units entered the names), as `<joint>_error`.
std::vector<std::string> JointErrors(const Table& t) {
  std::vector<std::string> errors;
  for (const std::string& name : t.names) {
    if (std::find(host::kTickColumns.begin(), host::kTickColumns.end(), name) !=
        host::kTickColumns.end())
      continue;
    std::string error;
    if (EndsWith(name, "_error_rad")) error = name.substr(0, name.size() - 4);
    if (EndsWith(name, "_error") && !IsBalanceError(name)) error = name;
    if (!error.empty()) errors.push_back(error);
  }
  return errors;
}

}  // namespace

ScenarioTask TaskOfRun(const Table& telemetry, const std::string& yaml_path) {
  const RunRoles roles = ReadRoles(yaml_path);
  const std::string link = EstimatedLink(telemetry, roles);
  const std::vector<std::string> joints = JointErrors(telemetry);
  if (joints.empty()) {
    if (ErrorColumn(telemetry, "pelvis_height_error").empty()) return {link, "", "", ""};
    return {link, "pelvis_height_error", "m", "pelvis height error"};
  }
  std::string error = joints.front();
  const auto elbow = roles.elbow_of_forearm.find(link);
  if (elbow != roles.elbow_of_forearm.end() &&
      std::find(joints.begin(), joints.end(), elbow->second + "_error") != joints.end())
    error = elbow->second + "_error";
  const std::string joint = error.substr(0, error.size() - std::string("_error").size());
  bool is_elbow = false;
  for (const auto& [forearm, e] : roles.elbow_of_forearm) is_elbow = is_elbow || e == joint;
  return {link, error, "rad", (is_elbow ? std::string("elbow") : joint) + " angle error"};
}

ScenarioTask TaskOfRun(const std::string& dir, const std::string& run) {
  return TaskOfRun(Read(dir + "/" + run + ".csv"), dir + "/" + run + ".yaml");
}

}  // namespace heft::report

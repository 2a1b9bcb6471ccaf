#include "heft/config/yaml.hpp"

#include <cmath>
#include <sstream>

namespace heft::config {
namespace {

std::string Join(std::initializer_list<const char*> items) {
  std::string out;
  for (const char* s : items) out += (out.empty() ? "" : ", ") + std::string(s);
  return out;
}

std::string Child(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string Describe(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsScalar()) return "'" + n.Scalar() + "'";
  if (n.IsSequence()) return "a list";
  return "a map";
}

std::string RangeText(Range r) {
  std::ostringstream s;
  s << "[" << r.min << ", " << r.max << "]";
  return s.str();
}

}  // namespace

std::string Node::Where() const {
  std::ostringstream s;
  s << *file_;
  const YAML::Mark mark = node_.Mark();
  if (mark.line >= 0) s << ":" << mark.line + 1 << ":" << mark.column + 1;
  s << ": " << (path_.empty() ? std::string("(top level)") : path_);
  return s.str();
}

void Node::Fail(const std::string& what) const {
  throw ConfigError(Where() + ": " + what);
}

Node Node::operator[](const std::string& key) const {
  if (!node_.IsMap()) Fail("expected a map with the key '" + key + "', found " + Describe(node_));
  const YAML::Node child = node_[key];
  if (!child.IsDefined() || child.IsNull()) Fail("missing required key '" + key + "'");
  return Node(file_, child, Child(path_, key));
}

std::optional<Node> Node::Optional(const std::string& key) const {
  if (!node_.IsMap()) Fail("expected a map, found " + Describe(node_));
  const YAML::Node child = node_[key];
  if (!child.IsDefined() || child.IsNull()) return std::nullopt;
  return Node(file_, child, Child(path_, key));
}

std::vector<Node> Node::Elements() const {
  if (!node_.IsSequence()) Fail("expected a list, found " + Describe(node_));
  std::vector<Node> out;
  for (std::size_t i = 0; i < node_.size(); ++i)
    out.emplace_back(file_, node_[i], path_ + "[" + std::to_string(i) + "]");
  return out;
}

// A map key as text; a list or map used as a key (YAML's `? [a]: b`) is refused as a ConfigError
// (yaml-cpp's as<std::string>() threw its own exception, which escaped every caller).
std::string Node::KeyText(const YAML::Node& key) const {
  if (!key.IsScalar())
    Node(file_, key, path_).Fail("a key must be a name, found " + Describe(key) + " as a key");
  return key.Scalar();
}

std::vector<std::string> Node::Keys() const {
  if (!node_.IsMap()) Fail("expected a map, found " + Describe(node_));
  std::vector<std::string> out;
  for (const auto& kv : node_) out.push_back(KeyText(kv.first));
  return out;
}

void Node::AllowOnly(std::initializer_list<const char*> keys) const {
  if (!node_.IsMap()) Fail("expected a map, found " + Describe(node_));
  for (const auto& kv : node_) {
    const std::string key = KeyText(kv.first);
    bool known = false;
    for (const char* k : keys) known = known || key == k;
    if (!known)
      Node(file_, kv.first, Child(path_, key))
          .Fail("unknown key '" + key + "'; allowed: " + Join(keys));
  }
}

template <>
std::string Node::As<std::string>(Range) const {
  if (!node_.IsScalar()) Fail("expected a string, found " + Describe(node_));
  return node_.Scalar();
}

template <>
bool Node::As<bool>(Range) const {
  bool value = false;
  if (!node_.IsScalar() || !YAML::convert<bool>::decode(node_, value))
    Fail("expected true or false, found " + Describe(node_));
  return value;
}

template <>
double Node::As<double>(Range range) const {
  double value = 0.0;
  if (!node_.IsScalar() || !YAML::convert<double>::decode(node_, value) || !std::isfinite(value))
    Fail("expected a number in " + RangeText(range) + ", found " + Describe(node_));
  if (value < range.min || value > range.max)
    Fail("value " + node_.Scalar() + " is out of range; allowed: " + RangeText(range));
  return value;
}

template <>
int Node::As<int>(Range range) const {
  long long value = 0;
  if (!node_.IsScalar() || !YAML::convert<long long>::decode(node_, value))
    Fail("expected an integer in " + RangeText(range) + ", found " + Describe(node_));
  if (static_cast<double>(value) < range.min || static_cast<double>(value) > range.max ||
      value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max())
    Fail("value " + node_.Scalar() + " is out of range; allowed: " + RangeText(range));
  return static_cast<int>(value);
}

std::vector<double> Node::Numbers(std::size_t count, Range range) const {
  if (!node_.IsSequence() || node_.size() != count)
    Fail("expected a list of " + std::to_string(count) + " numbers, found " +
         (node_.IsSequence() ? "a list of " + std::to_string(node_.size()) : Describe(node_)));
  std::vector<double> out;
  for (const Node& e : Elements()) out.push_back(e.As<double>(range));
  return out;
}

std::size_t Node::Enum(const std::string& key, std::initializer_list<const char*> allowed,
                       const char* fallback) const {
  auto child = Optional(key);
  if (!child) {
    if (!fallback) (*this)[key];  // throws: missing required key
    std::size_t i = 0;
    for (const char* a : allowed) {
      if (std::string(a) == fallback) return i;
      ++i;
    }
    return 0;
  }
  const std::string value = child->As<std::string>();
  std::size_t i = 0;
  for (const char* a : allowed) {
    if (value == a) return i;
    ++i;
  }
  child->Fail("'" + value + "' is not allowed; allowed: " + Join(allowed));
}

Document Document::Parse(const std::string& text, const std::string& name) {
  Document doc;
  doc.file_ = std::make_shared<const std::string>(name);
  try {
    doc.root_ = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(name + ":" + std::to_string(e.mark.line + 1) + ":" +
                      std::to_string(e.mark.column + 1) + ": not valid YAML: " + e.msg);
  }
  if (!doc.root_.IsMap()) throw ConfigError(name + ": the top level must be a map");
  return doc;
}

Document Document::Load(const std::string& path) {
  Document doc;
  doc.file_ = std::make_shared<const std::string>(path);
  try {
    doc.root_ = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw ConfigError(path + ": cannot open the configuration file");
  } catch (const YAML::Exception& e) {
    throw ConfigError(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                      std::to_string(e.mark.column + 1) + ": not valid YAML: " + e.msg);
  }
  if (!doc.root_.IsMap()) throw ConfigError(path + ": the top level must be a map");
  return doc;
}

}  // namespace heft::config

// Reading YAML configuration with errors a person can act on.
//
//   heft::config::Document doc = heft::config::Document::Load("heft.yaml");
//   heft::config::Node root = doc.root();
//   root.AllowOnly({"robot", "drivers", "estimator"});          // unknown keys are refused
//   double rate = root["estimator"]["rate_limits"].Get<double>("mass", 3.0, {0.0, 100.0});
//   auto kind = root["estimator"].Enum("filter", {"ekf", "kf"}, "ekf");
//
// Every error is a ConfigError whose message names the file, the key path (e.g.
// `estimator.rate_limits.mass`), the line and column, what was found and what is allowed.
// Set-up only: everything here allocates and throws.
#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace heft::config {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Range {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
};

class Node {
 public:
  Node(std::shared_ptr<const std::string> file, YAML::Node node, std::string path)
      : file_(std::move(file)), node_(std::move(node)), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  const std::string& file() const { return *file_; }
  bool IsMap() const { return node_.IsMap(); }
  bool IsSequence() const { return node_.IsSequence(); }
  bool Has(const std::string& key) const {
    return node_.IsMap() && node_[key].IsDefined() && !node_[key].IsNull();
  }

  // A required child map entry (error if missing).
  Node operator[](const std::string& key) const;
  // An optional child (nullopt if absent).
  std::optional<Node> Optional(const std::string& key) const;
  // Elements of a sequence.
  std::vector<Node> Elements() const;
  // Keys of a map, in the file's order.
  std::vector<std::string> Keys() const;
  // Refuses keys of this map that are not listed.
  void AllowOnly(std::initializer_list<const char*> keys) const;
  // The same with a key table of the schema (heft/config/schema.hpp).
  void AllowOnly(std::span<const char* const> keys) const;

  // Scalars: required (no default) or optional (with default); numbers are range-checked.
  template <typename T>
  T As(Range range = {}) const;
  template <typename T>
  T Get(const std::string& key, Range range = {}) const {
    return (*this)[key].As<T>(range);
  }
  template <typename T>
  T Get(const std::string& key, T fallback, Range range) const {
    auto child = Optional(key);
    return child ? child->As<T>(range) : fallback;
  }
  // A fixed-length list of numbers.
  std::vector<double> Numbers(std::size_t count, Range range = {}) const;
  // One of `allowed` (a string); the index into `allowed`.
  std::size_t Enum(const std::string& key, std::initializer_list<const char*> allowed,
                   const char* fallback = nullptr) const;

  // An error at this node: "<file>:<line>:<col>: <path>: <what>".
  [[noreturn]] void Fail(const std::string& what) const;
  // "<file>:<line>:<col>: <path>", for errors found later (e.g. against the URDF).
  std::string Where() const;

 private:
  std::string KeyText(const YAML::Node& key) const;
  // The scalar as a number (`integer`: an int) within `range`; fails naming `kind` ("a number").
  double RangedNumber(const char* kind, Range range, bool integer) const;
  std::shared_ptr<const std::string> file_;
  YAML::Node node_;
  std::string path_;
};

template <>
std::string Node::As<std::string>(Range) const;
template <>
bool Node::As<bool>(Range) const;
template <>
double Node::As<double>(Range) const;
template <>
int Node::As<int>(Range) const;

class Document {
 public:
  static Document Load(const std::string& path);
  static Document Parse(const std::string& text, const std::string& name);
  Node root() const { return Node(file_, root_, ""); }

 private:
  std::shared_ptr<const std::string> file_;
  YAML::Node root_;
};

}  // namespace heft::config

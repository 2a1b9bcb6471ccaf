#include "heft/config/yaml.hpp"

#include <charconv>
#include <cmath>
#include <map>
#include <sstream>
#include <system_error>

#include "heft/hal/text_file.hpp"

namespace heft::config {
namespace {

std::string Join(std::span<const char* const> items) {
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

std::string At(const YAML::Mark& mark) {
  return std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

// YAML's spellings of infinity and not-a-number, and the C library's (which std::from_chars takes).
bool NotFinite(const std::string& text) {
  std::string t;
  for (char c : text)
    if (c != '+' && c != '-' && c != '.')
      t += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return t == "inf" || t == "infinity" || t == "nan";
}

// A number read from a scalar, or why it is not one (empty `why`: ok).
struct Parsed {
  double value = 0.0;
  long long integer = 0;
  std::string why;
};

// The whole of `text` as an integer: decimal, 0x hexadecimal or 0o octal, with an optional sign.
// False when it is not one; `p.why` is set when it is one but too large.
bool ParseWhole(const std::string& text, Parsed& p, const char** stop) {
  std::string digits = text;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.erase(0, 1);
  }
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) base = 16;
  if (digits.size() > 2 && digits[0] == '0' && digits[1] == 'o') base = 8;
  if (base != 10) digits.erase(0, 2);
  unsigned long long magnitude = 0;
  const char* first = digits.data();
  const char* last = digits.data() + digits.size();
  const auto [end, ec] = std::from_chars(first, last, magnitude, base);
  *stop = end == first ? nullptr : text.data() + (text.size() - digits.size()) + (end - first);
  const unsigned long long limit =
      static_cast<unsigned long long>(std::numeric_limits<long long>::max()) + (negative ? 1 : 0);
  if (ec == std::errc::result_out_of_range ||
      (ec == std::errc() && end == last && magnitude > limit)) {
    p.why = "'" + text + "' is too large for an integer";
    return true;
  }
  if (ec != std::errc() || end != last || end == first) return false;
  p.integer =
      negative ? static_cast<long long>(0ULL - magnitude) : static_cast<long long>(magnitude);
  p.value = static_cast<double>(p.integer);
  return true;
}

bool Prefixed(const std::string& text) {
  const std::size_t i = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
  return text.size() > i + 2 && text[i] == '0' &&
         (text[i + 1] == 'x' || text[i + 1] == 'X' || text[i + 1] == 'o');
}

// The whole of `text` as a floating-point number (a leading '+' allowed; 0x/0o integers too).
Parsed ParseReal(const std::string& text) {
  Parsed p;
  const char* stop = nullptr;
  if (Prefixed(text) && ParseWhole(text, p, &stop)) return p;
  if (NotFinite(text)) {
    p.why = "'" + text + "' is not a finite number";
    return p;
  }
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (first != last && *first == '+') ++first;
  const auto [end, ec] = std::from_chars(first, last, p.value);
  if (ec == std::errc::invalid_argument || end == first) {
    p.why = "not a number";
  } else if (ec == std::errc::result_out_of_range) {
    p.why = "'" + text + "' is beyond the range of a double (about ±1.8e308, smallest 2.2e-308)";
  } else if (end != last) {
    p.why = "'" + text + "' has '" + std::string(end, last) + "' after the number";
  }
  return p;
}

// The whole of `text` as an integer, or why not (a fraction, garbage after the digits, too large).
Parsed ParseInteger(const std::string& text) {
  Parsed p;
  const char* stop = nullptr;
  if (ParseWhole(text, p, &stop)) return p;
  const Parsed real = ParseReal(text);
  if (real.why.empty())
    p.why = "'" + text + "' is not a whole number (write it without a fraction or exponent)";
  else if (real.why != "not a number")
    p.why = real.why;
  else if (stop)
    p.why = "'" + text + "' has '" + std::string(stop, text.data() + text.size()) +
            "' after the number";
  else
    p.why = "not a number";
  return p;
}

// Refuses a map that names a key twice (yaml-cpp keeps one of them silently), anywhere below
// `node`. `path` is the key path of `node` for the message.
void RefuseDuplicateKeys(const std::string& file, const YAML::Node& node, const std::string& path,
                         int depth) {
  if (depth > 256) return;  // an alias that refers to itself; nothing more to check below
  if (node.IsMap()) {
    std::map<std::string, YAML::Mark> seen;
    for (const auto& kv : node) {
      if (kv.first.IsScalar()) {
        const std::string key = kv.first.Scalar();
        const auto [it, fresh] = seen.emplace(key, kv.first.Mark());
        if (!fresh)
          throw ConfigError(file + ":" + At(kv.first.Mark()) + ": " + Child(path, key) +
                            ": duplicate key '" + key + "' (first at line " + At(it->second) +
                            "); YAML would keep only one of them silently: remove one");
        RefuseDuplicateKeys(file, kv.second, Child(path, key), depth + 1);
      } else {
        RefuseDuplicateKeys(file, kv.second, path, depth + 1);
      }
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i)
      RefuseDuplicateKeys(file, node[i], path + "[" + std::to_string(i) + "]", depth + 1);
  }
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
  AllowOnly(std::span<const char* const>(keys.begin(), keys.size()));
}

void Node::AllowOnly(std::span<const char* const> keys) const {
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

double Node::RangedNumber(const char* kind, Range range, bool integer) const {
  const std::string expected = std::string("expected ") + kind + " in " + RangeText(range);
  if (!node_.IsScalar()) Fail(expected + ", found " + Describe(node_));
  const Parsed p = integer ? ParseInteger(node_.Scalar()) : ParseReal(node_.Scalar());
  if (p.why == "not a number") Fail(expected + ", found " + Describe(node_));
  if (!p.why.empty()) Fail(expected + ": " + p.why);
  const double value = integer ? static_cast<double>(p.integer) : p.value;
  const bool fits = !integer || (p.integer >= std::numeric_limits<int>::min() &&
                                 p.integer <= std::numeric_limits<int>::max());
  if (value < range.min || value > range.max || !fits)
    Fail("value " + node_.Scalar() + " is out of range; allowed: " + RangeText(range));
  return value;
}

template <>
double Node::As<double>(Range range) const {
  return RangedNumber("a number", range, /*integer=*/false);
}

template <>
int Node::As<int>(Range range) const {
  return static_cast<int>(RangedNumber("an integer", range, /*integer=*/true));
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
  child->Fail("'" + value +
              "' is not allowed; allowed: " + Join({allowed.begin(), allowed.size()}));
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
  if (!doc.root_.IsMap()) throw ConfigError(name + ":1:1: the top level must be a map");
  RefuseDuplicateKeys(name, doc.root_, "", 0);
  return doc;
}

Document Document::Load(const std::string& path) {
  const hal::TextFile file = hal::ReadTextFile(path);
  if (!file.ok()) throw ConfigError(path + ": " + file.Describe("the configuration file"));
  return Parse(file.text, path);
}

}  // namespace heft::config

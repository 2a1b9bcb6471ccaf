#include "urdf_inertial_check.hpp"

#include <tinyxml.h>

#include <charconv>
#include <cmath>
#include <string_view>
#include <vector>

#include "heft/dynamics/model.hpp"

namespace heft::dynamics::detail {
namespace {

// One number as urdfdom's strToDouble reads it (classic locale, leading white space and '+'
// allowed, nothing after the number), and finite.
bool ParseFinite(std::string_view text) {
  std::size_t i = text.find_first_not_of(" \t\n\r\f\v");
  if (i == std::string_view::npos) return false;
  text.remove_prefix(i);
  if (text.size() > 1 && text[0] == '+' && text[1] != '-' && text[1] != '+') text.remove_prefix(1);
  double value = 0.0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(value);
}

// A vector of three numbers separated by spaces, as urdfdom's Vector3::init reads it.
bool ParseVector3(std::string_view text) {
  int count = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view piece = text.substr(start, end - start);
    if (!piece.empty()) {
      if (!ParseFinite(piece)) return false;
      ++count;
    }
    start = end + 1;
  }
  return count == 3;
}

class Checker {
 public:
  explicit Checker(const std::string& source) : source_(source) {}

  void Link(const TiXmlElement& link) {
    const char* name = link.Attribute("name");
    link_ = name ? name : "?";
    for (const TiXmlElement* in = link.FirstChildElement("inertial"); in;
         in = in->NextSiblingElement("inertial")) {
      if (const TiXmlElement* origin = in->FirstChildElement("origin")) {
        for (const char* key : {"xyz", "rpy"})
          if (const char* value = origin->Attribute(key))
            if (!ParseVector3(value))
              Fail(*origin, "origin", key, value, "expected three finite numbers");
      }
      const TiXmlElement* mass = in->FirstChildElement("mass");
      if (!mass) Fail(*in, "mass", nullptr, nullptr, "missing element");
      Number(*mass, "mass", "value");
      const TiXmlElement* inertia = in->FirstChildElement("inertia");
      if (!inertia) Fail(*in, "inertia", nullptr, nullptr, "missing element");
      for (const char* key : {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"})
        Number(*inertia, "inertia", key);
    }
  }

 private:
  void Number(const TiXmlElement& e, const char* element, const char* key) const {
    const char* value = e.Attribute(key);
    if (!value) Fail(e, element, key, nullptr, "missing attribute");
    if (!ParseFinite(value)) Fail(e, element, key, value, "not a finite number");
  }

  [[noreturn]] void Fail(const TiXmlElement& e, const char* element, const char* key,
                         const char* value, const char* what) const {
    std::string msg =
        source_ + ":" + std::to_string(e.Row()) + ": link '" + link_ + "' <inertial><" + element;
    if (key) msg += std::string(" ") + key + (value ? "='" + std::string(value) + "'" : "");
    msg += ">: ";
    msg += what;
    msg += " (urdfdom would drop the whole <inertial> and load the link as massless)";
    throw ModelError(msg);
  }

  const std::string& source_;
  std::string link_;
};

}  // namespace

void CheckInertialNumbers(const std::string& xml, const std::string& source) {
  TiXmlDocument doc;
  doc.Parse(xml.c_str());
  if (doc.Error()) return;  // urdfdom reports malformed XML
  const TiXmlElement* robot = doc.FirstChildElement("robot");
  if (!robot) return;
  Checker checker(source);
  for (const TiXmlElement* link = robot->FirstChildElement("link"); link;
       link = link->NextSiblingElement("link"))
    checker.Link(*link);
}

}  // namespace heft::dynamics::detail

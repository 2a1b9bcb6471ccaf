#include "heft/host/json.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <span>

namespace heft::host {
namespace {

// The two-character escapes: what follows the backslash, and the character it stands for. The
// writer uses the first five (the others it writes as hex escapes, as every control character);
// the reader takes all eight (RFC 8259 §7).
struct Escape {
  char letter;
  char character;
};
constexpr std::array<Escape, 8> kEscapes{{{'"', '"'},
                                          {'\\', '\\'},
                                          {'n', '\n'},
                                          {'r', '\r'},
                                          {'t', '\t'},
                                          {'/', '/'},
                                          {'b', '\b'},
                                          {'f', '\f'}}};
constexpr std::size_t kWrittenEscapes = 5;

// The escape whose `field` is `c`, or null.
const Escape* FindEscape(char c, char Escape::*field, std::span<const Escape> escapes) {
  for (const Escape& e : escapes)
    if (e.*field == c) return &e;
  return nullptr;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  std::optional<Json> Document(std::string* error) {
    Json v;
    if (Value(v, 0)) {
      SkipSpace();
      if (pos_ == text_.size()) return v;
      Fail("trailing characters");
    }
    if (error != nullptr) *error = "offset " + std::to_string(pos_) + ": " + what_;
    return std::nullopt;
  }

 private:
  bool Fail(const char* what) {
    if (what_.empty()) what_ = what;
    return false;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool Literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return Fail("invalid literal");
    pos_ += word.size();
    return true;
  }
  bool Value(Json& v, int depth) {
    if (depth > 32) return Fail("nested too deeply");
    SkipSpace();
    if (pos_ >= text_.size()) return Fail("unexpected end");
    const char c = text_[pos_];
    if (c == '{') return Object(v, depth);
    if (c == '[') return Array(v, depth);
    if (c == '"') {
      v.type = Json::Type::kString;
      return String(v.string);
    }
    if (c == 't' || c == 'f') {
      v.type = Json::Type::kBool;
      v.boolean = c == 't';
      return Literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') {
      v.type = Json::Type::kNull;
      return Literal("null");
    }
    return Number(v);
  }
  bool Number(Json& v) {
    const std::size_t start = pos_;
    while (pos_ < text_.size() &&
           std::string_view("+-0123456789.eE").find(text_[pos_]) != std::string_view::npos)
      ++pos_;
    if (pos_ == start) return Fail("unexpected character");
    const std::string token(text_.substr(start, pos_ - start));
    char* end = nullptr;
    v.number = std::strtod(token.c_str(), &end);
    if (end != token.c_str() + token.size()) return Fail("malformed number");
    // Beyond a double (2e308 reads as inf): no JSON number stands for inf, and a reader must not
    // show one as a value.
    if (!std::isfinite(v.number)) return Fail("number out of range");
    v.type = Json::Type::kNumber;
    return true;
  }
  bool String(std::string& out) {
    ++pos_;  // opening quote
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return Fail("control character in string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) break;
      const char e = text_[pos_++];
      if (e == 'u') {
        if (!Unicode(out)) return false;
        continue;
      }
      const Escape* escape = FindEscape(e, &Escape::letter, kEscapes);
      if (escape == nullptr) return Fail("invalid escape");
      out.push_back(escape->character);
    }
    return Fail("unterminated string");
  }
  // After backslash-u. RFC 8259: exactly four hex digits; a code point beyond the basic plane is a
  // high surrogate escape followed by a low one. A lone surrogate is no character: refused (it
  // would become bytes that are not UTF-8).
  bool Unicode(std::string& out) {
    long code = 0;
    if (!Hex4(code)) return Fail("malformed \\u escape");
    if (code >= 0xDC00 && code <= 0xDFFF) return Fail("unpaired surrogate in \\u escape");
    if (code >= 0xD800 && code <= 0xDBFF) {
      long low = 0;
      if (text_.substr(pos_, 2) != "\\u") return Fail("unpaired surrogate in \\u escape");
      pos_ += 2;
      if (!Hex4(low)) return Fail("malformed \\u escape");
      if (low < 0xDC00 || low > 0xDFFF) return Fail("unpaired surrogate in \\u escape");
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    AppendUtf8(out, code);
    return true;
  }
  // At an opening bracket: steps past it, and past `close` too when it follows at once (true: an
  // empty container).
  bool Empty(char close) {
    ++pos_;
    SkipSpace();
    if (pos_ >= text_.size() || text_[pos_] != close) return false;
    ++pos_;
    return true;
  }
  // After an element: kMore past a ',', kDone past `close`, kFailed otherwise.
  enum class Next { kMore, kDone, kFailed };
  Next Separator(char close, const char* unterminated, const char* expected) {
    SkipSpace();
    if (pos_ >= text_.size()) {
      Fail(unterminated);
      return Next::kFailed;
    }
    const char c = text_[pos_++];
    if (c == close) return Next::kDone;
    if (c != ',') {
      Fail(expected);
      return Next::kFailed;
    }
    return Next::kMore;
  }
  bool Array(Json& v, int depth) {
    v.type = Json::Type::kArray;
    if (Empty(']')) return true;
    while (true) {
      v.array.emplace_back();
      if (!Value(v.array.back(), depth + 1)) return false;
      const Next next = Separator(']', "unterminated array", "expected ',' or ']'");
      if (next != Next::kMore) return next == Next::kDone;
    }
  }
  bool Object(Json& v, int depth) {
    v.type = Json::Type::kObject;
    if (Empty('}')) return true;
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') return Fail("expected a key");
      std::string key;
      if (!String(key)) return false;
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ':') return Fail("expected ':'");
      ++pos_;
      v.object.push_back(Json::Member{std::move(key), Json{}});
      if (!Value(v.object.back().second, depth + 1)) return false;
      const Next next = Separator('}', "unterminated object", "expected ',' or '}'");
      if (next != Next::kMore) return next == Next::kDone;
    }
  }

  // Four hex digits at pos_ (strtol would also take a sign, spaces or "0x").
  bool Hex4(long& code) {
    if (pos_ + 4 > text_.size()) return false;
    code = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_ + static_cast<std::size_t>(i)];
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0) return false;
      code = code * 16 + d;
    }
    pos_ += 4;
    return true;
  }
  static void AppendUtf8(std::string& out, long code) {
    const auto byte = [&](long b) { out.push_back(static_cast<char>(b)); };
    if (code < 0x80) {
      byte(code);
    } else if (code < 0x800) {
      byte(0xC0 | (code >> 6));
      byte(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      byte(0xE0 | (code >> 12));
      byte(0x80 | ((code >> 6) & 0x3F));
      byte(0x80 | (code & 0x3F));
    } else {
      byte(0xF0 | (code >> 18));
      byte(0x80 | ((code >> 12) & 0x3F));
      byte(0x80 | ((code >> 6) & 0x3F));
      byte(0x80 | (code & 0x3F));
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::string what_;
};

}  // namespace

const Json* Json::Find(std::string_view key) const {
  if (type != Type::kObject) return nullptr;
  for (const auto& [k, v] : object)
    if (k == key) return &v;
  return nullptr;
}

double Json::Number(std::string_view key, double fallback) const {
  const Json* v = Find(key);
  return v != nullptr && v->type == Type::kNumber ? v->number : fallback;
}

std::string Json::String(std::string_view key, std::string fallback) const {
  const Json* v = Find(key);
  return v != nullptr && v->type == Type::kString ? v->string : fallback;
}

Json Json::Of(double value) {
  Json j;
  j.type = Type::kNumber;
  j.number = value;
  return j;
}

Json Json::Of(std::string value) {
  Json j;
  j.type = Type::kString;
  j.string = std::move(value);
  return j;
}

Json& Json::operator[](std::string_view key) {
  if (type == Type::kNull) type = Type::kObject;
  for (auto& [k, v] : object)
    if (k == key) return v;
  object.push_back({std::string(key), Json{}});
  return object.back().second;
}

namespace {

void Write(std::string& out, const Json& v) {
  switch (v.type) {
    case Json::Type::kNull:
      out += "null";
      break;
    case Json::Type::kBool:
      out += v.boolean ? "true" : "false";
      break;
    case Json::Type::kNumber: {
      if (!std::isfinite(v.number)) {
        out += "null";  // JSON has no inf or NaN
        break;
      }
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", v.number);
      // The shortest of %.15g..%.17g that reads back exactly.
      for (int digits = 15; digits < 17; ++digits) {
        char shorter[32];
        std::snprintf(shorter, sizeof shorter, "%.*g", digits, v.number);
        if (std::strtod(shorter, nullptr) == v.number) {
          std::snprintf(buf, sizeof buf, "%s", shorter);
          break;
        }
      }
      out += buf;
      break;
    }
    case Json::Type::kString:
      AppendJsonString(out, v.string);
      break;
    case Json::Type::kArray:
      out.push_back('[');
      for (std::size_t i = 0; i < v.array.size(); ++i) {
        if (i) out.push_back(',');
        Write(out, v.array[i]);
      }
      out.push_back(']');
      break;
    case Json::Type::kObject:
      out.push_back('{');
      for (std::size_t i = 0; i < v.object.size(); ++i) {
        if (i) out.push_back(',');
        AppendJsonString(out, v.object[i].first);
        out.push_back(':');
        Write(out, v.object[i].second);
      }
      out.push_back('}');
      break;
  }
}

}  // namespace

std::string WriteJson(const Json& value) {
  std::string out;
  Write(out, value);
  return out;
}

std::optional<Json> ParseJson(std::string_view text, std::string* error) {
  return Parser(text).Document(error);
}

void AppendJsonString(std::string& out, std::string_view s) {
  const std::span<const Escape> written(kEscapes.data(), kWrittenEscapes);
  out.push_back('"');
  for (const char c : s) {
    if (const Escape* e = FindEscape(c, &Escape::character, written); e != nullptr) {
      out.push_back('\\');
      out.push_back(e->letter);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

}  // namespace heft::host

// A small JSON reader and writer for heftd's status replies, heftctl and the run summary (no JSON
// library is a Debian build dependency of heft). Not for the real-time path: it allocates.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace heft::host {

struct Json {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  // An object's member (a struct rather than std::pair: a pair of the incomplete Json does not
  // compile with clang's libstdc++ checks, and the fuzz tree builds this with clang).
  struct Member;
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0.0;
  std::string string;
  std::vector<Json> array;
  std::vector<Member> object;

  /// The member `key` of an object, or null if absent / not an object.
  [[nodiscard]] const Json* Find(std::string_view key) const;
  /// Convenience: the number at `key`, or `fallback`.
  [[nodiscard]] double Number(std::string_view key, double fallback = 0.0) const;
  [[nodiscard]] std::string String(std::string_view key, std::string fallback = {}) const;

  /// Writing: a number, a string.
  [[nodiscard]] static Json Of(double value);
  [[nodiscard]] static Json Of(std::string value);
  /// The member `key` of this object (made an object if it is null), added as null when absent.
  Json& operator[](std::string_view key);
};

struct Json::Member {
  std::string first;  ///< key
  Json second;        ///< value
};

/// Parses one JSON document (RFC 8259; depth limited to 32). On failure returns nullopt and
/// writes "offset N: what" into `error`.
std::optional<Json> ParseJson(std::string_view text, std::string* error = nullptr);

/// The document as JSON text (compact; numbers in the fewest digits that read back exactly).
std::string WriteJson(const Json& value);

/// Appends `s` as a JSON string literal (quotes and escapes included).
void AppendJsonString(std::string& out, std::string_view s);

}  // namespace heft::host

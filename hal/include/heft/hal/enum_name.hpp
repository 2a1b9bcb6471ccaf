// The name of an enumerator from a table written in declaration order: one lookup for every
// "enum → text" function (status JSON, telemetry, logs, reports) instead of a switch each.
// For enums whose enumerators run 0, 1, 2, … (every enum that uses it states so with a
// static_assert on the table's size beside the table).
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>

namespace heft::hal {

/// names[value], or `unknown` for a value outside the table (a byte read from shared memory or a
/// file may hold anything). Does not allocate: safe on the real-time path.
template <typename Enum, typename Name, std::size_t N>
[[nodiscard]] constexpr Name EnumName(Enum value, const std::array<Name, N>& names,
                                      Name unknown) noexcept {
  static_assert(std::is_enum_v<Enum>);
  const auto i = static_cast<std::size_t>(static_cast<std::underlying_type_t<Enum>>(value));
  return i < N ? names[i] : unknown;
}

/// The number of enumerators of an enum whose last one is `last`.
template <typename Enum>
[[nodiscard]] constexpr std::size_t EnumCount(Enum last) noexcept {
  return static_cast<std::size_t>(static_cast<std::underlying_type_t<Enum>>(last)) + 1;
}

}  // namespace heft::hal

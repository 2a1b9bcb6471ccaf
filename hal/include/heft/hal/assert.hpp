// Assertions in two tiers, for code outside the tests (the tests use GoogleTest's macros).
//
//   HEFT_ASSERT(cond, "message")        always on, every build type. For O(1) checks of a caller's
//                                       contract (sizes, indices) whose violation would otherwise
//                                       corrupt memory: cheap enough for the 1 kHz and 333 Hz
//                                       paths.
//   HEFT_DEBUG_ASSERT(cond, "message")  on in builds without NDEBUG (the debug preset) or with
//                                       HEFT_DEBUG_ASSERTS defined; elsewhere `cond` is not
//                                       evaluated (it must still compile). For checks that cost
//                                       more than a comparison (a norm, a loop over a matrix).
//
// A failed assertion writes "file:line: heft assertion failed: cond (message)" to stderr and calls
// std::abort(): the only output a real-time path may produce, on its way out. Neither tier
// allocates, locks or throws.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace heft::hal::detail {

[[noreturn]] [[gnu::cold]] inline void AssertionFailed(const char* condition, const char* file,
                                                       int line, const char* message) noexcept {
  std::fprintf(stderr, "%s:%d: heft assertion failed: %s (%s)\n", file, line, condition, message);
  std::abort();
}

}  // namespace heft::hal::detail

#define HEFT_ASSERT(cond, message)              \
  (__builtin_expect(static_cast<bool>(cond), 1) \
       ? static_cast<void>(0)                   \
       : ::heft::hal::detail::AssertionFailed(#cond, __FILE__, __LINE__, (message)))

#if defined(NDEBUG) && !defined(HEFT_DEBUG_ASSERTS)
#define HEFT_DEBUG_ASSERT(cond, message) static_cast<void>(sizeof(static_cast<bool>(cond)))
#else
#define HEFT_DEBUG_ASSERT(cond, message) HEFT_ASSERT(cond, message)
#endif

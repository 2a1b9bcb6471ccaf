// heft/hal/assert.hpp: the cheap tier aborts with file, line, condition and message in every build;
// the debug tier does the same where it is on and does not even evaluate its condition where off.
#include <gtest/gtest.h>

#include "heft/hal/assert.hpp"

namespace {

int Touch(int& calls) {
  return ++calls;
}

// Fails if a holding condition aborts, if a failed one does not, or if the report misses the
// condition's text or the message.
TEST(Assert, CheapTierAbortsWithConditionAndMessage) {
  int calls = 0;
  HEFT_ASSERT(Touch(calls) == 1, "holds");
  EXPECT_EQ(calls, 1);  // evaluated exactly once
  EXPECT_DEATH(HEFT_ASSERT(calls == 2, "calls counted"),
               "test_assert.cpp:[0-9]+: heft assertion failed: calls == 2 \\(calls counted\\)");
}

// Fails if the debug tier's on/off state disagrees with NDEBUG/HEFT_DEBUG_ASSERTS, or if an off
// debug assertion evaluates its condition (a side effect would change release behaviour).
TEST(Assert, DebugTierFollowsTheBuildType) {
  int calls = 0;
#if defined(NDEBUG) && !defined(HEFT_DEBUG_ASSERTS)
  HEFT_DEBUG_ASSERT(Touch(calls) == 7, "off: not evaluated");
  EXPECT_EQ(calls, 0);
#else
  HEFT_DEBUG_ASSERT(Touch(calls) == 1, "on: evaluated");
  EXPECT_EQ(calls, 1);
  EXPECT_DEATH(HEFT_DEBUG_ASSERT(calls == 0, "debug tier"), "heft assertion failed: calls == 0");
#endif
}

}  // namespace

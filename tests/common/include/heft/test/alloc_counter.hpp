// Counting heap allocations made by the current thread, to prove real-time paths allocate nothing.
//
//   heft::test::AllocationScope scope;   // starts counting on this thread
//   RunTheRealTimeThing();
//   EXPECT_EQ(scope.count(), 0);
//
// operator new (every form) is replaced; malloc, calloc, realloc, aligned_alloc, posix_memalign and
// memalign are wrapped at link time (-Wl,--wrap), which catches them in every object linked
// statically into the test (heft's libraries, header-only Eigen) but not inside shared libraries:
// a module loaded with dlopen (the estimator plugin) calls libc's malloc directly. A test that
// counts inside such code links its sources into the test instead (tests/plugin,
// test_plugin_allocations).
#pragma once

#include <cstdint>

namespace heft::test {

/// Number of allocations counted on this thread while any AllocationScope was alive.
std::uint64_t ThreadAllocationCount() noexcept;

class AllocationScope {
 public:
  AllocationScope() noexcept;
  ~AllocationScope();
  AllocationScope(const AllocationScope&) = delete;
  AllocationScope& operator=(const AllocationScope&) = delete;
  /// Allocations on this thread since the scope began.
  [[nodiscard]] std::uint64_t count() const noexcept;
  /// Of those, the calls of the malloc family (reached only through --wrap, see above).
  [[nodiscard]] std::uint64_t malloc_count() const noexcept;

 private:
  std::uint64_t start_;
  std::uint64_t malloc_start_;
};

}  // namespace heft::test

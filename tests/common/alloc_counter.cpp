#include "heft/test/alloc_counter.hpp"

#include <cstddef>
#include <cstdlib>
#include <new>

// The linker names these (--wrap=malloc: __wrap_malloc, __real_malloc, ...).
// NOLINTBEGIN(bugprone-reserved-identifier)
extern "C" {
void* __real_malloc(std::size_t size);
void* __real_calloc(std::size_t n, std::size_t size);
void* __real_realloc(void* p, std::size_t size);
void __real_free(void* p);
void* __real_aligned_alloc(std::size_t alignment, std::size_t size);
int __real_posix_memalign(void** p, std::size_t alignment, std::size_t size);
void* __real_memalign(std::size_t alignment, std::size_t size);
}
// NOLINTEND(bugprone-reserved-identifier)

namespace {
thread_local int g_active = 0;
thread_local std::uint64_t g_count = 0;
thread_local std::uint64_t g_malloc_count = 0;  // the malloc family's share of g_count
inline void Note() noexcept {
  if (g_active > 0) ++g_count;
}
inline void NoteMalloc() noexcept {
  if (g_active > 0) ++g_count, ++g_malloc_count;
}
void* NewImpl(std::size_t size) {
  Note();
  if (size == 0) size = 1;
  void* p = __real_malloc(size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* NewAlignedImpl(std::size_t size, std::align_val_t align) {
  Note();
  void* p = nullptr;
  if (size == 0) size = 1;
  if (__real_posix_memalign(&p, static_cast<std::size_t>(align), size) != 0) throw std::bad_alloc();
  return p;
}
}  // namespace

namespace heft::test {
std::uint64_t ThreadAllocationCount() noexcept {
  return g_count;
}
AllocationScope::AllocationScope() noexcept : start_(g_count), malloc_start_(g_malloc_count) {
  ++g_active;
}
AllocationScope::~AllocationScope() {
  --g_active;
}
std::uint64_t AllocationScope::count() const noexcept {
  return g_count - start_;
}
std::uint64_t AllocationScope::malloc_count() const noexcept {
  return g_malloc_count - malloc_start_;
}
}  // namespace heft::test

// NOLINTBEGIN(bugprone-reserved-identifier)
extern "C" {
void* __wrap_malloc(std::size_t size) {
  NoteMalloc();
  return __real_malloc(size);
}
void* __wrap_calloc(std::size_t n, std::size_t size) {
  NoteMalloc();
  return __real_calloc(n, size);
}
void* __wrap_realloc(void* p, std::size_t size) {
  NoteMalloc();
  return __real_realloc(p, size);
}
void __wrap_free(void* p) {
  __real_free(p);
}
void* __wrap_aligned_alloc(std::size_t alignment, std::size_t size) {
  NoteMalloc();
  return __real_aligned_alloc(alignment, size);
}
int __wrap_posix_memalign(void** p, std::size_t alignment, std::size_t size) {
  NoteMalloc();
  return __real_posix_memalign(p, alignment, size);
}
void* __wrap_memalign(std::size_t alignment, std::size_t size) {
  NoteMalloc();
  return __real_memalign(alignment, size);
}
// NOLINTEND(bugprone-reserved-identifier)
}

void* operator new(std::size_t size) {
  return NewImpl(size);
}
void* operator new[](std::size_t size) {
  return NewImpl(size);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  Note();
  return __real_malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  Note();
  return __real_malloc(size == 0 ? 1 : size);
}
void* operator new(std::size_t size, std::align_val_t a) {
  return NewAlignedImpl(size, a);
}
void* operator new[](std::size_t size, std::align_val_t a) {
  return NewAlignedImpl(size, a);
}
void operator delete(void* p) noexcept {
  __real_free(p);
}
void operator delete[](void* p) noexcept {
  __real_free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  __real_free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  __real_free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  __real_free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  __real_free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  __real_free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  __real_free(p);
}

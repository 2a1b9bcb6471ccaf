/* The seqlock both framework segments publish their sample with (framework_input.h: the base
 * state; framework_joints.h: the joint state): one writer copies the sample word by word between
 * an odd and the next even value of a counter; a reader copies it between two equal even values
 * of that counter, retrying a torn copy a bounded number of times. Wait-free on both sides.
 *
 * One header for C11 and C++20 (GCC/Clang: the __atomic builtins work on plain integers in both).
 */
#ifndef HEFT_HAL_FRAMEWORK_SEGMENT_H
#define HEFT_HAL_FRAMEWORK_SEGMENT_H

#ifdef __cplusplus
#include <cstdint>
#include <cstring>
#define HEFT_SEGMENT_CAST(type, value) static_cast<type>(value)
extern "C" {
#else
#include <stdint.h>
#include <string.h>
#define HEFT_SEGMENT_CAST(type, value) ((type)(value))
#endif

/* Results of heft_segment_read (the segments' own results have the same values). */
#define HEFT_SEGMENT_OK 0
#define HEFT_SEGMENT_EMPTY 1 /* nothing written since the segment was initialised */
#define HEFT_SEGMENT_TORN 2  /* the writer overwrote the sample during every attempt */

/* Writer, one thread: copies `num_words` words of `src` into `words` under the counter `seq`. */
static inline void heft_segment_write(uint64_t* seq, uint64_t* words, const void* src,
                                      unsigned num_words) {
  const unsigned char* bytes = HEFT_SEGMENT_CAST(const unsigned char*, src);
  unsigned i;
  /* relaxed: only the writer modifies seq. A crashed writer may have left it odd: keep it odd. */
  const uint64_t odd = __atomic_load_n(seq, __ATOMIC_RELAXED) | 1U;
  /* relaxed: ordered before the payload by the release stores below (a reader that acquires a new
   * word also sees this odd value, so its re-check of seq fails). */
  __atomic_store_n(seq, odd, __ATOMIC_RELAXED);
  for (i = 0; i < num_words; ++i) {
    uint64_t w;
    memcpy(&w, bytes + 8U * i, sizeof(w));
    /* release: see above. */
    __atomic_store_n(&words[i], w, __ATOMIC_RELEASE);
  }
  /* release: the payload happens-before a reader that acquires the even value. */
  __atomic_store_n(seq, odd + 1U, __ATOMIC_RELEASE);
}

/* Reader: copies the `num_words` words into `dst` (written whatever the result; meaningful only
 * on HEFT_SEGMENT_OK). Never waits: at most max_attempts copies (at least 1). */
static inline int heft_segment_read(const uint64_t* seq, const uint64_t* words, void* dst,
                                    unsigned num_words, int max_attempts) {
  unsigned char* bytes = HEFT_SEGMENT_CAST(unsigned char*, dst);
  int attempt;
  unsigned i;
  for (attempt = 0; attempt < max_attempts; ++attempt) {
    /* acquire: pairs with the writer's final release store of seq. */
    const uint64_t seq0 = __atomic_load_n(seq, __ATOMIC_ACQUIRE);
    uint64_t seq1;
    if (seq0 == 0) return HEFT_SEGMENT_EMPTY;
    if ((seq0 & 1U) != 0) continue; /* write in progress */
    for (i = 0; i < num_words; ++i) {
      /* acquire: pairs with the writer's release store of the word, and keeps the re-check of seq
       * below after the copy. */
      const uint64_t w = __atomic_load_n(&words[i], __ATOMIC_ACQUIRE);
      memcpy(bytes + 8U * i, &w, sizeof(w));
    }
    seq1 = __atomic_load_n(seq, __ATOMIC_RELAXED);
    if (seq0 == seq1) return HEFT_SEGMENT_OK;
  }
  return HEFT_SEGMENT_TORN;
}

#ifdef __cplusplus
} /* extern "C" */
#endif
#undef HEFT_SEGMENT_CAST

#endif /* HEFT_HAL_FRAMEWORK_SEGMENT_H */

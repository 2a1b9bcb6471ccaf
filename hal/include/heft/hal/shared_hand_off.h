/* A C view of heftd's shared-memory hand-off (hal/shared_hand_off.hpp is the C++ original): the
 * same bytes described with C structs, and a seqlock reader with __atomic builtins, so that a
 * controller framework written in C can read the estimates. C11 or C++20, GCC/Clang.
 *
 * Layout version 1 (little-endian, x86-64/aarch64 natural alignment):
 *   offset     0  heft_handoff_header (64 bytes)
 *   offset    64  head: publish index of the newest estimate (+56 bytes padding)
 *   offset   128  8 slots of 3840 bytes: seq (odd while written), index, the estimate as 475 words
 * tests/host/test_framework_example.cpp checks it against the C++ types byte for byte.
 * The reader maps it read-only (shm_open(name, O_RDONLY), mmap PROT_READ) and refuses a segment
 * for which heft_handoff_compatible() is false.
 */
#ifndef HEFT_HAL_SHARED_HAND_OFF_H
#define HEFT_HAL_SHARED_HAND_OFF_H

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
#include <cstring>
#define HEFT_HANDOFF_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
extern "C" {
#else
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#define HEFT_HANDOFF_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#define HEFT_HANDOFF_MAGIC 0x444E414854464548ULL /* "HEFTHAND", little-endian */
#define HEFT_HANDOFF_LAYOUT_VERSION 1U
#define HEFT_HANDOFF_DEPTH 8U
#define HEFT_HANDOFF_MAX_LINKS 4U
#define HEFT_HANDOFF_LINK_NAME 48U
#define HEFT_HANDOFF_WORDS 475U /* (sizeof(heft_inertial_estimate) + 7) / 8 */
#define HEFT_HANDOFF_READ_ATTEMPTS 4

/* heft::hal::EstimatorState / MeasurementModel values. */
enum heft_estimator_state {
  HEFT_STATE_INACTIVE = 0,
  HEFT_STATE_WAIT_FOR_WALKING = 1,
  HEFT_STATE_CALIBRATING_BIAS = 2,
  HEFT_STATE_ESTIMATING = 3,
  HEFT_STATE_HOLDING = 4
};

typedef struct heft_estimator_status {
  uint8_t state; /* enum heft_estimator_state */
  uint8_t model; /* 0 none, 1 full wrench, 2 torque null space */
  uint8_t pad0[2];
  uint32_t hold_reason; /* bits: 1 encoders, 2 torques, 4 base, 8 history, 16 non-finite */
  uint64_t ticks;
  uint64_t updates;
  uint64_t gated;
  uint64_t gate_releases;
  uint64_t numeric_rejects;
  uint64_t rate_limited;
  double last_nis;
} heft_estimator_status;

typedef struct heft_link_estimate {
  char name[HEFT_HANDOFF_LINK_NAME]; /* URDF link name, NUL-terminated */
  double parameters[10];             /* m, hx, hy, hz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz (link frame) */
  double covariance[100];            /* 10x10 row-major covariance of the parameters */
} heft_link_estimate;

typedef struct heft_inertial_estimate {
  uint64_t sequence;
  int64_t stamp_ns; /* time of the state sample the estimate was computed from */
  uint16_t num_links;
  uint8_t pad0[6];
  heft_estimator_status status;
  heft_link_estimate links[HEFT_HANDOFF_MAX_LINKS];
} heft_inertial_estimate;

typedef struct heft_handoff_header {
  uint64_t magic;
  uint32_t layout_version;
  uint32_t estimate_size;
  uint32_t depth;
  uint32_t writer_pid;
  uint8_t pad0[40];
} heft_handoff_header;

typedef struct heft_handoff_slot {
  uint64_t seq;   /* atomic: odd while heftd writes the slot */
  uint64_t index; /* atomic: publish index of the estimate in the slot */
  uint64_t words[HEFT_HANDOFF_WORDS];
  uint64_t pad0[3];
} heft_handoff_slot;

typedef struct heft_handoff_segment {
  heft_handoff_header header;
  uint64_t head; /* atomic: publish index of the newest estimate (0: none yet) */
  uint64_t pad0[7];
  heft_handoff_slot slots[HEFT_HANDOFF_DEPTH];
} heft_handoff_segment;

HEFT_HANDOFF_STATIC_ASSERT(sizeof(heft_estimator_status) == 64, "status layout");
HEFT_HANDOFF_STATIC_ASSERT(sizeof(heft_link_estimate) == 928, "link layout");
HEFT_HANDOFF_STATIC_ASSERT(sizeof(heft_inertial_estimate) == 3800, "estimate layout");
HEFT_HANDOFF_STATIC_ASSERT((sizeof(heft_inertial_estimate) + 7) / 8 == HEFT_HANDOFF_WORDS,
                           "estimate words");
HEFT_HANDOFF_STATIC_ASSERT(sizeof(heft_handoff_header) == 64, "header layout");
HEFT_HANDOFF_STATIC_ASSERT(sizeof(heft_handoff_slot) == 3840, "slot layout");
HEFT_HANDOFF_STATIC_ASSERT(offsetof(heft_handoff_segment, slots) == 128, "segment layout");
HEFT_HANDOFF_STATIC_ASSERT(sizeof(heft_handoff_segment) == 128 + 8 * 3840, "segment size");

static inline int heft_handoff_compatible(const heft_handoff_segment* seg) {
  return seg->header.magic == HEFT_HANDOFF_MAGIC &&
         seg->header.layout_version == HEFT_HANDOFF_LAYOUT_VERSION &&
         seg->header.estimate_size == sizeof(heft_inertial_estimate) &&
         seg->header.depth == HEFT_HANDOFF_DEPTH;
}

/* Copies the newest estimate. Returns 1 on success, 0 if nothing was published yet or every
 * attempt overlapped a write (the reader then keeps its previous estimate). Never waits. */
static inline int heft_handoff_read_latest(const heft_handoff_segment* seg,
                                           heft_inertial_estimate* out) {
  uint64_t words[HEFT_HANDOFF_WORDS];
  int attempt;
  unsigned i;
  for (attempt = 0; attempt < HEFT_HANDOFF_READ_ATTEMPTS; ++attempt) {
    /* acquire: pairs with heftd's release store of head after the slot was completed. */
    const uint64_t index = __atomic_load_n(&seg->head, __ATOMIC_ACQUIRE);
    const heft_handoff_slot* slot = &seg->slots[index & (HEFT_HANDOFF_DEPTH - 1U)];
    uint64_t seq0, seq1;
    if (index == 0) return 0;
    /* acquire: pairs with heftd's final release store of the slot's sequence. */
    seq0 = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
    if ((seq0 & 1U) != 0) continue;
    /* acquire: the slot still holds `index` (not overwritten by a newer publish). */
    if (__atomic_load_n(&slot->index, __ATOMIC_ACQUIRE) != index) continue;
    for (i = 0; i < HEFT_HANDOFF_WORDS; ++i) {
      /* acquire: pairs with heftd's release store of each word; keeps the re-check below. */
      words[i] = __atomic_load_n(&slot->words[i], __ATOMIC_ACQUIRE);
    }
    seq1 = __atomic_load_n(&slot->seq, __ATOMIC_RELAXED);
    if (seq0 == seq1) {
      memcpy(out, words, sizeof(*out));
      return 1;
    }
  }
  return 0;
}

#ifdef __cplusplus
} /* extern "C" */
#endif
#undef HEFT_HANDOFF_STATIC_ASSERT

#endif /* HEFT_HAL_SHARED_HAND_OFF_H */

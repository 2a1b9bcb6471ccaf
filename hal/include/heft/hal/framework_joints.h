/* The framework joint-state segment: the joint positions, velocities and torques (and optionally
 * the foot wrenches) of a robot whose controller framework owns the joints (EtherCAT, a vendor
 * SDK), written by the framework into POSIX shared memory and read by heftd's 1 kHz driver thread
 * in place of heft's CAN drivers. It sits beside the framework input segment (framework_input.h:
 * the base state and the commands) and follows its rules.
 *
 * One header for C11 and C++20 (GCC/Clang: the __atomic builtins work on plain integers in both).
 *
 * Who does what
 *   heftd      creates the segment (shm_open("/<name>", O_CREAT | O_RDWR, 0660), fchmod 0660,
 *              ftruncate(sizeof(heft_joints_segment))), calls heft_joints_init() with the
 *              configuration's joint names (drivers.joints order) and wrench frames
 *              (drivers.ft_cells order), and never unlinks it.
 *   framework  opens the existing segment O_RDWR, checks heft_joints_compatible(), finds the slot
 *              of each of its joints by name (heft_joints_find_joint), calls
 *              heft_joints_attach_writer(), then at 1 kHz heft_joints_write() from one thread.
 *
 * Layout version 1 (little-endian, natural alignment, no pointers, 5168 bytes):
 *   offset    0  heft_joints_header     64 bytes: magic "HEFTJNTS", layout, sizes, pids, counts
 *   offset   64  names                3264 bytes: 64 joint names, then 4 wrench frames, 48 each
 *   offset 3328  seqlock counter         8 bytes (+56 padding): even = stable, odd = writing
 *   offset 3392  sample words         1776 bytes: a heft_joints_sample, as 64-bit words
 *
 * The sample (heft_joints_sample): units SI, joint quantities along the URDF axis (as
 * hal/robot_state.hpp's JointSample), wrenches F_S as hal::WrenchSample ([fx fy fz tx ty tz], the
 * environment on the robot at the cell's frame S, expressed in S).
 *   sequence       the framework's sample counter, +1 (or more) per new sample
 *   stamp_ns       CLOCK_MONOTONIC of the writer when the state was measured (same machine)
 *   num_joints     must equal the header's (the configuration's joint count)
 *   num_wrenches   the header's, or 0 when the framework sends no wrenches
 *   encoder_valid  bit j: joint j's position and velocity are measured and usable
 *   torque_valid   bit j: joint j's torque is measured and usable
 *   wrench_valid   bit k: wrench k is measured and usable
 * A channel whose bit is clear is a fault for heft (the estimator holds, or drops the wrench).
 *
 * Validation (heftd, every read; heft/host/framework_joints.hpp): the whole sample is refused
 * when torn on every attempt, of another joint or wrench count, stamped in the future or older
 * than a timeout, or its sequence does not advance; each channel is refused on its own when
 * marked invalid, not finite, or beyond its limit (the URDF's position limits with a margin,
 * its velocity and effort limits times a factor, a bound on the wrench). Refusals are counted by
 * reason.
 */
#ifndef HEFT_HAL_FRAMEWORK_JOINTS_H
#define HEFT_HAL_FRAMEWORK_JOINTS_H

#include "heft/hal/framework_segment.h"

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
#include <cstring>
#define HEFT_JOINTS_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#define HEFT_JOINTS_CAST(type, value) static_cast<type>(value)
extern "C" {
#else
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#define HEFT_JOINTS_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#define HEFT_JOINTS_CAST(type, value) ((type)(value))
#endif

#define HEFT_JOINTS_MAGIC 0x53544E4A54464548ULL /* "HEFTJNTS", little-endian */
#define HEFT_JOINTS_LAYOUT_VERSION 1U
#define HEFT_JOINTS_DEFAULT_NAME "heft_joints" /* /dev/shm/heft_joints */
#define HEFT_JOINTS_MAX_JOINTS 64U             /* hal::kMaxJoints */
#define HEFT_JOINTS_MAX_WRENCHES 4U            /* hal::kMaxWrenchSensors */
#define HEFT_JOINTS_NAME_LENGTH 48U            /* bytes per name, NUL included */
#define HEFT_JOINTS_SAMPLE_WORDS 222U
#define HEFT_JOINTS_READ_ATTEMPTS                                 \
  4 /* torn copies retried before a read reports HEFT_JOINTS_TORN \
     */

/* Results of heft_joints_read. */
enum heft_joints_read_result {
  HEFT_JOINTS_OK = 0,
  HEFT_JOINTS_EMPTY = 1, /* nothing written since heft_joints_init */
  HEFT_JOINTS_TORN = 2   /* the writer overwrote the sample during every attempt */
};

typedef struct heft_joints_header {
  uint64_t magic;          /* HEFT_JOINTS_MAGIC, written last by heft_joints_init */
  uint32_t layout_version; /* HEFT_JOINTS_LAYOUT_VERSION */
  uint32_t segment_size;   /* sizeof(heft_joints_segment) */
  uint32_t sample_size;    /* sizeof(heft_joints_sample) */
  uint32_t reader_pid;     /* heftd's pid (atomic; changes when heftd restarts) */
  uint32_t writer_pid;     /* the framework's pid (atomic; heft_joints_attach_writer) */
  uint16_t num_joints;     /* the configuration's joints (drivers.joints) */
  uint16_t num_wrenches;   /* the configuration's wrench frames (drivers.ft_cells) */
  uint32_t reserved[8];
} heft_joints_header;

typedef struct heft_joints_sample {
  uint64_t sequence; /* the framework's counter, advancing with every new sample */
  int64_t stamp_ns;  /* CLOCK_MONOTONIC of the writer */
  uint16_t num_joints;
  uint16_t num_wrenches;
  uint32_t reserved0;
  uint64_t encoder_valid; /* bit j: position and velocity of joint j usable */
  uint64_t torque_valid;  /* bit j: torque of joint j usable */
  uint32_t wrench_valid;  /* bit k: wrench k usable */
  uint32_t reserved1;
  double position[HEFT_JOINTS_MAX_JOINTS];    /* q [rad] or [m] */
  double velocity[HEFT_JOINTS_MAX_JOINTS];    /* dq/dt [rad/s] or [m/s] */
  double torque[HEFT_JOINTS_MAX_JOINTS];      /* measured joint torque [Nm] or force [N] */
  double wrench[HEFT_JOINTS_MAX_WRENCHES][6]; /* F_S: [fx fy fz] N, [tx ty tz] Nm, in S */
} heft_joints_sample;

typedef struct heft_joints_segment {
  heft_joints_header header;
  char joint_names[HEFT_JOINTS_MAX_JOINTS][HEFT_JOINTS_NAME_LENGTH];     /* URDF joint names */
  char wrench_frames[HEFT_JOINTS_MAX_WRENCHES][HEFT_JOINTS_NAME_LENGTH]; /* URDF frame names */
  uint64_t seq; /* seqlock: odd while heft_joints_write copies the sample */
  uint64_t reserved[7];
  uint64_t sample_words[HEFT_JOINTS_SAMPLE_WORDS]; /* a heft_joints_sample, word by word */
} heft_joints_segment;

HEFT_JOINTS_STATIC_ASSERT(sizeof(heft_joints_header) == 64, "header is 64 bytes");
HEFT_JOINTS_STATIC_ASSERT(sizeof(heft_joints_sample) == 1776, "sample is 1776 bytes");
HEFT_JOINTS_STATIC_ASSERT(sizeof(heft_joints_sample) == 8 * HEFT_JOINTS_SAMPLE_WORDS,
                          "sample fills its words");
HEFT_JOINTS_STATIC_ASSERT(offsetof(heft_joints_sample, encoder_valid) == 24, "sample layout");
HEFT_JOINTS_STATIC_ASSERT(offsetof(heft_joints_sample, position) == 48, "sample layout");
HEFT_JOINTS_STATIC_ASSERT(offsetof(heft_joints_sample, wrench) == 1584, "sample layout");
HEFT_JOINTS_STATIC_ASSERT(offsetof(heft_joints_segment, joint_names) == 64, "segment layout");
HEFT_JOINTS_STATIC_ASSERT(offsetof(heft_joints_segment, seq) == 3328, "segment layout");
HEFT_JOINTS_STATIC_ASSERT(offsetof(heft_joints_segment, sample_words) == 3392, "segment layout");
HEFT_JOINTS_STATIC_ASSERT(sizeof(heft_joints_segment) == 5168, "segment is 5168 bytes");
HEFT_JOINTS_STATIC_ASSERT(HEFT_JOINTS_OK == HEFT_SEGMENT_OK &&
                              HEFT_JOINTS_EMPTY == HEFT_SEGMENT_EMPTY &&
                              HEFT_JOINTS_TORN == HEFT_SEGMENT_TORN,
                          "the seqlock's results are the segment's");

/* heftd: (re)initialises the segment for `num_joints` joints and `num_wrenches` wrench frames
 * with their names (truncated to HEFT_JOINTS_NAME_LENGTH - 1 bytes): everything zero, then the
 * header and names; the magic is stored last (release). Returns 0, or -1 (nothing written) when a
 * count is beyond the layout's. */
static inline int heft_joints_init(heft_joints_segment* seg, uint32_t reader_pid,
                                   unsigned num_joints, const char* const* joint_names,
                                   unsigned num_wrenches, const char* const* wrench_frames) {
  unsigned i;
  if (num_joints > HEFT_JOINTS_MAX_JOINTS || num_wrenches > HEFT_JOINTS_MAX_WRENCHES) return -1;
  memset(seg, 0, sizeof(*seg));
  seg->header.layout_version = HEFT_JOINTS_LAYOUT_VERSION;
  seg->header.segment_size = HEFT_JOINTS_CAST(uint32_t, sizeof(heft_joints_segment));
  seg->header.sample_size = HEFT_JOINTS_CAST(uint32_t, sizeof(heft_joints_sample));
  seg->header.num_joints = HEFT_JOINTS_CAST(uint16_t, num_joints);
  seg->header.num_wrenches = HEFT_JOINTS_CAST(uint16_t, num_wrenches);
  for (i = 0; i < num_joints; ++i)
    strncpy(seg->joint_names[i], joint_names[i], HEFT_JOINTS_NAME_LENGTH - 1);
  for (i = 0; i < num_wrenches; ++i)
    strncpy(seg->wrench_frames[i], wrench_frames[i], HEFT_JOINTS_NAME_LENGTH - 1);
  /* relaxed: published by the release store of the magic below. */
  __atomic_store_n(&seg->header.reader_pid, reader_pid, __ATOMIC_RELAXED);
  /* release: whoever acquires the magic sees the zeroed segment, the header and the names. */
  __atomic_store_n(&seg->header.magic, HEFT_JOINTS_MAGIC, __ATOMIC_RELEASE);
  return 0;
}

/* Both sides: nonzero if the segment speaks this header's layout. */
static inline int heft_joints_compatible(const heft_joints_segment* seg) {
  /* acquire: pairs with heft_joints_init's release of the magic. */
  return __atomic_load_n(&seg->header.magic, __ATOMIC_ACQUIRE) == HEFT_JOINTS_MAGIC &&
         seg->header.layout_version == HEFT_JOINTS_LAYOUT_VERSION &&
         seg->header.segment_size == HEFT_JOINTS_CAST(uint32_t, sizeof(heft_joints_segment)) &&
         seg->header.sample_size == HEFT_JOINTS_CAST(uint32_t, sizeof(heft_joints_sample)) &&
         seg->header.num_joints <= HEFT_JOINTS_MAX_JOINTS &&
         seg->header.num_wrenches <= HEFT_JOINTS_MAX_WRENCHES;
}

/* Framework: the slot of URDF joint `name` in the sample, or -1 when heftd's configuration has no
 * such joint (names compared up to HEFT_JOINTS_NAME_LENGTH - 1 bytes). */
static inline int heft_joints_find_joint(const heft_joints_segment* seg, const char* name) {
  unsigned i;
  for (i = 0; i < seg->header.num_joints && i < HEFT_JOINTS_MAX_JOINTS; ++i)
    if (strncmp(seg->joint_names[i], name, HEFT_JOINTS_NAME_LENGTH - 1) == 0)
      return HEFT_JOINTS_CAST(int, i);
  return -1;
}

/* Framework: the slot of wrench frame `name`, or -1. */
static inline int heft_joints_find_wrench(const heft_joints_segment* seg, const char* name) {
  unsigned i;
  for (i = 0; i < seg->header.num_wrenches && i < HEFT_JOINTS_MAX_WRENCHES; ++i)
    if (strncmp(seg->wrench_frames[i], name, HEFT_JOINTS_NAME_LENGTH - 1) == 0)
      return HEFT_JOINTS_CAST(int, i);
  return -1;
}

/* heftd: announces itself (e.g. after attaching to an existing segment). */
static inline void heft_joints_set_reader(heft_joints_segment* seg, uint32_t reader_pid) {
  /* relaxed: a plain notice; nothing is ordered by it. */
  __atomic_store_n(&seg->header.reader_pid, reader_pid, __ATOMIC_RELAXED);
}

/* Framework: announces itself. */
static inline void heft_joints_attach_writer(heft_joints_segment* seg, uint32_t writer_pid) {
  /* relaxed: a plain notice; nothing is ordered by it. */
  __atomic_store_n(&seg->header.writer_pid, writer_pid, __ATOMIC_RELAXED);
}

/* Framework, one thread: publishes a sample. Wait-free (a bounded copy; framework_segment.h). */
static inline void heft_joints_write(heft_joints_segment* seg, const heft_joints_sample* sample) {
  heft_segment_write(&seg->seq, seg->sample_words, sample, HEFT_JOINTS_SAMPLE_WORDS);
}

/* heftd (or any reader): copies the newest sample into `out` (written whatever the result; its
 * contents mean something only on HEFT_JOINTS_OK). Never waits: at most max_attempts copies
 * (<= 0 means HEFT_JOINTS_READ_ATTEMPTS). */
static inline int heft_joints_read(const heft_joints_segment* seg, heft_joints_sample* out,
                                   int max_attempts) {
  return heft_segment_read(&seg->seq, seg->sample_words, out, HEFT_JOINTS_SAMPLE_WORDS,
                           max_attempts <= 0 ? HEFT_JOINTS_READ_ATTEMPTS : max_attempts);
}

#ifdef __cplusplus
} /* extern "C" */
#endif
#undef HEFT_JOINTS_STATIC_ASSERT
#undef HEFT_JOINTS_CAST

#endif /* HEFT_HAL_FRAMEWORK_JOINTS_H */

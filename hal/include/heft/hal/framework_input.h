/* The framework input segment: what the robot's controller framework tells heftd, through POSIX
 * shared memory. It is the mirror of the hand-off (hal/shared_hand_off.hpp): heftd reads here what
 * the framework writes, and the framework reads there what heftd writes.
 *
 * One header for C11 and C++20 (GCC/Clang: the __atomic builtins work on plain integers in both).
 *
 * Who does what
 *   heftd      creates the segment (shm_open("/<name>", O_CREAT | O_RDWR, 0660), fchmod 0660,
 *              ftruncate(sizeof(heft_input_segment))), calls heft_input_init() when the segment is
 *              new or incompatible, stores its pid in header.reader_pid, and never unlinks it (a
 *              framework that keeps it mapped would otherwise write into an orphan after a heftd
 *              restart). The framework's user needs to be in heftd's group (heft) to open it
 *              read-write.
 *   framework  opens the existing segment O_RDWR (no O_CREAT), checks heft_input_compatible(),
 *              calls heft_input_attach_writer(), then at up to 1 kHz heft_input_write() (one
 * thread) and, whenever it wants, heft_input_command() (any thread).
 *
 * Layout version 1 (little-endian, natural alignment, no pointers, 320 bytes):
 *   offset   0  heft_input_header    64 bytes: magic "HEFTINPT", layout version, sizes, pids
 *   offset  64  heft_input_commands  64 bytes: one counter per command + the newest command
 *   offset 128  seqlock counter       8 bytes (+56 padding): even = stable, odd = write in progress
 *   offset 192  sample words        128 bytes: a heft_input_sample, stored as 64-bit words
 *
 * The sample (heft_input_sample) — frames as in hal/robot_state.hpp: W is a gravity-aligned world
 * frame (z up, yaw arbitrary: heft never depends on it), B the base link's frame.
 *   sequence          the framework's own sample counter: +1 (or more) per new sample. A sequence
 *                     that stops advancing makes the input stale even if the stamp keeps moving.
 *   stamp_ns          CLOCK_MONOTONIC of the writer when the state was valid (same machine as
 * heftd) flags             HEFT_INPUT_HAS_SPECIFIC_FORCE and/or HEFT_INPUT_HAS_LINEAR_VELOCITY; at
 * least one of them. Orientation and angular velocity are always required. orientation       R_WB
 * as a unit quaternion (w, x, y, z) angular_velocity  w_WB_B: angular velocity of B in W, expressed
 * in B [rad/s] specific_force    f_Bo_B: specific force at the base ORIGIN Bo (its classical
 * acceleration in W minus gravity: an accelerometer at rest reads +9.81 up), expressed in B
 *                     [m/s^2]. A framework whose IMU is elsewhere transports it to Bo first (or
 *                     sends the velocity instead).
 *   linear_velocity   v_WBo_W: velocity of the base origin in W, expressed in W [m/s]
 *
 * Commands: a monotonically increasing counter per command (heft_input_command increments it).
 * heftd compares the counters with the ones it saw last, so a command is neither lost nor repeated
 * however fast or slowly either side runs; `last_command` ((count of all commands << 8) | command)
 * tells which one came last when several arrive between two reads. heftd delivers the commands
 * counted after it attached; a framework that sees header.reader_pid change (heftd restarted)
 * should send its current mode (walking/stopped) again.
 *
 * Validation (heftd, every read; heft/host/framework_input.hpp): finite values, quaternion norm
 * within a tolerance (then normalised), |w|, |f| and |v| within physical bounds, stamp neither in
 * the future nor older than a timeout, sequence advancing; anything else never reaches the
 * estimator.
 */
#ifndef HEFT_HAL_FRAMEWORK_INPUT_H
#define HEFT_HAL_FRAMEWORK_INPUT_H

#include "heft/hal/framework_segment.h"

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
#include <cstring>
#define HEFT_INPUT_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#define HEFT_INPUT_CAST(type, value) static_cast<type>(value)
extern "C" {
#else
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#define HEFT_INPUT_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#define HEFT_INPUT_CAST(type, value) ((type)(value))
#endif

#define HEFT_INPUT_MAGIC 0x54504E4954464548ULL /* "HEFTINPT", little-endian */
#define HEFT_INPUT_LAYOUT_VERSION 1U
#define HEFT_INPUT_DEFAULT_NAME "heft_input" /* /dev/shm/heft_input */
#define HEFT_INPUT_SAMPLE_WORDS 16U
#define HEFT_INPUT_READ_ATTEMPTS 4 /* torn copies retried before a read reports HEFT_INPUT_TORN */

/* Sample flags. */
#define HEFT_INPUT_HAS_SPECIFIC_FORCE 0x1U
#define HEFT_INPUT_HAS_LINEAR_VELOCITY 0x2U

/* Commands; the same order as heft::plugin::Command (checked there). */
enum heft_input_command_id {
  HEFT_INPUT_CMD_WALKING = 0, /* the robot is on the ground and walking: estimation may start */
  HEFT_INPUT_CMD_STOPPED = 1, /* back to waiting (e.g. hoisted) */
  HEFT_INPUT_CMD_ENABLE = 2,
  HEFT_INPUT_CMD_DISABLE = 3, /* hand on nominal parameters, no estimation */
  HEFT_INPUT_CMD_RESET = 4,   /* restart from nominal, recalibrate */
  HEFT_INPUT_NUM_COMMANDS = 5
};

/* Results of heft_input_read. */
enum heft_input_read_result {
  HEFT_INPUT_OK = 0,
  HEFT_INPUT_EMPTY = 1, /* nothing written since heft_input_init */
  HEFT_INPUT_TORN = 2   /* the writer overwrote the sample during every attempt */
};

typedef struct heft_input_header {
  uint64_t magic;          /* HEFT_INPUT_MAGIC, written last by heft_input_init */
  uint32_t layout_version; /* HEFT_INPUT_LAYOUT_VERSION */
  uint32_t segment_size;   /* sizeof(heft_input_segment) */
  uint32_t sample_size;    /* sizeof(heft_input_sample) */
  uint32_t reader_pid;     /* heftd's pid (atomic; changes when heftd restarts) */
  uint32_t writer_pid;     /* the framework's pid (atomic; heft_input_attach_writer) */
  uint32_t reserved[9];
} heft_input_header;

typedef struct heft_input_commands {
  uint64_t count[HEFT_INPUT_NUM_COMMANDS]; /* atomic; +1 per command, never decreases */
  uint64_t last_command;                   /* atomic; (total commands << 8) | command id */
  uint64_t reserved[2];
} heft_input_commands;

typedef struct heft_input_sample {
  uint64_t sequence; /* the framework's counter, advancing with every new sample */
  int64_t stamp_ns;  /* CLOCK_MONOTONIC of the writer */
  uint32_t flags;    /* HEFT_INPUT_HAS_* */
  uint32_t reserved0;
  double orientation[4];      /* R_WB, unit quaternion (w, x, y, z) */
  double angular_velocity[3]; /* w_WB_B [rad/s] */
  double specific_force[3];   /* f_Bo_B [m/s^2], valid with HEFT_INPUT_HAS_SPECIFIC_FORCE */
  double linear_velocity[3];  /* v_WBo_W [m/s], valid with HEFT_INPUT_HAS_LINEAR_VELOCITY */
} heft_input_sample;

typedef struct heft_input_segment {
  heft_input_header header;
  heft_input_commands commands;
  uint64_t seq; /* seqlock: odd while heft_input_write copies the sample */
  uint64_t reserved[7];
  uint64_t sample_words[HEFT_INPUT_SAMPLE_WORDS]; /* a heft_input_sample, word by word */
} heft_input_segment;

HEFT_INPUT_STATIC_ASSERT(sizeof(heft_input_header) == 64, "header is 64 bytes");
HEFT_INPUT_STATIC_ASSERT(sizeof(heft_input_commands) == 64, "commands are 64 bytes");
HEFT_INPUT_STATIC_ASSERT(sizeof(heft_input_sample) == 128, "sample is 128 bytes");
HEFT_INPUT_STATIC_ASSERT(sizeof(heft_input_sample) <= 8 * HEFT_INPUT_SAMPLE_WORDS,
                         "sample fits its words");
HEFT_INPUT_STATIC_ASSERT(offsetof(heft_input_sample, orientation) == 24, "sample layout");
HEFT_INPUT_STATIC_ASSERT(offsetof(heft_input_sample, linear_velocity) == 104, "sample layout");
HEFT_INPUT_STATIC_ASSERT(offsetof(heft_input_segment, commands) == 64, "segment layout");
HEFT_INPUT_STATIC_ASSERT(offsetof(heft_input_segment, seq) == 128, "segment layout");
HEFT_INPUT_STATIC_ASSERT(offsetof(heft_input_segment, sample_words) == 192, "segment layout");
HEFT_INPUT_STATIC_ASSERT(sizeof(heft_input_segment) == 320, "segment is 320 bytes");
HEFT_INPUT_STATIC_ASSERT(HEFT_INPUT_OK == HEFT_SEGMENT_OK &&
                             HEFT_INPUT_EMPTY == HEFT_SEGMENT_EMPTY &&
                             HEFT_INPUT_TORN == HEFT_SEGMENT_TORN,
                         "the seqlock's results are the segment's");

/* heftd: (re)initialises a segment nobody writes yet: everything zero, then the header; the magic
 * is stored last (release) so that a framework that sees it sees the rest. */
static inline void heft_input_init(heft_input_segment* seg, uint32_t reader_pid) {
  memset(seg, 0, sizeof(*seg));
  seg->header.layout_version = HEFT_INPUT_LAYOUT_VERSION;
  seg->header.segment_size = HEFT_INPUT_CAST(uint32_t, sizeof(heft_input_segment));
  seg->header.sample_size = HEFT_INPUT_CAST(uint32_t, sizeof(heft_input_sample));
  /* relaxed: published by the release store of the magic below. */
  __atomic_store_n(&seg->header.reader_pid, reader_pid, __ATOMIC_RELAXED);
  /* release: whoever acquires the magic sees the zeroed segment and the header. */
  __atomic_store_n(&seg->header.magic, HEFT_INPUT_MAGIC, __ATOMIC_RELEASE);
}

/* Both sides: nonzero if the segment speaks this header's layout. */
static inline int heft_input_compatible(const heft_input_segment* seg) {
  /* acquire: pairs with heft_input_init's release of the magic. */
  return __atomic_load_n(&seg->header.magic, __ATOMIC_ACQUIRE) == HEFT_INPUT_MAGIC &&
         seg->header.layout_version == HEFT_INPUT_LAYOUT_VERSION &&
         seg->header.segment_size == HEFT_INPUT_CAST(uint32_t, sizeof(heft_input_segment)) &&
         seg->header.sample_size == HEFT_INPUT_CAST(uint32_t, sizeof(heft_input_sample));
}

/* heftd: announces itself (e.g. after attaching to an existing segment). */
static inline void heft_input_set_reader(heft_input_segment* seg, uint32_t reader_pid) {
  /* relaxed: a plain notice; nothing is ordered by it. */
  __atomic_store_n(&seg->header.reader_pid, reader_pid, __ATOMIC_RELAXED);
}

/* Framework: announces itself. */
static inline void heft_input_attach_writer(heft_input_segment* seg, uint32_t writer_pid) {
  /* relaxed: a plain notice; nothing is ordered by it. */
  __atomic_store_n(&seg->header.writer_pid, writer_pid, __ATOMIC_RELAXED);
}

/* Framework, one thread: publishes a sample. Wait-free (a bounded copy; framework_segment.h). */
static inline void heft_input_write(heft_input_segment* seg, const heft_input_sample* sample) {
  uint64_t words[HEFT_INPUT_SAMPLE_WORDS] = {0};
  memcpy(words, sample, sizeof(*sample));
  heft_segment_write(&seg->seq, seg->sample_words, words, HEFT_INPUT_SAMPLE_WORDS);
}

/* heftd (or any reader): copies the newest sample. Returns a heft_input_read_result; never waits
 * (at most max_attempts copies; <= 0 means HEFT_INPUT_READ_ATTEMPTS). `out` is written only on
 * HEFT_INPUT_OK. */
static inline int heft_input_read(const heft_input_segment* seg, heft_input_sample* out,
                                  int max_attempts) {
  uint64_t words[HEFT_INPUT_SAMPLE_WORDS];
  const int r = heft_segment_read(&seg->seq, seg->sample_words, words, HEFT_INPUT_SAMPLE_WORDS,
                                  max_attempts <= 0 ? HEFT_INPUT_READ_ATTEMPTS : max_attempts);
  if (r == HEFT_INPUT_OK) memcpy(out, words, sizeof(*out));
  return r;
}

/* Framework, any thread: sends a command (lock-free). */
static inline void heft_input_command(heft_input_segment* seg, enum heft_input_command_id cmd) {
  uint64_t last, next;
  if (HEFT_INPUT_CAST(unsigned, cmd) >= HEFT_INPUT_CAST(unsigned, HEFT_INPUT_NUM_COMMANDS)) return;
  /* release: the counter is visible before last_command names it (and both after a reader's
   * acquire of last_command). */
  __atomic_fetch_add(&seg->commands.count[cmd], 1U, __ATOMIC_RELEASE);
  /* relaxed: the compare-exchange below re-checks it. */
  last = __atomic_load_n(&seg->commands.last_command, __ATOMIC_RELAXED);
  do {
    next = (((last >> 8) + 1U) << 8) | HEFT_INPUT_CAST(uint64_t, cmd);
    /* release on success: publishes the counter increment above; relaxed on failure: retry. */
  } while (!__atomic_compare_exchange_n(&seg->commands.last_command, &last, next, 1,
                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

/* heftd: copies the command counters (last_command first, so the counters are at least as new). */
static inline void heft_input_read_commands(const heft_input_segment* seg,
                                            heft_input_commands* out) {
  unsigned i;
  /* acquire: pairs with heft_input_command's release; the counters read below include the
   * command last_command names. */
  out->last_command = __atomic_load_n(&seg->commands.last_command, __ATOMIC_ACQUIRE);
  for (i = 0; i < HEFT_INPUT_NUM_COMMANDS; ++i) {
    /* acquire: pairs with heft_input_command's release increment. */
    out->count[i] = __atomic_load_n(&seg->commands.count[i], __ATOMIC_ACQUIRE);
  }
  out->reserved[0] = 0;
  out->reserved[1] = 0;
}

#ifdef __cplusplus
} /* extern "C" */
#endif
#undef HEFT_INPUT_STATIC_ASSERT
#undef HEFT_INPUT_CAST

#endif /* HEFT_HAL_FRAMEWORK_INPUT_H */

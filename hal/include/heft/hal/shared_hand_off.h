/* A C view of heftd's shared-memory hand-off (hal/shared_hand_off.hpp is the C++ original): the
 * same bytes described with C structs, a seqlock reader with __atomic builtins, and a reader that
 * knows when the writer is gone, so that a controller framework written in C can read the
 * estimates. C11 (with POSIX: define _POSIX_C_SOURCE 200809L before any #include) or C++20,
 * GCC/Clang, Linux.
 *
 * Layout version 2 (little-endian, x86-64/aarch64 natural alignment):
 *   offset     0  heft_handoff_header (128 bytes): identity (magic, layout, sizes, the writer's pid
 *                 and process start time, running/stopped) and, in its second cache line, the
 *                 heartbeat: CLOCK_MONOTONIC of heftd's last control tick and their count
 *   offset   128  head: publish index of the newest estimate (+56 bytes padding)
 *   offset   192  8 slots of 3840 bytes: seq (odd while written), index, the estimate as 475 words
 * tests/host/test_framework_example.cpp checks it against the C++ types byte for byte.
 *
 * Who does what
 *   heftd      creates the segment complete under a temporary name and renames it to
 * /dev/shm/<name> (so a reader never maps a half-written one, and a restarted heftd replaces a dead
 *              one's segment instead of rewriting it under a reader), mode 0640 (group heft may
 *              read). Every control tick (333 Hz) it publishes the estimate and stores the
 *              heartbeat. On a clean stop it marks the segment stopped and unlinks the name.
 *   reader     maps it read-only (heft_handoff_open, or shm_open(O_RDONLY) + mmap PROT_READ of
 *              sizeof(heft_handoff_segment) after checking the file's size), refuses a segment for
 *              which heft_handoff_compatible() is false, and reads with heft_handoff_read():
 *                HEFT_HANDOFF_OK     the newest estimate of a live writer, finite, not torn
 *                HEFT_HANDOFF_STALE  the heartbeat is older than max_age (heftd alive but not
 *                                    ticking: hung, stopped by a signal, starting up)
 *                HEFT_HANDOFF_GONE   heftd stopped, or its process is gone (kill(pid, 0) says
 *                                    ESRCH, it is a zombie, or the pid now belongs to a process
 *                                    that started at another time): re-open the name to follow
 *                                    the next heftd (heft_handoff_reader_poll does)
 *              The estimate is written to `out` only with HEFT_HANDOFF_OK: a reader never gets a
 *              torn, non-finite or dead writer's estimate as a live one.
 * Costs: heft_handoff_read is a bounded copy (no system call) while the heartbeat is fresh; when
 * it is stale it asks the kernel whether the writer lives (kill(2) and a read of
 * /proc/<pid>/stat). heft_handoff_reader_poll also re-opens the name (shm_open, mmap) at most
 * every HEFT_HANDOFF_REOPEN_NS while the writer is gone. A hard real-time loop that must never
 * make a system call uses heft_handoff_read_latest() and the heartbeat itself, and leaves the
 * liveness check and the re-opening to another thread.
 */
#ifndef HEFT_HAL_SHARED_HAND_OFF_H
#define HEFT_HAL_SHARED_HAND_OFF_H

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define HEFT_HANDOFF_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#define HEFT_HANDOFF_CAST(type, value) static_cast<type>(value)
#else
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define HEFT_HANDOFF_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#define HEFT_HANDOFF_CAST(type, value) ((type)(value))
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#error \
    "heft/hal/shared_hand_off.h needs POSIX.1-2008 (kill, clock_gettime, shm_open): #define _POSIX_C_SOURCE 200809L before any #include"
#endif
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HEFT_HANDOFF_MAGIC 0x444E414854464548ULL /* "HEFTHAND", little-endian */
#define HEFT_HANDOFF_LAYOUT_VERSION 2U
#define HEFT_HANDOFF_DEPTH 8U
#define HEFT_HANDOFF_MAX_LINKS 4U
#define HEFT_HANDOFF_LINK_NAME 48U
#define HEFT_HANDOFF_WORDS 475U /* (sizeof(heft_inertial_estimate) + 7) / 8 */
#define HEFT_HANDOFF_READ_ATTEMPTS 4
/* A heartbeat older than this is stale: 50 ms is ~17 of heftd's 3 ms control periods, far beyond
 * its wake-up jitter (worst measured 12 ms on a loaded machine without a real-time kernel). */
#define HEFT_HANDOFF_DEFAULT_MAX_AGE_NS 50000000LL
#define HEFT_HANDOFF_REOPEN_NS 100000000LL /* heft_handoff_reader_poll: re-open at most 10/s */

/* heft_handoff_header.writer_state */
#define HEFT_HANDOFF_WRITER_RUNNING 1U
#define HEFT_HANDOFF_WRITER_STOPPED 2U /* heftd stopped cleanly: nothing more will come */

/* Results of heft_handoff_read / heft_handoff_reader_poll. */
enum heft_handoff_result {
  HEFT_HANDOFF_OK = 0,           /* `out` holds the newest estimate of a live writer */
  HEFT_HANDOFF_EMPTY = 1,        /* the writer lives and ticks but has published nothing yet */
  HEFT_HANDOFF_TORN = 2,         /* every copy overlapped a write: keep the previous estimate */
  HEFT_HANDOFF_STALE = 3,        /* the writer lives but its heartbeat is older than max_age */
  HEFT_HANDOFF_GONE = 4,         /* the writer stopped or died */
  HEFT_HANDOFF_INCOMPATIBLE = 5, /* another layout (or not initialised) */
  HEFT_HANDOFF_INVALID = 6,      /* the copy holds a non-finite number or too many links */
  HEFT_HANDOFF_MISSING = 7       /* heft_handoff_reader_poll: no such segment (yet) */
};

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
  uint8_t pad0[2];
  uint32_t
      nominal_model; /* the nominal model the parameters are a change of: FNV-1a (32 bit) over
                        the bytes of the URDF file, then of the parameters file (if any);
                        heft_model_identity_update; 0: unknown (a writer before it was added) */
  heft_estimator_status status;
  heft_link_estimate links[HEFT_HANDOFF_MAX_LINKS];
} heft_inertial_estimate;

typedef struct heft_handoff_header {
  uint64_t magic; /* atomic: HEFT_HANDOFF_MAGIC */
  uint32_t layout_version;
  uint32_t estimate_size;
  uint32_t depth;
  uint32_t writer_pid;        /* heftd's pid */
  uint64_t writer_start_time; /* heftd's start: /proc/<pid>/stat field 22 (clock ticks after boot;
                                 0: unknown). Tells a reused pid from heftd. */
  uint32_t writer_state;      /* atomic: HEFT_HANDOFF_WRITER_RUNNING / _STOPPED */
  uint32_t control_period_ns; /* heftd's control period: the heartbeat's nominal interval */
  uint8_t pad0[24];
  /* Offset 64, its own cache line: written every control tick. */
  int64_t heartbeat_ns; /* atomic: CLOCK_MONOTONIC of heftd's last control tick */
  uint64_t heartbeats;  /* atomic: control ticks so far */
  uint8_t pad1[48];
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
HEFT_HANDOFF_STATIC_ASSERT(offsetof(heft_inertial_estimate, nominal_model) == 20,
                           "estimate layout");
HEFT_HANDOFF_STATIC_ASSERT((sizeof(heft_inertial_estimate) + 7) / 8 == HEFT_HANDOFF_WORDS,
                           "estimate words");
HEFT_HANDOFF_STATIC_ASSERT(sizeof(heft_handoff_header) == 128, "header layout");
HEFT_HANDOFF_STATIC_ASSERT(offsetof(heft_handoff_header, heartbeat_ns) == 64, "header layout");
HEFT_HANDOFF_STATIC_ASSERT(sizeof(heft_handoff_slot) == 3840, "slot layout");
HEFT_HANDOFF_STATIC_ASSERT(offsetof(heft_handoff_segment, head) == 128, "segment layout");
HEFT_HANDOFF_STATIC_ASSERT(offsetof(heft_handoff_segment, slots) == 192, "segment layout");
HEFT_HANDOFF_STATIC_ASSERT(sizeof(heft_handoff_segment) == 192 + 8 * 3840, "segment size");

/* The nominal model's identity (heft_inertial_estimate.nominal_model) from the files a controller
 * was given: start from HEFT_MODEL_IDENTITY_SEED, update with the URDF file's bytes, then with the
 * parameters file's (when heft was given one), and map a result of 0 to 1. */
#define HEFT_MODEL_IDENTITY_SEED 2166136261U
static inline uint32_t heft_model_identity_update(uint32_t hash, const void* bytes, size_t size) {
  const unsigned char* p = HEFT_HANDOFF_CAST(const unsigned char*, bytes);
  for (size_t i = 0; i < size; ++i) {
    hash ^= p[i];
    hash *= 16777619U;
  }
  return hash;
}

static inline int heft_handoff_compatible(const heft_handoff_segment* seg) {
  /* acquire: pairs with heftd's release store of the magic after the rest of the header. */
  return __atomic_load_n(&seg->header.magic, __ATOMIC_ACQUIRE) == HEFT_HANDOFF_MAGIC &&
         seg->header.layout_version == HEFT_HANDOFF_LAYOUT_VERSION &&
         seg->header.estimate_size == sizeof(heft_inertial_estimate) &&
         seg->header.depth == HEFT_HANDOFF_DEPTH;
}

/* One attempt at the estimate with publish index `index` (the ring's seqlock protocol): 1 copied
 * into `out`; 0 the slot holds another publish (overwritten by a newer one); -1 the attempt
 * overlapped a write (try again). Never waits. */
static inline int heft_handoff_try_read_index(const heft_handoff_segment* seg, uint64_t index,
                                              heft_inertial_estimate* out) {
  uint64_t words[HEFT_HANDOFF_WORDS];
  const heft_handoff_slot* slot = &seg->slots[index & (HEFT_HANDOFF_DEPTH - 1U)];
  uint64_t seq0, seq1;
  unsigned i;
  /* acquire: pairs with heftd's final release store of the slot's sequence. */
  seq0 = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
  if ((seq0 & 1U) != 0) return -1;
  /* acquire: the slot still holds `index` (not overwritten by a newer publish). */
  if (__atomic_load_n(&slot->index, __ATOMIC_ACQUIRE) != index) return 0;
  for (i = 0; i < HEFT_HANDOFF_WORDS; ++i) {
    /* acquire: pairs with heftd's release store of each word; keeps the re-check below. */
    words[i] = __atomic_load_n(&slot->words[i], __ATOMIC_ACQUIRE);
  }
  seq1 = __atomic_load_n(&slot->seq, __ATOMIC_RELAXED);
  if (seq0 != seq1) return -1;
  memcpy(out, words, sizeof(*out));
  return 1;
}

/* Copies the estimate with publish index `index` (a reader that wants every publish, not only the
 * newest): 1 copied; 0 overwritten by a newer publish; -1 every attempt overlapped a write. */
static inline int heft_handoff_read_index(const heft_handoff_segment* seg, uint64_t index,
                                          heft_inertial_estimate* out) {
  int attempt;
  for (attempt = 0; attempt < HEFT_HANDOFF_READ_ATTEMPTS; ++attempt) {
    const int r = heft_handoff_try_read_index(seg, index, out);
    if (r >= 0) return r;
  }
  return -1;
}

/* Copies the newest estimate. Returns 1 on success, 0 if nothing was published yet or every
 * attempt overlapped a write (the reader then keeps its previous estimate). Never waits. */
static inline int heft_handoff_read_latest(const heft_handoff_segment* seg,
                                           heft_inertial_estimate* out) {
  int attempt;
  for (attempt = 0; attempt < HEFT_HANDOFF_READ_ATTEMPTS; ++attempt) {
    /* acquire: pairs with heftd's release store of head after the slot was completed. */
    const uint64_t index = __atomic_load_n(&seg->head, __ATOMIC_ACQUIRE);
    if (index == 0) return 0;
    /* Torn, or overwritten since head was read: read head again. */
    if (heft_handoff_try_read_index(seg, index, out) == 1) return 1;
  }
  return 0;
}

/* CLOCK_MONOTONIC in ns: the clock of the heartbeat. */
static inline int64_t heft_handoff_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return HEFT_HANDOFF_CAST(int64_t, ts.tv_sec) * 1000000000LL +
         HEFT_HANDOFF_CAST(int64_t, ts.tv_nsec);
}

/* The start time of process `pid` (/proc/<pid>/stat field 22, clock ticks after boot) and its state
 * letter (field 3: R, S, D, Z zombie, X dead, ...). Returns 0 when the file cannot be read (no such
 * process, or /proc hidden from this reader). Not for a real-time loop (it opens a file). */
static inline uint64_t heft_handoff_process_start(uint32_t pid, char* state) {
  char path[40];
  char buf[512];
  const char* p;
  size_t n;
  int field;
  FILE* f;
  if (state != NULL) *state = '?';
  snprintf(path, sizeof path, "/proc/%u/stat", HEFT_HANDOFF_CAST(unsigned, pid));
  f = fopen(path, "r");
  if (f == NULL) return 0;
  n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  p = strrchr(buf, ')'); /* the command name (field 2) may hold spaces and parentheses */
  if (p == NULL || p[1] != ' ') return 0;
  p += 2; /* field 3 */
  if (state != NULL) *state = *p;
  for (field = 3; field < 22; ++field) {
    p = strchr(p, ' ');
    if (p == NULL) return 0;
    ++p;
  }
  return HEFT_HANDOFF_CAST(uint64_t, strtoull(p, NULL, 10));
}

/* 1 if the segment's writer still runs: its pid exists (kill(pid, 0) is not ESRCH; EPERM means
 * another user's live process), is not a zombie, and started when the writer did (a reused pid is
 * another process). 0 if it stopped cleanly or is gone. Makes system calls. */
static inline int heft_handoff_writer_alive(const heft_handoff_segment* seg) {
  /* relaxed: a plain flag; the reader acts on it alone. */
  const uint32_t state = __atomic_load_n(&seg->header.writer_state, __ATOMIC_RELAXED);
  const uint32_t pid = seg->header.writer_pid;
  uint64_t start;
  char letter;
  if (state == HEFT_HANDOFF_WRITER_STOPPED || pid == 0) return 0;
  if (kill(HEFT_HANDOFF_CAST(pid_t, pid), 0) != 0 && errno == ESRCH) return 0;
  start = heft_handoff_process_start(pid, &letter);
  if (start == 0) return 1; /* /proc not readable here: kill's answer stands */
  if (letter == 'Z' || letter == 'X') return 0;
  return seg->header.writer_start_time == 0 || start == seg->header.writer_start_time;
}

/* 1 if every number a reader uses is finite and num_links is within the layout. */
static inline int heft_handoff_estimate_valid(const heft_inertial_estimate* e) {
  unsigned k, i;
  if (e->num_links > HEFT_HANDOFF_MAX_LINKS) return 0;
  for (k = 0; k < e->num_links; ++k) {
    /* x − x is 0 for a finite x and NaN for inf or NaN (no <math.h>, no -lm). */
    for (i = 0; i < 10; ++i) {
      const double d = e->links[k].parameters[i] - e->links[k].parameters[i];
      if (!(d == 0.0)) return 0;
    }
    for (i = 0; i < 100; ++i) {
      const double d = e->links[k].covariance[i] - e->links[k].covariance[i];
      if (!(d == 0.0)) return 0;
    }
  }
  return 1;
}

/* Reads the newest estimate into `out` when the writer is live: its heartbeat (CLOCK_MONOTONIC,
 * `now_ns` from heft_handoff_now_ns) at most `max_age_ns` old (<= 0: the default 50 ms). Returns a
 * heft_handoff_result; `out` is written only with HEFT_HANDOFF_OK. */
static inline int heft_handoff_read(const heft_handoff_segment* seg, int64_t now_ns,
                                    int64_t max_age_ns, heft_inertial_estimate* out) {
  heft_inertial_estimate e;
  int64_t beat;
  uint64_t age;
  if (max_age_ns <= 0) max_age_ns = HEFT_HANDOFF_DEFAULT_MAX_AGE_NS;
  if (!heft_handoff_compatible(seg)) return HEFT_HANDOFF_INCOMPATIBLE;
  /* relaxed: a plain flag (a stopped writer publishes nothing more). */
  if (__atomic_load_n(&seg->header.writer_state, __ATOMIC_RELAXED) == HEFT_HANDOFF_WRITER_STOPPED)
    return HEFT_HANDOFF_GONE;
  /* acquire: pairs with heftd's release store of the heartbeat after the tick's publish. */
  beat = __atomic_load_n(&seg->header.heartbeat_ns, __ATOMIC_ACQUIRE);
  /* |now − beat| without overflow, whatever the segment holds. */
  age = now_ns >= beat ? HEFT_HANDOFF_CAST(uint64_t, now_ns) - HEFT_HANDOFF_CAST(uint64_t, beat)
                       : HEFT_HANDOFF_CAST(uint64_t, beat) - HEFT_HANDOFF_CAST(uint64_t, now_ns);
  if (age > HEFT_HANDOFF_CAST(uint64_t, max_age_ns))
    return heft_handoff_writer_alive(seg) ? HEFT_HANDOFF_STALE : HEFT_HANDOFF_GONE;
  if (__atomic_load_n(&seg->head, __ATOMIC_ACQUIRE) == 0) return HEFT_HANDOFF_EMPTY;
  if (!heft_handoff_read_latest(seg, &e)) return HEFT_HANDOFF_TORN;
  if (!heft_handoff_estimate_valid(&e)) return HEFT_HANDOFF_INVALID;
  memcpy(out, &e, sizeof e);
  return HEFT_HANDOFF_OK;
}

/* Maps /dev/shm/<name> (with or without the leading '/') read-only. Returns NULL with errno set
 * (ENOENT: no such segment; EPROTO: smaller than this layout's segment, e.g. being created).
 * `ino` (may be NULL) receives the file's inode, which tells a new heftd's segment from the old. */
static inline const heft_handoff_segment* heft_handoff_open(const char* name, uint64_t* ino) {
  char path[256];
  struct stat st;
  void* p;
  int fd, err;
  snprintf(path, sizeof path, "%s%s", name[0] == '/' ? "" : "/", name);
  fd = shm_open(path, O_RDONLY, 0);
  if (fd < 0) return NULL;
  if (fstat(fd, &st) != 0) {
    err = errno;
    close(fd);
    errno = err;
    return NULL;
  }
  if (st.st_size < HEFT_HANDOFF_CAST(off_t, sizeof(heft_handoff_segment))) {
    close(fd);
    errno = EPROTO;
    return NULL;
  }
  p = mmap(NULL, sizeof(heft_handoff_segment), PROT_READ, MAP_SHARED, fd, 0);
  err = errno;
  close(fd);
  if (p == MAP_FAILED) {
    errno = err;
    return NULL;
  }
  if (ino != NULL) *ino = HEFT_HANDOFF_CAST(uint64_t, st.st_ino);
  return HEFT_HANDOFF_CAST(const heft_handoff_segment*, p);
}

static inline void heft_handoff_close(const heft_handoff_segment* seg) {
#ifdef __cplusplus
  if (seg != NULL) munmap(const_cast<heft_handoff_segment*>(seg), sizeof(heft_handoff_segment));
#else
  if (seg != NULL) munmap((void*)seg, sizeof(heft_handoff_segment));
#endif
}

/* A reader that follows heftd across restarts: it maps the name, reads with heft_handoff_read,
 * and when the writer is gone (or nothing is mapped yet) re-opens the name, at most every
 * HEFT_HANDOFF_REOPEN_NS, switching to the segment a new heftd created. */
typedef struct heft_handoff_reader {
  const heft_handoff_segment* seg; /* NULL while nothing is mapped */
  uint64_t ino;                    /* the mapped segment's inode */
  char name[224];
  int64_t max_age_ns;  /* <= 0: HEFT_HANDOFF_DEFAULT_MAX_AGE_NS */
  int64_t reopened_ns; /* last re-open attempt */
  uint64_t switches;   /* times it followed a new writer */
} heft_handoff_reader;

static inline void heft_handoff_reader_init(heft_handoff_reader* r, const char* name,
                                            int64_t max_age_ns) {
  memset(r, 0, sizeof *r);
  snprintf(r->name, sizeof r->name, "%s", name);
  r->max_age_ns = max_age_ns;
}

static inline void heft_handoff_reader_close(heft_handoff_reader* r) {
  heft_handoff_close(r->seg);
  r->seg = NULL;
}

/* One read (see heft_handoff_read); HEFT_HANDOFF_MISSING while no segment of the name exists. */
static inline int heft_handoff_reader_poll(heft_handoff_reader* r, int64_t now_ns,
                                           heft_inertial_estimate* out) {
  int result =
      r->seg != NULL ? heft_handoff_read(r->seg, now_ns, r->max_age_ns, out) : HEFT_HANDOFF_MISSING;
  if ((result == HEFT_HANDOFF_GONE || result == HEFT_HANDOFF_INCOMPATIBLE ||
       result == HEFT_HANDOFF_MISSING) &&
      (r->reopened_ns == 0 || now_ns - r->reopened_ns >= HEFT_HANDOFF_REOPEN_NS)) {
    uint64_t ino = 0;
    const heft_handoff_segment* seg = heft_handoff_open(r->name, &ino);
    r->reopened_ns = now_ns;
    if (seg != NULL && (r->seg == NULL || ino != r->ino)) {
      if (r->seg != NULL) ++r->switches;
      heft_handoff_close(r->seg);
      r->seg = seg;
      r->ino = ino;
      result = heft_handoff_read(r->seg, now_ns, r->max_age_ns, out);
    } else {
      heft_handoff_close(seg); /* the same (dead) segment, or none */
    }
  }
  return result;
}

/* A name for a heft_handoff_result. */
static inline const char* heft_handoff_result_name(int result) {
  switch (result) {
    case HEFT_HANDOFF_OK:
      return "ok";
    case HEFT_HANDOFF_EMPTY:
      return "empty";
    case HEFT_HANDOFF_TORN:
      return "torn";
    case HEFT_HANDOFF_STALE:
      return "stale";
    case HEFT_HANDOFF_GONE:
      return "gone";
    case HEFT_HANDOFF_INCOMPATIBLE:
      return "incompatible";
    case HEFT_HANDOFF_INVALID:
      return "invalid";
    case HEFT_HANDOFF_MISSING:
      return "missing";
    default:
      return "unknown";
  }
}

#ifdef __cplusplus
} /* extern "C" */
#endif
#undef HEFT_HANDOFF_STATIC_ASSERT
#undef HEFT_HANDOFF_CAST

#endif /* HEFT_HAL_SHARED_HAND_OFF_H */

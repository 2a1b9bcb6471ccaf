/* can_replay: canplayer's job (a candump -l log onto CAN interfaces, in real time, with interface
 * mapping), for an emulated guest where canplayer's per-frame parsing and one write() per frame
 * cannot keep up: the whole log is parsed before the replay starts, and each instant's frames
 * (those sharing a timestamp) go out with one sendmmsg() per interface at their time
 * (clock_nanosleep to an absolute CLOCK_MONOTONIC deadline: the log's relative times are kept).
 *
 *   can_replay -I LOG [-S START_FILE] WRITE_IF=LOG_IF...
 *
 * -S: the file is created at the replay's time zero (the first instant), after the parsing.
 *
 * Prints "REPLAY frames=.. instants=.. span_s=.. wall_s=.. late_instants=.. late_max_ms=..
 * late_p99_ms=.. enobufs=.. dropped=.." (late: an instant sent more than 1 ms after its time). A
 * frame the kernel refuses with ENOBUFS is retried after 50 us, up to 20 times, then dropped and
 * counted. Exit 0 done, 1 I/O error, 2 usage or a malformed log line. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/can.h>
#include <linux/can/raw.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_IF 8

typedef struct {
  int64_t t_us;  /* log time */
  uint8_t iface; /* index into the map */
  uint8_t fd;    /* CAN FD frame */
  struct canfd_frame frame;
} entry;

static int hex(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* "(SEC.USEC) IF ID#DATA" or "ID##F DATA" (FD); RTR and error frames are not in heft's logs. */
static int parse(const char* line, char* ifname, entry* e) {
  long long sec, usec;
  char frame[300];
  const char* p;
  unsigned id = 0;
  int n = 0, d;
  if (sscanf(line, " (%lld.%lld) %15s %299s", &sec, &usec, ifname, frame) != 4) return -1;
  memset(e, 0, sizeof *e);
  e->t_us = sec * 1000000LL + usec;
  for (p = frame; *p && *p != '#'; ++p) {
    if ((d = hex(*p)) < 0) return -1;
    id = id * 16U + (unsigned)d;
    ++n;
  }
  if (*p != '#' || n == 0) return -1;
  e->frame.can_id = n > 3 ? (id | CAN_EFF_FLAG) : id;
  ++p;
  if (*p == '#') {
    e->fd = 1;
    if ((d = hex(p[1])) < 0) return -1;
    e->frame.flags = (uint8_t)d;
    p += 2;
  }
  for (n = 0; p[0] && p[1]; p += 2) {
    const int hi = hex(p[0]), lo = hex(p[1]);
    if (hi < 0 || lo < 0 || n >= (e->fd ? 64 : 8)) return -1;
    e->frame.data[n++] = (uint8_t)(hi * 16 + lo);
  }
  e->frame.len = (uint8_t)n;
  return 0;
}

static int cmp_i64(const void* a, const void* b) {
  const int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  const char* path = NULL;
  const char* start_file = NULL;
  char write_if[MAX_IF][IFNAMSIZ], log_if[MAX_IF][IFNAMSIZ];
  int n_if = 0, sock[MAX_IF], i;
  entry* entries = NULL;
  size_t n = 0, cap = 0, k;
  char line[512], ifname[16];
  FILE* f;
  int64_t *late, t0, lateness;
  size_t n_late = 0, instants = 0, late_instants = 0;
  unsigned long enobufs = 0, dropped = 0;
  struct mmsghdr msgs[MAX_IF][256];
  struct iovec iovs[MAX_IF][256];
  unsigned count[MAX_IF];

  for (i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "-I") == 0 && i + 1 < argc) {
      path = argv[++i];
    } else if (strcmp(argv[i], "-S") == 0 && i + 1 < argc) {
      start_file = argv[++i];
    } else {
      const char* eq = strchr(argv[i], '=');
      if (eq == NULL || n_if == MAX_IF || eq - argv[i] >= IFNAMSIZ || strlen(eq + 1) >= IFNAMSIZ) {
        fprintf(stderr, "usage: can_replay -I LOG [-S START_FILE] WRITE_IF=LOG_IF...\n");
        return 2;
      }
      snprintf(write_if[n_if], IFNAMSIZ, "%.*s", (int)(eq - argv[i]), argv[i]);
      snprintf(log_if[n_if], IFNAMSIZ, "%s", eq + 1);
      ++n_if;
    }
  }
  if (path == NULL || n_if == 0) {
    fprintf(stderr, "usage: can_replay -I LOG [-S START_FILE] WRITE_IF=LOG_IF...\n");
    return 2;
  }
  /* Parse everything first. */
  if ((f = fopen(path, "r")) == NULL) {
    fprintf(stderr, "can_replay: %s: %s\n", path, strerror(errno));
    return 1;
  }
  for (k = 1; fgets(line, sizeof line, f) != NULL; ++k) {
    entry e;
    if (line[0] != '(') continue;
    if (parse(line, ifname, &e) != 0) {
      fprintf(stderr, "can_replay: %s:%zu: not a candump -l frame: %s", path, k, line);
      return 2;
    }
    for (i = 0; i < n_if && strcmp(log_if[i], ifname) != 0; ++i) {
    }
    if (i == n_if) continue; /* not mapped: not replayed (as canplayer with assignments) */
    e.iface = (uint8_t)i;
    if (n == cap) {
      cap = cap ? 2 * cap : 65536;
      entries = realloc(entries, cap * sizeof *entries);
      if (entries == NULL) return 1;
    }
    entries[n++] = e;
  }
  fclose(f);
  if (n == 0) {
    fprintf(stderr, "can_replay: no frame of the mapped interfaces in %s\n", path);
    return 2;
  }
  for (i = 0; i < n_if; ++i) {
    struct sockaddr_can addr;
    const int on = 1;
    memset(&addr, 0, sizeof addr);
    sock[i] = socket(PF_CAN, SOCK_RAW, CAN_RAW);
    addr.can_family = AF_CAN;
    addr.can_ifindex = (int)if_nametoindex(write_if[i]);
    if (sock[i] < 0 || addr.can_ifindex == 0 ||
        setsockopt(sock[i], SOL_CAN_RAW, CAN_RAW_FD_FRAMES, &on, sizeof on) != 0 ||
        bind(sock[i], (struct sockaddr*)&addr, sizeof addr) != 0) {
      fprintf(stderr, "can_replay: %s: %s\n", write_if[i], strerror(errno));
      return 1;
    }
  }
  late = malloc(n * sizeof *late);
  if (late == NULL) return 1;

  /* Replay: one instant (equal log time) at a time. */
  if (start_file != NULL) {
    FILE* s = fopen(start_file, "w");
    if (s == NULL) {
      fprintf(stderr, "can_replay: %s: %s\n", start_file, strerror(errno));
      return 1;
    }
    fclose(s);
  }
  t0 = now_ns();
  for (k = 0; k < n;) {
    const int64_t due = t0 + (entries[k].t_us - entries[0].t_us) * 1000LL;
    struct timespec ts = {(time_t)(due / 1000000000LL), (long)(due % 1000000000LL)};
    size_t end = k;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
    memset(count, 0, sizeof count);
    for (end = k; end < n && entries[end].t_us == entries[k].t_us; ++end) {
      entry* e = &entries[end];
      const unsigned c = count[e->iface];
      if (c == 256) break;
      iovs[e->iface][c].iov_base = &e->frame;
      iovs[e->iface][c].iov_len = e->fd ? CANFD_MTU : CAN_MTU;
      memset(&msgs[e->iface][c], 0, sizeof msgs[e->iface][c]);
      msgs[e->iface][c].msg_hdr.msg_iov = &iovs[e->iface][c];
      msgs[e->iface][c].msg_hdr.msg_iovlen = 1;
      count[e->iface] = c + 1;
    }
    for (i = 0; i < n_if; ++i) {
      unsigned sent = 0, tries = 0;
      while (sent < count[i]) {
        const int r = sendmmsg(sock[i], &msgs[i][sent], count[i] - sent, 0);
        if (r > 0) {
          sent += (unsigned)r;
          tries = 0;
        } else if (r < 0 && errno == ENOBUFS && tries < 20) {
          const struct timespec pause = {0, 50000};
          ++enobufs;
          ++tries;
          nanosleep(&pause, NULL);
        } else if (r < 0 && errno == ENOBUFS) {
          ++dropped;
          ++sent;
          tries = 0;
        } else if (r < 0 && errno != EINTR) {
          fprintf(stderr, "can_replay: %s: sendmmsg: %s\n", write_if[i], strerror(errno));
          return 1;
        }
      }
    }
    lateness = now_ns() - due;
    late[n_late++] = lateness;
    if (lateness > 1000000) ++late_instants;
    ++instants;
    k = end;
  }
  {
    const double wall = 1e-9 * (double)(now_ns() - t0);
    qsort(late, n_late, sizeof *late, cmp_i64);
    printf(
        "REPLAY frames=%zu instants=%zu span_s=%.3f wall_s=%.3f late_instants=%zu "
        "late_max_ms=%.2f late_p99_ms=%.2f late_median_ms=%.3f enobufs=%lu dropped=%lu\n",
        n, instants, 1e-6 * (double)(entries[n - 1].t_us - entries[0].t_us), wall, late_instants,
        1e-6 * (double)late[n_late - 1], 1e-6 * (double)late[(size_t)(0.99 * (double)(n_late - 1))],
        1e-6 * (double)late[n_late / 2], enobufs, dropped);
  }
  return 0;
}

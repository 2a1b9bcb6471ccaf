/* handoff_standin: the controller framework's part in the QEMU proof (qemu_heftd_proof.sh), in C
 * against the installed hal headers only, as a framework would be written.
 *
 *   handoff_standin --handoff NAME --link LINK --mass KG [--tolerance 0.05] [--input NAME]
 *                   [--require-input] [--input-wait S] [--start-file PATH] [--load-at S]
 *                   [--done-file PATH] [--linger S] [--timeout S] [--priority P] [--max-missed N]
 *
 * 1. Waits for heftd's hand-off (/dev/shm/NAME, host.shm) to carry its first estimate.
 * 2. Opens the framework input segment heftd creates (/dev/shm/--input, default heft_input) and
 *    sends one command, `walking`; it never writes a base sample (the base state comes from the
 *    robot's IMU on CAN). It looks for the segment for --input-wait seconds while it reads the
 *    hand-off; without it (a heftd that does not create it) it goes on and says so, or fails with
 *    --require-input.
 * 3. Reads every estimate heftd publishes, by publish index (not only the newest), until
 *    --done-file exists plus --linger seconds, or --timeout. Each handed parameter set of every
 *    link is checked for physical consistency: finite, m > 0 and the pseudo-inertia
 *    J = [[S, h], [h^T, m]] (S = tr(I)/2 * 1 - I, I about the link origin) positive semidefinite,
 *    i.e. S - h h^T / m >= 0: the principal moments about the centre of mass satisfy the triangle
 *    inequalities. Sets the ring overwrote before they were read count as missed.
 * 4. Prints one line
 *      HEFT-PROOF-RESULT pass=0|1 link=.. expected_kg=.. final_kg=.. final_error_pct=..
 *      within_s=.. sets=.. missed=.. inconsistent=.. ...
 *    where within_s is the time from the load (the replay's start, --start-file appearing, plus
 *    --load-at) to the first set whose mass of LINK is within --tolerance of KG, taken from the
 *    estimate's own stamp (heftd's CLOCK_MONOTONIC sample time).
 * Passes (exit 0) when the final set's mass is within the tolerance, it was reached, no set was
 * inconsistent, at most --max-missed sets were missed, and the input segment was used if required.
 * Exit 1: failed; 2: usage. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "heft/hal/framework_input.h"
#include "heft/hal/shared_hand_off.h"

static int64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + (int64_t)ts.tv_nsec;
}

static int exists(const char* path) {
  struct stat st;
  return path != NULL && stat(path, &st) == 0;
}

/* Maps /dev/shm/<name> of exactly `size` bytes (read-write for the input, read-only for the
 * hand-off); NULL if it is missing or smaller. */
static void* map_segment(const char* name, size_t size, int writable) {
  char path[256];
  struct stat st;
  void* p;
  int fd;
  snprintf(path, sizeof path, "/%s", name);
  fd = shm_open(path, writable ? O_RDWR : O_RDONLY, 0);
  if (fd < 0) return NULL;
  if (fstat(fd, &st) != 0 || (size_t)st.st_size < size) {
    close(fd);
    return NULL;
  }
  p = mmap(NULL, size, writable ? (PROT_READ | PROT_WRITE) : PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  return p == MAP_FAILED ? NULL : p;
}

/* Smallest eigenvalue of a symmetric 3x3 matrix (trigonometric closed form). */
static double min_eigenvalue(double a[3][3]) {
  const double p1 = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
  const double q = (a[0][0] + a[1][1] + a[2][2]) / 3.0;
  double p2, p, b[3][3], r, phi;
  int i, j;
  if (p1 == 0.0) return fmin(a[0][0], fmin(a[1][1], a[2][2]));
  p2 = (a[0][0] - q) * (a[0][0] - q) + (a[1][1] - q) * (a[1][1] - q) +
       (a[2][2] - q) * (a[2][2] - q) + 2.0 * p1;
  p = sqrt(p2 / 6.0);
  for (i = 0; i < 3; ++i)
    for (j = 0; j < 3; ++j) b[i][j] = (a[i][j] - (i == j ? q : 0.0)) / p;
  r = 0.5 * (b[0][0] * (b[1][1] * b[2][2] - b[1][2] * b[2][1]) -
             b[0][1] * (b[1][0] * b[2][2] - b[1][2] * b[2][0]) +
             b[0][2] * (b[1][0] * b[2][1] - b[1][1] * b[2][0]));
  r = fmax(-1.0, fmin(1.0, r));
  phi = acos(r) / 3.0;
  return q + 2.0 * p * cos(phi + 2.0 * M_PI / 3.0);
}

/* Physical consistency of pi = [m, hx, hy, hz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]: the smallest
 * eigenvalue of S - h h^T / m relative to its trace (>= -1e-9 passes: rounding), or -INFINITY when
 * the set is not finite or m <= 0. */
static double consistency_margin(const double pi[10]) {
  const double m = pi[0];
  const double h[3] = {pi[1], pi[2], pi[3]};
  const double inertia[3][3] = {
      {pi[4], pi[5], pi[6]}, {pi[5], pi[7], pi[8]}, {pi[6], pi[8], pi[9]}};
  double s[3][3], trace_half, trace;
  int i, j;
  for (i = 0; i < 10; ++i)
    if (!isfinite(pi[i])) return -INFINITY;
  if (!(m > 0.0)) return -INFINITY;
  trace_half = 0.5 * (inertia[0][0] + inertia[1][1] + inertia[2][2]);
  for (i = 0; i < 3; ++i)
    for (j = 0; j < 3; ++j) s[i][j] = (i == j ? trace_half : 0.0) - inertia[i][j] - h[i] * h[j] / m;
  trace = s[0][0] + s[1][1] + s[2][2];
  return min_eigenvalue(s) / fmax(trace, 1e-12);
}

static const char* state_name(unsigned state) {
  static const char* names[] = {"inactive", "wait_for_walking", "calibrating_bias", "estimating",
                                "holding"};
  return state < 5 ? names[state] : "unknown";
}

static void usage(void) {
  fprintf(stderr,
          "usage: handoff_standin --handoff NAME --link LINK --mass KG [--tolerance F] "
          "[--input NAME] [--require-input] [--input-wait S] [--start-file PATH] [--load-at S] "
          "[--done-file PATH] [--linger S] [--timeout S] [--priority P] [--max-missed N]\n");
}

int main(int argc, char** argv) {
  const char *handoff_name = NULL, *link = NULL, *input_name = HEFT_INPUT_DEFAULT_NAME;
  const char *start_file = NULL, *done_file = NULL;
  double expected = 0.0, tolerance = 0.05, input_wait = 5.0, load_at = 0.0, linger = 0.5;
  double timeout = 120.0;
  int require_input = 0, priority = 0, input_given_up = 0, i;
  long max_missed = 0;
  const heft_handoff_segment* handoff = NULL;
  heft_input_segment* input = NULL;
  static heft_inertial_estimate e;
  struct timespec period = {0, 1000000}; /* 1 ms */
  int64_t t0, t_start = 0, t_done = 0, t_within = 0, t_first_estimating = 0, next_trace = 0;
  uint64_t last = 0, sets = 0, missed = 0, torn = 0, inconsistent = 0, outside_after = 0;
  uint64_t per_state[5] = {0, 0, 0, 0, 0}, hold_bits = 0;
  double final_mass = NAN, worst_margin = INFINITY, worst_after = 0.0;
  const char* input_status = "absent";
  const char* why = "";
  int link_index = -1, pass;
  uint32_t reader_pid = 0;

  for (i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--require-input") == 0) {
      require_input = 1;
      continue;
    }
    if (v == NULL) {
      usage();
      return 2;
    }
    ++i;
    if (strcmp(a, "--handoff") == 0)
      handoff_name = v;
    else if (strcmp(a, "--link") == 0)
      link = v;
    else if (strcmp(a, "--mass") == 0)
      expected = atof(v);
    else if (strcmp(a, "--tolerance") == 0)
      tolerance = atof(v);
    else if (strcmp(a, "--input") == 0)
      input_name = v;
    else if (strcmp(a, "--input-wait") == 0)
      input_wait = atof(v);
    else if (strcmp(a, "--start-file") == 0)
      start_file = v;
    else if (strcmp(a, "--load-at") == 0)
      load_at = atof(v);
    else if (strcmp(a, "--done-file") == 0)
      done_file = v;
    else if (strcmp(a, "--linger") == 0)
      linger = atof(v);
    else if (strcmp(a, "--timeout") == 0)
      timeout = atof(v);
    else if (strcmp(a, "--priority") == 0)
      priority = atoi(v);
    else if (strcmp(a, "--max-missed") == 0)
      max_missed = atol(v);
    else {
      usage();
      return 2;
    }
  }
  if (handoff_name == NULL || link == NULL || !(expected > 0.0) || !(tolerance > 0.0)) {
    usage();
    return 2;
  }
  if (priority > 0) { /* a framework's controller runs real-time too */
    struct sched_param sp;
    memset(&sp, 0, sizeof sp);
    sp.sched_priority = priority;
    if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
      printf("standin: SCHED_FIFO %d refused (%s)\n", priority, strerror(errno));
  }

  t0 = monotonic_ns();
  /* 1. heftd's hand-off, with its first estimate. */
  while (handoff == NULL || __atomic_load_n(&handoff->head, __ATOMIC_ACQUIRE) == 0) {
    if (handoff == NULL) {
      handoff =
          (const heft_handoff_segment*)map_segment(handoff_name, sizeof(heft_handoff_segment), 0);
      if (handoff != NULL && !heft_handoff_compatible(handoff)) {
        munmap((void*)handoff, sizeof(heft_handoff_segment));
        handoff = NULL;
      }
    }
    if (monotonic_ns() - t0 > (int64_t)(timeout * 1e9)) {
      printf("HEFT-PROOF-RESULT pass=0 reason=no_handoff handoff=%s\n", handoff_name);
      return 1;
    }
    nanosleep(&period, NULL);
  }
  printf("standin: hand-off /dev/shm/%s from heftd pid %u\n", handoff_name,
         handoff->header.writer_pid);

  /* 3. Every handed set. */
  last = __atomic_load_n(&handoff->head, __ATOMIC_ACQUIRE) - 1U;
  for (;;) {
    const int64_t now = monotonic_ns();
    const uint64_t head = __atomic_load_n(&handoff->head, __ATOMIC_ACQUIRE);
    uint64_t index;
    /* 2. The framework input segment (looked for while the sets are read): one `walking`. */
    if (input == NULL && !input_given_up) {
      input = (heft_input_segment*)map_segment(input_name, sizeof(heft_input_segment), 1);
      if (input != NULL && !heft_input_compatible(input)) {
        munmap(input, sizeof(heft_input_segment));
        input = NULL;
      }
      if (input != NULL) {
        heft_input_attach_writer(input, (uint32_t)getpid());
        reader_pid = __atomic_load_n(&input->header.reader_pid, __ATOMIC_RELAXED);
        heft_input_command(input, HEFT_INPUT_CMD_WALKING);
        input_status = "walking_sent";
        printf("standin: sent walking through /dev/shm/%s (reader pid %u)\n", input_name,
               reader_pid);
      } else if (now - t0 > (int64_t)(input_wait * 1e9)) {
        input_given_up = 1;
        printf("standin: no framework input segment /dev/shm/%s after %.1f s: walking not sent\n",
               input_name, input_wait);
      }
      fflush(stdout);
    }
    if (t_start == 0 && exists(start_file)) t_start = now;
    if (t_done == 0 && exists(done_file)) t_done = now;
    if (t_done != 0 && now - t_done > (int64_t)(linger * 1e9)) break;
    if (now - t0 > (int64_t)(timeout * 1e9)) {
      why = "timeout";
      break;
    }
    if (input != NULL) { /* heftd restarted: a framework sends its mode again */
      const uint32_t pid = __atomic_load_n(&input->header.reader_pid, __ATOMIC_RELAXED);
      if (pid != reader_pid) {
        reader_pid = pid;
        heft_input_command(input, HEFT_INPUT_CMD_WALKING);
        printf("standin: heftd is now pid %u: sent walking again\n", pid);
      }
    }
    if (head > last + HEFT_HANDOFF_DEPTH - 1U) { /* overwritten before this reader came */
      missed += head - (HEFT_HANDOFF_DEPTH - 1U) - last;
      last = head - (HEFT_HANDOFF_DEPTH - 1U);
    }
    for (index = last + 1U; index <= head; ++index) {
      const int got = heft_handoff_read_index(handoff, index, &e);
      unsigned k;
      if (got <= 0) {
        if (got == 0)
          ++missed;
        else
          ++torn;
        continue;
      }
      ++sets;
      if (e.status.state < 5) ++per_state[e.status.state];
      hold_bits |= e.status.hold_reason;
      if (e.status.state == HEFT_STATE_ESTIMATING && t_first_estimating == 0)
        t_first_estimating = e.stamp_ns;
      for (k = 0; k < e.num_links && k < HEFT_HANDOFF_MAX_LINKS; ++k) {
        const double margin = consistency_margin(e.links[k].parameters);
        if (margin < worst_margin) worst_margin = margin;
        if (!(margin >= -1e-9)) {
          if (inconsistent < 5)
            printf("standin: INCONSISTENT set %llu, link %.*s: margin %g, m = %g\n",
                   (unsigned long long)e.sequence, (int)HEFT_HANDOFF_LINK_NAME, e.links[k].name,
                   margin, e.links[k].parameters[0]);
          ++inconsistent;
        }
        if (link_index < 0 && strncmp(e.links[k].name, link, HEFT_HANDOFF_LINK_NAME) == 0)
          link_index = (int)k;
      }
      if (link_index >= 0 && (unsigned)link_index < e.num_links) {
        const double m = e.links[link_index].parameters[0];
        const double err = fabs(m - expected) / expected;
        final_mass = m;
        if (t_within == 0 && err <= tolerance) t_within = e.stamp_ns;
        if (t_within != 0 && err > tolerance) ++outside_after;
        if (t_within != 0 && err > worst_after) worst_after = err;
        if (e.stamp_ns >= next_trace) {
          next_trace = e.stamp_ns + 500000000;
          printf("standin: t=%.3f s state %s hold 0x%x %s m=%.3f kg\n",
                 t_start ? 1e-9 * (double)(e.stamp_ns - t_start) : -1.0, state_name(e.status.state),
                 (unsigned)e.status.hold_reason, link, m);
          fflush(stdout);
        }
      }
    }
    last = head;
    nanosleep(&period, NULL);
  }

  /* 4. The verdict. */
  {
    const double final_error = fabs(final_mass - expected) / expected;
    const double load_ns = (double)t_start + load_at * 1e9;
    pass = 1;
    if (link_index < 0) {
      pass = 0;
      why = "link_not_in_handoff";
    } else if (t_start == 0) {
      pass = 0;
      why = "replay_never_started";
    } else if (inconsistent > 0) {
      pass = 0;
      why = "inconsistent_set";
    } else if ((long)(missed + torn) > max_missed) {
      pass = 0;
      why = "sets_missed";
    } else if (!(final_error <= tolerance) || t_within == 0) {
      pass = 0;
      why = "mass_not_reached";
    } else if (require_input && input == NULL) {
      pass = 0;
      why = "no_input_segment";
    } else if (*why != '\0') {
      pass = 0;
    }
    printf(
        "HEFT-PROOF-RESULT pass=%d reason=%s link=%s expected_kg=%.3f final_kg=%.4f "
        "final_error_pct=%.2f within_s=%.3f first_estimating_s=%.3f outside_after=%llu "
        "worst_after_pct=%.2f sets=%llu missed=%llu torn=%llu inconsistent=%llu "
        "worst_margin=%.3g input=%s sets_by_state=%llu/%llu/%llu/%llu/%llu hold_bits=0x%llx\n",
        pass, *why ? why : "none", link, expected, final_mass, 100.0 * final_error,
        t_within && t_start ? 1e-9 * ((double)t_within - load_ns) : -1.0,
        t_first_estimating && t_start ? 1e-9 * (double)(t_first_estimating - t_start) : -1.0,
        (unsigned long long)outside_after, 100.0 * worst_after, (unsigned long long)sets,
        (unsigned long long)missed, (unsigned long long)torn, (unsigned long long)inconsistent,
        worst_margin, input_status, (unsigned long long)per_state[0],
        (unsigned long long)per_state[1], (unsigned long long)per_state[2],
        (unsigned long long)per_state[3], (unsigned long long)per_state[4],
        (unsigned long long)hold_bits);
  }
  return pass ? 0 : 1;
}

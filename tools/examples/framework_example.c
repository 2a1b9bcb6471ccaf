/* framework_example: the controller framework's side of heftd, in C, against the hal headers only.
 *
 *   framework_example [--input NAME] [--handoff NAME] [--seconds S]
 *
 * Writes the framework input segment that heftd created (/dev/shm/NAME, default heft_input): a
 * stand-in base state (standing still, level: specific force 9.81 m/s^2 up) at 1 kHz and one
 * `walking` command; every 100 ms reads heftd's hand-off (/dev/shm/NAME given to heftd as
 * host.shm) and prints the newest estimate while heftd is live, or says that it is stale or gone
 * (then the controller falls back to its nominal model) and follows a restarted heftd. A real
 * framework writes its state estimator's output instead of the stand-in and sends walking/stopped
 * when its gait state changes.
 *
 * Build: cc -std=c11 -I<prefix>/include framework_example.c -o framework_example -lrt -lm
 * Exit status: 0 done, 1 the input segment is missing or speaks another layout, 2 usage. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "heft/hal/framework_input.h"
#include "heft/hal/shared_hand_off.h"

static int64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + (int64_t)ts.tv_nsec;
}

/* Maps /dev/shm/<name> (read-write for the input, read-only for the hand-off); NULL if missing. */
static void* map_segment(const char* name, size_t size, int writable) {
  char path[256];
  void* p;
  int fd;
  snprintf(path, sizeof path, "/%s", name);
  fd = shm_open(path, writable ? O_RDWR : O_RDONLY, 0);
  if (fd < 0) return NULL;
  p = mmap(NULL, size, writable ? (PROT_READ | PROT_WRITE) : PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  return p == MAP_FAILED ? NULL : p;
}

static void print_estimate(const heft_inertial_estimate* e) {
  unsigned k;
  printf("estimate %llu: state %u hold 0x%x updates %llu", (unsigned long long)e->sequence,
         (unsigned)e->status.state, (unsigned)e->status.hold_reason,
         (unsigned long long)e->status.updates);
  for (k = 0; k < e->num_links && k < HEFT_HANDOFF_MAX_LINKS; ++k)
    printf("  %.*s m=%.3f kg", (int)HEFT_HANDOFF_LINK_NAME, e->links[k].name,
           e->links[k].parameters[0]);
  printf("\n");
  fflush(stdout);
}

int main(int argc, char** argv) {
  const char* input_name = HEFT_INPUT_DEFAULT_NAME;
  const char* handoff_name = NULL;
  double seconds = 2.0;
  heft_input_segment* input;
  heft_handoff_reader handoff;
  int last_result = -1;
  heft_input_sample s;
  heft_inertial_estimate estimate;
  struct timespec period = {0, 1000000}; /* 1 ms */
  int64_t start, next_print;
  uint64_t tick = 0;
  int i;

  for (i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--input") == 0 && i + 1 < argc) {
      input_name = argv[++i];
    } else if (strcmp(argv[i], "--handoff") == 0 && i + 1 < argc) {
      handoff_name = argv[++i];
    } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = atof(argv[++i]);
    } else {
      fprintf(stderr, "usage: framework_example [--input NAME] [--handoff NAME] [--seconds S]\n");
      return 2;
    }
  }

  input = (heft_input_segment*)map_segment(input_name, sizeof(heft_input_segment), 1);
  if (input == NULL) {
    fprintf(stderr,
            "framework_example: /dev/shm/%s: %s (is heftd running? is this user in its group?)\n",
            input_name, strerror(errno));
    return 1;
  }
  if (!heft_input_compatible(input)) {
    fprintf(stderr, "framework_example: /dev/shm/%s has layout %u, this program speaks %u\n",
            input_name, input->header.layout_version, HEFT_INPUT_LAYOUT_VERSION);
    return 1;
  }
  heft_input_attach_writer(input, (uint32_t)getpid());
  if (handoff_name != NULL) {
    /* A heartbeat older than 50 ms (~17 control periods) is stale. */
    heft_handoff_reader_init(&handoff, handoff_name, HEFT_HANDOFF_DEFAULT_MAX_AGE_NS);
  }

  /* The robot stands on its feet and walks: estimation may start. */
  heft_input_command(input, HEFT_INPUT_CMD_WALKING);

  memset(&s, 0, sizeof s);
  s.flags = HEFT_INPUT_HAS_SPECIFIC_FORCE;
  s.orientation[0] = 1.0;     /* level, yaw 0 */
  s.specific_force[2] = 9.81; /* at rest: the support pushes up */
  start = monotonic_ns();
  next_print = start;
  while (monotonic_ns() - start < (int64_t)(seconds * 1e9)) {
    s.sequence = ++tick;
    s.stamp_ns = monotonic_ns();
    heft_input_write(input, &s);
    if (handoff_name != NULL && s.stamp_ns >= next_print) {
      const int r = heft_handoff_reader_poll(&handoff, s.stamp_ns, &estimate);
      next_print += 100000000;
      if (r == HEFT_HANDOFF_OK) {
        print_estimate(&estimate);
      } else if (r != last_result) { /* stale, gone, missing, ...: the nominal model applies */
        printf("hand-off /dev/shm/%s: %s\n", handoff_name, heft_handoff_result_name(r));
        fflush(stdout);
      }
      last_result = r;
    }
    nanosleep(&period, NULL);
  }
  printf("wrote %llu samples to /dev/shm/%s\n", (unsigned long long)tick, input_name);
  munmap(input, sizeof(heft_input_segment));
  if (handoff_name != NULL) heft_handoff_reader_close(&handoff);
  return 0;
}

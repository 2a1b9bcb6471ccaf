/* hal/framework_input.h compiled as C11, as a controller framework in C would: the layout is the
 * one the C++ reader expects (the sizes/offsets are also static_asserts in the header), a sample
 * written is read back field for field, commands count up. Exit status 1 names the failed check. */
#include <math.h>
#include <stdio.h>

#include "heft/hal/framework_input.h"

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

int main(void) {
  static heft_input_segment seg; /* zero: not initialised */
  heft_input_sample in, out;
  heft_input_commands cmds;
  int i;

  CHECK(sizeof(heft_input_segment) == 320);
  CHECK(offsetof(heft_input_segment, sample_words) == 192);
  CHECK(!heft_input_compatible(&seg));
  heft_input_init(&seg, 42U);
  CHECK(heft_input_compatible(&seg));
  CHECK(seg.header.reader_pid == 42U);
  CHECK(heft_input_read(&seg, &out, 0) == HEFT_INPUT_EMPTY);

  memset(&in, 0, sizeof in);
  in.sequence = 3;
  in.stamp_ns = 123456789;
  in.flags = HEFT_INPUT_HAS_SPECIFIC_FORCE;
  in.orientation[0] = cos(0.1);
  in.orientation[1] = sin(0.1);
  in.angular_velocity[2] = 0.5;
  in.specific_force[2] = 9.81;
  heft_input_attach_writer(&seg, 7U);
  heft_input_write(&seg, &in);
  CHECK(seg.seq == 2U); /* even: stable */
  CHECK(heft_input_read(&seg, &out, 0) == HEFT_INPUT_OK);
  CHECK(memcmp(&in, &out, sizeof in) == 0);
  CHECK(seg.header.writer_pid == 7U);

  /* A writer that died mid-write left the seqlock odd: readers report a torn read, and the next
   * write recovers. */
  seg.seq = 5;
  CHECK(heft_input_read(&seg, &out, 3) == HEFT_INPUT_TORN);
  heft_input_write(&seg, &in);
  CHECK(seg.seq == 6U);
  CHECK(heft_input_read(&seg, &out, 1) == HEFT_INPUT_OK);

  for (i = 0; i < 3; ++i) heft_input_command(&seg, HEFT_INPUT_CMD_WALKING);
  heft_input_command(&seg, HEFT_INPUT_CMD_RESET);
  heft_input_command(&seg, (enum heft_input_command_id)17); /* ignored */
  heft_input_read_commands(&seg, &cmds);
  CHECK(cmds.count[HEFT_INPUT_CMD_WALKING] == 3U);
  CHECK(cmds.count[HEFT_INPUT_CMD_RESET] == 1U);
  CHECK(cmds.count[HEFT_INPUT_CMD_STOPPED] == 0U);
  CHECK((cmds.last_command & 0xFFU) == HEFT_INPUT_CMD_RESET);
  CHECK((cmds.last_command >> 8) == 4U);

  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("framework_input.h as C11: all checks passed\n");
  return 0;
}

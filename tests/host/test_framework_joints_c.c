/* hal/framework_joints.h compiled as C11, as a controller framework in C would: the layout the C++
 * reader expects, heftd's names found by slot, a sample written and read back field for field.
 * Exit status 1 names the failed check. */
#include <stdio.h>

#include "heft/hal/framework_joints.h"

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

int main(void) {
  static heft_joints_segment seg; /* zero: not initialised */
  static heft_joints_sample in, out;
  const char* joints[] = {"left_knee", "right_knee"};
  const char* frames[] = {"left_foot_ft"};
  CHECK(sizeof(heft_joints_segment) == 5168);
  CHECK(offsetof(heft_joints_segment, sample_words) == 3392);
  CHECK(!heft_joints_compatible(&seg));
  CHECK(heft_joints_read(&seg, &out, 0) == HEFT_JOINTS_EMPTY);
  CHECK(heft_joints_init(&seg, 7U, 65U, joints, 0U, frames) == -1); /* beyond the layout */
  CHECK(heft_joints_init(&seg, 7U, 2U, joints, 1U, frames) == 0);
  CHECK(heft_joints_compatible(&seg));
  CHECK(heft_joints_find_joint(&seg, "right_knee") == 1);
  CHECK(heft_joints_find_joint(&seg, "left_hip") == -1);
  CHECK(heft_joints_find_wrench(&seg, "left_foot_ft") == 0);
  heft_joints_attach_writer(&seg, 9U);
  CHECK(seg.header.writer_pid == 9U && seg.header.reader_pid == 7U);
  in.sequence = 3;
  in.stamp_ns = 123456789;
  in.num_joints = 2;
  in.num_wrenches = 1;
  in.encoder_valid = 0x3;
  in.torque_valid = 0x1;
  in.wrench_valid = 0x1;
  in.position[1] = -0.25;
  in.velocity[1] = 1.5;
  in.torque[0] = 42.0;
  in.wrench[0][5] = -7.0;
  heft_joints_write(&seg, &in);
  CHECK(heft_joints_read(&seg, &out, 0) == HEFT_JOINTS_OK);
  CHECK(out.sequence == 3 && out.stamp_ns == 123456789 && out.num_joints == 2);
  CHECK(out.encoder_valid == 0x3 && out.torque_valid == 0x1 && out.wrench_valid == 0x1);
  CHECK(out.position[1] == -0.25 && out.velocity[1] == 1.5 && out.torque[0] == 42.0);
  CHECK(out.wrench[0][5] == -7.0);
  CHECK(seg.seq == 2);
  if (failures == 0) printf("framework_joints.h as C11: all checks passed\n");
  return failures == 0 ? 0 : 1;
}

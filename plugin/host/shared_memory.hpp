// The shared-memory hand-off for controllers in other processes: /dev/shm/<name> holding a
// hal::SharedHandOff (layout and reader's contract: hal/shared_hand_off.hpp). Created at set-up,
// unmapped and unlinked when destroyed. Publish() is the control thread's: wait-free, no
// allocation, lock or system call.
#pragma once

#include <string>

#include "heft/hal/inertial_estimate.hpp"
#include "heft/hal/shared_hand_off.hpp"

namespace heft::host {

class SharedHandOffSegment {
 public:
  // `name` without the leading '/'. Throws naming the segment when it cannot be created.
  explicit SharedHandOffSegment(const std::string& name);
  ~SharedHandOffSegment();
  SharedHandOffSegment(const SharedHandOffSegment&) = delete;
  SharedHandOffSegment& operator=(const SharedHandOffSegment&) = delete;

  void Publish(const hal::InertialEstimate& estimate) noexcept { shared_->ring.publish(estimate); }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  hal::SharedHandOff* shared_ = nullptr;
};

}  // namespace heft::host

// The shared-memory hand-off for controllers in other processes: /dev/shm/<name> holding a
// hal::SharedHandOff (layout: hal/shared_hand_off.hpp; the readers' C API and contract:
// hal/shared_hand_off.h).
//
// Set-up creates the segment complete under a temporary name (mode 0640: heftd's group may read,
// nobody else) and renames it over /dev/shm/<name>: a reader never maps a half-initialised
// segment, and a new heftd replaces the segment of one that died (SIGKILL, crash) instead of
// rewriting it under its readers, who see the old one as gone and re-open the name. The
// destructor marks the segment stopped, then unmaps it and unlinks the name if it is still ours.
// Publish() and Heartbeat() are the control thread's: wait-free, no allocation, lock or system
// call.
#pragma once

#include <cstdint>
#include <string>

#include "heft/hal/inertial_estimate.hpp"
#include "heft/hal/shared_hand_off.hpp"

namespace heft::host {

class SharedHandOffSegment {
 public:
  // `name` without the leading '/'. Throws naming the segment when it cannot be created.
  explicit SharedHandOffSegment(const std::string& name,
                                std::int64_t control_period_ns = 3'000'000);
  ~SharedHandOffSegment();
  SharedHandOffSegment(const SharedHandOffSegment&) = delete;
  SharedHandOffSegment& operator=(const SharedHandOffSegment&) = delete;

  void Publish(const hal::InertialEstimate& estimate) noexcept { shared_->ring.publish(estimate); }
  // Every control tick, after the tick's Publish: the tick's CLOCK_MONOTONIC time.
  void Heartbeat(std::int64_t now_ns) noexcept {
    hal::SharedHandOffHeader& h = shared_->header;
    // relaxed: only this thread writes the count; readers want it untorn.
    h.heartbeats.store(h.heartbeats.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    // release: a reader that acquires this heartbeat sees the tick's publish.
    h.heartbeat_ns.store(now_ns, std::memory_order_release);
  }
  const std::string& name() const { return name_; }
  const hal::SharedHandOff& segment() const { return *shared_; }

 private:
  std::string name_;
  hal::SharedHandOff* shared_ = nullptr;
  std::uint64_t inode_ = 0;
};

}  // namespace heft::host

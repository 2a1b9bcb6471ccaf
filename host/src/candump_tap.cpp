#include "heft/host/candump_tap.hpp"

#include <time.h>

#include <algorithm>

#include "heft/hal/forwarding_transport.hpp"

namespace heft::host {

// Forwards every call to the bus; what it receives it also logs.
class CandumpTap::Tapped final : public hal::ForwardingTransport {
 public:
  Tapped(hal::CanTransport& inner, int bus, drivers::CandumpWriter& writer)
      : ForwardingTransport(inner), bus_(bus), writer_(writer) {}
  hal::IoStatus receive(hal::CanFrame& frame) noexcept override {
    const hal::IoStatus status = inner_.receive(frame);
    if (status != hal::IoStatus::kOk) return status;
    // A simulated robot's frames carry its time (the writer adds the run's start); a robot's
    // carry their receive time on CLOCK_MONOTONIC (kRxStamp) or none: the line gets the wall clock.
    if (frame.stamp_ns != 0 && (frame.flags & hal::CanFrame::kRxStamp) == 0) {
      (void)writer_.Log(bus_, frame);  // a full queue counts the frame as dropped
    } else {
      hal::CanFrame stamped = frame;
      timespec real{}, mono{};
      clock_gettime(CLOCK_REALTIME, &real);
      clock_gettime(CLOCK_MONOTONIC, &mono);
      const auto ns = [](const timespec& t) {
        return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
      };
      // The frame's age so far, when it has a receive time: the line carries its arrival.
      const std::int64_t age = (frame.flags & hal::CanFrame::kRxStamp) != 0
                                   ? std::max<std::int64_t>(ns(mono) - frame.stamp_ns, 0)
                                   : 0;
      // The writer adds its offset: take it back out so the line carries the wall clock.
      stamped.stamp_ns = ns(real) - age - writer_.stamp_offset_ns();
      (void)writer_.Log(bus_, stamped);
    }
    return status;
  }

 private:
  int bus_;
  drivers::CandumpWriter& writer_;
};

CandumpTap::CandumpTap(const std::vector<hal::CanTransport*>& buses,
                       std::vector<std::string> bus_names, const std::string& path,
                       drivers::RotationPolicy rotation, std::int64_t stamp_offset_ns)
    : writer_(path, std::move(bus_names), /*wait_when_full=*/false, stamp_offset_ns, rotation) {
  for (std::size_t b = 0; b < buses.size(); ++b)
    tapped_.push_back(std::make_unique<Tapped>(*buses[b], static_cast<int>(b), writer_));
}

CandumpTap::~CandumpTap() = default;

std::vector<hal::CanTransport*> CandumpTap::buses() {
  std::vector<hal::CanTransport*> out;
  for (const auto& t : tapped_) out.push_back(t.get());
  return out;
}

}  // namespace heft::host

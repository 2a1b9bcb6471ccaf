#include "heft/host/candump_tap.hpp"

#include <time.h>

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
    if (frame.stamp_ns != 0) {
      (void)writer_.Log(bus_, frame);  // a full queue counts the frame as dropped
    } else {
      hal::CanFrame stamped = frame;
      timespec ts{};
      clock_gettime(CLOCK_REALTIME, &ts);
      // The writer adds its offset: take it back out so the line carries the wall clock.
      stamped.stamp_ns = static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec -
                         writer_.stamp_offset_ns();
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

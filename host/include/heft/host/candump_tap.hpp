// heftd's own candump log of the frames it receives (host.candump): the backend's buses wrapped so
// that every frame the driver thread receives is also handed to a CandumpWriter (the simulator's
// writer, drivers/candump_writer.hpp) — a lock-free queue the writer thread of its own drains into
// a size-rotated `candump -l` file. The driver thread never waits: a frame that finds the queue
// full is left out of the log and counted (dropped()).
//
// Time stamps: a frame the transport did not stamp (SocketCAN) gets the wall clock at receipt
// (CLOCK_REALTIME, a vDSO read: no system call, as candump -l writes); a stamped one (the simulated
// robot's frames, on simulated time) keeps its stamp plus `stamp_offset_ns`.
//
// receive() is the driver loop's real-time path: it never allocates, locks, blocks or logs.
// Construction and Close() are set-up (they allocate and throw).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "heft/drivers/candump_writer.hpp"
#include "heft/drivers/rotating_file.hpp"
#include "heft/hal/can.hpp"

namespace heft::host {

class CandumpTap {
 public:
  CandumpTap(const std::vector<hal::CanTransport*>& buses, std::vector<std::string> bus_names,
             const std::string& path, drivers::RotationPolicy rotation,
             std::int64_t stamp_offset_ns = 0);
  ~CandumpTap();
  CandumpTap(const CandumpTap&) = delete;
  CandumpTap& operator=(const CandumpTap&) = delete;

  // The wrapped transports, in the same order: give these to the driver loop.
  std::vector<hal::CanTransport*> buses();
  // Writes what is queued and closes the file (throws if it could not be written).
  void Close() { writer_.Close(); }

  const std::string& path() const { return writer_.path(); }
  std::uint64_t written() const { return writer_.written(); }
  std::uint64_t dropped() const { return writer_.dropped(); }
  std::uint64_t rotations() const { return writer_.rotations(); }  // after Close()

 private:
  class Tapped;
  drivers::CandumpWriter writer_;
  std::vector<std::unique_ptr<Tapped>> tapped_;
};

}  // namespace heft::host

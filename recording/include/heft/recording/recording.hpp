// The raw robot-state recording (.heftrec): what heftd and the simulator write at 1 kHz and what
// heft-identify reads. Little-endian, versioned, fixed-size records after a self-describing header.
//
// Header (version 2; version 1 files are read too):
//   char[8]  magic "HEFTREC\0"
//   u32      version (2)
//   u32      header_size   bytes from the file start to the first record
//   u32      record_size   bytes per record (checked against the layout below)
//   u32      num_joints    J
//   u32      num_wrenches  W
//   u32      flags         bit 0: the robot has a floating base
//   f64      nominal_rate  Hz (1000 for the daemon)
//   J × (u16 length, UTF-8 bytes)  joint names (URDF joint names, in record order)
//   W × (u16 length, UTF-8 bytes)  F/T sensor frame names (URDF link names)
// Record:
//   i64      stamp_ns (monotonic, strictly increasing)
//   f64[13]  base: position (3, world), orientation (w, x, y, z), linear velocity (3, world),
//            angular velocity (3, base frame); zeros for a fixed base
//   f64[6]   (version 2) the base IMU's specific force f_S_B (3, base frame, m/s²) and the point S
//            it is measured at, p_BS (3, base frame, m); zeros when the base state has none. A
//            base known from an IMU has no linear velocity: its acceleration comes from this.
//   f64[J]   q, f64[J] v, f64[J] tau_observed
//   f64[6W]  wrenches [f; n] in the sensor frame, applied by the environment on the robot
//   u8[2 + 2J + W] validity (1 = usable): base, base specific force (version 2 only: version 1
//            has 1 + 2J + W bytes), J encoders, J torque sensors, W F/T cells
//   zero padding to a multiple of 8 bytes
#pragma once

#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "heft/hal/robot_state.hpp"

namespace heft::recording {

inline constexpr char kRecordingMagic[8] = {'H', 'E', 'F', 'T', 'R', 'E', 'C', '\0'};
inline constexpr std::uint32_t kRecordingVersion = 2;  // written; 1 and 2 are read

// A malformed or unreadable recording; the message names the file and what is wrong.
class RecordingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RecordingInfo {
  std::vector<std::string> joints;
  std::vector<std::string> wrench_frames;
  bool floating_base = true;
  double nominal_rate = 1000.0;
};

struct RecordSample {
  std::int64_t stamp_ns = 0;
  std::array<double, 13> base{};
  std::array<double, 6> specific_force{};  // f_S_B then p_BS (base frame), has_specific_force
  bool has_specific_force = false;
  std::vector<double> q, v, tau;
  std::vector<std::array<double, 6>> wrenches;
  bool base_valid = true;
  std::vector<std::uint8_t> encoder_valid, torque_valid, wrench_valid;
};

struct Recording {
  std::string source;  // file name, for messages
  RecordingInfo info;
  std::vector<RecordSample> samples;
};

// Bytes per record for J joints and W wrenches (in the given format version).
std::size_t RecordSize(std::size_t joints, std::size_t wrenches,
                       std::uint32_t version = kRecordingVersion) noexcept;

// Streams records to a file. Not for real-time threads (it allocates and writes); heftd feeds it
// from a non-real-time thread that drains a lock-free queue.
class RecordingWriter {
 public:
  // Throws RecordingError when the file cannot be created.
  RecordingWriter(const std::string& path, const RecordingInfo& info);
  void Write(const RecordSample& sample);
  // From a driver-loop sample (channel order = the header's order).
  void Write(const hal::RobotStateSample& sample);
  void Flush();
  // Flushes and closes the file; throws RecordingError (with the system's reason) when any write
  // or the close failed. Call it before reporting the recording as written.
  void Close();
  std::uint64_t records() const { return records_; }

 private:
  std::string path_;
  RecordingInfo info_;
  std::ofstream out_;
  std::vector<unsigned char> buffer_;
  std::uint64_t records_ = 0;
  void Put(const RecordSample& sample);
};

// Reads a whole recording; throws RecordingError (bad magic, unsupported version, truncated header
// or record, inconsistent sizes, time going backwards, non-finite values).
Recording ReadRecording(const std::string& path);
// The same from the file's bytes in memory; `name` is the source for messages.
Recording ParseRecording(const std::vector<unsigned char>& data, const std::string& name);

}  // namespace heft::recording

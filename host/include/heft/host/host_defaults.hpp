// The host's program defaults, the one place they are written (HostConfig takes them; heftctl and
// the command server name the socket). No dependencies: heft_host_io and heftctl include it too.
#pragma once

#include <cstdint>

namespace heft::host {

// Program defaults (the one place they are written): heftd reads the framework input segment
// `heft_input` and serves heftctl on /run/heft/heftd.sock; heft-sim's input segment is private to
// the run (`heft-sim-<pid>`, its simulated framework writes it) and it serves no socket unless
// configured. heftd's telemetry and candump files append (a restart continues them); heft-sim's
// runs each start a file of their own (simulated time starts at 0 again), the previous one rotated.
inline constexpr const char* kDefaultInputName = "heft_input";
inline constexpr const char* kDefaultJointsName = "heft_joints";  // hal/framework_joints.h
inline constexpr const char* kDefaultCommandSocket = "/run/heft/heftd.sock";
inline constexpr const char* kDefaultPersistenceFile = "/var/lib/heft/estimate.yaml";  // heftd
inline constexpr std::uint64_t kDefaultMaxBytes = 100'000'000;  // per file: 100 MB
inline constexpr int kDefaultKeep = 5;                          // rotated files kept

}  // namespace heft::host

// heft-identify's command line: the options, their parsing, the usage text and the exit codes.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "heft/identification/identify.hpp"
#include "heft/identification/pipeline.hpp"
#include "heft/identification/sdp.hpp"

namespace heft::identify {

// Exit codes (listed in --help and docs/development.md, "The tools' exit codes").
enum ExitCode : int {
  kOk = 0,
  kFailure = 1,  // runtime failure: unreadable or malformed input, a write failed, nothing written
  kUsageError =
      2,         // usage or configuration error: bad option, a method the recording cannot support
  kPartial = 3,  // a method failed (e.g. the SDP); every finished result was printed and written
};

// A usage or configuration error: exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

extern const char* const kUsageText;

// The pipeline's options (identification/pipeline.hpp) and the command line's own.
struct Options : identification::PipelineOptions {
  bool help = false, version = false;
  std::string out_urdf, out_yaml;
  std::string config_path;  // --config: heftd's configuration (the joints' torque from current)
};

// Throws UsageError naming the option and what it allows.
Options ParseOptions(int argc, char** argv);

struct ConvertOptions {
  bool help = false;
  std::string config_path, out;
  std::vector<std::string> logs;
  std::int64_t max_gap_ns = 10'000'000'000;     // --max-gap S: longest gap between frames allowed
  std::uint64_t max_log_bytes = 1'024'000'000;  // --max-log-size MB: the logs together
};
// argv[1] is "convert". Throws UsageError.
ConvertOptions ParseConvertOptions(int argc, char** argv);

}  // namespace heft::identify

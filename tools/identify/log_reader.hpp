// heft-identify convert's reading of one candump log: bounded and with progress. A log is a regular
// file of a known length (a character device such as /dev/zero or a FIFO has no end and is
// refused at once); it is read up to the length it had when opened (a log candump is still
// writing ends there) and within a byte budget shared by all the logs of one conversion (the
// conversion holds them in memory, about three times their size): a larger log is refused before
// a byte is read, naming its size, the budget and the option that raises it. While it reads,
// heft-identify's progress bar (stderr) shows how far.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heft/drivers/candump.hpp"

namespace heft::identify {

struct LogRead {
  std::vector<drivers::CandumpRecord> records;
  std::vector<drivers::CandumpError> errors;  // malformed lines (skipped), as ReadCandump's
  std::uint64_t bytes = 0;                    // read: the file's length when it was opened
};

// Reads `path` within `budget` bytes (what the logs before it left); throws std::runtime_error
// naming the file and the reason (missing, not a regular file, beyond the budget).
LogRead ReadLogBounded(const std::string& path, std::uint64_t budget);

}  // namespace heft::identify

// One candump line (drivers/src/candump.cpp): parsing never crashes, and a line it accepts formats
// back to a line that parses to the same record (time to the microsecond candump writes).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "heft/drivers/candump.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace heft::drivers;
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  CandumpRecord r;
  if (!ParseCandumpLine(line, r).empty()) return 0;
  if (r.stamp_ns < 0 || r.frame.stamp_ns != r.stamp_ns) std::abort();
  const std::string text = FormatCandumpLine(r);
  CandumpRecord back;
  if (!ParseCandumpLine(text, back).empty()) std::abort();  // we refuse what we write
  const heft::hal::CanFrame &a = r.frame, &b = back.frame;
  if (back.bus != r.bus || back.stamp_ns != r.stamp_ns / 1000 * 1000 || a.id != b.id ||
      a.flags != b.flags || a.len != b.len || std::memcmp(a.data.data(), b.data.data(), a.len) != 0)
    std::abort();  // the round trip lost or changed something
  return 0;
}

// The .heftrec reader (recording/src/recording.cpp) on fuzzed bytes, in memory. The
// only exception allowed out is RecordingError; a recording it accepts must be what the header says
// (channel counts, strictly increasing time, finite values).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "heft/recording/recording.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace recording = heft::recording;
  recording::Recording rec;
  try {
    rec = recording::ParseRecording(std::vector<unsigned char>(data, data + size), "fuzz.heftrec");
  } catch (const recording::RecordingError&) {
    return 0;
  }
  const std::size_t nj = rec.info.joints.size(), nw = rec.info.wrench_frames.size();
  for (std::size_t r = 0; r < rec.samples.size(); ++r) {
    const recording::RecordSample& s = rec.samples[r];
    if (s.q.size() != nj || s.v.size() != nj || s.tau.size() != nj || s.wrenches.size() != nw ||
        s.encoder_valid.size() != nj || s.torque_valid.size() != nj || s.wrench_valid.size() != nw)
      std::abort();
    if (r > 0 && s.stamp_ns <= rec.samples[r - 1].stamp_ns) std::abort();
    for (double x : s.q)
      if (!std::isfinite(x)) std::abort();
  }
  return 0;
}

// What test_tools.cpp, test_tools_report_torso.cpp and test_tools_report_forearm.cpp share: a
// built tool run as a child process (stdout and stderr apart), and the header row of a synthetic
// torso run's telemetry CSV, the columns heft-report reads.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "heft/host/telemetry_table.hpp"
#include "heft/test/heftd_run.hpp"

namespace heft::tools::test {

using Outcome = heft::test::ProgramOutput;

// Runs `program` with `args`; stdout and stderr apart.
inline Outcome Exec(const char* program, const std::vector<std::string>& args) {
  return heft::test::RunProgramApart(program, args);
}

// A synthetic torso run's CSV header: heft-sim's telemetry columns the report reads, the pelvis
// height error and the torso's estimated, true and handed π.
inline void WriteTorsoHeader(std::ofstream& f) {
  f << "t_ns,state,tick_status,rate_limited,consistent,compute_us,pelvis_height_error_m";
  for (const char* kind : {"_est_", "_true_", "_"})
    for (const char* p : heft::host::kInertialColumns) f << ",torso" << kind << p;
  f << "\n";
}

}  // namespace heft::tools::test

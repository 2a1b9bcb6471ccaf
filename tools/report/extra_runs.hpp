// heft-report's runs beside the scenarios' own: the baseline KF against the EKF (Fig. 3), stepping
// with and without gating (Fig. 8), the joints from the framework and on MIT actuators, the
// hand-off's rate limit swept and the real-time run. Each reads its runs in RUN_DIR (`dir`) and
// adds nothing when they are absent.
#pragma once

#include <string>

#include "scenarios.hpp"

namespace heft::report {

// Fig. 3: its line of the extra figures, its target and its plot.
void AddKfAgainstEkf(const std::string& dir, Gathered& g);
// Fig. 8: its line, its targets and its plot.
void AddSteppingGating(const std::string& dir, Gathered& g);
// Joints from the framework and on MIT actuators beside heft's CAN devices: lines and targets.
void AddJointPaths(const std::string& dir, Gathered& g);
// The rate-limit sweep's table rows ("" without the runs); draws its figure.
std::string RateLimitSweep(const std::string& dir);
// The real-time run's wake-up jitter, a Markdown line per figure ("" without the run).
std::string RealTimeJitter(const std::string& dir);

}  // namespace heft::report

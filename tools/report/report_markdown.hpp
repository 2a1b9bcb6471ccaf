// report.md: its introduction and sections in order, its targets and its figures. results.md
// (results.hpp) takes the same sections without their images.
#pragma once

#include <string>
#include <vector>

#include "anomalies.hpp"
#include "procedure.hpp"

namespace heft::report {

// report.md's sections after its introduction, in order, each starting with its "## " heading
// ("" when a section has nothing to show). report.md joins them with blank lines; results.md
// takes them without their images.
struct Sections {
  std::string procedure, table2, steps, noft, per, anomalies, sweep, jitter;
  std::vector<std::string> InOrder() const {
    return {procedure, table2, steps, noft, per, anomalies, sweep, jitter};
  }
};

// The sections that the tables gathered from the runs (scenarios.hpp) head and explain; "" for
// the sweep and the jitter without their runs.
std::string Table2Section(const std::string& table);
std::string PerScenarioSection(const std::string& table, const std::string& extra);
std::string AnomaliesSection(const std::vector<std::string>& anomalies, const AnomalyRules& rules);
std::string SweepSection(const std::string& rows);
std::string JitterSection(const std::string& lines);

// report.md whole: the introduction, `s` in order, the targets and every figure drawn in `dir`.
std::string ReportMarkdown(const std::string& dir, const Sections& s,
                           const std::vector<Target>& targets);

}  // namespace heft::report

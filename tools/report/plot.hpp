// heft-report's figures: gnuplot line plots of telemetry columns, styled for reading at a glance
// (the truth last and thick, each other series with its own colour and dash pattern, names as
// written: no enhanced-text markup, so `left_forearm` keeps its underscore).
#pragma once

#include <string>
#include <vector>

namespace heft::report {

enum class Style {
  kTruth,      // black, thick, solid; drawn last whatever its place in the list
  kPrimary,    // blue, solid (the estimate, the adaptive run, the EKF)
  kSecondary,  // vermilion, dashed (handed on, the nominal run, the baseline KF)
  kTertiary,   // green, dotted
};

struct Series {
  std::string file, x_column, y_column, title;  // an x column named *_ns is plotted in seconds
  Style style = Style::kPrimary;
};

// Writes DIR/PNG (and DIR/PNG.gp, the script). False, with a message on stderr, when gnuplot
// failed.
bool Plot(const std::string& dir, const std::string& png, const std::string& title,
          const std::string& ylabel, std::vector<Series> series);

}  // namespace heft::report

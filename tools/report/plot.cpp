#include "plot.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace heft::report {
namespace {

// Colour-blind-safe colours (Okabe-Ito) and dash patterns that also tell series apart in grey.
// In Style's declaration order.
constexpr std::array<const char*, 4> kStyleTexts{
    "lc rgb '#000000' lw 3.5 dt 1", "lc rgb '#0072B2' lw 1.8 dt 1",
    "lc rgb '#D55E00' lw 1.8 dt (8,5)", "lc rgb '#009E73' lw 1.8 dt (2,4)"};

std::string StyleText(Style s) {
  const auto i = static_cast<std::size_t>(s);
  return i < kStyleTexts.size() ? kStyleTexts[i] : "";
}

// A single-quoted gnuplot string (quotes doubled, as gnuplot's single-quoted strings want).
std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// A single-quoted shell word.
std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The x axis in seconds: a column of integer nanoseconds (`t_ns`, telemetry's time) is scaled.
std::string XColumn(const std::string& name) {
  if (name.size() > 3 && name.ends_with("_ns")) return "(column(" + Quote(name) + ") * 1e-9)";
  return Quote(name);
}

}  // namespace

bool Plot(const std::string& dir, const std::string& png, const std::string& title,
          const std::string& ylabel, std::vector<Series> series) {
  // The truth last: drawn on top of everything else.
  std::stable_partition(series.begin(), series.end(),
                        [](const Series& s) { return s.style != Style::kTruth; });
  const std::string script = dir + "/" + png + ".gp";
  std::ofstream g(script);
  g << "set terminal pngcairo noenhanced size 1000,460 font ',11'\n"
    << "set termoption noenhanced\n"
    << "set output " << Quote(dir + "/" + png) << "\n"
    << "set datafile separator ','\n"
    << "set key outside bottom center horizontal\n"
    << "set grid lc rgb '#d0d0d0'\n"
    << "set title " << Quote(title) << "\n"
    << "set xlabel 'time t [s]'\n"
    << "set ylabel " << Quote(ylabel) << "\nplot ";
  for (std::size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    g << (i ? ", \\\n     " : "") << Quote(s.file) << " using " << XColumn(s.x_column) << ":"
      << Quote(s.y_column) << " with lines " << StyleText(s.style) << " title " << Quote(s.title);
  }
  g << "\n";
  g.close();
  if (!g) {
    std::fprintf(stderr, "heft-report: cannot write %s\n", script.c_str());
    return false;
  }
  const std::string cmd = "gnuplot " + ShellQuote(script) + " 2>" + ShellQuote(script + ".err");
  if (std::system(cmd.c_str()) != 0) {
    std::fprintf(stderr, "heft-report: gnuplot failed for %s (its messages: %s.err)\n", png.c_str(),
                 script.c_str());
    return false;
  }
  std::remove((script + ".err").c_str());
  return true;
}

}  // namespace heft::report

// The command line of heft's tools that take one positional argument (heft-report RUN_DIR,
// heft-handoff-reader NAME): -h/--help and --version, the tool's own options, exactly one
// positional argument, and the same usage errors (exit 2) in the same words for every tool.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

namespace heft::tools {

// What a tool's option handler says of argv[i] (it may consume argv[i + 1] by advancing i).
enum class Option {
  kNotMine,  // not one of the tool's options
  kTaken,    // taken
  kRefused,  // taken but its value is wrong: the handler printed why; exit 2
};

struct ToolCommandLine {
  const char* program;     // "heft-report"
  const char* usage;       // printed by --help
  std::string version;     // printed by --version (a whole line, without the newline)
  const char* positional;  // its name in messages: "RUN_DIR"
};

// Parses argv into `positional` through `option`. Returns the exit code to leave with (0 after
// --help or --version, 2 on a usage error, said on stderr), or -1 to go on.
inline int ParseToolCommandLine(int argc, char** argv, const ToolCommandLine& tool,
                                std::string& positional,
                                const std::function<Option(const std::string&, int&)>& option) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::printf("%s", tool.usage);
      return 0;
    }
    if (a == "--version") {
      std::printf("%s\n", tool.version.c_str());
      return 0;
    }
    const Option o = option(a, i);
    if (o == Option::kRefused) return 2;
    if (o == Option::kTaken) continue;
    if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "%s: unknown option %s (%s --help)\n", tool.program, a.c_str(),
                   tool.program);
      return 2;
    }
    if (!positional.empty()) {
      std::fprintf(stderr, "%s: one %s only (got %s and %s)\n", tool.program, tool.positional,
                   positional.c_str(), a.c_str());
      return 2;
    }
    positional = a;
  }
  if (positional.empty()) {
    std::fprintf(stderr, "%s: no %s given (%s --help)\n", tool.program, tool.positional,
                 tool.program);
    return 2;
  }
  return -1;
}

}  // namespace heft::tools

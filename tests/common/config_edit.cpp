// heft::test::ConfigBuilder on the command line, for the tests written in shell:
//
//   heft_test_config_edit IN OUT [set KEY VALUE | yaml KEY TEXT | remove KEY]...
//
// loads IN (robot.urdf and robot.parameters made absolute against its folder), applies the edits in
// order (set: VALUE as a scalar; yaml: TEXT parsed, e.g. "{preset: default, seed: 4}"; remove: the
// key or list element) and writes OUT. Exit 0, or 2 with the reason on stderr.
#include <cstdio>
#include <exception>
#include <string>

#include "heft/test/config_builder.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: heft_test_config_edit IN OUT [set KEY VALUE | yaml KEY TEXT | remove "
                 "KEY]...\n");
    return 2;
  }
  try {
    heft::test::ConfigBuilder config(argv[1]);
    for (int i = 3; i < argc;) {
      const std::string op = argv[i];
      const int needs = op == "remove" ? 1 : 2;
      if ((op != "set" && op != "yaml" && op != "remove") || i + needs >= argc) {
        std::fprintf(stderr, "heft_test_config_edit: bad edit at '%s'\n", argv[i]);
        return 2;
      }
      if (op == "set") config.Set(argv[i + 1], std::string(argv[i + 2]));
      if (op == "yaml") config.SetYaml(argv[i + 1], argv[i + 2]);
      if (op == "remove") config.Remove(argv[i + 1]);
      i += needs + 1;
    }
    config.WriteTo(argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heft_test_config_edit: %s: %s\n", argv[1], e.what());
    return 2;
  }
  return 0;
}

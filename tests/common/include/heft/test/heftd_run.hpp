// The host as a child process for the tests that run it: heft-sim (the host on the simulated robot)
// or any other program (heftd, the tools), its exit code and its combined stdout/stderr (or the
// two apart: RunProgramApart). The including target
// defines HEFT_HEFT_SIM (heft-sim's path).
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace heft::test {

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct HeftdResult {
  int code = -1;
  std::string output;
};

// Runs `program` with `args`; sends SIGTERM after `term_after_ms` when > 0.
inline HeftdResult RunProgram(const char* program, const std::vector<std::string>& args,
                              int term_after_ms = 0) {
  const std::string out = testing::TempDir() + "/host_" + std::to_string(getpid()) + ".log";
  const pid_t pid = fork();
  if (pid == 0) {
    std::FILE* f = std::freopen(out.c_str(), "w", stdout);
    (void)f;
    dup2(fileno(stdout), fileno(stderr));
    std::vector<char*> argv{const_cast<char*>(program)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(program, argv.data());
    _exit(127);
  }
  if (term_after_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(term_after_ms));
    kill(pid, SIGTERM);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(out)};
}

struct ProgramOutput {
  int code = -1;
  std::string out, err;
};

// Runs `program` with `args` to its end; stdout and stderr apart (stderr is not a terminal then).
inline ProgramOutput RunProgramApart(const char* program, const std::vector<std::string>& args) {
  const std::string base = testing::TempDir() + "/program_" + std::to_string(getpid());
  const pid_t pid = fork();
  if (pid == 0) {
    if (!std::freopen((base + ".out").c_str(), "w", stdout)) _exit(126);
    if (!std::freopen((base + ".err").c_str(), "w", stderr)) _exit(126);
    std::vector<char*> argv{const_cast<char*>(program)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(program, argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(base + ".out"), Slurp(base + ".err")};
}

#ifdef HEFT_HEFT_SIM
// Runs heft-sim with `args`; sends SIGTERM after `term_after_ms` when > 0.
inline HeftdResult RunHeftSim(const std::vector<std::string>& args, int term_after_ms = 0) {
  return RunProgram(HEFT_HEFT_SIM, args, term_after_ms);
}
#endif

}  // namespace heft::test

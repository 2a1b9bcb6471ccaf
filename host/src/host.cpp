#include "heft/host/host.hpp"

#include <cstdio>
#include <memory>
#include <string>

#include "heft/host/logging.hpp"
#include "service.hpp"

#ifndef HEFT_VERSION
#error "HEFT_VERSION (the project's version) must be defined by the build"
#endif

namespace heft::host {
namespace {

// --check's verdict, once the plugin accepted the configuration.
int ReportCheck(Service& s) {
  const plugin::PluginConfig& pcfg = s.pcfg;
  const drivers::DriverConfig& d = pcfg.drivers;
  std::printf("%s: configuration OK (%zu joints%s, %zu F/T cells%s, %s, %zu estimated link(s))\n",
              s.cli.config_path.c_str(), d.joints.size(),
              d.joints_from_framework ? " from the framework" : "", d.ft_cells.size(),
              d.ft_cells_from_framework && !d.ft_cells.empty() ? " from the framework" : "",
              pcfg.drivers.imu    ? "base IMU on CAN"
              : s.host.input_base ? "base state from the framework"
                                  : "no base source (fixed base)",
              (*s.plug)->num_links());
  return 0;
}

// The shared-memory segments released (heft-sim's framework input removed) and the log flushed.
void Release(Service& s) {
  s.shared.reset();
  // heft-sim's segment is private to its run; heftd's stays for the robot's framework.
  if (s.program.simulator && s.input) {
    s.input.reset();
    InputMapping::Unlink(s.host.input_name);
  }
  if (s.program.simulator && s.joints) {
    s.joints.reset();
    JointsMapping::Unlink(s.host.joints_name);
  }
  s.log->flush();
}

}  // namespace

int Run(const Program& program, int argc, const char* const* argv, BackendFactory& factory,
        const std::shared_ptr<spdlog::logger>& log) {
  const CommandLine cli = ParseCommandLine(argc, argv, program.simulator);
  if (cli.help) {
    std::fputs(Usage(program.name, program.simulator).c_str(), stdout);
    return 0;
  }
  if (cli.version) {
    std::printf("%s %s\n", program.name.c_str(), HEFT_VERSION);
    return 0;
  }

  // The file, read once: every section validated (against the URDF, and against each other).
  const host::Configuration config = host::LoadConfiguration(
      cli.config_path, program.simulator ? host::Reader::kSimulator : host::Reader::kHeftd);
  Service s(program, cli, config, factory, log);
  Configure(s);
  ReserveRealTime(s);
  LoadPlugin(s);
  if (cli.check) return ReportCheck(s);
  // Everything below opens devices, shared memory and sockets.
  OpenSharedMemory(s);
  WireDrivers(s);
  StartThreads(s);
  Serve(s);
  const double wall = Shutdown(s);
  LogTiming(s, wall);
  Summarize(s);
  Release(s);
  return 0;
}

int Main(const Program& program, int argc, const char* const* argv, BackendFactory& factory) {
  bool journal = false;
  std::shared_ptr<spdlog::logger> log;
  try {
    log = MakeProgramLogger(program.name, &journal);
    return Run(program, argc, argv, factory, log);
  } catch (const UsageError& e) {
    ReportFatal(program.name, log.get(), journal, e.what());
    return kExitUsage;
  } catch (const config::ConfigError& e) {
    ReportFatal(program.name, log.get(), journal, e.what());
    return kExitConfig;
  } catch (const plugin::PluginError& e) {  // the plugin refused its configuration
    ReportFatal(program.name, log.get(), journal, e.what());
    return kExitConfig;
  } catch (const PluginLoadError& e) {
    ReportFatal(program.name, log.get(), journal, e.what());
    return kExitConfig;
  } catch (const std::invalid_argument& e) {  // set-up validation (e.g. the simulated robot's)
    ReportFatal(program.name, log.get(), journal, e.what());
    return kExitConfig;
  } catch (const std::exception& e) {
    ReportFatal(program.name, log.get(), journal, e.what());
    return kExitRuntime;
  }
}

}  // namespace heft::host

// heft's configuration file, read once: one parse of the YAML, every section validated (unknown
// keys, types, ranges, names against the URDF, the sections against each other) and returned
// typed. heftd, heft-sim, the tools and the tests read the file through LoadConfiguration; the
// estimator plugin receives its part (PluginConfig) from the host through
// plugin::HardwareInterface::config instead of reading the file again.
//
//   const host::Configuration c = host::LoadConfiguration("heft.yaml", host::Reader::kHeftd);
//   c.plugin.drivers.joints, c.host.telemetry, c.root()["simulation"] (heft-sim's section)
//
// Keys: schema.hpp; defaults: the structs' initialisers (PluginConfig, estimator::EstimatorConfig,
// HostConfig, drivers::DriverConfig), each written once. Set-up only: allocates and throws
// config::ConfigError naming the file, line, key and what is allowed.
#pragma once

#include <string>

#include "heft/config/yaml.hpp"
#include "heft/host/host_config.hpp"
#include "heft/plugin/plugin_config.hpp"

namespace heft::host {

// Who reads the file: the host's defaults and the checks that differ between the programs.
enum class Reader {
  kHeftd,      // heftd's defaults; a floating base needs exactly one base source
  kSimulator,  // heft-sim's defaults (host_config.hpp); the simulated robot is the base source
  kTool,       // heft-identify, the tests: heftd's defaults, no base-source check
};

struct Configuration {
  config::Document document;    // the parsed file: the `simulation:` section is heft-sim's to read
  HostConfig host;              // backend, host:
  plugin::PluginConfig plugin;  // robot, drivers, estimator (checked against the URDF)
  config::Node root() const { return document.root(); }
};

Configuration LoadConfiguration(const std::string& path, Reader reader);
// The same from a parsed document (tests, the fuzzer).
Configuration ReadConfiguration(config::Document document, Reader reader);

}  // namespace heft::host

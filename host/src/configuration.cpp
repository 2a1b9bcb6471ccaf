#include "heft/host/configuration.hpp"

#include <cmath>

#include "heft/config/schema.hpp"

namespace heft::host {

Configuration LoadConfiguration(const std::string& path, Reader reader) {
  return ReadConfiguration(config::Document::Load(path), reader);
}

Configuration ReadConfiguration(config::Document document, Reader reader) {
  const config::Node root = document.root();
  root.AllowOnly(config::schema::kRoot);
  Configuration c{std::move(document), {}, {}};
  c.host = ParseHostConfig(root, reader == Reader::kSimulator);
  // Each program runs one backend: heftd the robot's buses, heft-sim the simulated robot.
  if (reader == Reader::kHeftd && c.host.backend != "socketcan") {
    const std::string why =
        "heftd runs the robot's buses (backend: socketcan); a configuration with backend: "
        "simulated runs in heft-sim (heft-sim --config FILE)";
    if (root.Has("backend")) root["backend"].Fail(why);
    throw config::ConfigError(root.file() + ": backend: not set (default: simulated); " + why);
  }
  if (reader == Reader::kSimulator && c.host.backend != "simulated")
    root["backend"].Fail(
        "heft-sim runs the simulated robot (backend: simulated); the robot's buses (backend: "
        "socketcan) run in heftd");
  c.plugin = plugin::ReadPluginConfig(root);
  // heftd's and heft-sim's control thread ticks on the drivers' 1 kHz samples: its period, the
  // estimator's time step, is a whole number of milliseconds; within the watchdog's 100 ms.
  if (reader != Reader::kTool) {
    const double ms = c.plugin.estimator.control_period * 1e3;
    if (std::abs(ms - std::round(ms)) > 1e-9 || ms < 1.0 - 1e-9 || ms > 20.0 + 1e-9)
      root["estimator"]["control_period"].Fail(
          "heftd's control thread runs on the drivers' 1 ms samples: the period must be a whole "
          "number of milliseconds from 0.001 to 0.020 s (e.g. 0.002: 500 Hz, 0.003: 333 Hz, "
          "0.004: 250 Hz)");
  }
  // The floating base's motion: the base IMU on CAN (drivers.imu) or the framework's state
  // estimator (host.framework_input.base); a robot with neither would hold on every tick.
  const std::string& file = root.file();
  if (reader == Reader::kHeftd && c.plugin.floating_base && !c.plugin.drivers.imu &&
      !c.host.input_base)
    throw config::ConfigError(
        file +
        ": robot.floating_base is true but nothing measures the base's motion: configure the "
        "base IMU (drivers.imu) or take the base state from the controller framework "
        "(host.framework_input: {base: true})");
  if (reader != Reader::kTool && c.plugin.drivers.imu && c.host.input_base)
    throw config::ConfigError(file +
                              ": two base sources: drivers.imu and host.framework_input.base "
                              "(choose one)");
  return c;
}

}  // namespace heft::host

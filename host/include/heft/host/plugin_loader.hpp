// The estimator plugin, loaded with dlopen through its versioned C entry points
// (plugin/include/heft/plugin/controller_interface.hpp). Set-up only: throws when the library
// cannot be loaded, is not a heft plugin, or refuses the host's interface version.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "heft/plugin/controller_interface.hpp"

namespace heft::host {

// The plugin cannot be found, loaded, or is not a compatible heft plugin (heftd exits with the
// configuration's code: a restart would not help).
class PluginLoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class LoadedPlugin {
 public:
  explicit LoadedPlugin(const std::string& path);
  ~LoadedPlugin();
  LoadedPlugin(const LoadedPlugin&) = delete;
  LoadedPlugin& operator=(const LoadedPlugin&) = delete;
  plugin::ControllerInterface& operator*() { return *controller_; }
  plugin::ControllerInterface* operator->() { return controller_; }

 private:
  void* handle_ = nullptr;
  std::uint32_t (*version_)() = nullptr;
  plugin::ControllerInterface* (*create_)(std::uint32_t, char*, std::size_t) = nullptr;
  void (*destroy_)(plugin::ControllerInterface*) = nullptr;
  plugin::ControllerInterface* controller_ = nullptr;
};

// host.plugin when set; otherwise heft_estimator_plugin.so next to the running executable (the
// build tree's layout and the installed one). `program` names the executable in the error.
std::string FindPlugin(const std::string& configured, const std::string& program);

}  // namespace heft::host

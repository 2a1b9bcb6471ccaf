#include "heft/host/plugin_loader.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <stdexcept>

#ifndef HEFT_PLUGIN_INSTALL_PATH  // set by cmake/HeftInstall.cmake
#error "HEFT_PLUGIN_INSTALL_PATH (the installed plugin's absolute path) is not defined"
#endif

namespace heft::host {

LoadedPlugin::LoadedPlugin(const std::string& path) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) throw PluginLoadError("cannot load the plugin " + path + ": " + dlerror());
  version_ = reinterpret_cast<std::uint32_t (*)()>(dlsym(handle_, "heft_plugin_api_version"));
  create_ = reinterpret_cast<decltype(create_)>(dlsym(handle_, "heft_plugin_create"));
  destroy_ = reinterpret_cast<decltype(destroy_)>(dlsym(handle_, "heft_plugin_destroy"));
  if (!version_ || !create_ || !destroy_) {
    dlclose(handle_);
    throw PluginLoadError(path + " is not a heft plugin (entry points missing)");
  }
  char error[256] = "";
  controller_ = create_(plugin::kApiVersion, error, sizeof(error));
  if (!controller_) {
    dlclose(handle_);
    throw PluginLoadError(path + ": " + error);
  }
}

LoadedPlugin::~LoadedPlugin() {
  if (controller_) destroy_(controller_);
  if (handle_) dlclose(handle_);
}

std::string FindPlugin(const std::string& configured, const std::string& program) {
  if (!configured.empty()) return configured;
  // A build tree's program (bin/heftd, bin/heft-sim) takes the plugin built next to it; an
  // installed one the plugin at its installed path (set at build time from the install prefix).
  const auto self = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  for (const std::filesystem::path& candidate :
       {self / "../heft_estimator_plugin.so", std::filesystem::path(HEFT_PLUGIN_INSTALL_PATH)})
    if (std::filesystem::exists(candidate)) return std::filesystem::canonical(candidate).string();
  throw PluginLoadError("heft_estimator_plugin.so is neither next to " + program + " nor at " +
                        std::string(HEFT_PLUGIN_INSTALL_PATH) + "; set host.plugin");
}

}  // namespace heft::host

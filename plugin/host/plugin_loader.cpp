#include "plugin_loader.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <stdexcept>

namespace heft::host {

LoadedPlugin::LoadedPlugin(const std::string& path) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) throw std::runtime_error("cannot load the plugin " + path + ": " + dlerror());
  version_ = reinterpret_cast<std::uint32_t (*)()>(dlsym(handle_, "heft_plugin_api_version"));
  create_ = reinterpret_cast<decltype(create_)>(dlsym(handle_, "heft_plugin_create"));
  destroy_ = reinterpret_cast<decltype(destroy_)>(dlsym(handle_, "heft_plugin_destroy"));
  if (!version_ || !create_ || !destroy_) {
    dlclose(handle_);
    throw std::runtime_error(path + " is not a heft plugin (entry points missing)");
  }
  char error[256] = "";
  controller_ = create_(plugin::kApiVersion, error, sizeof(error));
  if (!controller_) {
    dlclose(handle_);
    throw std::runtime_error(path + ": " + error);
  }
}

LoadedPlugin::~LoadedPlugin() {
  if (controller_) destroy_(controller_);
  if (handle_) dlclose(handle_);
}

std::string FindPlugin(const std::string& configured, const std::string& program) {
  if (!configured.empty()) return configured;
  const auto self = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  std::string found;
  for (const auto& candidate :
       {self / "../heft_estimator_plugin.so", self / "../lib/heft/heft_estimator_plugin.so",
        self / "heft_estimator_plugin.so"})
    if (std::filesystem::exists(candidate)) found = std::filesystem::canonical(candidate).string();
  if (found.empty())
    throw std::runtime_error("heft_estimator_plugin.so not found next to " + program +
                             "; set host.plugin");
  return found;
}

}  // namespace heft::host

// Builds only with the installed heft-dev headers: the hand-off layout and the plugin interface.
#include <cstdio>

#include "heft/hal/shared_hand_off.hpp"
#include "heft/plugin/controller_interface.hpp"

int main() {
  std::printf("heft plugin API %u, hand-off segment %zu bytes\n",
              static_cast<unsigned>(heft::plugin::kApiVersion), sizeof(heft::hal::SharedHandOff));
  return 0;
}

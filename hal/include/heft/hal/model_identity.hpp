// The nominal model's identity: which model a hand-off is consistent with. heft estimates each
// link as a change of a nominal model — the URDF, with heft-identify's parameters file over it when
// robot.parameters names one — and a controller that applies the handed π must model the other
// bodies (and the link's nominal) as heft does, or know that it does not. The identity is FNV-1a
// (32 bit) over the bytes of the URDF file and then of the parameters file, so any controller, in
// any language, computes it from the files it was given (shared_hand_off.h has the C form). heft
// writes it into every hand-off (InertialEstimate::nominal_model) and the persisted estimate; 0
// means unknown. Set-up only (it reads files).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "heft/hal/text_file.hpp"

namespace heft::hal {

inline constexpr std::uint32_t kModelIdentitySeed = 2166136261U;  // FNV-1a's offset basis

inline std::uint32_t ModelIdentityUpdate(std::uint32_t hash, std::string_view bytes) noexcept {
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 16777619U;  // FNV-1a's 32-bit prime
  }
  return hash;
}

// The identity of the model heft builds from `urdf_path` and `parameters_path` ("" for none); 0 is
// never returned (a hash of 0 is mapped to 1). Throws std::runtime_error naming a file it cannot
// read.
inline std::uint32_t ModelIdentity(const std::string& urdf_path,
                                   const std::string& parameters_path) {
  std::uint32_t hash = kModelIdentitySeed;
  for (const std::string* path : {&urdf_path, &parameters_path}) {
    if (path->empty()) continue;
    const TextFile file = ReadTextFile(*path);
    if (!file.ok()) throw std::runtime_error(*path + ": " + file.Describe("the model file"));
    hash = ModelIdentityUpdate(hash, file.text);
  }
  return hash == 0 ? 1U : hash;
}

}  // namespace heft::hal

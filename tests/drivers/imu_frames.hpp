// The base IMU's three golden frames (docs/can-devices.md, section 4), written by hand from the
// layout, and what test_imu.cpp and test_imu_loop.cpp build frames and count rejects with.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "heft/drivers/codecs.hpp"
#include "heft/hal/can.hpp"

namespace heft::drivers::test {

inline constexpr std::int64_t kMs = 1'000'000;

inline hal::CanFrame Bytes(std::uint32_t id, std::initializer_list<std::uint8_t> data) {
  hal::CanFrame f;
  f.id = id;
  f.len = static_cast<std::uint8_t>(data.size());
  std::copy(data.begin(), data.end(), f.data.begin());
  return f;
}

inline std::size_t Index(Reject r) {
  return static_cast<std::size_t>(r);
}

// ω = (1, −0.5, 0.002) rad/s → (1000, −500, 2) × 0.001; VALID; counter 0x2A.
inline const hal::CanFrame kGyro = Bytes(0x400, {0xE8, 0x03, 0x0C, 0xFE, 0x02, 0x00, 0x01, 0x2A});
// f = (0.1, −9.81, 0) m/s² → (50, −4905, 0) × 0.002.
inline const hal::CanFrame kAccel = Bytes(0x401, {0x32, 0x00, 0xD7, 0xEC, 0x00, 0x00, 0x01, 0x2A});
// 90° about z: qz = round(0.70710678 × 32767) = 23170 = 0x5A82, qx = qy = 0.
inline const hal::CanFrame kAttitude =
    Bytes(0x402, {0x00, 0x00, 0x00, 0x00, 0x82, 0x5A, 0x01, 0x2A});

}  // namespace heft::drivers::test

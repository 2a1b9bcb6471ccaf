// A driver loop with the base IMU configured on in-memory buses: the joints and F/T cells of a
// given configuration plus the IMU on can0 at 0x400, mounted with a chosen R_BI and p_BI. Shared
// by test_imu.cpp and the allocation test in test_driver_loop.cpp.
#pragma once

#include <Eigen/Geometry>
#include <cstdint>
#include <vector>

#include "heft/drivers/driver_loop.hpp"
#include "heft/drivers/memory_bus.hpp"
#include "heft/drivers/sample_encoder.hpp"

namespace heft::drivers::test {

// The IMU turned 90° about the base's z axis (its x axis along the base's y) and offset.
inline ImuDevice RotatedImu() {
  ImuDevice imu;
  imu.frame = "imu";
  imu.bus = 0;
  imu.imu.base_id = 0x400;
  imu.R_BI = Eigen::AngleAxisd(M_PI / 2, Eigen::Vector3d::UnitZ()).toRotationMatrix();
  imu.p_BI = Eigen::Vector3d(0.05, -0.02, 0.08);
  return imu;
}

inline DriverConfig WithImu(DriverConfig cfg, const ImuDevice& imu = RotatedImu()) {
  cfg.imu = imu;
  return cfg;
}

struct ImuRig {
  static constexpr std::int64_t kMs = 1'000'000;
  DriverConfig cfg;
  MemoryBus can0{"can0"}, can1{"can1"};
  std::vector<hal::CanTransport*> buses{&can0, &can1};
  hal::StateBuffer buffer;
  DriverLoop loop;
  SampleEncoder encoder;
  hal::RobotStateSample truth;
  std::int64_t now = 0;

  explicit ImuRig(const DriverConfig& config)
      : cfg(config), loop(cfg, buses, buffer), encoder(cfg) {
    truth.num_joints = static_cast<std::uint16_t>(cfg.joints.size());
    truth.num_wrenches = static_cast<std::uint16_t>(cfg.ft_cells.size());
  }
  ImuRig(const ImuRig&) = delete;
  ImuRig& operator=(const ImuRig&) = delete;

  // One millisecond: every device sends (the IMU `imu` with `status`, unless `imu_on` is false),
  // the loop ticks.
  void Step(const ImuValues& imu = {}, std::uint8_t status = ImuStatus::kValid,
            bool imu_on = true) {
    now += kMs;
    encoder.Emit(truth, now, buses);
    if (imu_on)
      encoder.EmitImu(imu, now, buses, status);
    else
      encoder.SkipImu();
    loop.Tick(now);
  }
  const hal::RobotStateSample& out() const { return loop.last_sample(); }
};

}  // namespace heft::drivers::test

#include "heft/drivers/sample_encoder.hpp"

#include <Eigen/LU>
#include <stdexcept>

namespace heft::drivers {
namespace {

// A CiA 402 drive's statusword in "operation enabled": ready to switch on, switched on, operation
// enabled, voltage enabled, quick stop not active, remote.
constexpr std::uint16_t kCia402Enabled = 0x0237;

}  // namespace

ImuValues ImuValuesFromBase(const ImuDevice& imu, const hal::BaseSample& base) noexcept {
  const auto& o = base.orientation;
  const Eigen::Quaterniond q_WB(o[0], o[1], o[2], o[3]);
  const Eigen::Vector3d w_B(base.angular_velocity.data()), f_B(base.specific_force.data());
  ImuValues v;
  v.w_I = imu.R_BI.transpose() * w_B;
  v.f_I = imu.R_BI.transpose() * f_B;
  v.q_WI = (q_WB.normalized() * Eigen::Quaterniond(imu.R_BI)).normalized();
  return v;
}

SampleEncoder::SampleEncoder(const DriverConfig& config) : config_(config) {
  for (const FtDevice& c : config.ft_cells) {
    if (config.ft_cells_from_framework) break;  // no gauges to encode
    Eigen::FullPivLU<Matrix6> lu(c.ft.calibration);
    if (!lu.isInvertible())
      throw std::invalid_argument("F/T cell '" + c.frame + "': calibration matrix is singular");
    inverse_calibration_.push_back(lu.inverse());
  }
}

int SampleEncoder::Emit(const hal::RobotStateSample& truth, std::int64_t now_ns,
                        std::span<hal::CanTransport* const> buses,
                        const EmitOptions& opt) noexcept {
  int sent = 0;
  auto put = [&](int bus, hal::CanFrame f) {
    f.stamp_ns = now_ns;
    if (buses[bus]->send(f) == hal::IoStatus::kOk) ++sent;
  };
  auto enabled = [](std::span<const unsigned char> mask, std::size_t i) {
    return mask.empty() || mask[i];
  };
  // Devices that come from the framework (drivers.joints_from, ft_cells_from) send no frames.
  for (std::size_t i = 0; i < config_.joints.size() && !config_.joints_from_framework; ++i) {
    const JointDevice& d = config_.joints[i];
    const hal::JointSample& j = truth.joints[i];
    if (d.protocol != JointProtocol::kHeft) {
      // A standard actuator sends its joint's values in one reply (MIT) or its TPDOs (CiA 402):
      // silent when either of the joint's devices is.
      if (!enabled(opt.encoder_enabled, i) || !enabled(opt.torque_enabled, i)) continue;
      if (d.protocol == JointProtocol::kMit)
        put(d.bus, EncodeMitReply(d.mit, j.position, j.velocity, j.torque));
      for (int t = 0; d.protocol == JointProtocol::kCia402 && t < d.cia402.num_tpdos; ++t)
        put(d.bus, EncodeCia402Tpdo(d.cia402.tpdos[t], d.cia402, kCia402Enabled, j.position,
                                    j.velocity, j.torque));
      continue;
    }
    if (enabled(opt.encoder_enabled, i))
      put(d.bus,
          EncodeEncoder(d.encoder, EncoderCounts(d.encoder, j.position),
                        EncoderVelocityRaw(d.encoder, j.velocity), opt.encoder_status, counter_));
    if (enabled(opt.torque_enabled, i)) {
      hal::CanFrame f = EncodeTorque(d.torque, TorqueRaw(d.torque, j.torque), opt.temperature,
                                     opt.torque_status, counter_);
      if (opt.corrupt_crc) f.data[7] ^= 0x5A;
      put(d.bus, f);
    }
  }
  for (std::size_t k = 0; k < config_.ft_cells.size() && !config_.ft_cells_from_framework; ++k) {
    if (!enabled(opt.ft_enabled, k)) continue;
    const FtDevice& c = config_.ft_cells[k];
    Vector6 w;
    for (int i = 0; i < 6; ++i) w[i] = truth.wrenches[k].wrench[i];
    const auto frames =
        EncodeFt(c.ft, FtGauges(c.ft, inverse_calibration_[k], w), opt.ft_status, counter_);
    put(c.bus, frames[0]);
    put(c.bus, frames[1]);
  }
  ++counter_;
  return sent;
}

int SampleEncoder::EmitImu(const ImuValues& v, std::int64_t now_ns,
                           std::span<hal::CanTransport* const> buses,
                           std::uint8_t status) noexcept {
  if (!config_.imu) return 0;
  const ImuDevice& d = *config_.imu;
  int sent = 0;
  for (hal::CanFrame f : EncodeImu(d.imu, v.w_I, v.f_I, v.q_WI, status, imu_counter_)) {
    f.stamp_ns = now_ns;
    if (buses[d.bus]->send(f) == hal::IoStatus::kOk) ++sent;
  }
  ++imu_counter_;
  return sent;
}

}  // namespace heft::drivers

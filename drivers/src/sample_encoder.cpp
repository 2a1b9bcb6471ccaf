#include "heft/drivers/sample_encoder.hpp"

#include <Eigen/LU>
#include <stdexcept>

namespace heft::drivers {

SampleEncoder::SampleEncoder(const DriverConfig& config) : config_(config) {
  for (const FtDevice& c : config.ft_cells) {
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
  for (std::size_t i = 0; i < config_.joints.size(); ++i) {
    const JointDevice& d = config_.joints[i];
    const hal::JointSample& j = truth.joints[i];
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
  for (std::size_t k = 0; k < config_.ft_cells.size(); ++k) {
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

}  // namespace heft::drivers

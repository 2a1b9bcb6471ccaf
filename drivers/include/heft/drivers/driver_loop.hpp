// The 1 kHz driver loop: drain every bus, decode, track staleness and counter gaps, publish one
// hal::RobotStateSample per tick into the state buffer.
//
// The floating base's state in the sample comes from exactly one source: the base IMU on CAN when
// the configuration has one (DriverConfig::imu), else the `base` argument of Tick (the controller
// framework's state estimator through shared memory, or the simulator), else none (fixed base).
//
// Tick(now_ns) is the whole real-time path: it never allocates, locks, throws, logs or blocks (each
// bus is drained with non-blocking receives, at most kMaxFramesPerTick frames per bus). It is
// stepped by the daemon's 1 kHz thread or, in lockstep, by tests and the simulator. Bus-off and
// dead interfaces raise a restart request that a supervisor thread serves (BusSupervisor), never
// the loop. Set-up (the constructor) allocates and throws.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "heft/drivers/codecs.hpp"
#include "heft/drivers/driver_config.hpp"
#include "heft/hal/can.hpp"
#include "heft/hal/state_buffer.hpp"

namespace heft::drivers {

struct BusCounters {
  std::uint64_t frames = 0;        // data frames received
  std::uint64_t error_frames = 0;  // error frames of any class
  std::uint64_t bus_off = 0;
  std::uint64_t controller_errors = 0;
  std::uint64_t protocol_errors = 0;
  std::uint64_t ack_errors = 0;
  std::uint64_t other_errors = 0;
  std::uint64_t down_ticks = 0;  // ticks the interface reported itself down
  std::uint64_t restart_requests = 0;
  // More error frames than drivers.error_frame_limit within a window: counted on entry; cleared
  // after a window at or under the limit. Only reported: missing frames show as staleness.
  std::uint64_t degraded_events = 0;
  bool degraded = false;
  std::int64_t last_frame_ns = -1;  // -1: nothing ever received
};

struct DriverCounters {
  std::array<std::uint64_t, static_cast<std::size_t>(Reject::kCount)>
      rejected{};                   // by Reject reason
  std::uint64_t lost_samples = 0;   // counter gaps and abandoned F/T or IMU samples
  std::uint64_t stale_events = 0;   // a channel going from ok to stale
  std::uint64_t fault_events = 0;   // a channel going from any other state to fault
  std::uint64_t fault_samples = 0;  // well-formed samples unusable (device flag, plausibility)
  std::uint64_t torque_stuck_events = 0;   // a torque channel becoming stuck
  std::uint64_t ft_saturated_samples = 0;  // F/T samples with a gauge at its rail
  std::uint64_t emcy_errors = 0;           // CiA 402 EMCY messages with an error code (not 0)
  std::uint64_t heartbeat_faults = 0;      // CiA 402 heartbeats: operational → another NMT state
  std::uint64_t heartbeat_timeouts = 0;    // CiA 402 heartbeats missing beyond the consumer time
  std::uint64_t published = 0;
  std::uint64_t rejected_total() const {
    std::uint64_t n = 0;
    for (auto r : rejected) n += r;
    return n;
  }
};

class DriverLoop {
 public:
  static constexpr int kMaxFramesPerTick = 512;

  // `buses[i]` is the transport of config.buses[i] (not owned; must outlive the loop).
  DriverLoop(const DriverConfig& config, std::span<hal::CanTransport* const> buses,
             hal::StateBuffer& out);

  // One millisecond: drain, decode, staleness, publish. Without an IMU configured, `base` (the
  // floating-base state from another source: the controller framework's shared-memory input, the
  // simulator) is copied into the sample when given, and has_base says whether it was. With an IMU
  // configured the IMU is the base source: `base` is ignored and has_base is always true (the
  // base's health says whether it is usable).
  // With drivers.joints_from (ft_cells_from) framework, the joints (wrenches) and their health are
  // copied from `framework` (the host's validated read of the framework's joint-state segment,
  // in configuration order); without it they are never seen.
  void Tick(std::int64_t now_ns, const hal::BaseSample* base = nullptr,
            const hal::RobotStateSample* framework = nullptr) noexcept;

  const DriverCounters& counters() const { return counters_; }
  const BusCounters& bus(int i) const { return bus_counters_[i]; }
  int num_buses() const { return static_cast<int>(buses_.size()); }
  // A bus with no data frame for longer than `silence_ns` (or never).
  bool Silent(int bus, std::int64_t now_ns, std::int64_t silence_ns = 10'000'000) const;
  // Supervisor side: takes (and clears) a bus's restart request.
  bool TakeRestartRequest(int bus) noexcept;
  const hal::RobotStateSample& last_sample() const { return sample_; }
  const DriverConfig& config() const { return config_; }
  // Replaces an F/T cell's tare (start-up tare); not while Tick runs on another thread.
  void SetTare(int cell, const Vector6& tare) { config_.ft_cells[cell].ft.tare = tare; }

 private:
  enum class Kind : std::uint8_t {
    kNone,
    kEncoder,
    kTorque,
    kFtA,
    kFtB,
    kImu,
    kMit,        // MIT replies: mit_motors_[bus][motor id] is the joint
    kTpdo,       // a CiA 402 drive's TPDO `sub` of joint `index`
    kHeartbeat,  // its heartbeat
    kEmcy,       // its EMCY
  };
  struct Slot {
    Kind kind = Kind::kNone;
    std::uint16_t index = 0;
    std::uint8_t sub = 0;
  };
  // A standard actuator's state beyond its samples (driver_loop_standard.cpp).
  struct DriveState {
    bool not_operational = false;  // the last heartbeat's NMT state was not operational
    bool emcy = false;             // an EMCY error code not yet reset (EMCY 0x0000)
    bool heartbeat_lost = false;   // no heartbeat within the consumer time since the last one
    std::int64_t last_heartbeat_ns = -1;  // -1: none yet (not monitored before the first)
    bool fault() const { return not_operational || emcy || heartbeat_lost; }
  };
  // Each monitored drive whose heartbeat is overdue at now_ns: into fault, counted once.
  void CheckHeartbeats(std::int64_t now_ns) noexcept;
  void ClaimJoint(std::size_t joint);
  // A frame of a standard actuator (kMit, kTpdo, kHeartbeat, kEmcy).
  void HandleStandard(int bus, Slot slot, const hal::CanFrame& frame, std::int64_t now_ns) noexcept;
  void HandleMit(int bus, const hal::CanFrame& frame, std::int64_t now_ns) noexcept;
  void HandleTpdo(Slot slot, const hal::CanFrame& frame, std::int64_t now_ns) noexcept;
  // Heartbeat or EMCY: both channels of the joint into fault (or out of it) at once.
  void DriveFault(std::size_t joint, bool fault) noexcept;
  struct Channel {
    std::int64_t last_usable_ns = -1;
    std::int64_t last_seen_ns = -1;  // last well-formed sample, usable or not
    int last_counter = -1;
    bool fault = false;
    hal::ChannelState last_state = hal::ChannelState::kNeverSeen;
  };
  // One frame drained at tick `tick_ns`; its samples are timed by its receive stamp
  // (hal::CanFrame::kRxStamp) when it has one.
  void Handle(int bus, const hal::CanFrame& frame, std::int64_t tick_ns) noexcept;
  // The first n channels of `to` from the framework's sample (never seen without one).
  template <typename Sample, std::size_t N>
  static void FromFramework(const hal::RobotStateSample* framework, std::array<Sample, N>& to,
                            std::size_t n) noexcept {
    const std::array<Sample, N>* from = nullptr;
    if (framework) {
      if constexpr (std::is_same_v<Sample, hal::JointSample>)
        from = &framework->joints;
      else
        from = &framework->wrenches;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (from) {
        to[i] = (*from)[i];
      } else {
        to[i] = Sample{};
      }
    }
  }
  void Gap(Channel& ch, std::uint8_t counter, std::int64_t now_ns,
           hal::ChannelHealth& health) noexcept;
  // An assembler abandoned the sample `counter` (its other frames will never come): the gap up
  // to it and the sample itself are lost now, not at the next complete sample.
  void Dropped(Channel& ch, std::uint8_t counter, std::int64_t now_ns,
               hal::ChannelHealth& health) noexcept;
  void StoreImu(const ImuReading& r) noexcept;
  // Plausibility of joint `j`'s torque sample `raw` (PlausibilityConfig): true while stuck.
  bool TorqueStuck(std::size_t j, std::int32_t raw, std::int64_t now_ns) noexcept;
  // Before bus `b` is drained: its error-frame window (PlausibilityConfig), degraded or not.
  void ErrorRate(int b, std::int64_t now_ns) noexcept;
  // A well-formed sample: counter gaps, status, and — when the device calls it usable — `store`.
  template <typename Store>
  void Accept(Channel& ch, hal::ChannelHealth& health, std::uint8_t counter, std::uint8_t status,
              bool usable, std::int64_t now_ns, Store store) noexcept {
    Gap(ch, counter, now_ns, health);
    AcceptUncounted(ch, health, status, usable, now_ns, store);
  }
  // The same for a device without a rolling counter (the standard actuators): no gap count.
  template <typename Store>
  void AcceptUncounted(Channel& ch, hal::ChannelHealth& health, std::uint16_t status, bool usable,
                       std::int64_t now_ns, Store store) noexcept {
    ch.last_seen_ns = now_ns;
    health.status_bits = status;
    ch.fault = !usable;
    if (!usable) {
      ++counters_.fault_samples;
      return;
    }
    store();
    ch.last_usable_ns = now_ns;
  }
  void Age(Channel& ch, double timeout, std::int64_t now_ns, hal::ChannelHealth& health) noexcept;
  void CountError(int bus, std::uint32_t classes) noexcept;

  DriverConfig config_;
  std::vector<hal::CanTransport*> buses_;
  hal::StateBuffer& out_;
  std::vector<std::array<Slot, 2048>> ids_;  // per bus: identifier → device
  // Per bus: MIT motor id → joint index + 1 (0: none). Allocated only for buses with MIT joints.
  std::vector<std::vector<std::uint16_t>> mit_motors_;
  std::vector<DriveState> drives_;           // per joint (CiA 402 drives only use it)
  std::vector<unsigned char> status_fault_;  // per joint: the last statusword had its fault bit
  std::vector<Channel> encoders_, torques_, cells_;
  struct TorqueTrack {
    std::int32_t last_raw = 0;
    std::int64_t last_ns = -1;             // -1: no sample yet
    std::int64_t unchanged_moving_ns = 0;  // time the value sat still while the joint moved
    double change_rate = 0.0;              // share of moving samples whose value changed (average)
    bool stuck = false;
  };
  std::vector<TorqueTrack> torque_tracks_;
  struct ErrorWindow {
    std::int64_t start_ns = -1;
    std::int64_t errors = 0;
  };
  std::vector<ErrorWindow> error_windows_;
  std::vector<FtAssembler> assemblers_;
  Channel imu_;
  ImuAssembler imu_assembler_;
  Eigen::Quaterniond q_BI_ = Eigen::Quaterniond::Identity();  // from config_.imu->R_BI
  std::vector<BusCounters> bus_counters_;
  std::unique_ptr<std::atomic<bool>[]> restart_;
  DriverCounters counters_;
  hal::RobotStateSample sample_;
};

// Serves restart requests from a non-real-time thread: Poll() calls CanTransport::restart() (which
// may block in netlink) for every bus whose restart the loop requested.
class BusSupervisor {
 public:
  BusSupervisor(DriverLoop& loop, std::span<hal::CanTransport* const> buses)
      : loop_(loop), buses_(buses.begin(), buses.end()) {}
  // Returns the number of restarts performed.
  int Poll() noexcept;
  std::uint64_t restarts() const { return restarts_; }
  std::uint64_t failed_restarts() const { return failed_; }

 private:
  DriverLoop& loop_;
  std::vector<hal::CanTransport*> buses_;
  std::uint64_t restarts_ = 0, failed_ = 0;
};

}  // namespace heft::drivers

// The drawn deviations for people: the run's log lines and the truth file next to the telemetry.
#include <fmt/format.h>

#include <algorithm>

#include "heft/dynamics/inertia.hpp"
#include "heft/sim/deviations.hpp"

namespace heft::sim {
namespace {

std::string Vec(const Eigen::Vector3d& v) {
  return fmt::format("[{}, {}, {}]", v.x(), v.y(), v.z());
}

// For the log: fixed decimals, `scale` × the value.
std::string Short(const Eigen::Vector3d& v, double scale, int decimals) {
  return fmt::format("[{:.{}f}, {:.{}f}, {:.{}f}]", scale * v.x(), decimals, scale * v.y(),
                     decimals, scale * v.z(), decimals);
}

std::string Pi(const Vector10& pi) {
  std::string out = "[";
  for (int i = 0; i < 10; ++i) out += fmt::format("{}{}", i ? ", " : "", pi[i]);
  return out + "]";
}

// The six entries [Ixx, Ixy, Ixz, Iyy, Iyz, Izz] of the inertia about the centre of mass.
std::string InertiaCom(const dynamics::RigidBodyInertia& b) {
  const Eigen::Matrix3d& I = b.inertia_com;
  return fmt::format("[{}, {}, {}, {}, {}, {}]", I(0, 0), I(0, 1), I(0, 2), I(1, 1), I(1, 2),
                     I(2, 2));
}

}  // namespace

std::vector<std::string> DeviationLogLines(const RobotDeviations& d) {
  const DeviationExtremes e = Extremes(d);
  const DeviationMagnitudes& m = d.config.magnitudes;
  std::vector<std::string> lines;
  std::string summary = fmt::format(
      "simulated robot vs its URDF (simulation.deviations: preset {}, seed {}): {} bodies, mass "
      "up to {:.1f} % ({}), CoM up to {:.1f} mm ({}), inertia about the CoM × {:.3f}…{:.3f}; "
      "{} joints, Coulomb {:.3f}…{:.3f} N·m, viscous {:.3f}…{:.3f} N·m·s/rad, torque offset up to "
      "{:.3f} N·m, gain up to {:.2f} %",
      d.config.preset, d.config.seed, d.bodies.size(), 100 * e.mass,
      e.mass_body.empty() ? "-" : e.mass_body, 1e3 * e.com, e.com_body.empty() ? "-" : e.com_body,
      e.inertia_low, e.inertia_high, d.joints.size(), e.coulomb_low, e.coulomb_high, e.viscous_low,
      e.viscous_high, e.torque_offset, 100 * e.torque_gain);
  if (!d.ft_cells.empty())
    summary += fmt::format("; F/T offsets up to {:.2f} N / {:.3f} N·m", e.ft_force_offset,
                           e.ft_moment_offset);
  if (d.imu)
    summary += fmt::format("; IMU bias up to {:.4f} rad/s / {:.4f} m/s²", e.gyro_bias,
                           e.accelerometer_bias);
  lines.push_back(summary);
  lines.push_back(fmt::format(
      "  magnitudes: mass {:g}, com {:g} m, inertia {:g}, coulomb {:g} N·m, viscous {:g} "
      "N·m·s/rad, torque_offset {:g} N·m, torque_gain {:g}, ft_force_offset {:g} N, "
      "ft_moment_offset {:g} N·m, gyro_bias {:g} rad/s, accelerometer_bias {:g} m/s²",
      m.mass, m.com, m.inertia, m.coulomb, m.viscous, m.torque_offset, m.torque_gain,
      m.ft_force_offset, m.ft_moment_offset, m.gyro_bias, m.accelerometer_bias));
  for (const BodyDeviation& b : d.bodies) {
    const dynamics::RigidBodyInertia u = dynamics::InertiaFromParameters10(b.urdf),
                                     t = dynamics::InertiaFromParameters10(b.truth);
    const Eigen::Vector3d r = InertiaRatios(b.urdf, b.truth);
    lines.push_back(fmt::format(
        "  body {}: mass {:.4g} → {:.4g} kg ({:+.1f} %), CoM {} → {} mm, inertia about the CoM × "
        "{:.3f}…{:.3f}",
        b.name, u.mass, t.mass, 100 * (t.mass / u.mass - 1), Short(u.com, 1e3, 1),
        Short(t.com, 1e3, 1), r.minCoeff(), r.maxCoeff()));
  }
  for (const JointDeviation& j : d.joints)
    lines.push_back(fmt::format(
        "  joint {}: Coulomb {:.3f} N·m, viscous {:.3f} N·m·s/rad, torque sensor offset {:+.3f} "
        "N·m, gain {:+.2f} %",
        j.name, j.coulomb, j.viscous, j.torque_offset, 100 * j.torque_gain));
  for (const FtDeviation& f : d.ft_cells)
    lines.push_back(fmt::format("  F/T cell {}: force offset {} N, moment offset {} N·m", f.frame,
                                Short(f.force_offset, 1, 2), Short(f.moment_offset, 1, 3)));
  if (d.imu)
    lines.push_back(fmt::format("  IMU: gyro bias {} rad/s, accelerometer bias {} m/s²",
                                Short(d.gyro_bias, 1, 5), Short(d.accelerometer_bias, 1, 4)));
  return lines;
}

std::string DeviationsYaml(const RobotDeviations& d, std::string_view scenario,
                           std::span<const std::string> payload_links) {
  const DeviationMagnitudes& m = d.config.magnitudes;
  std::string y;
  y += "# heft-sim: the simulated robot's truth next to its URDF (simulation.deviations,\n";
  y += "# config/README.md). Mass kg, CoM m (link frame), inertia kg·m² about the CoM\n";
  y += "# [Ixx, Ixy, Ixz, Iyy, Iyz, Izz], π in heft's order about the link origin. Friction N·m "
       "and\n";
  y += "# N·m·s/rad (τ_sensed = (1 + gain) (τ_rigid-body + τ_friction) + offset); offsets and "
       "biases\n";
  y += "# in the sensor's axes.\n";
  y +=
      fmt::format("scenario: {}\npreset: {}\nseed: {}\n", scenario, d.config.preset, d.config.seed);
  y += fmt::format(
      "magnitudes: {{mass: {:g}, com: {:g}, inertia: {:g}, coulomb: {:g}, viscous: {:g}, "
      "torque_offset: {:g}, torque_gain: {:g}, ft_force_offset: {:g}, ft_moment_offset: {:g}, "
      "gyro_bias: {:g}, accelerometer_bias: {:g}}}\n",
      m.mass, m.com, m.inertia, m.coulomb, m.viscous, m.torque_offset, m.torque_gain,
      m.ft_force_offset, m.ft_moment_offset, m.gyro_bias, m.accelerometer_bias);
  y += "# These links carry the scenario's payload on top of their truth below (the telemetry's\n";
  y += "# true_* columns: truth + payload − what the URDF had).\n";
  y += "payload_links: [";
  for (std::size_t i = 0; i < payload_links.size(); ++i) y += (i ? ", " : "") + payload_links[i];
  y += "]\nbodies:\n";
  for (const BodyDeviation& b : d.bodies) {
    const dynamics::RigidBodyInertia u = dynamics::InertiaFromParameters10(b.urdf),
                                     t = dynamics::InertiaFromParameters10(b.truth);
    y += fmt::format("  {}:\n", b.name);
    y += fmt::format("    mass: {}\n    urdf_mass: {}\n", t.mass, u.mass);
    y += fmt::format("    com: {}\n    urdf_com: {}\n", Vec(t.com), Vec(u.com));
    y += fmt::format("    inertia: {}\n    urdf_inertia: {}\n", InertiaCom(t), InertiaCom(u));
    y += fmt::format("    pi: {}\n    urdf_pi: {}\n", Pi(b.truth), Pi(b.urdf));
  }
  y += "joints:\n";
  for (const JointDeviation& j : d.joints)
    y += fmt::format("  {}: {{coulomb: {}, viscous: {}, torque_offset: {}, torque_gain: {}}}\n",
                     j.name, j.coulomb, j.viscous, j.torque_offset, j.torque_gain);
  y += d.ft_cells.empty() ? "ft_cells: {}\n" : "ft_cells:\n";
  for (const FtDeviation& f : d.ft_cells)
    y += fmt::format("  {}: {{force_offset: {}, moment_offset: {}}}\n", f.frame,
                     Vec(f.force_offset), Vec(f.moment_offset));
  if (d.imu)
    y += fmt::format("imu: {{gyro_bias: {}, accelerometer_bias: {}}}\n", Vec(d.gyro_bias),
                     Vec(d.accelerometer_bias));
  return y;
}

}  // namespace heft::sim

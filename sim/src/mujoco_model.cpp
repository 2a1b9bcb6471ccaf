#include "heft/sim/mujoco_model.hpp"

#include <unistd.h>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace heft::sim {
namespace {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

MjModelPtr LoadXml(const std::string& path) {
  std::array<char, 1024> error{};
  MjModelPtr model(mj_loadXML(path.c_str(), nullptr, error.data(), static_cast<int>(error.size())));
  if (!model) {
    throw std::runtime_error("MuJoCo cannot load '" + path + "': " + error.data());
  }
  return model;
}

}  // namespace

MjModelPtr LoadMujocoModel(const std::string& urdf_path, const MujocoLoadOptions& options) {
  MjModelPtr model = LoadXml(urdf_path);
  if (options.add_floor) {
    // The URDF cannot hold a floor: save the compiled model as MJCF, add a plane to the world body
    // and compile again.
    const auto dir = std::filesystem::temp_directory_path();
    const auto stem = "heft_scenario_" + std::to_string(::getpid()) + "_" +
                      std::to_string(reinterpret_cast<std::uintptr_t>(model.get()));
    const auto mjcf = dir / (stem + ".xml");
    std::array<char, 1024> error{};
    if (!mj_saveLastXML(mjcf.c_str(), model.get(), error.data(), static_cast<int>(error.size()))) {
      throw std::runtime_error("MuJoCo cannot save '" + urdf_path + "' as MJCF: " + error.data());
    }
    std::string xml = ReadFile(mjcf);
    const std::string tag = "<worldbody>";
    const auto at = xml.find(tag);
    if (at == std::string::npos) {
      std::filesystem::remove(mjcf);
      throw std::runtime_error("MJCF saved from '" + urdf_path + "' has no <worldbody>");
    }
    xml.insert(at + tag.size(),
               "\n    <geom name=\"floor\" type=\"plane\" size=\"0 0 0.05\" friction=\"1 0.005 "
               "0.0001\"/>");
    {
      std::ofstream out(mjcf);
      out << xml;
    }
    try {
      model = LoadXml(mjcf.string());
    } catch (...) {
      std::filesystem::remove(mjcf);
      throw;
    }
    std::filesystem::remove(mjcf);
  }
  model->opt.timestep = options.timestep;
  return model;
}

int MujocoBodyId(const mjModel* m, const std::string& link, const std::string& source) {
  const int id = mj_name2id(m, mjOBJ_BODY, link.c_str());
  if (id <= 0) {
    std::string known;
    for (int b = 1; b < m->nbody; ++b) {
      known += (b > 1 ? ", " : "") + std::string(mj_id2name(m, mjOBJ_BODY, b));
    }
    throw std::invalid_argument("link '" + link + "' is not a moving body of '" + source +
                                "'; known: " + known);
  }
  return id;
}

Vector10 MujocoBodyParameters(const mjModel* m, int body) noexcept {
  const double mass = m->body_mass[body];
  const Eigen::Vector3d c(m->body_ipos[3 * body], m->body_ipos[3 * body + 1],
                          m->body_ipos[3 * body + 2]);
  const Eigen::Quaterniond q(m->body_iquat[4 * body], m->body_iquat[4 * body + 1],
                             m->body_iquat[4 * body + 2], m->body_iquat[4 * body + 3]);
  const Eigen::Vector3d principal(m->body_inertia[3 * body], m->body_inertia[3 * body + 1],
                                  m->body_inertia[3 * body + 2]);
  const Eigen::Matrix3d R = q.normalized().toRotationMatrix();
  const Eigen::Matrix3d Ic = R * principal.asDiagonal() * R.transpose();
  const Eigen::Matrix3d Io =
      Ic + mass * (c.squaredNorm() * Eigen::Matrix3d::Identity() - c * c.transpose());
  Vector10 pi;
  pi << mass, mass * c.x(), mass * c.y(), mass * c.z(), Io(0, 0), Io(0, 1), Io(0, 2), Io(1, 1),
      Io(1, 2), Io(2, 2);
  return pi;
}

bool SetMujocoBodyParameters(mjModel* m, int body, const Vector10& pi) noexcept {
  const double mass = pi[0];
  if (!(mass > 0.0) || !pi.allFinite()) return false;
  const Eigen::Vector3d c = pi.segment<3>(1) / mass;
  Eigen::Matrix3d Io;
  Io << pi[4], pi[5], pi[6], pi[5], pi[7], pi[8], pi[6], pi[8], pi[9];
  const Eigen::Matrix3d Ic =
      Io - mass * (c.squaredNorm() * Eigen::Matrix3d::Identity() - c * c.transpose());
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(Ic);
  if (eig.info() != Eigen::Success) return false;
  const Eigen::Vector3d d = eig.eigenvalues();
  if (!(d.minCoeff() > 0.0) || d[0] + d[1] <= d[2] || d[0] + d[2] <= d[1] || d[1] + d[2] <= d[0]) {
    return false;
  }
  Eigen::Matrix3d R = eig.eigenvectors();
  if (R.determinant() < 0.0) R.col(2) = -R.col(2);
  const Eigen::Quaterniond q(R);
  const double old_mass = m->body_mass[body];
  m->body_mass[body] = mass;
  for (int k = 0; k < 3; ++k) {
    m->body_ipos[3 * body + k] = c[k];
    m->body_inertia[3 * body + k] = d[k];
  }
  m->body_iquat[4 * body] = q.w();
  m->body_iquat[4 * body + 1] = q.x();
  m->body_iquat[4 * body + 2] = q.y();
  m->body_iquat[4 * body + 3] = q.z();
  // Subtree masses (used by MuJoCo for subtree centres of mass) along the path to the world.
  for (int b = body;; b = m->body_parentid[b]) {
    m->body_subtreemass[b] += mass - old_mass;
    if (b == 0) break;
  }
  return true;
}

}  // namespace heft::sim

#include "heft/identification/output.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace heft::identification {

namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// [begin, end) of the <link name="..."> element.
std::pair<std::size_t, std::size_t> FindLink(const std::string& xml, const std::string& name) {
  const std::string key = "name=\"" + name + "\"";
  std::size_t pos = 0;
  while ((pos = xml.find("<link", pos)) != std::string::npos) {
    const std::size_t close = xml.find('>', pos);
    if (close == std::string::npos) break;
    const std::string tag = xml.substr(pos, close - pos + 1);
    if ((tag.size() > 5 && (tag[5] == ' ' || tag[5] == '\n' || tag[5] == '\t')) &&
        tag.find(key) != std::string::npos) {
      if (tag[tag.size() - 2] == '/') return {pos, close + 1};
      const std::size_t end = xml.find("</link>", close);
      if (end == std::string::npos) break;
      return {pos, end + 7};
    }
    pos = close;
  }
  throw std::runtime_error("URDF: no <link name=\"" + name + "\"> element");
}

std::string WithoutInertial(std::string link) {
  const std::size_t b = link.find("<inertial");
  if (b == std::string::npos) return link;
  const std::size_t e = link.find("</inertial>", b);
  if (e == std::string::npos) throw std::runtime_error("URDF: unterminated <inertial>");
  std::size_t line_start = link.rfind('\n', b);
  line_start = line_start == std::string::npos ? b : line_start;
  link.erase(line_start, e + 11 - line_start);
  return link;
}

std::string InertialXml(const dynamics::Vector10& pi, const std::string& indent) {
  const dynamics::RigidBodyInertia in = dynamics::InertiaFromParameters10(pi);
  const Eigen::Matrix3d& I = in.inertia_com;
  std::ostringstream o;
  o << indent << "<inertial>\n"
    << indent << "  <origin xyz=\"" << Num(in.com.x()) << ' ' << Num(in.com.y()) << ' '
    << Num(in.com.z()) << "\" rpy=\"0 0 0\"/>\n"
    << indent << "  <mass value=\"" << Num(in.mass) << "\"/>\n"
    << indent << "  <inertia ixx=\"" << Num(I(0, 0)) << "\" ixy=\"" << Num(I(0, 1)) << "\" ixz=\""
    << Num(I(0, 2)) << "\" iyy=\"" << Num(I(1, 1)) << "\" iyz=\"" << Num(I(1, 2)) << "\" izz=\""
    << Num(I(2, 2)) << "\"/>\n"
    << indent << "</inertial>\n";
  return o.str();
}

// The sensors' errors identified alongside: gains as `torque_sensors` (with their σ when a
// posterior gives one), the F/T cells' and the joints' offsets as comments.
void AppendSensors(std::ostringstream& y, const Problem& problem, const Eigen::VectorXd& x,
                   const Eigen::VectorXd* sigma) {
  const dynamics::Model& model = *problem.model;
  auto list = [&](int from, int count) {
    std::string s = "[";
    for (int i = 0; i < count; ++i) s += (i ? ", " : "") + Num(x[from + i]);
    return s + "]";
  };
  if (problem.gains) {
    y << "torque_sensors:  # tau_measured = (1 + gain) * tau; gain_sigma: its standard "
         "deviation\n";
    for (int j = 0; j < problem.joints(); ++j) {
      const int i = problem.gain_begin() + j;
      const std::string& n = problem.names[i];
      // d gain / d g = 1 / (1 − g)²
      const double d = 1.0 / ((1.0 - x[i]) * (1.0 - x[i]));
      y << "  " << n.substr(0, n.size() - 5) << ": {gain: " << Num(GainOfColumn(x[i]));
      if (sigma) y << ", gain_sigma: " << Num(d * (*sigma)[i]);
      y << "}\n";
    }
  }
  for (std::size_t c = 0; c < problem.ft_frames.size(); ++c) {
    if (c == 0)
      y << "# F/T cells' offsets identified alongside (N, N·m, in the cell's axes; nuisance "
           "unknowns, not used by heft):\n";
    y << "#   " << model.frames[problem.ft_frames[c]].name << ": "
      << list(problem.ft_begin() + 6 * static_cast<int>(c), 6) << "\n";
  }
  if (problem.offsets) {
    // Comments only: a torque sensor's offset changes from one power-up to the next, so the
    // service calibrates its own at start-up (estimator.calibration) and never reads these.
    y << "# torque-sensor offsets identified alongside (N·m; nuisance unknowns, not used by "
         "heft):\n";
    for (int j = 0; j < problem.joints(); ++j) {
      std::string name = problem.names[problem.offset_begin() + j];
      name = name.substr(0, name.size() - 7);
      y << "#   " << name << ": " << Num(x[problem.offset_begin() + j]) << "\n";
    }
  }
}

}  // namespace

std::string ReplaceInertials(const std::string& urdf_xml, const dynamics::Model& identified,
                             const Problem& problem) {
  std::string xml = urdf_xml;
  for (int b : problem.selection.bodies()) {
    for (const dynamics::Frame& f : identified.frames) {
      if (f.body != b) continue;
      auto [begin, end] = FindLink(xml, f.name);
      std::string link = WithoutInertial(xml.substr(begin, end - begin));
      if (f.name == identified.bodies[b].name) {
        if (link.size() > 2 && link[link.size() - 2] == '/' &&
            link.find("</link>") == std::string::npos) {
          link.erase(link.size() - 2, 1);  // <link name="x"/> → <link name="x"> … </link>
          link.append("\n").append(InertialXml(identified.bodies[b].parameters, "    "));
          link.append("  </link>");
        } else {
          const std::size_t close = link.rfind("</link>");
          link.insert(close, InertialXml(identified.bodies[b].parameters, "    ") + "  ");
          // Tidy the indentation of the closing tag.
          const std::size_t ws = link.find_last_not_of(" \t", close - 1);
          if (ws != std::string::npos && link[ws] == '\n') link.erase(ws + 1, close - ws - 1);
        }
      }
      xml.replace(begin, end - begin, link);
    }
  }
  return xml;
}

std::vector<std::optional<Ellipsoid>> BoundingEllipsoids(const Problem& problem,
                                                         double inertia_scale, double min_axis) {
  const dynamics::Model& model = *problem.model;
  std::vector<std::optional<Ellipsoid>> out;
  for (int b : problem.selection.bodies()) {
    std::vector<Eigen::Vector3d> points;
    for (const dynamics::Frame& f : model.frames) {
      if (f.body != b) continue;
      for (const dynamics::CollisionBox& box : f.collisions) {
        for (int corner = 0; corner < 8; ++corner) {
          const Eigen::Vector3d local(corner & 1 ? box.half.x() : -box.half.x(),
                                      corner & 2 ? box.half.y() : -box.half.y(),
                                      corner & 4 ? box.half.z() : -box.half.z());
          points.push_back(f.R * (box.R_FC * local + box.p_FC) + f.p);
        }
      }
    }
    if (!points.empty()) {
      Eigen::Vector3d lo = points[0], hi = points[0];
      for (const auto& p : points) {
        lo = lo.cwiseMin(p);
        hi = hi.cwiseMax(p);
      }
      Ellipsoid e;
      e.center = 0.5 * (lo + hi);
      // The ellipsoid through the box's corners with the box's proportions.
      e.semi_axes = (0.5 * (hi - lo) * std::sqrt(3.0)).cwiseMax(min_axis);
      out.emplace_back(e);
      continue;
    }
    const dynamics::Vector10& pi = model.bodies[b].parameters;
    if (inertia_scale > 0.0 && pi[0] > 0.0) {
      const dynamics::RigidBodyInertia in = dynamics::InertiaFromParameters10(pi);
      const Eigen::Matrix3d second =
          0.5 * in.inertia_com.trace() * Eigen::Matrix3d::Identity() - in.inertia_com;
      const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(second / in.mass);
      Ellipsoid e;
      e.center = in.com;
      e.R = eig.eigenvectors();
      e.semi_axes = (5.0 * eig.eigenvalues().cwiseMax(0.0)).cwiseSqrt() * inertia_scale;
      e.semi_axes = e.semi_axes.cwiseMax(min_axis);
      out.emplace_back(e);
      continue;
    }
    out.emplace_back(std::nullopt);
  }
  return out;
}

namespace {

// identified.yaml's `fit:` section: the written result's statistics, every method's fit, the
// split by the joints' speed, the joints held, the wall time.
void AppendFit(std::ostringstream& y, const FitStatistics& stats) {
  y << "fit:\n  method: " << stats.method << "\n  samples: " << stats.samples
    << "\n  rank: " << stats.rank << "\n  unknowns: " << stats.unknowns
    << "\n  condition: " << Num(stats.condition) << "\n  fit_rmse: " << Num(stats.fit_rmse) << "\n";
  if (stats.validation_rmse >= 0) y << "  validation_rmse: " << Num(stats.validation_rmse) << "\n";
  y << "  physically_consistent: " << (stats.consistent ? "true" : "false") << "\n";
  if (stats.held_rows > 0)
    y << "  by_speed: {sliding_speed: " << Num(stats.sliding_speed)
      << ", sliding_rmse: " << Num(stats.sliding_rmse) << ", sliding_rows: " << stats.sliding_rows
      << ", held_rmse: " << Num(stats.held_rmse) << ", held_rows: " << stats.held_rows << "}\n";
  if (!stats.methods.empty()) {
    y << "  methods:  # each method's joint-torque RMSE on the recording [N·m], bodies "
         "consistent\n";
    for (const FitStatistics::Method& m : stats.methods)
      y << "    " << m.name << ": {fit_rmse: " << Num(m.fit_rmse)
        << ", consistent_bodies: " << m.consistent_bodies << "}\n";
    y << "  bodies: " << stats.bodies << "\n";
  }
  if (!stats.held_joints.empty()) {
    y << "  held_joints:  # held or creeping on this share of the samples (>= "
      << Num(kHeldJointShare) << ")\n";
    for (const auto& [joint, share] : stats.held_joints)
      y << "    " << joint << ": " << Num(share) << "\n";
  }
  if (stats.seconds >= 0) y << "  seconds: " << Num(stats.seconds) << "\n";
}

}  // namespace

std::string ParametersYaml(const Problem& problem, const Eigen::VectorXd& x,
                           const Identifiability& report, const FitStatistics& stats,
                           const Posterior* posterior) {
  const dynamics::Model& model = *problem.model;
  std::ostringstream y;
  y << "# heft-identify: identified nominal parameters (π = [m, hx, hy, hz, Ixx, Ixy, Ixz, Iyy, "
       "Iyz, Izz],\n# inertia about the link origin, link frame). identifiable: share of each "
       "entry of π in the\n# identified subspace (1: alone, 0: not at all); sigma: its standard "
       "deviation.\n";
  if (posterior)
    y << "# covariance: π's posterior covariance (row-major 10x10, link frame, at the link "
         "origin;\n# the URDF's stated uncertainty updated by the data, scaled by the fit's "
         "residual);\n# sigma is the square root of its diagonal.\n";
  y << "format: heft-parameters/1\n";
  AppendFit(y, stats);
  y << "links:\n";
  const auto& bodies = problem.selection.bodies();
  auto list = [&](const Eigen::VectorXd& v, int from, int count) {
    std::string s = "[";
    for (int i = 0; i < count; ++i) s += (i ? ", " : "") + Num(v[from + i]);
    return s + "]";
  };
  Eigen::VectorXd sigma = report.sigma;
  if (posterior) sigma = posterior->covariance.diagonal().cwiseMax(0.0).cwiseSqrt();
  for (std::size_t k = 0; k < bodies.size(); ++k) {
    const dynamics::Vector10 pi = x.segment<10>(10 * k);
    const dynamics::RigidBodyInertia in = dynamics::InertiaFromParameters10(pi);
    const Eigen::Matrix3d& I = in.inertia_com;
    const int o = static_cast<int>(10 * k);
    y << "  " << model.bodies[bodies[k]].name << ":\n    mass: " << Num(in.mass) << "\n    com: ["
      << Num(in.com.x()) << ", " << Num(in.com.y()) << ", " << Num(in.com.z())
      << "]\n    inertia_com: [" << Num(I(0, 0)) << ", " << Num(I(0, 1)) << ", " << Num(I(0, 2))
      << ", " << Num(I(1, 1)) << ", " << Num(I(1, 2)) << ", " << Num(I(2, 2))
      << "]\n    pi: " << list(x, o, 10)
      << "\n    identifiable: " << list(report.identifiable_share, o, 10)
      << "\n    sigma: " << list(sigma, o, 10) << "\n";
    if (posterior) {
      const Eigen::Matrix<double, 10, 10> c = posterior->Body(static_cast<int>(k));
      Eigen::VectorXd rows(100);
      for (int i = 0; i < 10; ++i) rows.segment<10>(10 * i) = c.row(i).transpose();
      y << "    covariance: " << list(rows, 0, 100) << "\n";
    }
  }
  if (problem.friction) {
    const int nj = problem.joints();
    const int ni = problem.inertial_size();
    y << "friction:  # tau = fc * tanh(v / 0.01) + fv * v; fc_sigma: fc's standard deviation "
         "(a joint\n  # that never slid in the recording keeps its prior's)\n";
    for (int j = 0; j < nj; ++j) {
      std::string name = problem.names[ni + j];
      name = name.substr(0, name.size() - 3);
      y << "  " << name << ": {fc: " << Num(x[ni + j]) << ", fv: " << Num(x[ni + nj + j]);
      if (posterior) y << ", fc_sigma: " << Num(sigma[ni + j]);
      y << "}\n";
    }
  }
  AppendSensors(y, problem, x, posterior ? &sigma : nullptr);
  return y.str();
}

void WriteTextFile(const std::string& path, const std::string& text) {
  auto fail = [&] { return std::runtime_error(path + ": cannot write: " + std::strerror(errno)); };
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw fail();
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int saved = errno;
  // fclose flushes: a full disk shows here at the latest.
  if (std::fclose(f) != 0 || !written) {
    if (!written) errno = saved;
    throw fail();
  }
}

}  // namespace heft::identification

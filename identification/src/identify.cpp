#include "heft/identification/identify.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "heft/hal/enum_name.hpp"

namespace heft::identification {

namespace {

// In Method's declaration order.
constexpr std::array<const char*, 3> kMethodNames{"wls", "contact", "nullspace"};
static_assert(kMethodNames.size() == hal::EnumCount(Method::kNullSpace));

}  // namespace

const char* MethodName(Method m) noexcept {
  return hal::EnumName(m, kMethodNames, "?");
}

double FrictionSign(double v) noexcept {
  return std::tanh(v / 0.01);
}

Problem MakeProblem(const dynamics::Model& model, const std::vector<std::string>& bodies,
                    bool friction, bool offsets) {
  ProblemTerms terms;
  terms.friction = friction;
  terms.offsets = offsets;
  return MakeProblem(model, bodies, terms);
}

Problem MakeProblem(const dynamics::Model& model, const std::vector<std::string>& bodies,
                    const ProblemTerms& terms) {
  const bool friction = terms.friction, offsets = terms.offsets;
  std::vector<std::string> chosen = bodies;
  if (chosen.empty())
    for (const dynamics::Body& b : model.bodies) chosen.push_back(b.name);
  Problem p{&model,
            dynamics::RegressorSelection(model, chosen),
            friction,
            offsets,
            Problem::kSlidingSpeed,
            {},
            {},
            {},
            terms.gains,
            terms.ft_frames,
            {}};

  static const char* kPi[10] = {"m", "hx", "hy", "hz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz"};
  for (int b : p.selection.bodies())
    for (const char* s : kPi) p.names.push_back(model.bodies[b].name + "." + s);
  // Joints in v order.
  std::vector<std::pair<int, std::string>> joints;
  for (const dynamics::Body& b : model.bodies)
    if (b.joint.type != dynamics::JointType::kFree) joints.emplace_back(b.v_index, b.joint.name);
  std::sort(joints.begin(), joints.end());
  if (friction || offsets || terms.gains)
    for (const auto& [vi, name] : joints) p.joint_v.push_back(vi);
  if (friction) {
    for (const auto& [vi, name] : joints) p.names.push_back(name + ".fc");
    for (const auto& [vi, name] : joints) p.names.push_back(name + ".fv");
  }
  if (offsets)
    for (const auto& [vi, name] : joints) p.names.push_back(name + ".offset");
  if (terms.gains)
    for (const auto& [vi, name] : joints) p.names.push_back(name + ".gain");
  static const char* kWrench[6] = {"fx", "fy", "fz", "nx", "ny", "nz"};
  for (int f : terms.ft_frames)
    for (const char* c : kWrench) p.names.push_back(model.frames.at(f).name + "." + c + "_offset");
  p.prior = Eigen::VectorXd::Zero(p.size());
  p.prior.head(p.inertial_size()) = p.selection.Gather(model);
  return p;
}

namespace {

// Generalized force of each unit wrench component of each F/T cell: columns of G (nv × 6W).
void ContactMap(const dynamics::Model& model, dynamics::Workspace& ws,
                const std::vector<int>& frames, Eigen::MatrixXd& G) {
  const int nw = static_cast<int>(frames.size());
  G.resize(model.nv, 6 * nw);
  std::vector<dynamics::Vector6> unit(nw, dynamics::Vector6::Zero());
  Eigen::VectorXd out(model.nv);
  for (int c = 0; c < 6 * nw; ++c) {
    unit[c / 6][c % 6] = 1.0;
    dynamics::ContactTerm(model, ws, frames, unit, out);
    G.col(c) = out;
    unit[c / 6][c % 6] = 0.0;
  }
}

Eigen::VectorXd StackWrenches(const std::vector<dynamics::Vector6>& w) {
  Eigen::VectorXd out(6 * w.size());
  for (std::size_t i = 0; i < w.size(); ++i) out.segment<6>(6 * i) = w[i];
  return out;
}

// Per joint: whether its sliding samples tell Coulomb from viscous friction. Over them s(v) and v
// are two regressors of the same row; when their correlation ρ has ρ² ≥ 0.9 (a variance
// inflation factor 1/(1 − ρ²) of 10 or more, the usual mark of severe collinearity: a joint that
// only slides slowly, at nearly one speed) the data fix only their sum, and a fit of both trades
// a wrong Coulomb term for a viscous one that extrapolates badly. Such a joint gets Coulomb alone.
std::vector<unsigned char> ViscousSeparable(const Problem& problem, const Dataset& data) {
  const int nj = problem.joints();
  std::vector<double> ss(nj, 0.0), sv(nj, 0.0), vv(nj, 0.0);
  for (const Sample& s : data.samples)
    for (int j = 0; j < nj; ++j) {
      const double v = s.v[problem.joint_v[j]];
      if (!problem.Slides(v)) continue;
      const double sign = FrictionSign(v);
      ss[j] += sign * sign;
      sv[j] += sign * v;
      vv[j] += v * v;
    }
  std::vector<unsigned char> separable(nj, 0);
  for (int j = 0; j < nj; ++j) separable[j] = sv[j] * sv[j] < 0.9 * ss[j] * vv[j];
  return separable;
}

// A sample's regressor K = [Y, friction columns (sliding joints), offset columns, gain columns
// (the measured torque on its joint's row), F/T offset columns (G: the generalized force of each
// unit wrench component; zero where the rows do not use the measured wrenches)] (nv × n).
void FillRegressor(const Problem& problem, const Sample& s,
                   const std::vector<unsigned char>& viscous, const Eigen::MatrixXd& Y,
                   const Eigen::MatrixXd* G, Eigen::MatrixXd& K) {
  const int ni = problem.inertial_size();
  K.setZero();
  K.leftCols(ni) = Y;
  const int nj = problem.joints();
  for (int j = 0; j < nj && problem.friction; ++j) {
    const int vi = problem.joint_v[j];
    if (!problem.Slides(s.v[vi])) continue;  // held or creeping
    K(vi, ni + j) = FrictionSign(s.v[vi]);
    if (viscous[j]) K(vi, ni + nj + j) = s.v[vi];
  }
  for (int j = 0; j < nj && problem.offsets; ++j)
    K(problem.joint_v[j], problem.offset_begin() + j) = 1.0;
  for (int j = 0; j < nj && problem.gains; ++j)
    K(problem.joint_v[j], problem.gain_begin() + j) = s.tau[problem.joint_v[j]];
  if (G != nullptr && !problem.ft_frames.empty()) K.middleCols(problem.ft_begin(), G->cols()) = *G;
}

// The joint-torque sensors' covariance of a sample's rows (nv × nv; the base rows 0).
Eigen::MatrixXd JointTorqueCovariance(const dynamics::Model& model, const NoiseModel& noise) {
  const int nv = model.nv;
  Eigen::MatrixXd Sigma = Eigen::MatrixXd::Zero(nv, nv);
  const int base = model.floating_base ? 6 : 0;
  for (int i = base; i < nv; ++i) Sigma(i, i) = noise.joint_torque * noise.joint_torque;
  return Sigma;
}

// The null-space method's rows of a sample: V spans the complement of the contacts' Jacobians
// (none near a contact change; every row without contact). Jc and Jf are workspaces.
void NullSpaceRows(const dynamics::Model& model, dynamics::Workspace& ws,
                   const std::vector<int>& frames, const Sample& s, Eigen::MatrixXd& Jc,
                   dynamics::Matrix6X& Jf, Eigen::MatrixXd& V) {
  const int nv = model.nv;
  const int nw = static_cast<int>(frames.size());
  if (s.near_contact_switch) {
    V.resize(nv, 0);
    return;
  }
  int nc = 0;
  for (int c = 0; c < nw; ++c) nc += s.contact[c];
  if (nc == 0) {
    V = Eigen::MatrixXd::Identity(nv, nv);
    return;
  }
  dynamics::ForwardKinematics(model, ws, s.q);
  Jc.resize(nv, 6 * nc);
  for (int c = 0, k = 0; c < nw; ++c) {
    if (!s.contact[c]) continue;
    dynamics::FrameJacobian(model, ws, frames[c], Jf);
    Jc.middleCols(6 * k++, 6) = Jf.transpose();
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(Jc);
  qr.setThreshold(1e-9);
  const int r = static_cast<int>(qr.rank());
  const Eigen::MatrixXd Q = qr.householderQ();
  V = Q.rightCols(nv - r);
}

// The floating base's sensor test: whether the rows V keep all six base directions.
void BaseSensorTest(const Eigen::MatrixXd& V, NormalEquations& ne) {
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(V.topRows(6));
  const auto& sv = svd.singularValues();
  int rank = 0;
  for (int i = 0; i < sv.size(); ++i) rank += sv[i] > 1e-6 ? 1 : 0;
  if (rank < 6) ++ne.sensor_test_failures;
  ne.min_base_rank = std::min(ne.min_base_rank, rank);
}

void CheckFtFrames(const Problem& problem, const Dataset& data) {
  if (!problem.ft_frames.empty() && problem.ft_frames != data.frames)
    throw std::invalid_argument(
        "the F/T offsets' cells are not the recording's F/T cells (make the problem from the "
        "dataset's frames)");
}

}  // namespace

NormalEquations Accumulate(const Problem& problem, const Dataset& data, Method method,
                           const NoiseModel& noise, const ProgressFn& progress) {
  const dynamics::Model& model = *problem.model;
  if (method == Method::kContactOnly && !model.floating_base)
    throw std::invalid_argument("contact-force-only identification needs a floating base");
  const int nv = model.nv, n = problem.size(), ni = problem.inertial_size();
  const int nw = static_cast<int>(data.frames.size());
  CheckFtFrames(problem, data);
  dynamics::Workspace ws(model);
  NormalEquations ne;
  ne.A = Eigen::MatrixXd::Zero(n, n);
  ne.b = Eigen::VectorXd::Zero(n);
  constexpr int kChunk = 2048;
  Eigen::MatrixXd buf(kChunk + nv, n);
  Eigen::VectorXd ybuf(kChunk + nv);
  int filled = 0;
  auto flush = [&]() {
    if (filled == 0) return;
    ne.A.selfadjointView<Eigen::Lower>().rankUpdate(buf.topRows(filled).transpose());
    ne.b.noalias() += buf.topRows(filled).transpose() * ybuf.head(filled);
    ne.c += ybuf.head(filled).squaredNorm();
    filled = 0;
  };
  Eigen::MatrixXd Y(nv, ni), K(nv, n), G, Jc, V;
  Eigen::VectorXd tau_nom(nv), f(nv);
  Eigen::VectorXd sig_lambda(6 * nw);
  for (int i = 0; i < 6 * nw; ++i) sig_lambda[i] = i % 6 < 3 ? noise.force : noise.moment;
  dynamics::Matrix6X Jf(6, nv);
  const std::vector<unsigned char> viscous =
      problem.friction ? ViscousSeparable(problem, data) : std::vector<unsigned char>{};
  const std::size_t total = data.samples.size();
  std::size_t done = 0;
  for (const Sample& s : data.samples) {
    if (progress && done % 256 == 0) progress(done, total);
    ++done;
    dynamics::CondensedRegressor(model, ws, problem.selection, s.q, s.v, s.a, Y, tau_nom);
    ContactMap(model, ws, data.frames, G);
    FillRegressor(problem, s, viscous, Y, method == Method::kNullSpace ? nullptr : &G, K);
    const Eigen::VectorXd lambda = StackWrenches(s.wrenches);
    Eigen::MatrixXd Sigma = JointTorqueCovariance(model, noise);
    const Eigen::MatrixXd Sigma_lambda =
        G * sig_lambda.array().square().matrix().asDiagonal() * G.transpose();
    f = s.tau - tau_nom;
    switch (method) {
      case Method::kFullWls:
        V = Eigen::MatrixXd::Identity(nv, nv);
        f += G * lambda;
        Sigma += Sigma_lambda;
        break;
      case Method::kContactOnly:
        V = Eigen::MatrixXd::Identity(nv, 6);
        f += G * lambda;
        Sigma = Sigma_lambda;
        break;
      case Method::kNullSpace:
        NullSpaceRows(model, ws, data.frames, s, Jc, Jf, V);
        break;
    }
    const int m = static_cast<int>(V.cols());
    if (m == 0) {
      ++ne.samples_skipped;
      continue;
    }
    if (model.floating_base) BaseSensorTest(V, ne);
    Eigen::MatrixXd cov = V.transpose() * Sigma * V;
    cov.diagonal().array() += noise.floor * noise.floor;
    const Eigen::LLT<Eigen::MatrixXd> llt(cov);
    if (filled + m > kChunk) flush();
    buf.middleRows(filled, m) = llt.matrixL().solve(V.transpose() * K);
    ybuf.segment(filled, m) = llt.matrixL().solve(V.transpose() * f);
    filled += m;
    ne.rows += m;
    ++ne.samples;
  }
  flush();
  ne.A.triangularView<Eigen::StrictlyUpper>() = ne.A.transpose();
  if (progress) progress(total, total);
  return ne;
}

std::string MethodUnavailable(const std::string& method, const dynamics::Model& model,
                              const Dataset& data) {
  if (method != "contact" && method != "nullspace") return "";
  if (!model.floating_base)
    return "'" + method + "' needs a floating base; this robot's base is fixed" +
           (method == "nullspace" ? " (with no contacts the null space is every row: use wls)"
                                  : " (there is no base wrench to measure)");
  if (data.frames.empty())
    return "'" + method + "' needs F/T cells (foot wrenches); the recording has none";
  return "";
}

MethodPlan DefaultMethods(const dynamics::Model& model, const Dataset& data) {
  MethodPlan plan;
  if (MethodUnavailable("contact", model, data).empty()) {
    plan.methods = {"wls", "contact", "nullspace", "sdp"};
    plan.sdp_rows = "nullspace";
    plan.reason = "floating base with " + std::to_string(data.frames.size()) +
                  " F/T cells: wls, contact, nullspace, and sdp on the null-space rows";
  } else {
    plan.methods = {"wls", "sdp"};
    plan.sdp_rows = "wls";
    plan.reason =
        std::string(model.floating_base ? "floating base without F/T cells" : "fixed base") +
        ": wls, and sdp on its rows (contact and nullspace need a floating base and "
        "F/T cells)";
  }
  return plan;
}

Eigen::VectorXd PriorScale(const Problem& problem) {
  Eigen::VectorXd s(problem.size());
  const int ni = problem.inertial_size();
  for (int b = 0; b < problem.selection.size(); ++b) {
    const dynamics::Vector10 pi = problem.prior.segment<10>(10 * b);
    const double m = std::abs(pi[0]);
    s[10 * b] = 0.2 * m + 0.1;
    for (int k = 1; k < 4; ++k) s[10 * b + k] = 0.2 * pi.segment<3>(1).norm() + 0.02 * m + 1e-3;
    const double tr = std::abs(pi[4] + pi[7] + pi[9]);
    for (int k = 4; k < 10; ++k) s[10 * b + k] = 0.1 * tr + 1e-4;
  }
  for (int i = ni; i < problem.size(); ++i) s[i] = 1.0;
  if (problem.gains)
    s.segment(problem.gain_begin(), problem.joints()) =
        problem.gain_size.size() == problem.joints()
            ? problem.gain_size
            : Eigen::VectorXd::Constant(problem.joints(), 0.05);
  for (std::size_t c = 0; c < 6 * problem.ft_frames.size(); ++c)
    s[problem.ft_begin() + static_cast<int>(c)] = c % 6 < 3 ? 10.0 : 1.0;
  return s;
}

LeastSquaresResult SolveLeastSquares(const NormalEquations& ne, const Problem& problem,
                                     const LeastSquaresOptions& options) {
  const Eigen::VectorXd& prior = problem.prior;
  const int n = static_cast<int>(ne.A.rows());
  LeastSquaresResult out;
  Identifiability& rep = out.report;
  rep.unknowns = n;
  rep.scale.resize(n);
  for (int i = 0; i < n; ++i) rep.scale[i] = ne.A(i, i) > 1e-300 ? std::sqrt(ne.A(i, i)) : 1.0;
  const Eigen::VectorXd dinv = rep.scale.cwiseInverse();
  const Eigen::MatrixXd As = dinv.asDiagonal() * ne.A * dinv.asDiagonal();
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(As);
  // Descending order.
  const Eigen::VectorXd lam = eig.eigenvalues().reverse().cwiseMax(0.0);
  const Eigen::MatrixXd Vs = eig.eigenvectors().rowwise().reverse();
  rep.singular_values = lam.cwiseSqrt();
  const double smax = rep.singular_values.size() ? rep.singular_values[0] : 0.0;
  rep.rank = 0;
  for (int i = 0; i < n; ++i)
    if (rep.singular_values[i] > options.rank_tolerance * smax && smax > 0) ++rep.rank;
  rep.condition = rep.rank > 0 ? smax / rep.singular_values[rep.rank - 1] : INFINITY;
  rep.combinations = Vs.leftCols(rep.rank);
  const Eigen::VectorXd bs = dinv.asDiagonal() * (ne.b - ne.A * prior);
  Eigen::VectorXd z = Eigen::VectorXd::Zero(n);
  rep.identifiable_share = Eigen::VectorXd::Zero(n);
  Eigen::VectorXd var = Eigen::VectorXd::Zero(n);
  for (int i = 0; i < rep.rank; ++i) {
    const auto v = Vs.col(i);
    z += v * (v.dot(bs) / lam[i]);
    rep.identifiable_share += v.cwiseAbs2();
    var += (dinv.asDiagonal() * v).cwiseAbs2() / lam[i];
  }
  rep.sigma = var.cwiseSqrt();
  rep.relative_sigma = rep.sigma.cwiseQuotient(PriorScale(problem));
  for (int i = 0; i < n; ++i) {
    if (rep.identifiable_share[i] < 1.0 - 1e-6) rep.relative_sigma[i] = INFINITY;
    rep.identified += rep.relative_sigma[i] < 0.1 ? 1 : 0;
  }
  out.x = prior + dinv.asDiagonal() * z;
  const double res = out.x.dot(ne.A * out.x) - 2.0 * ne.b.dot(out.x) + ne.c;
  out.weighted_rms =
      ne.rows > 0 ? std::sqrt(std::max(0.0, res) / static_cast<double>(ne.rows)) : 0.0;
  return out;
}

dynamics::Model WithParameters(const Problem& problem, const Eigen::VectorXd& x) {
  dynamics::Model m = *problem.model;
  problem.selection.Scatter(m, x.head(problem.inertial_size()));
  return m;
}

void PredictSample(const Problem& problem, const dynamics::Model& model, dynamics::Workspace& ws,
                   std::span<const int> frames, const Sample& s, const Eigen::VectorXd& x,
                   Eigen::VectorXd& tau, Eigen::VectorXd& contact) {
  dynamics::Rnea(model, ws, s.q, s.v, s.a, tau);
  dynamics::ContactTerm(model, ws, frames, s.wrenches, contact);
  tau -= contact;
  if (!problem.ft_frames.empty()) {  // the wrenches less the cells' offsets
    std::vector<dynamics::Vector6> offsets(frames.size());
    for (std::size_t c = 0; c < frames.size(); ++c)
      offsets[c] = x.segment<6>(problem.ft_begin() + 6 * static_cast<int>(c));
    dynamics::ContactTerm(model, ws, frames, offsets, contact);
    tau += contact;
  }
  const int ni = problem.inertial_size(), nj = problem.joints();
  for (int j = 0; j < nj && problem.friction; ++j) {
    const int vi = problem.joint_v[j];
    tau[vi] += x[ni + j] * FrictionSign(s.v[vi]) + x[ni + nj + j] * s.v[vi];
  }
  for (int j = 0; j < nj && problem.offsets; ++j)
    tau[problem.joint_v[j]] += x[problem.offset_begin() + j];
  for (int j = 0; j < nj && problem.gains; ++j)  // τ_m = (τ + friction + o) / (1 − g)
    tau[problem.joint_v[j]] /= 1.0 - x[problem.gain_begin() + j];
}

Prediction PredictTorques(const Problem& problem, const Dataset& data, const Eigen::VectorXd& x) {
  const dynamics::Model m = WithParameters(problem, x);
  dynamics::Workspace ws(m);
  const int nv = m.nv;
  const int base = m.floating_base ? 6 : 0;
  Eigen::VectorXd tau(nv), contact(nv), error(nv);
  Eigen::VectorXd sq = Eigen::VectorXd::Zero(nv), sum = Eigen::VectorXd::Zero(nv);
  Eigen::VectorXd held_sq_j = Eigen::VectorXd::Zero(nv), held_n = Eigen::VectorXd::Zero(nv);
  Prediction p;
  double sliding_sq = 0.0, held_sq = 0.0;
  for (const Sample& s : data.samples) {
    PredictSample(problem, m, ws, data.frames, s, x, tau, contact);
    error = s.tau - tau;
    sq += error.cwiseAbs2();
    sum += error;
    for (int i = base; i < nv; ++i) {
      const double e2 = error[i] * error[i];
      if (problem.Slides(s.v[i])) {
        sliding_sq += e2;
        ++p.sliding_rows;
      } else {
        held_sq += e2;
        ++p.held_rows;
        held_sq_j[i] += e2;
        held_n[i] += 1.0;
      }
    }
  }
  if (p.sliding_rows > 0)
    p.sliding_rmse = std::sqrt(sliding_sq / static_cast<double>(p.sliding_rows));
  if (p.held_rows > 0) p.held_rmse = std::sqrt(held_sq / static_cast<double>(p.held_rows));
  const double ns = static_cast<double>(std::max<std::size_t>(1, data.samples.size()));
  double total = 0.0, bias = 0.0;
  for (int i = base; i < nv; ++i) {
    p.joint_rmse.push_back(std::sqrt(sq[i] / ns));
    p.joint_bias.push_back(sum[i] / ns);
    p.joint_held_share.push_back(held_n[i] / ns);
    p.joint_held_rmse.push_back(held_n[i] > 0.0 ? std::sqrt(held_sq_j[i] / held_n[i]) : 0.0);
    total += sq[i];
    bias += (sum[i] / ns) * (sum[i] / ns);
  }
  p.bias_rms = std::sqrt(bias / std::max(1, nv - base));
  p.rmse = std::sqrt(total / (ns * std::max(1, nv - base)));
  return p;
}

std::vector<std::pair<std::string, double>> HeldJoints(const Problem& problem, const Prediction& p,
                                                       double min_share) {
  const std::vector<std::string> names = problem.model->joint_names();
  std::vector<std::pair<std::string, double>> held;
  for (std::size_t j = 0; j < p.joint_held_share.size() && j < names.size(); ++j)
    if (p.joint_held_share[j] >= min_share) held.emplace_back(names[j], p.joint_held_share[j]);
  return held;
}

}  // namespace heft::identification

#include "heft/identification/sdp.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <new>
#include <stdexcept>

#include "heft/dynamics/inertia.hpp"
#include "heft/identification/consistency.hpp"

extern "C" {
#include <csdp/declarations.h>
}

namespace heft::identification {

Eigen::Matrix4d EllipsoidMatrix(const Ellipsoid& e) {
  const Eigen::Matrix3d A =
      e.R * e.semi_axes.cwiseAbs2().cwiseInverse().asDiagonal() * e.R.transpose();
  Eigen::Matrix4d Q;
  Q.topLeftCorner<3, 3>() = -A;
  Q.topRightCorner<3, 1>() = A * e.center;
  Q.bottomLeftCorner<1, 3>() = (A * e.center).transpose();
  Q(3, 3) = 1.0 - e.center.dot(A * e.center);
  return Q;
}

double EllipsoidMargin(const Eigen::Matrix<double, 10, 1>& pi, const Ellipsoid& e) {
  return (dynamics::PseudoInertia(pi) * EllipsoidMatrix(e)).trace() / pi[0];
}

namespace {

template <typename T>
T* Alloc(std::size_t count) {
  void* p = std::calloc(count, sizeof(T));
  if (!p) throw std::bad_alloc();
  return static_cast<T*>(p);
}

// One block of one constraint matrix (upper triangle, 1-based indices as CSDP wants them).
struct Entries {
  std::vector<int> i, j;
  std::vector<double> v;
  void Add(int ii, int jj, double value) {
    if (value == 0.0) return;
    if (ii > jj) std::swap(ii, jj);
    i.push_back(ii);
    j.push_back(jj);
    v.push_back(value);
  }
};

// Silences CSDP's printf output for the duration of a scope.
class StdoutSilencer {
 public:
  explicit StdoutSilencer(bool active) {
    if (!active) return;
    std::fflush(stdout);
    saved_ = dup(1);
    const int null = open("/dev/null", O_WRONLY);
    if (saved_ >= 0 && null >= 0) dup2(null, 1);
    if (null >= 0) close(null);
  }
  ~StdoutSilencer() {
    if (saved_ < 0) return;
    std::fflush(stdout);
    dup2(saved_, 1);
    close(saved_);
  }
  StdoutSilencer(const StdoutSilencer&) = delete;
  StdoutSilencer& operator=(const StdoutSilencer&) = delete;

 private:
  int saved_ = -1;
};

// The floor of the pull: kFloor Σ ζᵢ² keeps the reduction positive definite where the pull is
// released (SolveSdp's objective, sdp.hpp).
constexpr double kFloor = 1e-6;

void CheckOptions(const SdpOptions& options, int nb) {
  if (!options.ellipsoids.empty() && static_cast<int>(options.ellipsoids.size()) != nb)
    throw std::invalid_argument("SolveSdp: one optional ellipsoid per chosen body");
  if (!(options.margin >= 0.0 && options.margin < 1.0))
    throw std::invalid_argument("SolveSdp: margin must be in [0, 1)");
}

// ε_b: the absolute floor, or κ of the prior body's smallest pseudo-inertia eigenvalue.
std::vector<double> BodyEpsilons(const Eigen::VectorXd& prior, int nb, const SdpOptions& options) {
  std::vector<double> eps(nb, options.epsilon);
  for (int b = 0; b < nb; ++b) {
    const double prior_min = dynamics::PseudoInertiaEigenvalues(prior.segment<10>(10 * b)).min;
    if (std::isfinite(prior_min)) eps[b] = std::max(eps[b], options.margin * prior_min);
  }
  return eps;
}

// The reduced least-squares problem, and the unknowns' map back to x.
struct Reduction {
  Eigen::VectorXd d;          // column scaling: ζ = d ⊙ (x − prior)
  Eigen::MatrixXd pull;       // P of PriorPull, its rows 0 where released
  std::vector<int> released;  // bodies released from the pull
  Eigen::VectorXd x0;         // the unconstrained (regularised) solution
  Eigen::MatrixXd dxdw;       // dx/dw = D⁻¹ R⁻¹ (n × n)
};

// A body the data move far from the prior is not held to it: a tool or a payload on the link
// when it was recorded, or a URDF wrong by more than its plausible size. Where the solution
// with the floor alone moves a body's mass or a first-moment component that the data identify
// (σ below a tenth of its plausible size, as the identifiability report counts it) by more than
// kReleaseSizes plausible sizes, that body keeps only the floor (its pull's rows set to 0).
// Unidentified components do not count: there the floor-only solution is where a residual no
// parameter explains leaks most. Returns the released bodies.
std::vector<int> ReleaseFarBodies(const Eigen::MatrixXd& As, const Eigen::VectorXd& bs,
                                  const Eigen::VectorXd& dinv, const Eigen::VectorXd& scale, int nb,
                                  Eigen::MatrixXd& pull) {
  const int n = static_cast<int>(As.rows());
  std::vector<int> released;
  Eigen::MatrixXd weak = As;
  weak.diagonal().array() += kFloor;
  const Eigen::LLT<Eigen::MatrixXd> wllt(weak);
  if (wllt.info() == Eigen::Success) {
    const Eigen::VectorXd moved = dinv.cwiseProduct(wllt.solve(bs)).cwiseQuotient(scale);
    const Eigen::VectorXd sigma =
        dinv.cwiseProduct(wllt.solve(Eigen::MatrixXd::Identity(n, n)).diagonal().cwiseSqrt())
            .cwiseQuotient(scale);
    for (int b = 0; b < nb; ++b) {
      bool far = false;
      for (int k = 0; k < 4; ++k)
        far = far || (sigma[10 * b + k] < 0.1 && std::abs(moved[10 * b + k]) > kReleaseSizes);
      if (!far) continue;
      pull.middleRows<10>(10 * b).setZero();
      released.push_back(b);
    }
  }
  return released;
}

// Column scaling d (ζ = d ⊙ (x − prior), for the solver's conditioning) and the reduced
// least-squares factor. The pull toward the prior is μ ‖P (x − prior)‖² (PriorPull: plausible
// sizes, the inertia about the CoM) = μ ‖P D⁻¹ ζ‖², plus kFloor Σ ζᵢ² (the columns' share, which
// keeps the reduction positive definite where the pull is released).
Reduction Reduce(const NormalEquations& ne, const Problem& problem, const SdpOptions& options) {
  const int n = problem.size();
  const int nb = problem.selection.size();
  const Eigen::VectorXd& prior = problem.prior;
  Reduction r;
  r.d.resize(n);
  for (int i = 0; i < n; ++i) r.d[i] = ne.A(i, i) > 1e-300 ? std::sqrt(ne.A(i, i)) : 1.0;
  const Eigen::VectorXd dinv = r.d.cwiseInverse();
  const Eigen::VectorXd scale = PriorScale(problem);
  r.pull = PriorPull(problem, options);
  Eigen::MatrixXd As = dinv.asDiagonal() * ne.A * dinv.asDiagonal();
  const Eigen::VectorXd bs = dinv.asDiagonal() * (ne.b - ne.A * prior);
  r.released = ReleaseFarBodies(As, bs, dinv, scale, nb, r.pull);
  const Eigen::MatrixXd pd = r.pull * dinv.asDiagonal();
  As += options.regularisation * pd.transpose() * pd;
  As.diagonal().array() += kFloor;
  const Eigen::LLT<Eigen::MatrixXd> llt(As);
  if (llt.info() != Eigen::Success) throw std::runtime_error("SolveSdp: reduction failed");
  // Unknowns of the SDP: w = Rζ − r (the whitened residual of the reduced problem, ‖w‖² ≤ t) and
  // t. Then ζ = R⁻¹w + ζ₀ with ζ₀ = R⁻¹r the unconstrained (regularised) solution: the Schur
  // block has one entry per unknown and the small blocks carry the dense coupling.
  const Eigen::MatrixXd Rinv =
      llt.matrixU().solve(Eigen::MatrixXd::Identity(n, n));  // upper triangular
  const Eigen::VectorXd zeta0 = llt.solve(bs);
  r.x0 = prior + dinv.asDiagonal() * zeta0;
  r.dxdw = dinv.asDiagonal() * Rinv;
  return r;
}

// The scalar inequalities coeff · x + offset ≥ 0 (x relative to x0): bounding ellipsoids,
// friction signs.
struct Scalar {
  Eigen::RowVectorXd coeff;  // on x
  double offset;             // value at x0
};

std::vector<Scalar> ScalarInequalities(const Problem& problem, const SdpOptions& options,
                                       const Eigen::VectorXd& x0) {
  const int n = problem.size();
  const int nb = problem.selection.size();
  const int ni = problem.inertial_size();
  std::vector<Scalar> scalars;
  for (int b = 0; b < nb && !options.ellipsoids.empty(); ++b) {
    if (!options.ellipsoids[b]) continue;
    const Eigen::Matrix4d Q = EllipsoidMatrix(*options.ellipsoids[b]);
    Scalar s{Eigen::RowVectorXd::Zero(n),
             (dynamics::PseudoInertia(x0.segment<10>(10 * b)) * Q).trace()};
    for (int j = 0; j < 10; ++j)
      s.coeff[10 * b + j] = (dynamics::PseudoInertia(dynamics::Vector10::Unit(j)) * Q).trace();
    scalars.push_back(s);
  }
  if (options.friction_nonnegative) {
    for (int i = ni; i < problem.offset_begin(); ++i) {
      Scalar s{Eigen::RowVectorXd::Zero(n), x0[i]};
      s.coeff[i] = 1.0;
      scalars.push_back(s);
    }
  }
  return scalars;
}

// The SDP as CSDP takes it (CSDP's arrays, 1-based, freed by FreeCsdp).
struct CsdpProblem {
  int nblocks = 0;
  int dim = 0;  // the blocks' total size
  int k = 0;    // constraints: one per unknown, w and t
  blockmatrix C{};
  double* a = nullptr;
  constraintmatrix* constraints = nullptr;
};

// Blocks: 1 the Schur complement (n + 1), 2..nb+1 the pseudo-inertias (4), then one diagonal
// block with the scalar inequalities (ellipsoids, friction signs) if there are any. C holds their
// constant parts (at w = 0: x = x0).
CsdpProblem LayoutBlocks(int n, const std::vector<double>& eps, const Eigen::VectorXd& x0,
                         const std::vector<Scalar>& scalars) {
  const int nb = static_cast<int>(eps.size());
  const int nscalar = static_cast<int>(scalars.size());
  CsdpProblem p;
  p.nblocks = 1 + nb + (nscalar > 0 ? 1 : 0);
  p.dim = (n + 1) + 4 * nb + nscalar;
  p.k = n + 1;  // unknowns w and t
  blockmatrix& C = p.C;
  C.nblocks = p.nblocks;
  C.blocks = Alloc<blockrec>(p.nblocks + 1);
  auto matrix_block = [&](int index, int size) {
    C.blocks[index].blockcategory = MATRIX;
    C.blocks[index].blocksize = size;
    C.blocks[index].data.mat = Alloc<double>(static_cast<std::size_t>(size) * size);
  };
  matrix_block(1, n + 1);
  for (int l = 0; l < n; ++l) C.blocks[1].data.mat[ijtok(l + 2, l + 2, n + 1)] = -1.0;
  for (int b = 0; b < nb; ++b) {
    matrix_block(2 + b, 4);
    const Eigen::Matrix4d Cb =
        eps[b] * Eigen::Matrix4d::Identity() - dynamics::PseudoInertia(x0.segment<10>(10 * b));
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) C.blocks[2 + b].data.mat[ijtok(i + 1, j + 1, 4)] = Cb(i, j);
  }
  if (nscalar > 0) {
    C.blocks[p.nblocks].blockcategory = DIAG;
    C.blocks[p.nblocks].blocksize = nscalar;
    C.blocks[p.nblocks].data.vec = Alloc<double>(nscalar + 1);
    for (int s = 0; s < nscalar; ++s) C.blocks[p.nblocks].data.vec[s + 1] = -scalars[s].offset;
  }
  return p;
}

// The objective: minimise t (the last unknown).
void SetObjective(CsdpProblem& p) {
  p.a = Alloc<double>(p.k + 1);
  p.a[p.k] = 1.0;  // minimise t
}

// Each constraint matrix's entries by block (1-based): unknown i + 1 is w_i (the Schur block's
// border, the pseudo-inertias' and the scalars' derivatives along dx/dw), unknown k is t.
std::vector<std::map<int, Entries>> ConstraintEntries(const CsdpProblem& p, int n, int nb,
                                                      const Eigen::MatrixXd& dxdw,
                                                      const std::vector<Scalar>& scalars) {
  const int nscalar = static_cast<int>(scalars.size());
  std::vector<Eigen::RowVectorXd> scalar_w(nscalar);
  for (int s = 0; s < nscalar; ++s) scalar_w[s] = scalars[s].coeff * dxdw;
  std::vector<std::map<int, Entries>> blocks(p.k + 1);
  std::array<Eigen::Matrix4d, 10> unit_j;
  for (int j = 0; j < 10; ++j) unit_j[j] = dynamics::PseudoInertia(dynamics::Vector10::Unit(j));
  for (int i = 0; i < n; ++i) {
    blocks[i + 1][1].Add(1, i + 2, 1.0);
    for (int b = 0; b < nb; ++b) {
      Eigen::Matrix4d Ji = Eigen::Matrix4d::Zero();
      for (int j = 0; j < 10; ++j) Ji += unit_j[j] * dxdw(10 * b + j, i);
      for (int row = 0; row < 4; ++row)
        for (int col = row; col < 4; ++col)
          blocks[i + 1][2 + b].Add(row + 1, col + 1, Ji(row, col));
    }
    for (int s = 0; s < nscalar; ++s) blocks[i + 1][p.nblocks].Add(s + 1, s + 1, scalar_w[s][i]);
  }
  blocks[p.k][1].Add(1, 1, 1.0);
  return blocks;
}

// Constraint matrices, one per unknown, in CSDP's sparse blocks (listed in increasing block order).
void BuildConstraints(CsdpProblem& p, int n, int nb, const Eigen::MatrixXd& dxdw,
                      const std::vector<Scalar>& scalars) {
  const std::vector<std::map<int, Entries>> blocks = ConstraintEntries(p, n, nb, dxdw, scalars);
  p.constraints = Alloc<constraintmatrix>(p.k + 1);
  for (int c = 1; c <= p.k; ++c) {
    p.constraints[c].blocks = nullptr;
    for (auto it = blocks[c].rbegin(); it != blocks[c].rend(); ++it) {
      const Entries& e = it->second;
      if (e.v.empty()) continue;
      auto* sb = Alloc<sparseblock>(1);
      sb->blocknum = it->first;
      sb->blocksize = p.C.blocks[it->first].blocksize;
      sb->constraintnum = c;
      sb->next = p.constraints[c].blocks;
      sb->nextbyblock = nullptr;
      sb->numentries = static_cast<int>(e.v.size());
      sb->entries = Alloc<double>(e.v.size() + 1);
      sb->iindices = Alloc<int>(e.v.size() + 1);
      sb->jindices = Alloc<int>(e.v.size() + 1);
      for (std::size_t q = 0; q < e.v.size(); ++q) {
        sb->entries[q + 1] = e.v[q];
        sb->iindices[q + 1] = e.i[q];
        sb->jindices[q + 1] = e.j[q];
      }
      p.constraints[c].blocks = sb;
    }
  }
}

// CSDP's solution (its arrays, freed by FreeCsdp).
struct CsdpSolution {
  blockmatrix X{};
  blockmatrix Z{};
  double* y = nullptr;
  double pobj = 0.0, dobj = 0.0;
  int status = -1;
};

CsdpSolution SolveCsdp(CsdpProblem& p, bool verbose) {
  CsdpSolution s;
  StdoutSilencer quiet(!verbose);
  initsoln(p.dim, p.k, p.C, p.a, p.constraints, &s.X, &s.y, &s.Z);
  s.status = easy_sdp(p.dim, p.k, p.C, p.a, p.constraints, 0.0, &s.X, &s.y, &s.Z, &s.pobj, &s.dobj);
  return s;
}

void FreeCsdp(CsdpProblem& p, CsdpSolution& s) {
  free_prob(p.dim, p.k, p.C, p.a, p.constraints, s.X, s.y, s.Z);
}

// The solver's status and x = x0 + dx/dw · w.
void ReadSolution(const CsdpSolution& s, const Reduction& r, SdpResult& out) {
  const int n = static_cast<int>(r.x0.size());
  out.status = s.status;
  out.ok = s.status == 0 || s.status == 3;
  Eigen::VectorXd w(n);
  for (int i = 0; i < n; ++i) w[i] = s.y[i + 1];
  out.x = r.x0 + r.dxdw * w;
}

// The objective of sdp.hpp at x (the least squares, the pull toward the prior and the floor).
double Objective(const Eigen::VectorXd& x, const NormalEquations& ne, const Eigen::VectorXd& prior,
                 const Reduction& r, const SdpOptions& options) {
  const Eigen::VectorXd z = r.pull * (x - prior);
  const Eigen::VectorXd zeta = r.d.cwiseProduct(x - prior);
  return x.dot(ne.A * x) - 2.0 * ne.b.dot(x) + ne.c + options.regularisation * z.squaredNorm() +
         kFloor * zeta.squaredNorm();
}

// Bodies the solver left below J ⪰ ½ε_b·1 brought onto J ⪰ ε_b·1 (SdpResult).
void ProjectBodies(const std::vector<double>& eps, SdpResult& out) {
  const int nb = static_cast<int>(eps.size());
  for (int b = 0; b < nb && out.x.allFinite(); ++b) {
    // Bodies within the solver's accuracy of J ⪰ ε_b·1 (λ_min ≈ 0.9998 ε_b) stay as solved: moving
    // them would cost the bounding ellipsoids their margin for nothing.
    if (dynamics::IsPhysicallyConsistent(out.x.segment<10>(10 * b), 0.5 * eps[b])) continue;
    const ProjectedBody p = ProjectToConsistent(out.x.segment<10>(10 * b), eps[b]);
    if (!p.changed) continue;
    out.x.segment<10>(10 * b) = p.pi;
    ++out.projected_bodies;
    out.projected_mass_or_com += p.kept_mass_and_com ? 0 : 1;
  }
}

std::string StatusMessage(int ret) {
  static const char* kStatus[] = {"solved",
                                  "primal infeasible",
                                  "dual infeasible",
                                  "solved to reduced accuracy",
                                  "iteration limit",
                                  "stuck at the edge of the primal feasible region",
                                  "stuck at the edge of the dual feasible region",
                                  "lack of progress",
                                  "X, Z or O singular",
                                  "NaN or Inf detected"};
  return ret >= 0 && ret <= 9 ? kStatus[ret] : "CSDP failure " + std::to_string(ret);
}

}  // namespace

SdpResult SolveSdp(const NormalEquations& ne, const Problem& problem, const SdpOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const int n = problem.size();
  const int nb = problem.selection.size();
  CheckOptions(options, nb);
  const std::vector<double> eps = BodyEpsilons(problem.prior, nb, options);
  const Reduction r = Reduce(ne, problem, options);
  const std::vector<Scalar> scalars = ScalarInequalities(problem, options, r.x0);
  CsdpProblem p = LayoutBlocks(n, eps, r.x0, scalars);
  SetObjective(p);
  BuildConstraints(p, n, nb, r.dxdw, scalars);
  CsdpSolution s = SolveCsdp(p, options.verbose);
  SdpResult out;
  out.body_epsilon = eps;
  out.released_bodies = r.released;
  ReadSolution(s, r, out);
  out.x_solver = out.x;
  out.objective_solver = Objective(out.x, ne, problem.prior, r, options);
  ProjectBodies(eps, out);
  out.objective = Objective(out.x, ne, problem.prior, r, options);
  out.message = StatusMessage(out.status);
  FreeCsdp(p, s);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::string ExplainSdpFailure(const SdpResult& r, const SdpOptions& options, double condition) {
  std::string why, tries;
  const bool ellipsoids = !options.ellipsoids.empty();
  switch (r.status) {
    case 1:  // primal infeasible
    case 5:
      why =
          "no parameters satisfy every constraint together: a bounding ellipsoid too small for "
          "where the data put the mass, or epsilon too large for a light link";
      if (ellipsoids)
        tries += "  --ellipsoid-scale 3 (larger ellipsoids from the prior), or --no-ellipsoids\n";
      tries += "  --bodies with fewer links (drop the light or unexcited ones the report names)\n";
      break;
    case 2:  // dual infeasible
    case 6:
      why =
          "the objective is unbounded along some direction: the rows do not pin every unknown "
          "and the pull toward the URDF is too weak to";
      tries += "  --regularisation 1e4 (a stronger pull toward the URDF's values)\n";
      break;
    case 4:
    case 7:
    case 8:
    case 9:
      why = "the solver lost accuracy: the problem is badly scaled";
      tries += "  --regularisation 1e4 (a stronger pull toward the URDF's values)\n";
      tries += "  --sdp-rows wls (the full-sensing rows are better conditioned)\n";
      break;
    default:
      why = "CSDP returned status " + std::to_string(r.status);
      tries += "  --regularisation 1e4\n";
      break;
  }
  std::string text = "the SDP failed after " + std::to_string(static_cast<int>(r.seconds)) +
                     " s: " + r.message + " (CSDP status " + std::to_string(r.status) + ").\n";
  text += "what it means here: " + why + ".\n";
  if (condition > 1e6)
    text += "the rows are badly conditioned (condition " + std::to_string(condition) +
            "): a longer or more exciting recording identifies more directions.\n";
  text += "what to try:\n" + tries;
  text += "  --methods wls (least squares alone; then check the consistency column)\n";
  return text;
}

}  // namespace heft::identification

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

#include "heft/estimator/inertia.hpp"
#include "heft/identification/consistency.hpp"

extern "C" {
#include <csdp/declarations.h>
}

namespace heft::ident {

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
  return (dyn::PseudoInertia(pi) * EllipsoidMatrix(e)).trace() / pi[0];
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

}  // namespace

SdpResult SolveSdp(const NormalEquations& ne, const Problem& problem, const SdpOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const int n = problem.size();
  const int nb = problem.selection.size();
  const int ni = problem.inertial_size();
  if (!options.ellipsoids.empty() && static_cast<int>(options.ellipsoids.size()) != nb)
    throw std::invalid_argument("SolveSdp: one optional ellipsoid per chosen body");
  const Eigen::VectorXd& prior = problem.prior;
  if (!(options.margin >= 0.0 && options.margin < 1.0))
    throw std::invalid_argument("SolveSdp: margin must be in [0, 1)");
  // ε_b: the absolute floor, or κ of the prior body's smallest pseudo-inertia eigenvalue.
  std::vector<double> eps(nb, options.epsilon);
  for (int b = 0; b < nb; ++b) {
    const double prior_min = dyn::PseudoInertiaEigenvalues(prior.segment<10>(10 * b)).min;
    if (std::isfinite(prior_min)) eps[b] = std::max(eps[b], options.margin * prior_min);
  }
  // Column scaling d (ζ = d ⊙ (x − prior), for the solver's conditioning) and the reduced
  // least-squares factor. The pull toward the prior is measured in plausible sizes s (PriorScale):
  // μ Σ ((x − prior)ᵢ / sᵢ)² = μ Σ (ζᵢ / (dᵢ sᵢ))², plus kFloor Σ ζᵢ² (the columns' share, which
  // keeps the reduction positive definite where the pull is released).
  constexpr double kFloor = 1e-6;
  Eigen::VectorXd d(n);
  for (int i = 0; i < n; ++i) d[i] = ne.A(i, i) > 1e-300 ? std::sqrt(ne.A(i, i)) : 1.0;
  const Eigen::VectorXd dinv = d.cwiseInverse();
  const Eigen::VectorXd scale = PriorScale(problem);
  Eigen::VectorXd pull = scale.cwiseInverse();  // 1 / s, 0 where released
  Eigen::MatrixXd As = dinv.asDiagonal() * ne.A * dinv.asDiagonal();
  const Eigen::VectorXd bs = dinv.asDiagonal() * (ne.b - ne.A * prior);
  // A body the data move far from the prior is not held to it: a tool or a payload on the link
  // when it was recorded, or a URDF wrong by more than its plausible size. Where the solution
  // with the floor alone moves a body's mass or a first-moment component that the data identify
  // (σ below a tenth of its plausible size, as the identifiability report counts it) by more than
  // kReleaseSizes plausible sizes, that body keeps only the floor. Unidentified components do not
  // count: there the floor-only solution is where a residual no parameter explains leaks most.
  std::vector<int> released;
  {
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
        pull.segment<10>(10 * b).setZero();
        released.push_back(b);
      }
    }
  }
  As.diagonal().array() +=
      options.regularisation * dinv.cwiseProduct(pull).array().square() + kFloor;
  const Eigen::LLT<Eigen::MatrixXd> llt(As);
  if (llt.info() != Eigen::Success) throw std::runtime_error("SolveSdp: reduction failed");
  // Unknowns of the SDP: w = Rζ − r (the whitened residual of the reduced problem, ‖w‖² ≤ t) and
  // t. Then ζ = R⁻¹w + ζ₀ with ζ₀ = R⁻¹r the unconstrained (regularised) solution: the Schur
  // block has one entry per unknown and the small blocks carry the dense coupling.
  const Eigen::MatrixXd Rinv =
      llt.matrixU().solve(Eigen::MatrixXd::Identity(n, n));  // upper triangular
  const Eigen::VectorXd zeta0 = llt.solve(bs);
  const Eigen::VectorXd x0 = prior + dinv.asDiagonal() * zeta0;
  // dx/dw = D⁻¹ R⁻¹ (n × n).
  const Eigen::MatrixXd dxdw = dinv.asDiagonal() * Rinv;

  // Blocks: 1 the Schur complement (n + 1), 2..nb+1 the pseudo-inertias (4), then one diagonal
  // block with the scalar inequalities (ellipsoids, friction signs) if there are any.
  struct Scalar {
    Eigen::RowVectorXd coeff;  // on x
    double offset;             // value at x0
  };
  std::vector<Scalar> scalars;
  for (int b = 0; b < nb && !options.ellipsoids.empty(); ++b) {
    if (!options.ellipsoids[b]) continue;
    const Eigen::Matrix4d Q = EllipsoidMatrix(*options.ellipsoids[b]);
    Scalar s{Eigen::RowVectorXd::Zero(n), (dyn::PseudoInertia(x0.segment<10>(10 * b)) * Q).trace()};
    for (int j = 0; j < 10; ++j)
      s.coeff[10 * b + j] = (dyn::PseudoInertia(dyn::Vector10::Unit(j)) * Q).trace();
    scalars.push_back(s);
  }
  if (options.friction_nonnegative) {
    for (int i = ni; i < problem.offset_begin(); ++i) {
      Scalar s{Eigen::RowVectorXd::Zero(n), x0[i]};
      s.coeff[i] = 1.0;
      scalars.push_back(s);
    }
  }
  const int nscalar = static_cast<int>(scalars.size());
  const int nblocks = 1 + nb + (nscalar > 0 ? 1 : 0);
  const int dim = (n + 1) + 4 * nb + nscalar;
  const int k = n + 1;  // unknowns w and t

  struct blockmatrix C;
  C.nblocks = nblocks;
  C.blocks = Alloc<blockrec>(nblocks + 1);
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
        eps[b] * Eigen::Matrix4d::Identity() - dyn::PseudoInertia(x0.segment<10>(10 * b));
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) C.blocks[2 + b].data.mat[ijtok(i + 1, j + 1, 4)] = Cb(i, j);
  }
  std::vector<Eigen::RowVectorXd> scalar_w(nscalar);
  if (nscalar > 0) {
    C.blocks[nblocks].blockcategory = DIAG;
    C.blocks[nblocks].blocksize = nscalar;
    C.blocks[nblocks].data.vec = Alloc<double>(nscalar + 1);
    for (int s = 0; s < nscalar; ++s) {
      C.blocks[nblocks].data.vec[s + 1] = -scalars[s].offset;
      scalar_w[s] = scalars[s].coeff * dxdw;
    }
  }
  double* a = Alloc<double>(k + 1);
  a[k] = 1.0;  // minimise t

  // Constraint matrices, one per unknown; blocks listed in increasing block order.
  std::vector<std::map<int, Entries>> blocks(k + 1);
  std::array<Eigen::Matrix4d, 10> unit_j;
  for (int j = 0; j < 10; ++j) unit_j[j] = dyn::PseudoInertia(dyn::Vector10::Unit(j));
  for (int i = 0; i < n; ++i) {
    blocks[i + 1][1].Add(1, i + 2, 1.0);
    for (int b = 0; b < nb; ++b) {
      Eigen::Matrix4d Ji = Eigen::Matrix4d::Zero();
      for (int j = 0; j < 10; ++j) Ji += unit_j[j] * dxdw(10 * b + j, i);
      for (int p = 0; p < 4; ++p)
        for (int q = p; q < 4; ++q) blocks[i + 1][2 + b].Add(p + 1, q + 1, Ji(p, q));
    }
    for (int s = 0; s < nscalar; ++s) blocks[i + 1][nblocks].Add(s + 1, s + 1, scalar_w[s][i]);
  }
  blocks[k][1].Add(1, 1, 1.0);
  auto* constraints = Alloc<constraintmatrix>(k + 1);
  for (int c = 1; c <= k; ++c) {
    constraints[c].blocks = nullptr;
    for (auto it = blocks[c].rbegin(); it != blocks[c].rend(); ++it) {
      const Entries& e = it->second;
      if (e.v.empty()) continue;
      auto* sb = Alloc<sparseblock>(1);
      sb->blocknum = it->first;
      sb->blocksize = C.blocks[it->first].blocksize;
      sb->constraintnum = c;
      sb->next = constraints[c].blocks;
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
      constraints[c].blocks = sb;
    }
  }

  struct blockmatrix X, Z;
  double* y = nullptr;
  double pobj = 0.0, dobj = 0.0;
  int ret = -1;
  {
    StdoutSilencer quiet(!options.verbose);
    initsoln(dim, k, C, a, constraints, &X, &y, &Z);
    ret = easy_sdp(dim, k, C, a, constraints, 0.0, &X, &y, &Z, &pobj, &dobj);
  }
  SdpResult out;
  out.body_epsilon = eps;
  out.released_bodies = released;
  out.status = ret;
  out.ok = ret == 0 || ret == 3;
  Eigen::VectorXd w(n);
  for (int i = 0; i < n; ++i) w[i] = y[i + 1];
  out.x = x0 + dxdw * w;
  auto objective = [&](const Eigen::VectorXd& x) {
    const Eigen::VectorXd z = pull.cwiseProduct(x - prior);
    const Eigen::VectorXd zeta = d.cwiseProduct(x - prior);
    return x.dot(ne.A * x) - 2.0 * ne.b.dot(x) + ne.c + options.regularisation * z.squaredNorm() +
           kFloor * zeta.squaredNorm();
  };
  out.x_solver = out.x;
  out.objective_solver = objective(out.x);
  for (int b = 0; b < nb && out.x.allFinite(); ++b) {
    // Bodies within the solver's accuracy of J ⪰ ε_b·1 (λ_min ≈ 0.9998 ε_b) stay as solved: moving
    // them would cost the bounding ellipsoids their margin for nothing.
    if (dyn::IsPhysicallyConsistent(out.x.segment<10>(10 * b), 0.5 * eps[b])) continue;
    const ProjectedBody p = ProjectToConsistent(out.x.segment<10>(10 * b), eps[b]);
    if (!p.changed) continue;
    out.x.segment<10>(10 * b) = p.pi;
    ++out.projected_bodies;
    out.projected_mass_or_com += p.kept_mass_and_com ? 0 : 1;
  }
  out.objective = objective(out.x);
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
  out.message = ret >= 0 && ret <= 9 ? kStatus[ret] : "CSDP failure " + std::to_string(ret);
  free_prob(dim, k, C, a, constraints, X, y, Z);
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

}  // namespace heft::ident

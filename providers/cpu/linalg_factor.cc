// svd, geqrf, householder_product and tridiagonal_solve (ops/op_plans.h) by
// LAPACK's gesdd, geqrf, orgqr/ungqr and gtsv on f32, f64, c64 and c128.
// As in linalg_eigen.cc, each matrix is copied column-major into its part's
// scratch, so LAPACK sees the logical matrix as JAX's calls do, and copied
// back; vectors LAPACK writes unpadded go to the results directly.
#include "lapack_routines.h"
#include "linalg.h"
#include "ops/op_plans.h"

namespace brt::cpu {
namespace {

class SvdKernel final : public LapackBatchKernel {
 public:
  void Prepare(const OpInfo& op) override {
    p_ = PlanSvd(op);
    RequireLapackSize(op, p_.m, p_.n);
    RequireLapackSize(op, std::max(p_.m, p_.n), std::max(p_.m, p_.n));
    u_cols_ = p_.full_matrices ? p_.m : p_.k;
    vt_rows_ = p_.full_matrices ? p_.n : p_.k;
    // The complex routine's real workspace (LAPACK 3.6's bound without
    // vectors).
    const int64_t most = std::max(p_.m, p_.n), k = p_.k;
    lrwork_ = p_.compute_uv ? std::max(5 * k * k + 5 * k, 2 * most * k + 2 * k * k + k) : 7 * k;
    DispatchLapack(op, "gesdd", [&](auto v) {
      using T = decltype(v);
      solve_ = &SolveAs<T>;
      T work = 0;
      RealOf<T> real = 0;
      int iwork = 0, info = 0;
      if (p_.k > 0)
        lapack::Gesdd(Job(), static_cast<int>(p_.m), static_cast<int>(p_.n), &work, &real, &work,
                      Ldu(), &work, Ldvt(), &work, -1, &real, &iwork, &info);
      lwork_ = QueriedSize(op, "gesdd", work, info);
      Carver sizes(nullptr);
      Carve<T>(sizes);
      SetBatch(op, p_.batch, p_.m * p_.n * k, sizes.used());
    });
  }

 private:
  template <typename T>
  struct Scratch {
    T *a, *u, *vt, *work;
    RealOf<T>* rwork;
    int* iwork;
  };
  template <typename T>
  Scratch<T> Carve(Carver& c) const {
    const bool uv = p_.compute_uv;
    return {c.Take<T>(p_.m * p_.n),
            c.Take<T>(uv ? p_.m * u_cols_ : 0),
            c.Take<T>(uv ? vt_rows_ * p_.n : 0),
            c.Take<T>(lwork_),
            c.Take<RealOf<T>>(kIsComplex<T> ? lrwork_ : 0),
            c.Take<int>(8 * p_.k)};
  }
  char Job() const { return !p_.compute_uv ? 'N' : p_.full_matrices ? 'A' : 'S'; }
  int Ldu() const { return static_cast<int>(std::max<int64_t>(1, p_.m)); }
  int Ldvt() const { return static_cast<int>(std::max<int64_t>(1, vt_rows_)); }

  void Solve(void* const* b, int64_t i, std::byte* scratch) const override {
    solve_(*this, b, i, scratch);
  }
  // Results (s, u, vt, info).
  template <typename T>
  static void SolveAs(const SvdKernel& k, void* const* b, int64_t i, std::byte* scratch) {
    const SvdPlan& p = k.p_;
    Carver carver(scratch);
    const Scratch<T> s = k.Carve<T>(carver);
    ToColumnMajor(static_cast<const T*>(b[0]) + i * p.m * p.n, p.m, p.n, s.a);
    int info = 0;
    if (p.k > 0)
      lapack::Gesdd(k.Job(), static_cast<int>(p.m), static_cast<int>(p.n), s.a,
                    static_cast<RealOf<T>*>(b[1]) + i * p.k, s.u, k.Ldu(), s.vt, k.Ldvt(), s.work,
                    k.lwork_, s.rwork, s.iwork, &info);
    static_cast<int32_t*>(b[4])[i] = info;
    if (!p.compute_uv) return;
    T* u = static_cast<T*>(b[2]) + i * p.m * k.u_cols_;
    T* vt = static_cast<T*>(b[3]) + i * k.vt_rows_ * p.n;
    if (p.k == 0) {  // LAPACK returns at once: the full u and vt are identities
      SetIdentity(u, p.m, k.u_cols_);
      SetIdentity(vt, k.vt_rows_, p.n);
      return;
    }
    FromColumnMajor(s.u, p.m, k.u_cols_, u);
    FromColumnMajor(s.vt, k.vt_rows_, p.n, vt);
  }

  template <typename T>
  static void SetIdentity(T* a, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) a[r * cols + c] = r == c ? T(1) : T(0);
  }

  SvdPlan p_;
  int64_t u_cols_ = 0, vt_rows_ = 0, lrwork_ = 0;
  int lwork_ = 1;
  void (*solve_)(const SvdKernel&, void* const*, int64_t, std::byte*) = nullptr;
};

// geqrf: (r, taus) of a; householder_product: q of (a, taus). Both work on
// a's column-major copy.
class QrKernel final : public LapackBatchKernel {
 public:
  explicit QrKernel(bool product) : product_(product) {}

  void Prepare(const OpInfo& op) override {
    p_ = product_ ? PlanHouseholderProduct(op) : PlanGeqrf(op);
    RequireLapackSize(op, p_.m, p_.n);
    const std::string routine = product_ ? "orgqr/ungqr" : "geqrf";
    DispatchLapack(op, routine, [&](auto v) {
      using T = decltype(v);
      solve_ = &SolveAs<T>;
      T work = 0;
      int info = 0;
      const int m = static_cast<int>(p_.m), n = static_cast<int>(p_.n);
      if (product_ && n > 0)
        lapack::Orgqr(m, n, static_cast<int>(p_.k), &work, &work, &work, -1, &info);
      else if (!product_ && p_.k > 0)
        lapack::Geqrf(m, n, &work, &work, &work, -1, &info);
      lwork_ = QueriedSize(op, routine, work, info);
      Carver sizes(nullptr);
      Carve<T>(sizes);
      SetBatch(op, p_.batch, 2 * p_.m * p_.n * p_.k, sizes.used());
    });
  }

 private:
  template <typename T>
  std::pair<T*, T*> Carve(Carver& c) const {
    return {c.Take<T>(p_.m * p_.n), c.Take<T>(lwork_)};
  }

  void Solve(void* const* b, int64_t i, std::byte* scratch) const override {
    solve_(*this, b, i, scratch);
  }
  template <typename T>
  static void SolveAs(const QrKernel& k, void* const* b, int64_t i, std::byte* scratch) {
    const QrPlan& p = k.p_;
    const int m = static_cast<int>(p.m), n = static_cast<int>(p.n);
    Carver carver(scratch);
    const auto [a, work] = k.Carve<T>(carver);
    ToColumnMajor(static_cast<const T*>(b[0]) + i * p.m * p.n, p.m, p.n, a);
    int info = 0;
    if (k.product_) {
      if (n > 0)
        lapack::Orgqr(m, n, static_cast<int>(p.k), a, static_cast<const T*>(b[1]) + i * p.k, work,
                      k.lwork_, &info);
      FromColumnMajor(a, p.m, p.n, static_cast<T*>(b[2]) + i * p.m * p.n);
    } else {
      if (p.k > 0) lapack::Geqrf(m, n, a, static_cast<T*>(b[2]) + i * p.k, work, k.lwork_, &info);
      FromColumnMajor(a, p.m, p.n, static_cast<T*>(b[1]) + i * p.m * p.n);
    }
  }

  bool product_;
  QrPlan p_;
  int lwork_ = 1;
  void (*solve_)(const QrKernel&, void* const*, int64_t, std::byte*) = nullptr;
};

template <bool kProduct>
std::unique_ptr<CpuKernel> MakeQr() {
  return std::make_unique<QrKernel>(kProduct);
}

// gtsv overwrites the three diagonals and b: copies of them (b's
// column-major) are the scratch.
class TridiagonalSolveKernel final : public LapackBatchKernel {
 public:
  void Prepare(const OpInfo& op) override {
    p_ = PlanTridiagonalSolve(op);
    RequireLapackSize(op, p_.m, p_.nrhs);
    DispatchLapack(op, "gtsv", [&](auto v) {
      using T = decltype(v);
      solve_ = &SolveAs<T>;
      SetBatch(op, p_.batch, 8 * p_.m * p_.nrhs, op.Mul(op.Add(3, p_.nrhs), p_.m) * sizeof(T));
    });
  }

 private:
  void Solve(void* const* b, int64_t i, std::byte* scratch) const override {
    solve_(*this, b, i, scratch);
  }
  // Operands (dl, d, du, b), results (x, info). dl[0] and du[m - 1] are
  // outside the matrix.
  template <typename T>
  static void SolveAs(const TridiagonalSolveKernel& k, void* const* b, int64_t i,
                      std::byte* scratch) {
    const int64_t m = k.p_.m, nrhs = k.p_.nrhs;
    T* diagonals = reinterpret_cast<T*>(scratch);
    for (int d = 0; d < 3; ++d)
      std::copy_n(static_cast<const T*>(b[d]) + i * m, m, diagonals + d * m);
    T* x = diagonals + 3 * m;
    ToColumnMajor(static_cast<const T*>(b[3]) + i * m * nrhs, m, nrhs, x);
    int info = 0;
    if (m > 0 && nrhs > 0)
      lapack::Gtsv(static_cast<int>(m), static_cast<int>(nrhs), diagonals + 1, diagonals + m,
                   diagonals + 2 * m, x, &info);
    FromColumnMajor(x, m, nrhs, static_cast<T*>(b[4]) + i * m * nrhs);
    static_cast<int32_t*>(b[5])[i] = info;
  }

  TridiagonalSolvePlan p_;
  void (*solve_)(const TridiagonalSolveKernel&, void* const*, int64_t, std::byte*) = nullptr;
};

}  // namespace

void RegisterLinalgFactor(std::vector<KernelDef>& defs) {
  defs.push_back({"svd", kLapackTypes, &Make<SvdKernel>, /*key_is_operand=*/true});
  defs.push_back({"geqrf", kLapackTypes, &MakeQr<false>});
  defs.push_back({"householder_product", kLapackTypes, &MakeQr<true>});
  defs.push_back({"tridiagonal_solve", kLapackTypes, &Make<TridiagonalSolveKernel>});
}

}  // namespace brt::cpu

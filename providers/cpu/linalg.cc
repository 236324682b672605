// cholesky, triangular_solve and lu (ops/op_plans.h) by LAPACK's potrf,
// BLAS's trsm and LAPACK's getrf (s, d, c and z: f32, f64, c64, c128), one
// matrix of the batch at a time, the batch shared out over the Session's
// threads; the other decompositions are linalg_eigen.cc's and
// linalg_factor.cc's. f16 and bf16 are computed in an f32 copy, each
// request's own. LAPACK is column-major: it sees brt's row-major matrix
// transposed, so a lower triangle here is an upper one there, and a left
// solve a right one; lu, whose pivoting does not commute with the
// transpose, factors a column-major copy.
#include <complex>

#include "linalg.h"
#include "ops/op_plans.h"

// The Fortran symbols (reference LAPACK and BLAS, or any that replaces them),
// with gfortran's hidden lengths of the character arguments last.
extern "C" {
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void strsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
            const int* n, const float* alpha, const float* a, const int* lda, float* b,
            const int* ldb, size_t, size_t, size_t, size_t);
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
            const int* n, const double* alpha, const double* a, const int* lda, double* b,
            const int* ldb, size_t, size_t, size_t, size_t);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
// Complex: std::complex has the layout of Fortran's COMPLEX (real part first).
void cpotrf_(const char* uplo, const int* n, std::complex<float>* a, const int* lda, int* info,
             size_t);
void zpotrf_(const char* uplo, const int* n, std::complex<double>* a, const int* lda, int* info,
             size_t);
void ctrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
            const int* n, const std::complex<float>* alpha, const std::complex<float>* a,
            const int* lda, std::complex<float>* b, const int* ldb, size_t, size_t, size_t, size_t);
void ztrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
            const int* n, const std::complex<double>* alpha, const std::complex<double>* a,
            const int* lda, std::complex<double>* b, const int* ldb, size_t, size_t, size_t,
            size_t);
void cgetrf_(const int* m, const int* n, std::complex<float>* a, const int* lda, int* ipiv,
             int* info);
void zgetrf_(const int* m, const int* n, std::complex<double>* a, const int* lda, int* ipiv,
             int* info);
}

namespace brt::cpu {
namespace {

void Potrf(char uplo, int n, float* a, int* info) { spotrf_(&uplo, &n, a, &n, info, 1); }
void Potrf(char uplo, int n, double* a, int* info) { dpotrf_(&uplo, &n, a, &n, info, 1); }
void Getrf(int m, int n, float* a, int* ipiv, int* info) { sgetrf_(&m, &n, a, &m, ipiv, info); }
void Getrf(int m, int n, double* a, int* ipiv, int* info) { dgetrf_(&m, &n, a, &m, ipiv, info); }
void Potrf(char uplo, int n, std::complex<float>* a, int* info) {
  cpotrf_(&uplo, &n, a, &n, info, 1);
}
void Potrf(char uplo, int n, std::complex<double>* a, int* info) {
  zpotrf_(&uplo, &n, a, &n, info, 1);
}
void Getrf(int m, int n, std::complex<float>* a, int* ipiv, int* info) {
  cgetrf_(&m, &n, a, &m, ipiv, info);
}
void Getrf(int m, int n, std::complex<double>* a, int* ipiv, int* info) {
  zgetrf_(&m, &n, a, &m, ipiv, info);
}
template <typename C>
void Trsm(char side, char uplo, char trans, char diag, int m, int n, const C* a, int lda, C* b) {
  const C one = 1;
  if constexpr (std::is_same_v<C, float>)
    strsm_(&side, &uplo, &trans, &diag, &m, &n, &one, a, &lda, b, &m, 1, 1, 1, 1);
  else if constexpr (std::is_same_v<C, double>)
    dtrsm_(&side, &uplo, &trans, &diag, &m, &n, &one, a, &lda, b, &m, 1, 1, 1, 1);
  else if constexpr (std::is_same_v<C, std::complex<float>>)
    ctrsm_(&side, &uplo, &trans, &diag, &m, &n, &one, a, &lda, b, &m, 1, 1, 1, 1);
  else
    ztrsm_(&side, &uplo, &trans, &diag, &m, &n, &one, a, &lda, b, &m, 1, 1, 1, 1);
}

// The type LAPACK computes T in: f32 for the 16-bit floats, else T.
template <typename T>
using Lapack = std::conditional_t<kIs16BitFloat<T>, float, T>;
// The types LAPACK runs (the 16-bit floats through an f32 copy).
template <typename T>
constexpr bool kLapackType = std::is_floating_point_v<T> || kIs16BitFloat<T> || kIsComplex<T>;

// `count` elements of `from` as those of `to`: 16-bit floats to and from
// their f32 copy, or a copy of the same type (none where the op runs in
// place).
template <typename From, typename To>
void CopyAs(const From* from, To* to, int64_t count) {  // 16-bit floats only
  for (int64_t i = 0; i < count; ++i) to[i] = static_cast<To>(static_cast<float>(from[i]));
}
template <typename T>
void CopyAs(const T* from, T* to, int64_t count) {
  if (from != to) std::memcpy(to, from, count * sizeof(T));
}

class CholeskyKernel final : public LinalgKernel {
 public:
  void Prepare(const OpInfo& op) override {
    p_ = PlanCholesky(op);
    RequireLapackSize(op, p_.n, p_.n);
    DispatchTypeOrComplex(op.in[0].dtype, [&](auto v) {
      using T = decltype(v);
      if constexpr (kLapackType<T>) {
        run_ = &RunAs<T>;
        if (kIs16BitFloat<T>) scratch_bytes_ = op.Mul(p_.batch, p_.n * p_.n) * sizeof(float);
      } else {
        op.Require(false, std::string("no kernel for ") + DTypeName(op.in[0].dtype));
      }
    });
  }

 private:
  void Compute(void* const* b, void* scratch) const override { run_(p_, b, scratch); }

  template <typename T>
  static void RunAs(const CholeskyPlan& p, void* const* b, void* scratch) {
    using C = Lapack<T>;
    const int64_t size = p.n * p.n;
    const T* in = static_cast<const T*>(b[0]);
    T* out = static_cast<T*>(b[1]);
    ParallelFor(p.batch, Grain(size * p.n / 3), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        C* a;
        if constexpr (std::is_same_v<T, C>)
          a = out + i * size;
        else
          a = static_cast<float*>(scratch) + i * size;
        CopyAs(in + i * size, a, size);
        Factor(p, a);
        CopyAs(a, out + i * size, size);
      }
    });
  }

  // The factor in the plan's triangle, zeros in the other; NaN in the
  // factor's triangle where the matrix is not positive definite (as XLA).
  template <typename C>
  static void Factor(const CholeskyPlan& p, C* a) {
    const int n = static_cast<int>(p.n);
    int info = 0;
    if (n > 0) Potrf(p.lower ? 'U' : 'L', n, a, &info);
    const C nan = NaN<C>();
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) {
        C& x = a[static_cast<int64_t>(r) * n + c];
        if (p.lower ? c > r : c < r)
          x = 0;
        else if (info != 0)
          x = nan;
      }
  }

  CholeskyPlan p_;
  void (*run_)(const CholeskyPlan&, void* const*, void*) = nullptr;
};

class TriangularSolveKernel final : public LinalgKernel {
 public:
  void Prepare(const OpInfo& op) override {
    p_ = PlanTriangularSolve(op);
    RequireLapackSize(op, p_.k, p_.k);
    RequireLapackSize(op, p_.m, p_.n);
    DispatchTypeOrComplex(op.in[0].dtype, [&](auto v) {
      using T = decltype(v);
      if constexpr (kLapackType<T>) {
        run_ = &RunAs<T>;
        if (kIs16BitFloat<T>)
          scratch_bytes_ = op.Mul(p_.batch, op.Add(p_.k * p_.k, p_.m * p_.n)) * sizeof(float);
      } else {
        op.Require(false, std::string("no kernel for ") + DTypeName(op.in[0].dtype));
      }
    });
  }

 private:
  void Compute(void* const* b, void* scratch) const override { run_(p_, b, scratch); }

  template <typename T>
  static void RunAs(const TriangularSolvePlan& p, void* const* b, void* scratch) {
    using C = Lapack<T>;
    const int64_t a_size = p.k * p.k, b_size = p.m * p.n;
    const T* a_in = static_cast<const T*>(b[0]);
    const T* b_in = static_cast<const T*>(b[1]);
    T* out = static_cast<T*>(b[2]);
    ParallelFor(p.batch, Grain(p.k * b_size), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const C* a;
        C* x;
        if constexpr (std::is_same_v<T, C>) {
          a = a_in + i * a_size;
          x = out + i * b_size;
        } else {
          C* copy = static_cast<float*>(scratch) + i * (a_size + b_size);
          CopyAs(a_in + i * a_size, copy, a_size);
          a = copy;
          x = copy + a_size;
        }
        CopyAs(b_in + i * b_size, x, b_size);
        // Column-major, x is n x m: left_side's op(a) x = b is x^T op(a)^T = b^T.
        if (p.m > 0 && p.n > 0)
          Trsm(p.left_side ? 'R' : 'L', p.lower ? 'U' : 'L',
               p.conjugate && kIsComplex<C> ? 'C' : (p.transpose ? 'T' : 'N'),
               p.unit_diagonal ? 'U' : 'N', static_cast<int>(p.n), static_cast<int>(p.m), a,
               static_cast<int>(p.k), x);
        CopyAs(x, out + i * b_size, b_size);
      }
    });
  }

  TriangularSolvePlan p_;
  void (*run_)(const TriangularSolvePlan&, void* const*, void*) = nullptr;
};

class LuKernel final : public LinalgKernel {
 public:
  void Prepare(const OpInfo& op) override {
    p_ = PlanLu(op);
    RequireLapackSize(op, p_.m, p_.n);
    DispatchTypeOrComplex(op.in[0].dtype, [&](auto v) {
      using T = decltype(v);
      if constexpr (kLapackType<T>) {
        run_ = &RunAs<T>;
        scratch_bytes_ = op.Mul(p_.batch, p_.m * p_.n) * sizeof(Lapack<T>);
      } else {
        op.Require(false, std::string("no kernel for ") + DTypeName(op.in[0].dtype));
      }
    });
  }

 private:
  void Compute(void* const* b, void* scratch) const override { run_(p_, b, scratch); }

  template <typename T>
  static void RunAs(const LuPlan& p, void* const* b, void* scratch) {
    using C = Lapack<T>;
    const int64_t size = p.m * p.n, k = std::min(p.m, p.n);
    const T* in = static_cast<const T*>(b[0]);
    T* out = static_cast<T*>(b[1]);
    int32_t* pivots = static_cast<int32_t*>(b[2]);
    ParallelFor(p.batch, Grain(size * k), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        C* a = static_cast<C*>(scratch) + i * size;  // column-major, lda m
        ToColumnMajor(in + i * size, p.m, p.n, a);
        // info > 0 (an exact zero pivot) still completes the factorization.
        int info = 0;
        if (k > 0) Getrf(static_cast<int>(p.m), static_cast<int>(p.n), a, pivots + i * k, &info);
        FromColumnMajor(a, p.m, p.n, out + i * size);
      }
    });
  }

  LuPlan p_;
  void (*run_)(const LuPlan&, void* const*, void*) = nullptr;
};

}  // namespace

void RegisterLinalg(std::vector<KernelDef>& defs) {
  defs.push_back({"cholesky", WithComplex(kFloatTypes), &Make<CholeskyKernel>});
  defs.push_back({"triangular_solve", WithComplex(kFloatTypes), &Make<TriangularSolveKernel>});
  defs.push_back({"lu", WithComplex(kFloatTypes), &Make<LuKernel>});
  RegisterLinalgEigen(defs);
  RegisterLinalgFactor(defs);
}

}  // namespace brt::cpu

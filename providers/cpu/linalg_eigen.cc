// eigh, eig, hessenberg and tridiagonal (ops/op_plans.h) by LAPACK's
// syevd/heevd, geev, gehrd and sytrd/hetrd on f32, f64, c64 and c128. Each
// matrix is copied column-major (LAPACK then sees the logical matrix, as
// JAX's calls do, so the same routine gives JAX's answer) into its part's
// scratch, factored there, and copied back; vectors LAPACK writes unpadded
// go to the results directly.
#include "lapack_routines.h"
#include "linalg.h"
#include "ops/op_plans.h"

namespace brt::cpu {
namespace {

class EighKernel final : public LapackBatchKernel {
 public:
  void Prepare(const OpInfo& op) override {
    p_ = PlanEigh(op);
    RequireLapackSize(op, p_.n, p_.n);
    DispatchLapack(op, "syevd/heevd", [&](auto v) {
      using T = decltype(v);
      solve_ = &SolveAs<T>;
      T work = 0;
      RealOf<T> a_dummy = 0, rwork = 0;
      int iwork = 0, info = 0;
      if (p_.n > 0)
        lapack::Syevd('V', Uplo(), static_cast<int>(p_.n), &work, &a_dummy, &work, -1, &rwork, -1,
                      &iwork, -1, &info);
      lwork_ = QueriedSize(op, "syevd/heevd", work, info);
      lrwork_ = QueriedSize(op, "heevd", rwork, info);
      liwork_ = QueriedSize(op, "syevd/heevd", iwork, info);
      Carver sizes(nullptr);
      Carve<T>(sizes);
      SetBatch(op, p_.batch, p_.n * p_.n * p_.n, sizes.used());
    });
  }

 private:
  template <typename T>
  struct Scratch {
    T *a, *work;
    RealOf<T>* rwork;
    int* iwork;
  };
  template <typename T>
  Scratch<T> Carve(Carver& c) const {
    return {c.Take<T>(p_.n * p_.n), c.Take<T>(lwork_), c.Take<RealOf<T>>(lrwork_),
            c.Take<int>(liwork_)};
  }
  char Uplo() const { return p_.lower ? 'L' : 'U'; }

  void Solve(void* const* b, int64_t i, std::byte* scratch) const override {
    solve_(*this, b, i, scratch);
  }
  template <typename T>
  static void SolveAs(const EighKernel& k, void* const* b, int64_t i, std::byte* scratch) {
    Carver carver(scratch);
    const Scratch<T> s = k.Carve<T>(carver);
    const int64_t n = k.p_.n;
    ToColumnMajor(static_cast<const T*>(b[0]) + i * n * n, n, n, s.a);
    int info = 0;
    if (n > 0)
      lapack::Syevd('V', k.Uplo(), static_cast<int>(n), s.a, static_cast<RealOf<T>*>(b[2]) + i * n,
                    s.work, k.lwork_, s.rwork, k.lrwork_, s.iwork, k.liwork_, &info);
    FromColumnMajor(s.a, n, n, static_cast<T*>(b[1]) + i * n * n);
    static_cast<int32_t*>(b[3])[i] = info;
  }

  SymmetricPlan p_;
  int lwork_ = 1, lrwork_ = 1, liwork_ = 1;
  void (*solve_)(const EighKernel&, void* const*, int64_t, std::byte*) = nullptr;
};

class EigKernel final : public LapackBatchKernel {
 public:
  void Prepare(const OpInfo& op) override {
    p_ = PlanEig(op);
    RequireLapackSize(op, p_.n, p_.n);
    DispatchLapack(op, "geev", [&](auto v) {
      using T = decltype(v);
      solve_ = &SolveAs<T>;
      T work = 0;
      RealOf<T> rwork = 0;
      int info = 0;
      const int n = static_cast<int>(p_.n);
      if (n > 0) {
        if constexpr (kIsComplex<T>)
          lapack::Geev(Job(p_.left), Job(p_.right), n, &work, &work, &work, n, &work, n, &work, -1,
                       &rwork, &info);
        else
          lapack::Geev(Job(p_.left), Job(p_.right), n, &work, &work, &work, &work, n, &work, n,
                       &work, -1, &info);
      }
      lwork_ = QueriedSize(op, "geev", work, info);
      Carver sizes(nullptr);
      Carve<T>(sizes);
      SetBatch(op, p_.batch, 10 * p_.n * p_.n * p_.n, sizes.used());
    });
  }

 private:
  // The real routine gives the eigenvalues' parts and the eigenvectors packed
  // in real columns (unpacked into the results); the complex one writes the
  // eigenvalues to the result and needs 2n reals of workspace.
  template <typename T>
  struct Scratch {
    T *a, *wr, *wi, *vl, *vr, *work;
    RealOf<T>* rwork;
  };
  template <typename T>
  Scratch<T> Carve(Carver& c) const {
    const int64_t n = p_.n, real = kIsComplex<T> ? 0 : n;
    return {c.Take<T>(n * n),
            c.Take<T>(real),
            c.Take<T>(real),
            c.Take<T>(p_.left ? n * n : 0),
            c.Take<T>(p_.right ? n * n : 0),
            c.Take<T>(lwork_),
            c.Take<RealOf<T>>(kIsComplex<T> ? 2 * n : 0)};
  }
  static char Job(bool compute) { return compute ? 'V' : 'N'; }

  void Solve(void* const* b, int64_t i, std::byte* scratch) const override {
    solve_(*this, b, i, scratch);
  }
  template <typename T>
  static void SolveAs(const EigKernel& k, void* const* b, int64_t i, std::byte* scratch) {
    using Z = std::complex<RealOf<T>>;
    Carver carver(scratch);
    const Scratch<T> s = k.Carve<T>(carver);
    const int64_t n = k.p_.n;
    const int ni = static_cast<int>(n), ld = std::max(1, ni);
    const T* in = static_cast<const T*>(b[0]) + i * n * n;
    Z* w = static_cast<Z*>(b[1]) + i * n;
    Z* vl = static_cast<Z*>(b[2]) + (k.p_.left ? i * n * n : 0);
    Z* vr = static_cast<Z*>(b[3]) + (k.p_.right ? i * n * n : 0);
    // geev may not return on a non-finite matrix: JAX's kernel gives info
    // -4 without calling it.
    const auto finite = [](T x) {
      return std::isfinite(std::real(x)) && std::isfinite(std::imag(x));
    };
    int info = std::all_of(in, in + n * n, finite) ? 0 : -4;
    ToColumnMajor(in, n, n, s.a);
    if (n > 0 && info == 0) {
      if constexpr (kIsComplex<T>) {
        lapack::Geev(Job(k.p_.left), Job(k.p_.right), ni, s.a, w, s.vl, ld, s.vr, ld, s.work,
                     k.lwork_, s.rwork, &info);
      } else {
        lapack::Geev(Job(k.p_.left), Job(k.p_.right), ni, s.a, s.wr, s.wi, s.vl, ld, s.vr, ld,
                     s.work, k.lwork_, &info);
        for (int64_t j = 0; j < n; ++j) w[j] = Z(s.wr[j], s.wi[j]);
      }
    }
    static_cast<int32_t*>(b[4])[i] = info;
    if (info != 0) {
      std::fill_n(w, n, NaN<Z>());
      if (k.p_.left) std::fill_n(vl, n * n, NaN<Z>());
      if (k.p_.right) std::fill_n(vr, n * n, NaN<Z>());
      return;
    }
    if (k.p_.left) Unpack(s.vl, s.wi, n, vl);
    if (k.p_.right) Unpack(s.vr, s.wi, n, vr);
  }

  // Column-major eigenvectors `v` as the row-major complex result. geev packs
  // a real matrix's complex pair j, j + 1 (wi[j] > 0) in columns j (real
  // part) and j + 1 (imaginary part): the pair's vectors are conjugates.
  template <typename T, typename Z>
  static void Unpack(const T* v, const T* wi, int64_t n, Z* out) {
    if constexpr (kIsComplex<T>) {
      FromColumnMajor(v, n, n, out);
    } else {
      for (int64_t j = 0; j < n; ++j) {
        const bool pair = wi[j] != 0 && j + 1 < n;
        for (int64_t r = 0; r < n; ++r) {
          const T re = v[j * n + r], im = pair ? v[(j + 1) * n + r] : 0;
          out[r * n + j] = Z(re, im);
          if (pair) out[r * n + j + 1] = Z(re, -im);
        }
        j += pair;
      }
    }
  }

  EigPlan p_;
  int lwork_ = 1;
  void (*solve_)(const EigKernel&, void* const*, int64_t, std::byte*) = nullptr;
};

// hessenberg and tridiagonal: the matrix reduced in place, the reflectors'
// scale factors (and tridiagonal's diagonals) written to the results.
class ReductionKernel final : public LapackBatchKernel {
 public:
  explicit ReductionKernel(bool tridiagonal) : tridiagonal_(tridiagonal) {}

  void Prepare(const OpInfo& op) override {
    if (tridiagonal_) {
      const SymmetricPlan p = PlanTridiagonal(op);
      batch_ = p.batch, n_ = p.n, uplo_ = p.lower ? 'L' : 'U';
    } else {
      const HessenbergPlan p = PlanHessenberg(op);
      batch_ = p.batch, n_ = p.n;
    }
    RequireLapackSize(op, n_, n_);
    const std::string routine = tridiagonal_ ? "sytrd/hetrd" : "gehrd";
    DispatchLapack(op, routine, [&](auto v) {
      using T = decltype(v);
      solve_ = &SolveAs<T>;
      T work = 0;
      RealOf<T> real = 0;
      int info = 0;
      const int n = static_cast<int>(n_);
      if (n > 0 && tridiagonal_)
        lapack::Sytrd(uplo_, n, &work, &real, &real, &work, &work, -1, &info);
      else if (n > 0)
        lapack::Gehrd(n, &work, &work, &work, -1, &info);
      lwork_ = QueriedSize(op, routine, work, info);
      Carver sizes(nullptr);
      Carve<T>(sizes);
      SetBatch(op, batch_, n_ * n_ * n_, sizes.used());
    });
  }

 private:
  template <typename T>
  std::pair<T*, T*> Carve(Carver& c) const {
    return {c.Take<T>(n_ * n_), c.Take<T>(lwork_)};
  }

  void Solve(void* const* b, int64_t i, std::byte* scratch) const override {
    solve_(*this, b, i, scratch);
  }
  // Results: hessenberg's (a, taus), tridiagonal's (a, d, e, taus).
  template <typename T>
  static void SolveAs(const ReductionKernel& k, void* const* b, int64_t i, std::byte* scratch) {
    const int64_t n = k.n_, off = std::max<int64_t>(n - 1, 0);
    Carver carver(scratch);
    const auto [a, work] = k.Carve<T>(carver);
    ToColumnMajor(static_cast<const T*>(b[0]) + i * n * n, n, n, a);
    int info = 0;
    if (n > 0 && k.tridiagonal_)
      lapack::Sytrd(k.uplo_, static_cast<int>(n), a, static_cast<RealOf<T>*>(b[2]) + i * n,
                    static_cast<RealOf<T>*>(b[3]) + i * off, static_cast<T*>(b[4]) + i * off, work,
                    k.lwork_, &info);
    else if (n > 0)
      lapack::Gehrd(static_cast<int>(n), a, static_cast<T*>(b[2]) + i * off, work, k.lwork_, &info);
    FromColumnMajor(a, n, n, static_cast<T*>(b[1]) + i * n * n);
  }

  bool tridiagonal_;
  int64_t batch_ = 0, n_ = 0;
  char uplo_ = 'L';
  int lwork_ = 1;
  void (*solve_)(const ReductionKernel&, void* const*, int64_t, std::byte*) = nullptr;
};

template <bool kTridiagonal>
std::unique_ptr<CpuKernel> MakeReduction() {
  return std::make_unique<ReductionKernel>(kTridiagonal);
}

}  // namespace

void RegisterLinalgEigen(std::vector<KernelDef>& defs) {
  defs.push_back({"eigh", kLapackTypes, &Make<EighKernel>});
  defs.push_back({"eig", kLapackTypes, &Make<EigKernel>, /*key_is_operand=*/true});
  defs.push_back({"hessenberg", kLapackTypes, &MakeReduction<false>});
  defs.push_back({"tridiagonal", kLapackTypes, &MakeReduction<true>});
}

}  // namespace brt::cpu

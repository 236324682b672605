// The pieces the CPU provider's linear algebra kernels share (linalg.cc,
// linalg_eigen.cc, linalg_factor.cc): per-request scratch, batches shared out
// over the Session's threads, LAPACK's column-major copies and its types.
#pragma once

#include <oneapi/tbb/info.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <limits>
#include <memory>
#include <string>

#include "kernel.h"
#include "parallel.h"

namespace brt::cpu {

// The real type of T: T itself, or a complex type's parts.
template <typename T>
struct RealOfT {
  using type = T;
};
template <typename R>
struct RealOfT<std::complex<R>> {
  using type = R;
};
template <typename T>
using RealOf = typename RealOfT<T>::type;

template <typename C>
C NaN() {
  const RealOf<C> part = std::numeric_limits<RealOf<C>>::quiet_NaN();
  if constexpr (kIsComplex<C>)
    return C(part, part);
  else
    return part;
}

// Batch entries per task: enough for ~2^16 multiply-adds of `work` each.
inline int64_t Grain(int64_t work) {
  return std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, work));
}

// LAPACK's indices are 32-bit: every matrix must be addressable by them.
inline void RequireLapackSize(const OpInfo& op, int64_t rows, int64_t cols) {
  op.Require(op.Mul(rows, cols) <= std::numeric_limits<int>::max(),
             "a " + std::to_string(rows) + "x" + std::to_string(cols) +
                 " matrix is beyond LAPACK's 32-bit indices");
}

// A rows x cols row-major matrix as a column-major one (leading dimension
// rows: what LAPACK sees as the same matrix), and back.
template <typename From, typename To>
void ToColumnMajor(const From* from, int64_t rows, int64_t cols, To* to) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) to[c * rows + r] = static_cast<To>(from[r * cols + c]);
}
template <typename From, typename To>
void FromColumnMajor(const From* from, int64_t rows, int64_t cols, To* to) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) to[r * cols + c] = static_cast<To>(from[c * rows + r]);
}

// A kernel with scratch (the 16-bit forms' f32 copy, LAPACK's column-major
// copies and workspace): a request's instance owns it; a kernel without runs
// shared.
class LinalgKernel : public CpuKernel {
 public:
  void Run(void* const* b) override { Compute(b, nullptr); }
  std::unique_ptr<Runnable> CreateInstance() const override {
    class Instance final : public Runnable {
     public:
      Instance(const LinalgKernel& k, size_t bytes) : k_(k), scratch_(new std::byte[bytes]) {}
      void Run(void* const* b) override { k_.Compute(b, scratch_.get()); }

     private:
      const LinalgKernel& k_;
      std::unique_ptr<std::byte[]> scratch_;
    };
    if (scratch_bytes_ == 0) return nullptr;
    return std::make_unique<Instance>(*this, scratch_bytes_);
  }

 protected:
  virtual void Compute(void* const* b, void* scratch) const = 0;
  size_t scratch_bytes_ = 0;
};

// Typed arrays one after another in a part's scratch: Prepare carves from
// null to count the bytes, Solve the same arrays from the part's scratch.
class Carver {
 public:
  explicit Carver(std::byte* base) : base_(base) {}
  template <typename T>
  T* Take(int64_t count) {
    T* at = base_ ? reinterpret_cast<T*>(base_ + used_) : nullptr;
    used_ += (static_cast<size_t>(count) * sizeof(T) + 63) / 64 * 64;
    return at;
  }
  size_t used() const { return used_; }

 private:
  std::byte* base_;
  size_t used_ = 0;
};

// A LAPACK routine on each matrix of a batch. The batch is cut into parts
// run in parallel, each with a scratch of its own (a request's parts share
// one allocation), so Solve needs no lock and Run no allocation.
class LapackBatchKernel : public LinalgKernel {
 protected:
  // `work`: about how many multiply-adds one matrix takes.
  void SetBatch(const OpInfo& op, int64_t batch, int64_t work, size_t part_bytes) {
    const int64_t most = 2 * std::max(1, oneapi::tbb::info::default_concurrency());
    batch_ = batch;
    parts_ = std::min({batch, most, std::max<int64_t>(1, batch / Grain(work))});
    part_bytes_ = part_bytes;
    scratch_bytes_ = op.Mul(parts_, static_cast<int64_t>(part_bytes));
  }
  // Matrix i of the batch, with its part's scratch.
  virtual void Solve(void* const* b, int64_t i, std::byte* scratch) const = 0;

 private:
  void Compute(void* const* b, void* scratch) const final {
    ParallelParts(parts_, [&](int64_t part) {
      std::byte* s = static_cast<std::byte*>(scratch) + part * part_bytes_;
      for (int64_t i = batch_ * part / parts_; i < batch_ * (part + 1) / parts_; ++i)
        Solve(b, i, s);
    });
  }

  int64_t batch_ = 0, parts_ = 0;
  size_t part_bytes_ = 0;
};

// The dtypes LAPACK's routines take (s, d, c and z).
inline const std::vector<int32_t> kLapackTypes = {BRT_DTYPE_F32, BRT_DTYPE_F64, BRT_DTYPE_C64,
                                                  BRT_DTYPE_C128};
// f(T{}) for operand 0's dtype, one of kLapackTypes; else an error naming
// the routine.
template <typename F>
void DispatchLapack(const OpInfo& op, const std::string& routine, F&& f) {
  switch (op.in[0].dtype) {
    case BRT_DTYPE_F32:
      return f(float{});
    case BRT_DTYPE_F64:
      return f(double{});
    case BRT_DTYPE_C64:
      return f(std::complex<float>{});
    case BRT_DTYPE_C128:
      return f(std::complex<double>{});
  }
  op.Require(false, "LAPACK's " + routine + " has no form for " + DTypeName(op.in[0].dtype));
}

// The size a LAPACK workspace query (lwork -1) left in `queried`, after
// checking its info.
template <typename T>
int QueriedSize(const OpInfo& op, const std::string& routine, T queried, int info) {
  op.Require(info == 0, routine + "'s workspace query failed (info " + std::to_string(info) + ")");
  return std::max(1, static_cast<int>(std::ceil(std::real(queried))));
}

// The kernels of linalg_eigen.cc (eigh, eig, hessenberg, tridiagonal) and
// linalg_factor.cc (svd, geqrf, householder_product, tridiagonal_solve);
// RegisterLinalg adds them.
void RegisterLinalgEigen(std::vector<KernelDef>& defs);
void RegisterLinalgFactor(std::vector<KernelDef>& defs);

}  // namespace brt::cpu

// Shared pieces of the CPU provider: the kernel interface, the kernel
// registry and per-dtype dispatch. The op view (OpInfo) and the per-op plans
// are providers/common's, shared with the CUDA provider. Depends only on the
// plugin ABI (include/brt/provider_abi.h) and providers/common.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "brt/provider_abi.h"
#include "common/provider_glue.h"
#include "ops/op_info.h"
#include "ops/small_floats.h"
#include "vector_math.h"

namespace brt::cpu {

using namespace brt::ops;  // NOLINT: the op view and plans shared with other providers

// The run-time side of a kernel. Run() must not allocate; it throws
// (KernelError) only when the work fails, and the provider's AbiGuard
// (common/abi_guard.h) reports that as the op's error.
class Runnable {
 public:
  virtual ~Runnable() = default;
  virtual void Run(void* const* buffers) = 0;
};

class CpuKernel : public Runnable {
 public:
  // Validates shapes/attributes and precomputes everything Run() needs.
  virtual void Prepare(const OpInfo& op) = 0;
  // Kernels with per-request scratch return a fresh instance; nullptr (the
  // default) runs the shared kernel itself, so Run() must not mutate members.
  virtual std::unique_ptr<Runnable> CreateInstance() const { return nullptr; }
};

// A row of the CPU kernel table.
using KernelDef = ops::KernelRow<std::unique_ptr<CpuKernel> (*)()>;

// A oneDNN kernel for a large f32 elementwise op (unary: exp, log, tanh,
// logistic, sqrt, abs, negate; binary: add, subtract, multiply, divide, with
// one broadcast operand), or nullptr when brt's own loop should run it.
std::unique_ptr<CpuKernel> MakeDnnlElementwise(const OpInfo& op);

// oneDNN pooling for an f32 reduce_window (max or add) that leaves two dims
// untouched (batch and feature) and pools 1 to 3 others, or nullptr. It
// computes the result as if the init value were the reducer's identity.
std::unique_ptr<CpuKernel> MakeDnnlPooling(const OpInfo& op);
// oneDNN reduction for a large f32 reduce with reducer add, or nullptr; it
// too assumes the identity (0) as init value.
std::unique_ptr<CpuKernel> MakeDnnlReduction(const OpInfo& op);

// A request's instance of `loop`, a kernel with a oneDNN form `dnnl`: each
// run goes to oneDNN's instance, except where `use_loop(buffers)` holds and
// loop's own Run() takes it (loop is shared by every request: its Run() must
// not mutate it). Null where there is no oneDNN form.
template <typename UseLoop>
std::unique_ptr<Runnable> DnnlUnless(const CpuKernel& loop, const std::unique_ptr<CpuKernel>& dnnl,
                                     UseLoop use_loop) {
  class Instance final : public Runnable {
   public:
    Instance(CpuKernel& loop, std::unique_ptr<Runnable> dnnl, UseLoop use_loop)
        : loop_(loop), dnnl_(std::move(dnnl)), use_loop_(use_loop) {}
    void Run(void* const* b) override { use_loop_(b) ? loop_.Run(b) : dnnl_->Run(b); }

   private:
    CpuKernel& loop_;
    std::unique_ptr<Runnable> dnnl_;
    UseLoop use_loop_;
  };
  if (!dnnl) return nullptr;
  return std::make_unique<Instance>(const_cast<CpuKernel&>(loop), dnnl->CreateInstance(), use_loop);
}

// Each kernel file appends its definitions; provider.cc collects them.
void RegisterElementwise(std::vector<KernelDef>& defs);
void RegisterDataMovement(std::vector<KernelDef>& defs);
void RegisterIndexing(std::vector<KernelDef>& defs);
void RegisterReductions(std::vector<KernelDef>& defs);
void RegisterDnnl(std::vector<KernelDef>& defs);
void RegisterAttention(std::vector<KernelDef>& defs);
void RegisterRandom(std::vector<KernelDef>& defs);
void RegisterSort(std::vector<KernelDef>& defs);
void RegisterReferenceConvolution(std::vector<KernelDef>& defs);
void RegisterReducePrecision(std::vector<KernelDef>& defs);
void RegisterLinalg(std::vector<KernelDef>& defs);
void RegisterComplex(std::vector<KernelDef>& defs);
void RegisterFft(std::vector<KernelDef>& defs);

template <typename K>
std::unique_ptr<CpuKernel> Make() {
  return std::make_unique<K>();
}

inline const std::vector<int32_t> kFloatTypes = {BRT_DTYPE_F32, BRT_DTYPE_F16, BRT_DTYPE_BF16,
                                                 BRT_DTYPE_F64};
inline const std::vector<int32_t> kIntTypes = {BRT_DTYPE_I8,  BRT_DTYPE_I16, BRT_DTYPE_I32,
                                               BRT_DTYPE_I64, BRT_DTYPE_U8,  BRT_DTYPE_U16,
                                               BRT_DTYPE_U32, BRT_DTYPE_U64};
inline const std::vector<int32_t> kAllTypes = {
    BRT_DTYPE_F32, BRT_DTYPE_F16, BRT_DTYPE_BF16, BRT_DTYPE_F64, BRT_DTYPE_I1,
    BRT_DTYPE_I8,  BRT_DTYPE_I16, BRT_DTYPE_I32,  BRT_DTYPE_I64, BRT_DTYPE_U8,
    BRT_DTYPE_U16, BRT_DTYPE_U32, BRT_DTYPE_U64};
// Every type but i1.
inline const std::vector<int32_t> kNumericTypes = {
    BRT_DTYPE_F32, BRT_DTYPE_F16, BRT_DTYPE_BF16, BRT_DTYPE_F64, BRT_DTYPE_I8,  BRT_DTYPE_I16,
    BRT_DTYPE_I32, BRT_DTYPE_I64, BRT_DTYPE_U8,   BRT_DTYPE_U16, BRT_DTYPE_U32, BRT_DTYPE_U64};

template <typename T>
struct ComputeType {
  using type = T;
};
template <>
struct ComputeType<Half> {
  using type = float;
};
template <>
struct ComputeType<BFloat16> {
  using type = float;
};
template <>
struct ComputeType<Bool8> {
  using type = bool;
};
template <typename T>
using Compute = typename ComputeType<T>::type;
// f16 and bf16: stored in 16 bits, computed in float.
template <typename T>
constexpr bool kIs16BitFloat = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// A unary op on a CPU compute type: the registry's expression, except exp,
// log, tanh, logistic and erf on floats, which are vector_math.h's, so that loops
// over them vectorize. Fused and unfused ops compute the same values.
template <Unary OP, typename C>
inline C CpuUnary(C x) {
  if constexpr (std::is_same_v<C, float>) {
    if constexpr (OP == Unary::kExp) return vmath::Exp(x);
    if constexpr (OP == Unary::kLog) return vmath::Log(x);
    if constexpr (OP == Unary::kTanh) return vmath::Tanh(x);
    if constexpr (OP == Unary::kLogistic) return vmath::Logistic(x);
    if constexpr (OP == Unary::kErf) return vmath::Erf(x);
  }
  return ApplyUnary<OP, C>(x);
}

// Calls f(T{}) with the C++ type of a dtype code.
template <typename F>
void DispatchType(int32_t dtype, F&& f) {
  switch (dtype) {
    case BRT_DTYPE_F32:
      return f(float{});
    case BRT_DTYPE_F16:
      return f(Half{});
    case BRT_DTYPE_BF16:
      return f(BFloat16{});
    case BRT_DTYPE_F64:
      return f(double{});
    case BRT_DTYPE_I1:
      return f(Bool8{});
    case BRT_DTYPE_I8:
      return f(int8_t{});
    case BRT_DTYPE_I16:
      return f(int16_t{});
    case BRT_DTYPE_I32:
      return f(int32_t{});
    case BRT_DTYPE_I64:
      return f(int64_t{});
    case BRT_DTYPE_U8:
      return f(uint8_t{});
    case BRT_DTYPE_U16:
      return f(uint16_t{});
    case BRT_DTYPE_U32:
      return f(uint32_t{});
    case BRT_DTYPE_U64:
      return f(uint64_t{});
  }
  throw KernelError(std::string("unsupported dtype ") + DTypeName(dtype));
}

inline const std::vector<int32_t> kComplexTypes = {BRT_DTYPE_C64, BRT_DTYPE_C128};
inline std::vector<int32_t> WithComplex(std::vector<int32_t> dtypes) {
  dtypes.insert(dtypes.end(), kComplexTypes.begin(), kComplexTypes.end());
  return dtypes;
}
// Every dtype: for the kernels that only move elements.
inline const std::vector<int32_t> kEveryType = WithComplex(kAllTypes);

// DispatchType, and std::complex for c64 and c128: for the kernels that have
// complex loops (DispatchType's callers need not compile for complex types).
template <typename F>
void DispatchTypeOrComplex(int32_t dtype, F&& f) {
  if (dtype == BRT_DTYPE_C64) return f(std::complex<float>{});
  if (dtype == BRT_DTYPE_C128) return f(std::complex<double>{});
  DispatchType(dtype, f);
}

// ---------------------------------------------------------------------------
// Iteration helpers.

}  // namespace brt::cpu

// Shared pieces of the CPU provider: op descriptions, the kernel interface,
// the kernel registry, 16-bit float types and iteration helpers.
// Depends only on the plugin ABI (include/brt/provider_abi.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "brt/provider_abi.h"

namespace brt::cpu {

// Thrown by Prepare() for a bad op; becomes an error code at the ABI boundary.
struct KernelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct UnsupportedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char* DTypeName(int32_t dtype);
bool IsFloat(int32_t dtype);
std::string FormatDims(const std::vector<int64_t>& dims);

struct TensorInfo {
  int32_t dtype = BRT_DTYPE_INVALID;
  std::vector<int64_t> dims;
  int64_t numel = 1;
  int rank() const { return static_cast<int>(dims.size()); }
  size_t bytes() const { return static_cast<size_t>(numel) * brt_dtype_size(dtype); }
  // Row-major strides in elements.
  std::vector<int64_t> Strides() const;
};

// A C++ view of BrtOpDesc with checked attribute access.
class OpInfo {
 public:
  explicit OpInfo(const BrtOpDesc& desc);
  std::string kind;
  std::vector<TensorInfo> in, out;

  bool Has(std::string_view name) const { return Find(name) != nullptr; }
  int64_t Int(std::string_view name) const;
  int64_t Int(std::string_view name, int64_t fallback) const;
  double Float(std::string_view name, double fallback) const;
  std::vector<int64_t> Ints(std::string_view name) const;
  std::vector<int64_t> Ints(std::string_view name, std::vector<int64_t> fallback) const;
  std::vector<double> Floats(std::string_view name) const;
  std::string String(std::string_view name) const;
  std::string String(std::string_view name, std::string fallback) const;
  std::vector<uint8_t> Bytes(std::string_view name) const;
  // The operand's bytes when constant for the Session (a weight), else null.
  const void* Constant(int operand) const;

  // Throws KernelError "<kind>: <message>" unless cond holds.
  void Require(bool cond, const std::string& message) const;
  void RequireOperands(int n) const;
  // Every operand and the result share one dtype.
  void RequireSameDTypes() const;
  // Checked arithmetic for sizes derived from attributes, which are untrusted:
  // throws KernelError instead of overflowing.
  int64_t Mul(int64_t a, int64_t b) const;
  int64_t Add(int64_t a, int64_t b) const;
  // A dimension index list: each in [0, rank), no repeats.
  void RequireDims(const std::vector<int64_t>& dims, int rank, const std::string& what) const;

 private:
  const BrtAttr* Find(std::string_view name) const;
  const BrtAttr* Get(std::string_view name, int32_t kind) const;
  const BrtAttr* attrs_;
  int num_attrs_;
  std::vector<const void*> constants_;
};

// The run-time side of a kernel. Run() must not allocate or throw.
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

struct KernelDef {
  const char* kind;
  std::vector<int32_t> dtypes;  // accepted dtypes of the key tensor
  bool key_is_operand;          // key: operand 0 (e.g. compare) or result 0
  std::unique_ptr<CpuKernel> (*create)();
};

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

// Each kernel file appends its definitions; provider.cc collects them.
void RegisterElementwise(std::vector<KernelDef>& defs);
void RegisterDataMovement(std::vector<KernelDef>& defs);
void RegisterIndexing(std::vector<KernelDef>& defs);
void RegisterReductions(std::vector<KernelDef>& defs);
void RegisterDnnl(std::vector<KernelDef>& defs);

template <typename K>
std::unique_ptr<CpuKernel> Make() {
  return std::make_unique<K>();
}

inline const std::vector<int32_t> kFloatTypes = {BRT_DTYPE_F32, BRT_DTYPE_F16, BRT_DTYPE_BF16,
                                                 BRT_DTYPE_F64};
inline const std::vector<int32_t> kIntTypes = {BRT_DTYPE_I8, BRT_DTYPE_I32, BRT_DTYPE_I64,
                                               BRT_DTYPE_U8};
inline const std::vector<int32_t> kAllTypes = {BRT_DTYPE_F32, BRT_DTYPE_F16, BRT_DTYPE_BF16,
                                               BRT_DTYPE_F64, BRT_DTYPE_I1,  BRT_DTYPE_I8,
                                               BRT_DTYPE_I32, BRT_DTYPE_I64, BRT_DTYPE_U8};

// ---------------------------------------------------------------------------
// 16-bit floats, stored as bits, computed in float.

inline float BitsToFloat(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline uint32_t FloatToBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f) {  // NOLINT: converts like a built-in float type
    uint32_t b = FloatToBits(f);
    if (std::isnan(f)) {
      bits = static_cast<uint16_t>((b >> 16) | 0x40);
    } else {
      b += 0x7FFF + ((b >> 16) & 1);  // round to nearest even
      bits = static_cast<uint16_t>(b >> 16);
    }
  }
  operator float() const { return BitsToFloat(static_cast<uint32_t>(bits) << 16); }
};

struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f);  // NOLINT
  operator float() const;
};

// i1 storage: one byte, any non-zero byte reads as true.
struct Bool8 {
  uint8_t v = 0;
  Bool8() = default;
  Bool8(bool b) : v(b ? 1 : 0) {}  // NOLINT
  operator bool() const { return v != 0; }
};

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
    case BRT_DTYPE_I32:
      return f(int32_t{});
    case BRT_DTYPE_I64:
      return f(int64_t{});
    case BRT_DTYPE_U8:
      return f(uint8_t{});
  }
  throw KernelError(std::string("unsupported dtype ") + DTypeName(dtype));
}

// ---------------------------------------------------------------------------
// Iteration helpers.

inline constexpr int kMaxRank = 16;
// Integer attributes beyond this magnitude are rejected, so sums of a few of
// them cannot overflow.
inline constexpr int64_t kMaxAttrMagnitude = int64_t{1} << 40;

// Numpy-style broadcasting of several inputs to one contiguous output,
// iterated row by row over collapsed dimensions.
class BroadcastPlan {
 public:
  // Throws KernelError if an input does not broadcast to out_dims.
  void Build(const std::vector<int64_t>& out_dims, const std::vector<std::vector<int64_t>>& in_dims,
             const std::string& what);
  int64_t inner() const { return inner_; }
  int64_t rows() const { return rows_; }
  // stride of input k along the innermost dimension (0 or more)
  int64_t inner_stride(int k) const { return strides_[k * rank_ + rank_ - 1]; }

  // f(const int64_t* input_offsets, int64_t output_offset, int64_t n)
  template <typename F>
  void ForEachRow(F&& f) const {
    if (rows_ == 0 || inner_ == 0) return;
    static constexpr int64_t kZeros[kMaxRank] = {};
    if (rows_ == 1) return f(kZeros, int64_t{0}, inner_);
    // Only the used entries are zeroed: clearing whole arrays costs more than
    // a small op's kernel.
    int64_t offsets[kMaxRank];
    int64_t index[kMaxRank];
    for (int k = 0; k < num_inputs_; ++k) offsets[k] = 0;
    for (int d = 0; d < rank_; ++d) index[d] = 0;
    const int outer = rank_ - 1;
    for (int64_t row = 0; row < rows_; ++row) {
      f(static_cast<const int64_t*>(offsets), row * inner_, inner_);
      for (int d = outer - 1; d >= 0; --d) {
        if (++index[d] < dims_[d]) {
          for (int k = 0; k < num_inputs_; ++k) offsets[k] += strides_[k * rank_ + d];
          break;
        }
        index[d] = 0;
        for (int k = 0; k < num_inputs_; ++k)
          offsets[k] -= strides_[k * rank_ + d] * (dims_[d] - 1);
      }
    }
  }

 private:
  int rank_ = 1;
  int num_inputs_ = 0;
  std::vector<int64_t> dims_;
  std::vector<int64_t> strides_;  // num_inputs x rank
  int64_t inner_ = 1, rows_ = 1;
};

// dst[sum(i_d * dst_strides_d)] = src[sum(i_d * src_strides_d)] for every
// index i in dims; strides in elements (may be 0 or negative).
struct StridedCopy {
  int rank = 0;
  int64_t dims[kMaxRank];
  int64_t src_strides[kMaxRank];
  int64_t dst_strides[kMaxRank];
  size_t elem_size = 4;
  // Merges dimensions that are contiguous in both source and destination.
  void Simplify();
  void Run(char* dst, const char* src) const;
};

}  // namespace brt::cpu

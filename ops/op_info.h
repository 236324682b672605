// What every provider needs to read an op before it builds a kernel: a C++
// view of BrtOpDesc with checked attribute access, the errors Prepare throws,
// and the strided copy that data movement ops reduce to. Host code only;
// depends on the plugin ABI alone, so the CPU and CUDA providers share it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "brt/provider_abi.h"

namespace brt::ops {

// Thrown by Prepare() for a bad op; becomes an error code at the ABI boundary.
struct KernelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct UnsupportedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline const char* DTypeName(int32_t dtype) { return brt_dtype_name(dtype); }
bool IsFloat(int32_t dtype);
// i8, i32, i64, u8, u32 or u64 (not i1).
bool IsInteger(int32_t dtype);
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

// A C++ view of BrtOpDesc. Its attributes are read through the typed
// structs of op_attrs.h (Decode<NameAttrs>(op)), made from the registry.
class OpInfo {
 public:
  explicit OpInfo(const BrtOpDesc& desc);
  std::string kind;
  std::vector<TensorInfo> in, out;

  // The operand's bytes when constant for the Session (a weight), else null.
  const void* Constant(int operand) const;
  // The operand is no longer known constant (its bytes are given in another
  // dtype at run time, say).
  void ForgetConstant(int operand) { constants_.at(operand) = nullptr; }

  // Throws KernelError "<kind>: <message>" unless cond holds.
  void Require(bool cond, const std::string& message) const;
  void RequireOperands(int n) const;
  // Every operand and the result share one dtype.
  void RequireSameDTypes() const;
  // Operand `i` has the result's shape (elementwise ops that do not broadcast).
  void RequireShapeOfResult(size_t i) const;
  // Checked arithmetic for sizes derived from attributes, which are untrusted:
  // throws KernelError instead of overflowing.
  int64_t Mul(int64_t a, int64_t b) const;
  int64_t Add(int64_t a, int64_t b) const;
  // A dimension index list: each in [0, rank), no repeats.
  void RequireDims(const std::vector<int64_t>& dims, int rank, const std::string& what) const;

 private:
  friend struct AttrDecoder;
  const BrtAttr* Find(std::string_view name) const;
  // Throws KernelError unless the attribute is present with this kind.
  const BrtAttr* Get(std::string_view name, int32_t kind) const;
  const BrtAttr* attrs_;
  int num_attrs_;
  std::vector<const void*> constants_;
};

// Reads attributes by name, checked (integers within kMaxAttrMagnitude): for
// op_attrs.cc's generated Decode functions, and for a plugin's own kinds,
// which the registry does not list. Registry kinds are read through their
// <Name>Attrs.
struct AttrDecoder {
  static bool Has(const OpInfo& op, std::string_view name) { return op.Find(name) != nullptr; }
  static void Read(const OpInfo& op, std::string_view name, int64_t* out);
  static void Read(const OpInfo& op, std::string_view name, std::vector<int64_t>* out);
  static void Read(const OpInfo& op, std::string_view name, double* out);
  static void Read(const OpInfo& op, std::string_view name, std::vector<double>* out);
  static void Read(const OpInfo& op, std::string_view name, std::string* out);
  static void Read(const OpInfo& op, std::string_view name, std::vector<uint8_t>* out);
};

inline constexpr int kMaxRank = 16;
// Integer attributes beyond this magnitude are rejected, so sums of a few of
// them cannot overflow.
inline constexpr int64_t kMaxAttrMagnitude = int64_t{1} << 40;

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

}  // namespace brt::ops

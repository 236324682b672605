// Element types, shapes, devices and the Tensor handle of the public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "brt/provider_abi.h"

namespace brt {

enum class DType : uint8_t {
  kInvalid = BRT_DTYPE_INVALID,
  kF32 = BRT_DTYPE_F32,
  kF16 = BRT_DTYPE_F16,
  kBF16 = BRT_DTYPE_BF16,
  kF64 = BRT_DTYPE_F64,
  kI1 = BRT_DTYPE_I1,
  kI8 = BRT_DTYPE_I8,
  kI32 = BRT_DTYPE_I32,
  kI64 = BRT_DTYPE_I64,
  kU8 = BRT_DTYPE_U8,
  kU32 = BRT_DTYPE_U32,
  kU64 = BRT_DTYPE_U64,
  kI16 = BRT_DTYPE_I16,
  kU16 = BRT_DTYPE_U16,
  kC64 = BRT_DTYPE_C64,
  kC128 = BRT_DTYPE_C128,
};
inline constexpr int kNumDTypes = BRT_DTYPE_C128 + 1;

// Bytes per element; 0 for kInvalid.
size_t DTypeSize(DType dtype);
// "f32", "bf16", "i1", ...; "invalid" for anything else.
const char* DTypeName(DType dtype);
// Inverse of DTypeName; nullopt for an unknown name.
std::optional<DType> ParseDType(std::string_view name);

enum class DeviceKind : uint8_t { kCpu = BRT_DEVICE_CPU, kCuda = BRT_DEVICE_CUDA };
const char* DeviceKindName(DeviceKind kind);

struct Device {
  DeviceKind kind = DeviceKind::kCpu;
  int ordinal = 0;
  bool operator==(const Device&) const = default;
};

// A dimension in a signature: static (size >= 0) or symbolic (named).
struct Dim {
  int64_t size = -1;
  std::string symbol;
  Dim(int64_t s) : size(s) {}                         // NOLINT: implicit so {2, 3} reads as a shape
  Dim(const char* name) : symbol(name) {}             // NOLINT
  Dim(std::string name) : symbol(std::move(name)) {}  // NOLINT
  bool is_static() const { return size >= 0; }
  bool operator==(const Dim&) const = default;
};

// "[2,?batch,3]"
std::string FormatDims(const std::vector<Dim>& dims);
std::string FormatShape(const std::vector<int64_t>& shape);

// Element count; nullopt on a negative dimension or overflow past 2^62.
std::optional<int64_t> NumElements(const std::vector<int64_t>& shape);

// A tensor handle: data pointer, element type, row-major shape and device,
// plus whatever keeps the memory alive. Copies share the memory.
class Tensor {
 public:
  Tensor() = default;
  // Memory the caller keeps alive for as long as the runtime may use it.
  static Tensor Borrow(void* data, DType dtype, std::vector<int64_t> shape, Device device = {});
  // Memory the runtime now owns; release(data) is called when the last
  // handle is gone.
  static Tensor Adopt(void* data, DType dtype, std::vector<int64_t> shape,
                      std::function<void(void*)> release, Device device = {});
  // Fresh 64-byte aligned host memory, uninitialized.
  static Tensor Allocate(DType dtype, std::vector<int64_t> shape);

  void* data() const { return data_; }
  template <typename T>
  T* data_as() const {
    return static_cast<T*>(data_);
  }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  Device device() const { return device_; }
  int64_t num_elements() const;
  size_t num_bytes() const { return static_cast<size_t>(num_elements()) * DTypeSize(dtype_); }
  bool defined() const { return dtype_ != DType::kInvalid; }
  // The object keeping the memory alive (empty for borrowed memory).
  const std::shared_ptr<void>& owner() const { return owner_; }

 private:
  void* data_ = nullptr;
  DType dtype_ = DType::kInvalid;
  std::vector<int64_t> shape_;
  Device device_;
  std::shared_ptr<void> owner_;
};

}  // namespace brt

#include <cstdlib>
#include <cstring>

#include "brt/session.h"
#include "brt/status.h"
#include "brt/types.h"

namespace brt {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "InvalidArgument";
    case StatusCode::kNotFound:
      return "NotFound";
    case StatusCode::kInvalidExecutable:
      return "InvalidExecutable";
    case StatusCode::kUnsupported:
      return "Unsupported";
    case StatusCode::kFailedPrecondition:
      return "FailedPrecondition";
    case StatusCode::kResourceExhausted:
      return "ResourceExhausted";
    case StatusCode::kInternal:
      return "Internal";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

size_t DTypeSize(DType dtype) { return brt_dtype_size(static_cast<int32_t>(dtype)); }

const char* DTypeName(DType dtype) { return brt_dtype_name(static_cast<int32_t>(dtype)); }

std::optional<DType> ParseDType(std::string_view name) {
  // The codes are numbered from 1 without gaps.
  for (int32_t code = BRT_DTYPE_INVALID + 1; brt_dtype_size(code) != 0; ++code)
    if (name == brt_dtype_name(code)) return static_cast<DType>(code);
  return std::nullopt;
}

const char* DeviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCpu:
      return "cpu";
    case DeviceKind::kCuda:
      return "cuda";
  }
  return "unknown";
}

const char* LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "unknown";
}

const char* ArgRoleName(ArgRole role) {
  switch (role) {
    case ArgRole::kInput:
      return "input";
    case ArgRole::kOutput:
      return "output";
    case ArgRole::kWeight:
      return "weight";
    case ArgRole::kState:
      return "state";
  }
  return "unknown";
}

std::string FormatDims(const std::vector<Dim>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += dims[i].is_static() ? std::to_string(dims[i].size) : "?" + dims[i].symbol;
  }
  return s + "]";
}

std::string FormatShape(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::optional<int64_t> NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > (int64_t{1} << 62)) return std::nullopt;
  }
  return n;
}

int64_t Tensor::num_elements() const {
  if (!defined()) return 0;
  return NumElements(shape_).value_or(0);
}

Tensor Tensor::Borrow(void* data, DType dtype, std::vector<int64_t> shape, Device device) {
  Tensor t;
  t.data_ = data;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.device_ = device;
  return t;
}

Tensor Tensor::Adopt(void* data, DType dtype, std::vector<int64_t> shape,
                     std::function<void(void*)> release, Device device) {
  Tensor t = Borrow(data, dtype, std::move(shape), device);
  t.owner_ = std::shared_ptr<void>(data, [release = std::move(release)](void* p) {
    if (release) release(p);
  });
  return t;
}

Tensor Tensor::Allocate(DType dtype, std::vector<int64_t> shape) {
  size_t bytes = NumElements(shape).value_or(0) * DTypeSize(dtype);
  // Round up so aligned_alloc's size requirement holds; never 0 bytes.
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  void* p = std::aligned_alloc(64, rounded);
  if (!p) return Tensor();
  return Adopt(p, dtype, std::move(shape), [](void* q) { std::free(q); });
}

}  // namespace brt

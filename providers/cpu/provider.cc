// The CPU provider's plugin entry point, kernel registry and shared helpers.
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernel.h"

namespace brt::cpu {

const char* DTypeName(int32_t dtype) {
  switch (dtype) {
    case BRT_DTYPE_F32:
      return "f32";
    case BRT_DTYPE_F16:
      return "f16";
    case BRT_DTYPE_BF16:
      return "bf16";
    case BRT_DTYPE_F64:
      return "f64";
    case BRT_DTYPE_I1:
      return "i1";
    case BRT_DTYPE_I8:
      return "i8";
    case BRT_DTYPE_I32:
      return "i32";
    case BRT_DTYPE_I64:
      return "i64";
    case BRT_DTYPE_U8:
      return "u8";
  }
  return "invalid";
}

bool IsFloat(int32_t dtype) {
  return dtype == BRT_DTYPE_F32 || dtype == BRT_DTYPE_F16 || dtype == BRT_DTYPE_BF16 ||
         dtype == BRT_DTYPE_F64;
}

std::string FormatDims(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

std::vector<int64_t> TensorInfo::Strides() const {
  std::vector<int64_t> s(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * dims[d + 1];
  return s;
}

Half::Half(float f) {
  uint32_t x = FloatToBits(f);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t exp = (x >> 23) & 0xFF;
  uint32_t mant = x & 0x7FFFFF;
  if (exp == 0xFF) {  // inf or nan
    bits = static_cast<uint16_t>(sign | 0x7C00 | (mant ? 0x200 : 0));
    return;
  }
  int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 31) {  // overflow to inf
    bits = static_cast<uint16_t>(sign | 0x7C00);
    return;
  }
  if (e <= 0) {  // subnormal or zero
    if (e < -10) {
      bits = static_cast<uint16_t>(sign);
      return;
    }
    mant |= 0x800000;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half_mant = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1))) ++half_mant;
    bits = static_cast<uint16_t>(sign | half_mant);
    return;
  }
  uint32_t half = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;  // may carry into exponent: correct
  bits = static_cast<uint16_t>(half);
}

Half::operator float() const {
  uint32_t sign = (static_cast<uint32_t>(bits) & 0x8000) << 16;
  uint32_t exp = (bits >> 10) & 0x1F;
  uint32_t mant = bits & 0x3FF;
  if (exp == 0) {
    if (mant == 0) return BitsToFloat(sign);
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return BitsToFloat(sign | 0x7F800000 | (mant << 13));
  return BitsToFloat(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

// --- OpInfo -------------------------------------------------------------------

OpInfo::OpInfo(const BrtOpDesc& desc)
    : kind(desc.kind), attrs_(desc.attrs), num_attrs_(desc.num_attrs) {
  auto convert = [](const BrtTensorDesc& t) {
    TensorInfo info;
    info.dtype = t.dtype;
    info.dims.assign(t.dims, t.dims + t.rank);
    for (int64_t d : info.dims) info.numel *= d;
    return info;
  };
  for (int i = 0; i < desc.num_operands; ++i) in.push_back(convert(desc.operands[i]));
  for (int i = 0; i < desc.num_results; ++i) out.push_back(convert(desc.results[i]));
  constants_.assign(in.size(), nullptr);
  if (BRT_STRUCT_HAS(BrtOpDesc, &desc, operand_constants) && desc.operand_constants)
    constants_.assign(desc.operand_constants, desc.operand_constants + desc.num_operands);
}

const void* OpInfo::Constant(int operand) const { return constants_.at(operand); }

const BrtAttr* OpInfo::Find(std::string_view name) const {
  for (int i = 0; i < num_attrs_; ++i)
    if (attrs_[i].name && name == attrs_[i].name) return &attrs_[i];
  return nullptr;
}

const BrtAttr* OpInfo::Get(std::string_view name, int32_t kind) const {
  const BrtAttr* a = Find(name);
  if (!a) throw KernelError(this->kind + ": missing attribute '" + std::string(name) + "'");
  if (a->kind != kind)
    throw KernelError(this->kind + ": attribute '" + std::string(name) + "' has the wrong kind");
  return a;
}

namespace {
int64_t Bounded(const OpInfo& op, std::string_view name, int64_t v) {
  op.Require(
      v >= -kMaxAttrMagnitude && v <= kMaxAttrMagnitude,
      "attribute '" + std::string(name) + "' value " + std::to_string(v) + " is out of range");
  return v;
}
}  // namespace

int64_t OpInfo::Int(std::string_view name) const {
  return Bounded(*this, name, Get(name, BRT_ATTR_INT)->i);
}
int64_t OpInfo::Int(std::string_view name, int64_t fallback) const {
  return Has(name) ? Int(name) : fallback;
}
double OpInfo::Float(std::string_view name, double fallback) const {
  return Has(name) ? Get(name, BRT_ATTR_FLOAT)->f : fallback;
}
std::vector<int64_t> OpInfo::Ints(std::string_view name) const {
  const BrtAttr* a = Get(name, BRT_ATTR_INTS);
  std::vector<int64_t> v(a->ints, a->ints + a->num_ints);
  for (int64_t x : v) Bounded(*this, name, x);
  return v;
}
std::vector<int64_t> OpInfo::Ints(std::string_view name, std::vector<int64_t> fallback) const {
  return Has(name) ? Ints(name) : fallback;
}
std::vector<double> OpInfo::Floats(std::string_view name) const {
  const BrtAttr* a = Get(name, BRT_ATTR_FLOATS);
  return std::vector<double>(a->floats, a->floats + a->num_floats);
}
std::string OpInfo::String(std::string_view name) const { return Get(name, BRT_ATTR_STRING)->str; }
std::string OpInfo::String(std::string_view name, std::string fallback) const {
  return Has(name) ? String(name) : fallback;
}
std::vector<uint8_t> OpInfo::Bytes(std::string_view name) const {
  const BrtAttr* a = Get(name, BRT_ATTR_BYTES);
  return std::vector<uint8_t>(a->bytes, a->bytes + a->num_bytes);
}

void OpInfo::Require(bool cond, const std::string& message) const {
  if (!cond) throw KernelError(kind + ": " + message);
}

int64_t OpInfo::Mul(int64_t a, int64_t b) const {
  int64_t r = 0;
  Require(!__builtin_mul_overflow(a, b, &r), "sizes derived from the attributes overflow");
  return r;
}

int64_t OpInfo::Add(int64_t a, int64_t b) const {
  int64_t r = 0;
  Require(!__builtin_add_overflow(a, b, &r), "sizes derived from the attributes overflow");
  return r;
}

void OpInfo::RequireOperands(int n) const {
  Require(static_cast<int>(in.size()) == n && out.size() == 1,
          "expected " + std::to_string(n) + " operands and 1 result, got " +
              std::to_string(in.size()) + " and " + std::to_string(out.size()));
}

void OpInfo::RequireSameDTypes() const {
  for (size_t i = 0; i < in.size(); ++i)
    Require(in[i].dtype == out[0].dtype, std::string("operand ") + std::to_string(i) + " is " +
                                             DTypeName(in[i].dtype) + " but the result is " +
                                             DTypeName(out[0].dtype));
}

void OpInfo::RequireDims(const std::vector<int64_t>& dims, int rank,
                         const std::string& what) const {
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    Require(d >= 0 && d < rank, what + " " + FormatDims(dims) + " has a dimension outside [0, " +
                                    std::to_string(rank) + ")");
    Require(!seen[d], what + " " + FormatDims(dims) + " repeats dimension " + std::to_string(d));
    seen[d] = true;
  }
}

// --- BroadcastPlan -------------------------------------------------------------

void BroadcastPlan::Build(const std::vector<int64_t>& out_dims,
                          const std::vector<std::vector<int64_t>>& in_dims,
                          const std::string& what) {
  const int out_rank = static_cast<int>(out_dims.size());
  if (out_rank > kMaxRank)
    throw KernelError(what + ": rank " + std::to_string(out_rank) + " is too large");
  num_inputs_ = static_cast<int>(in_dims.size());
  // Per input, per output dim: element stride (0 where broadcast).
  std::vector<std::vector<int64_t>> full(num_inputs_, std::vector<int64_t>(out_rank, 0));
  for (int k = 0; k < num_inputs_; ++k) {
    const auto& d = in_dims[k];
    int r = static_cast<int>(d.size());
    if (r > out_rank)
      throw KernelError(what + ": operand " + std::to_string(k) + " shape " + FormatDims(d) +
                        " has a higher rank than the result " + FormatDims(out_dims));
    int64_t stride = 1;
    for (int i = r - 1; i >= 0; --i) {
      int o = out_rank - r + i;
      if (d[i] == out_dims[o]) {
        full[k][o] = d[i] == 1 ? 0 : stride;
      } else if (d[i] == 1) {
        full[k][o] = 0;
      } else {
        throw KernelError(what + ": operand " + std::to_string(k) + " shape " + FormatDims(d) +
                          " does not broadcast to the result shape " + FormatDims(out_dims));
      }
      stride *= d[i];
    }
  }
  // Collapse neighbouring dimensions that are contiguous for every input.
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides(num_inputs_);
  for (int o = 0; o < out_rank; ++o) {
    if (out_dims[o] == 1) continue;
    bool merge = !dims.empty();
    for (int k = 0; k < num_inputs_ && merge; ++k)
      merge = strides[k].back() == full[k][o] * out_dims[o];
    if (merge) {
      dims.back() *= out_dims[o];
      for (int k = 0; k < num_inputs_; ++k) strides[k].back() = full[k][o];
    } else {
      dims.push_back(out_dims[o]);
      for (int k = 0; k < num_inputs_; ++k) strides[k].push_back(full[k][o]);
    }
  }
  for (int64_t d : out_dims)
    if (d == 0) dims = {0};
  if (dims.empty()) {
    dims.push_back(1);
    for (auto& s : strides) s = {0};
  }
  if (dims.size() == 1 && dims[0] == 0)
    for (auto& s : strides) s.assign(1, 0);
  rank_ = static_cast<int>(dims.size());
  dims_ = dims;
  strides_.assign(static_cast<size_t>(num_inputs_) * rank_, 0);
  for (int k = 0; k < num_inputs_; ++k)
    for (int d = 0; d < rank_; ++d) strides_[k * rank_ + d] = strides[k][d];
  inner_ = dims_.back();
  rows_ = 1;
  for (int d = 0; d < rank_ - 1; ++d) rows_ *= dims_[d];
}

// --- StridedCopy ----------------------------------------------------------------

void StridedCopy::Simplify() {
  int out = 0;
  for (int d = 0; d < rank; ++d) {
    if (dims[d] == 1) continue;
    if (dims[d] == 0) {
      rank = 1, dims[0] = 0;
      return;
    }
    if (out > 0 && src_strides[out - 1] == src_strides[d] * dims[d] &&
        dst_strides[out - 1] == dst_strides[d] * dims[d]) {
      dims[out - 1] *= dims[d];
      src_strides[out - 1] = src_strides[d];
      dst_strides[out - 1] = dst_strides[d];
      continue;
    }
    dims[out] = dims[d], src_strides[out] = src_strides[d], dst_strides[out] = dst_strides[d];
    ++out;
  }
  if (out == 0) {
    rank = 1, dims[0] = 1, src_strides[0] = 1, dst_strides[0] = 1;
    return;
  }
  rank = out;
}

namespace {
template <typename T>
void CopyRow(char* dst, int64_t ds, const char* src, int64_t ss, int64_t n) {
  T* d = reinterpret_cast<T*>(dst);
  const T* s = reinterpret_cast<const T*>(src);
  if (ss == 0) {
    T v = *s;
    for (int64_t i = 0; i < n; ++i) d[i * ds] = v;
  } else {
    for (int64_t i = 0; i < n; ++i) d[i * ds] = s[i * ss];
  }
}
}  // namespace

void StridedCopy::Run(char* dst, const char* src) const {
  for (int d = 0; d < rank; ++d)
    if (dims[d] == 0) return;
  const int64_t es = static_cast<int64_t>(elem_size);
  const int64_t n = dims[rank - 1], ss = src_strides[rank - 1], ds = dst_strides[rank - 1];
  int64_t index[kMaxRank];
  for (int d = 0; d < rank; ++d) index[d] = 0;
  int64_t so = 0, dof = 0;
  while (true) {
    char* drow = dst + dof * es;
    const char* srow = src + so * es;
    if (ss == 1 && ds == 1) {
      std::memcpy(drow, srow, static_cast<size_t>(n * es));
    } else {
      switch (elem_size) {
        case 1:
          CopyRow<uint8_t>(drow, ds, srow, ss, n);
          break;
        case 2:
          CopyRow<uint16_t>(drow, ds, srow, ss, n);
          break;
        case 4:
          CopyRow<uint32_t>(drow, ds, srow, ss, n);
          break;
        default:
          CopyRow<uint64_t>(drow, ds, srow, ss, n);
          break;
      }
    }
    int d = rank - 2;
    for (; d >= 0; --d) {
      if (++index[d] < dims[d]) {
        so += src_strides[d], dof += dst_strides[d];
        break;
      }
      index[d] = 0;
      so -= src_strides[d] * (dims[d] - 1), dof -= dst_strides[d] * (dims[d] - 1);
    }
    if (d < 0) return;
  }
}

// --- registry and ABI ------------------------------------------------------------

namespace {

const std::vector<KernelDef>& Registry() {
  static const std::vector<KernelDef> defs = [] {
    std::vector<KernelDef> d;
    RegisterElementwise(d);
    RegisterDataMovement(d);
    RegisterIndexing(d);
    RegisterReductions(d);
    RegisterDnnl(d);
    return d;
  }();
  return defs;
}

void SetError(BrtErrorBuffer* error, const std::string& message) {
  if (!error) return;
  std::strncpy(error->message, message.c_str(), sizeof(error->message) - 1);
  error->message[sizeof(error->message) - 1] = '\0';
}

int32_t Prepare(const void* kernel_data, const BrtOpDesc* desc, void** state,
                BrtErrorBuffer* error) {
  const KernelDef& def = *static_cast<const KernelDef*>(kernel_data);
  try {
    OpInfo op(*desc);
    std::unique_ptr<CpuKernel> k = def.create();
    k->Prepare(op);
    *state = k.release();
    return BRT_OK;
  } catch (const UnsupportedError& e) {
    SetError(error, e.what());
    return BRT_ERROR_UNSUPPORTED;
  } catch (const std::exception& e) {
    SetError(error, e.what());
    return BRT_ERROR_INVALID_ARGUMENT;
  }
}

void ReleaseState(void* state) { delete static_cast<CpuKernel*>(state); }

// A null instance (no per-request scratch needed) makes the core run the state.
int32_t CreateInstance(void* state, void** instance, BrtErrorBuffer* error) {
  try {
    *instance = static_cast<Runnable*>(static_cast<CpuKernel*>(state)->CreateInstance().release());
    return BRT_OK;
  } catch (const std::exception& e) {
    SetError(error, e.what());
    return BRT_ERROR_RESOURCE_EXHAUSTED;
  }
}

void ReleaseInstance(void* instance) { delete static_cast<Runnable*>(instance); }

int32_t RunKernel(void* kernel, void* const* buffers, void*, BrtErrorBuffer*) {
  static_cast<Runnable*>(kernel)->Run(buffers);
  return BRT_OK;
}

bool Contains(const std::vector<int32_t>& v, int32_t x) {
  for (int32_t y : v)
    if (y == x) return true;
  return false;
}

int32_t ResolveKernel(const BrtOpSignature* sig, BrtKernel* kernel, BrtErrorBuffer* error) {
  const auto& defs = Registry();
  bool kind_known = false;
  for (size_t i = 0; i < defs.size(); ++i) {
    const KernelDef& def = defs[i];
    if (std::strcmp(def.kind, sig->kind) != 0) continue;
    kind_known = true;
    const int32_t* types = def.key_is_operand ? sig->operand_dtypes : sig->result_dtypes;
    int32_t count = def.key_is_operand ? sig->num_operands : sig->num_results;
    if (count < 1 || !Contains(def.dtypes, types[0])) continue;
    *kernel = BrtKernel{sizeof(BrtKernel), &def,       &Prepare, &ReleaseState, &CreateInstance,
                        &ReleaseInstance,  &RunKernel, 0u};
    return BRT_OK;
  }
  SetError(error, kind_known
                      ? std::string("op '") + sig->kind + "' is not implemented for these dtypes"
                      : std::string("unknown op '") + sig->kind + "'");
  return BRT_ERROR_UNSUPPORTED;
}

int32_t DeviceCount() { return 1; }

void* Allocate(int32_t, size_t bytes, size_t alignment) {
  size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  return std::aligned_alloc(alignment, rounded ? rounded : alignment);
}

void Deallocate(int32_t, void* ptr) { std::free(ptr); }

int32_t Copy(int32_t, void* dst, const void* src, size_t bytes, int32_t, void*, BrtErrorBuffer*) {
  if (bytes) std::memcpy(dst, src, bytes);
  return BRT_OK;
}

int32_t KernelCount() { return static_cast<int32_t>(Registry().size()); }

int32_t KernelInfo(int32_t index, BrtKernelInfo* info) {
  static const std::vector<std::string> dtype_lists = [] {
    std::vector<std::string> lists;
    for (const KernelDef& def : Registry()) {
      std::string s;
      for (int32_t t : def.dtypes) s += (s.empty() ? "" : ",") + std::string(DTypeName(t));
      lists.push_back(s);
    }
    return lists;
  }();
  if (index < 0 || index >= KernelCount()) return BRT_ERROR_INVALID_ARGUMENT;
  *info = BrtKernelInfo{Registry()[index].kind, BRT_DEVICE_CPU, dtype_lists[index].c_str()};
  return BRT_OK;
}

// Host work runs in order on the calling thread: no queues, no graphs.
const BrtProviderApi kApi = [] {
  BrtProviderApi a{};
  a.struct_size = sizeof(BrtProviderApi);
  a.abi_version = BRT_PROVIDER_ABI_VERSION;
  a.name = "cpu";
  a.device_kind = BRT_DEVICE_CPU;
  a.device_count = &DeviceCount;
  a.allocate = &Allocate;
  a.deallocate = &Deallocate;
  a.copy = &Copy;
  a.resolve_kernel = &ResolveKernel;
  a.kernel_count = &KernelCount;
  a.kernel_info = &KernelInfo;
  return a;
}();

}  // namespace
}  // namespace brt::cpu

extern "C" __attribute__((visibility("default"))) const BrtProviderApi* brt_provider_get(
    uint32_t core_abi_version) {
  if (core_abi_version != BRT_PROVIDER_ABI_VERSION) return nullptr;
  return &brt::cpu::kApi;
}

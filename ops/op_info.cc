// OpInfo and StridedCopy (see op_info.h).
#include "ops/op_info.h"

#include "brt/op_registry.h"

#include <cmath>
#include <cstring>
#include <utility>

namespace brt::ops {

bool IsFloat(int32_t dtype) {
  return dtype == BRT_DTYPE_F32 || dtype == BRT_DTYPE_F16 || dtype == BRT_DTYPE_BF16 ||
         dtype == BRT_DTYPE_F64;
}

bool IsInteger(int32_t dtype) {
  return dtype == BRT_DTYPE_I8 || dtype == BRT_DTYPE_I16 || dtype == BRT_DTYPE_I32 ||
         dtype == BRT_DTYPE_I64 || dtype == BRT_DTYPE_U8 || dtype == BRT_DTYPE_U16 ||
         dtype == BRT_DTYPE_U32 || dtype == BRT_DTYPE_U64;
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
    throw KernelError(this->kind + ": attribute '" + std::string(name) + "' must be " +
                      AttrKindName(kind) + ", got " + AttrKindName(a->kind));
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

void AttrDecoder::Read(const OpInfo& op, std::string_view name, int64_t* out) {
  *out = Bounded(op, name, op.Get(name, BRT_ATTR_INT)->i);
}
void AttrDecoder::Read(const OpInfo& op, std::string_view name, std::vector<int64_t>* out) {
  const BrtAttr* a = op.Get(name, BRT_ATTR_INTS);
  out->assign(a->ints, a->ints + a->num_ints);
  for (int64_t x : *out) Bounded(op, name, x);
}
void AttrDecoder::Read(const OpInfo& op, std::string_view name, double* out) {
  *out = op.Get(name, BRT_ATTR_FLOAT)->f;
}
void AttrDecoder::Read(const OpInfo& op, std::string_view name, std::vector<double>* out) {
  const BrtAttr* a = op.Get(name, BRT_ATTR_FLOATS);
  out->assign(a->floats, a->floats + a->num_floats);
}
void AttrDecoder::Read(const OpInfo& op, std::string_view name, std::string* out) {
  *out = op.Get(name, BRT_ATTR_STRING)->str;
}
void AttrDecoder::Read(const OpInfo& op, std::string_view name, std::vector<uint8_t>* out) {
  const BrtAttr* a = op.Get(name, BRT_ATTR_BYTES);
  out->assign(a->bytes, a->bytes + a->num_bytes);
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

void OpInfo::RequireShapeOfResult(size_t i) const {
  Require(in.at(i).dims == out[0].dims, "operand shape " + FormatDims(in[i].dims) +
                                            " differs from result shape " +
                                            FormatDims(out[0].dims));
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
// The innermost two dimensions of a StridedCopy: `rows` rows of `n`
// elements. One tight double loop, so a short innermost dimension (a
// channels-last transpose of 3 colour channels) costs no per-row dispatch.
// Where one side is read or written across rows (a transpose), tiles of
// 8 x 8 elements keep both sides' cache lines in L1 while they are used:
// one row at a time ran a [256, 1024] transpose at 2.5 GB/s, 8 x 8 tiles
// at 10; 16 x 16 ran at 5 (16 lines 4 KiB apart share an 8-way L1's sets).
template <typename T>
void CopyPlane(char* dst, const char* src, int64_t rows, int64_t drs, int64_t srs, int64_t n,
               int64_t ds, int64_t ss) {
  T* d = reinterpret_cast<T*>(dst);
  const T* s = reinterpret_cast<const T*>(src);
  constexpr int64_t kTile = 8;
  if (ss != 0 && !(ss == 1 && ds == 1) && rows >= kTile && n >= kTile) {
    for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile);
      for (int64_t i0 = 0; i0 < n; i0 += kTile) {
        const int64_t i1 = std::min(n, i0 + kTile);
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t i = i0; i < i1; ++i) d[r * drs + i * ds] = s[r * srs + i * ss];
      }
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r, d += drs, s += srs) {
    if (ss == 0) {
      const T v = *s;
      for (int64_t i = 0; i < n; ++i) d[i * ds] = v;
    } else if (ss == 1 && ds == 1) {
      std::memcpy(d, s, static_cast<size_t>(n) * sizeof(T));
    } else {
      for (int64_t i = 0; i < n; ++i) d[i * ds] = s[i * ss];
    }
  }
}
}  // namespace

// A c128 element, moved as a whole.
struct Element16 {
  uint64_t part[2];
};

void StridedCopy::Run(char* dst, const char* src) const {
  for (int d = 0; d < rank; ++d)
    if (dims[d] == 0) return;
  const int64_t es = static_cast<int64_t>(elem_size);
  int64_t n = dims[rank - 1], ss = src_strides[rank - 1], ds = dst_strides[rank - 1];
  const bool plane = rank >= 2;
  int64_t rows = plane ? dims[rank - 2] : 1;
  int64_t srs = plane ? src_strides[rank - 2] : 0, drs = plane ? dst_strides[rank - 2] : 0;
  // A few long rows loop faster than many short ones.
  if (n < 16 && rows > n) std::swap(n, rows), std::swap(ss, srs), std::swap(ds, drs);
  const int outer = rank - (plane ? 2 : 1);
  int64_t index[kMaxRank];
  for (int d = 0; d < rank; ++d) index[d] = 0;
  int64_t so = 0, dof = 0;
  while (true) {
    char* dp = dst + dof * es;
    const char* sp = src + so * es;
    switch (elem_size) {
      case 1:
        CopyPlane<uint8_t>(dp, sp, rows, drs, srs, n, ds, ss);
        break;
      case 2:
        CopyPlane<uint16_t>(dp, sp, rows, drs, srs, n, ds, ss);
        break;
      case 4:
        CopyPlane<uint32_t>(dp, sp, rows, drs, srs, n, ds, ss);
        break;
      case 8:
        CopyPlane<uint64_t>(dp, sp, rows, drs, srs, n, ds, ss);
        break;
      default:
        CopyPlane<Element16>(dp, sp, rows, drs, srs, n, ds, ss);
        break;
    }
    int d = outer - 1;
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

}  // namespace brt::ops

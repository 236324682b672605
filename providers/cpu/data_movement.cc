// Data movement kernels. They only move bytes, so one implementation per
// kernel serves every dtype; most are a single StridedCopy.
#include <algorithm>

#include "kernel.h"

namespace brt::cpu {
namespace {

// A copy whose source is a strided view of the operand; the result is
// contiguous. Used for broadcast_in_dim, transpose, slice and reverse.
class StridedViewKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    op.RequireOperands(1);
    op.RequireSameDTypes();
    const TensorInfo& in = op.in[0];
    const TensorInfo& out = op.out[0];
    op.Require(out.rank() <= kMaxRank && in.rank() <= kMaxRank, "rank above 16");
    const std::vector<int64_t> in_strides = in.Strides();
    const std::vector<int64_t> out_strides = out.Strides();
    std::vector<int64_t> src(out.rank(), 0);
    offset_ = 0;
    if (op.kind == "broadcast_in_dim") {
      std::vector<int64_t> bd = op.Ints("broadcast_dimensions");
      op.Require(static_cast<int>(bd.size()) == in.rank(),
                 "broadcast_dimensions has " + std::to_string(bd.size()) +
                     " entries for an operand of rank " + std::to_string(in.rank()));
      op.RequireDims(bd, out.rank(), "broadcast_dimensions");
      for (int k = 0; k < in.rank(); ++k) {
        int64_t d = bd[k];
        op.Require(in.dims[k] == out.dims[d] || in.dims[k] == 1,
                   "operand dimension " + std::to_string(k) + " (" + std::to_string(in.dims[k]) +
                       ") cannot broadcast to result dimension " + std::to_string(d) + " (" +
                       std::to_string(out.dims[d]) + ")");
        src[d] = in.dims[k] == 1 ? 0 : in_strides[k];
      }
    } else if (op.kind == "transpose") {
      std::vector<int64_t> perm = op.Ints("permutation");
      op.Require(
          static_cast<int>(perm.size()) == in.rank() && out.rank() == in.rank(),
          "permutation " + FormatDims(perm) + " does not match rank " + std::to_string(in.rank()));
      op.RequireDims(perm, in.rank(), "permutation");
      for (int d = 0; d < out.rank(); ++d) {
        op.Require(out.dims[d] == in.dims[perm[d]],
                   "result shape " + FormatDims(out.dims) + " is not the operand shape permuted");
        src[d] = in_strides[perm[d]];
      }
    } else if (op.kind == "slice") {
      std::vector<int64_t> start = op.Ints("start_indices");
      std::vector<int64_t> limit = op.Ints("limit_indices");
      std::vector<int64_t> step = op.Ints("strides", std::vector<int64_t>(in.rank(), 1));
      op.Require(static_cast<int>(start.size()) == in.rank() &&
                     static_cast<int>(limit.size()) == in.rank() &&
                     static_cast<int>(step.size()) == in.rank() && out.rank() == in.rank(),
                 "start_indices/limit_indices/strides must each have rank entries");
      for (int d = 0; d < in.rank(); ++d) {
        op.Require(0 <= start[d] && start[d] <= limit[d] && limit[d] <= in.dims[d] && step[d] > 0,
                   "dimension " + std::to_string(d) + ": slice [" + std::to_string(start[d]) + ":" +
                       std::to_string(limit[d]) + ":" + std::to_string(step[d]) +
                       "] is invalid for size " + std::to_string(in.dims[d]));
        op.Require(out.dims[d] == (limit[d] - start[d] + step[d] - 1) / step[d],
                   "result dimension " + std::to_string(d) + " does not match the slice");
        offset_ += start[d] * in_strides[d];
        src[d] = in_strides[d] * step[d];
      }
    } else {  // reverse
      std::vector<int64_t> dims = op.Ints("dimensions");
      op.RequireDims(dims, in.rank(), "dimensions");
      op.Require(in.dims == out.dims, "result shape differs from operand shape");
      src = in_strides;
      for (int64_t d : dims) {
        if (in.dims[d] > 0) offset_ += (in.dims[d] - 1) * in_strides[d];
        src[d] = -in_strides[d];
      }
    }
    copy_.rank = out.rank();
    copy_.elem_size = brt_dtype_size(out.dtype);
    for (int d = 0; d < out.rank(); ++d)
      copy_.dims[d] = out.dims[d], copy_.src_strides[d] = src[d],
      copy_.dst_strides[d] = out_strides[d];
    copy_.Simplify();
    offset_bytes_ = offset_ * static_cast<int64_t>(copy_.elem_size);
  }
  void Run(void* const* b) override {
    copy_.Run(static_cast<char*>(b[1]), static_cast<const char*>(b[0]) + offset_bytes_);
  }

 private:
  StridedCopy copy_;
  int64_t offset_ = 0, offset_bytes_ = 0;
};

class ReshapeKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    op.RequireOperands(1);
    op.RequireSameDTypes();
    op.Require(op.in[0].numel == op.out[0].numel, "operand " + FormatDims(op.in[0].dims) +
                                                      " and result " + FormatDims(op.out[0].dims) +
                                                      " have different sizes");
    bytes_ = op.out[0].bytes();
  }
  void Run(void* const* b) override {
    if (bytes_ && b[0] != b[1]) std::memcpy(b[1], b[0], bytes_);
  }

 private:
  size_t bytes_ = 0;
};

class ConcatenateKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    op.Require(!op.in.empty() && op.out.size() == 1, "expects operands and one result");
    op.RequireSameDTypes();
    const TensorInfo& out = op.out[0];
    const int64_t axis = op.Int("dimension");
    op.Require(axis >= 0 && axis < out.rank(),
               "dimension " + std::to_string(axis) + " is outside the rank");
    const std::vector<int64_t> out_strides = out.Strides();
    int64_t pos = 0;
    for (size_t i = 0; i < op.in.size(); ++i) {
      const TensorInfo& in = op.in[i];
      op.Require(in.rank() == out.rank(), "operand " + std::to_string(i) + " has another rank");
      for (int d = 0; d < out.rank(); ++d)
        op.Require(d == axis || in.dims[d] == out.dims[d],
                   "operand " + std::to_string(i) + " shape " + FormatDims(in.dims) +
                       " does not fit result " + FormatDims(out.dims));
      StridedCopy c;
      c.rank = out.rank();
      c.elem_size = brt_dtype_size(out.dtype);
      const std::vector<int64_t> in_strides = in.Strides();
      for (int d = 0; d < out.rank(); ++d)
        c.dims[d] = in.dims[d], c.src_strides[d] = in_strides[d], c.dst_strides[d] = out_strides[d];
      c.Simplify();
      pieces_.push_back({c, pos * out_strides[axis] * static_cast<int64_t>(c.elem_size)});
      pos += in.dims[axis];
    }
    op.Require(pos == out.dims[axis], "operand sizes along dimension " + std::to_string(axis) +
                                          " add up to " + std::to_string(pos) +
                                          ", the result has " + std::to_string(out.dims[axis]));
  }
  void Run(void* const* b) override {
    char* out = static_cast<char*>(b[pieces_.size()]);
    for (size_t i = 0; i < pieces_.size(); ++i)
      pieces_[i].copy.Run(out + pieces_[i].dst_offset, static_cast<const char*>(b[i]));
  }

 private:
  struct Piece {
    StridedCopy copy;
    int64_t dst_offset;
  };
  std::vector<Piece> pieces_;
};

// Fills the result with the padding value, then copies the part of the
// operand that lands inside it (negative padding crops).
class PadKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    op.RequireOperands(2);
    op.RequireSameDTypes();
    const TensorInfo& in = op.in[0];
    const TensorInfo& out = op.out[0];
    op.Require(op.in[1].numel == 1 && op.in[1].rank() == 0, "padding_value must be a scalar");
    const int r = in.rank();
    std::vector<int64_t> lo = op.Ints("edge_padding_low");
    std::vector<int64_t> hi = op.Ints("edge_padding_high");
    std::vector<int64_t> interior = op.Ints("interior_padding", std::vector<int64_t>(r, 0));
    op.Require(static_cast<int>(lo.size()) == r && static_cast<int>(hi.size()) == r &&
                   static_cast<int>(interior.size()) == r && out.rank() == r,
               "padding attributes must each have rank entries");
    const std::vector<int64_t> in_strides = in.Strides();
    const std::vector<int64_t> out_strides = out.Strides();
    copy_.rank = r;
    copy_.elem_size = brt_dtype_size(out.dtype);
    src_offset_ = dst_offset_ = 0;
    for (int d = 0; d < r; ++d) {
      op.Require(interior[d] >= 0, "interior_padding must be non-negative");
      const int64_t n = in.dims[d];
      const int64_t expect =
          op.Add(op.Add(lo[d], hi[d]), op.Add(n, op.Mul(std::max<int64_t>(n - 1, 0), interior[d])));
      op.Require(out.dims[d] == expect && expect >= 0,
                 "result dimension " + std::to_string(d) + " is " + std::to_string(out.dims[d]) +
                     ", padding gives " + std::to_string(expect));
      const int64_t step = interior[d] + 1;
      // First and one-past-last operand index whose position lo + i*step is in range.
      // Operand indices i with 0 <= lo + i*step < out: [first, last).
      const int64_t first = lo[d] >= 0 ? 0 : (-lo[d] + step - 1) / step;
      const int64_t room = out.dims[d] - lo[d];
      const int64_t last =
          std::max(first, room <= 0 ? int64_t{0} : std::min(n, (room + step - 1) / step));
      copy_.dims[d] = std::max<int64_t>(last - first, 0);
      copy_.src_strides[d] = in_strides[d];
      copy_.dst_strides[d] = out_strides[d] * step;
      src_offset_ += first * in_strides[d];
      dst_offset_ += (lo[d] + first * step) * out_strides[d];
    }
    copy_.Simplify();
    numel_ = out.numel;
    es_ = static_cast<int64_t>(copy_.elem_size);
  }
  void Run(void* const* b) override {
    char* out = static_cast<char*>(b[2]);
    const char* value = static_cast<const char*>(b[1]);
    for (int64_t i = 0; i < numel_; ++i)
      std::memcpy(out + i * es_, value, static_cast<size_t>(es_));
    copy_.Run(out + dst_offset_ * es_, static_cast<const char*>(b[0]) + src_offset_ * es_);
  }

 private:
  StridedCopy copy_;
  int64_t src_offset_ = 0, dst_offset_ = 0, numel_ = 0, es_ = 0;
};

class IotaKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    op.Require(op.in.empty() && op.out.size() == 1, "expects no operands and one result");
    const TensorInfo& out = op.out[0];
    const int64_t dim = op.Int("iota_dimension");
    op.Require(dim >= 0 && dim < out.rank(),
               "iota_dimension " + std::to_string(dim) + " is outside the rank");
    numel_ = out.numel;
    size_ = out.dims[dim];
    stride_ = out.Strides()[dim];
    DispatchType(out.dtype, [&](auto t) {
      using T = decltype(t);
      if constexpr (!std::is_same_v<T, Bool8>) fill_ = &Fill<T>;
    });
    if (!fill_) throw UnsupportedError("iota: not defined for i1");
  }
  void Run(void* const* b) override { fill_(b[0], numel_, size_, stride_); }

 private:
  template <typename T>
  static void Fill(void* out, int64_t numel, int64_t size, int64_t stride) {
    T* o = static_cast<T*>(out);
    for (int64_t i = 0; i < numel; ++i) o[i] = T(static_cast<Compute<T>>((i / stride) % size));
  }
  void (*fill_)(void*, int64_t, int64_t, int64_t) = nullptr;
  int64_t numel_ = 0, size_ = 1, stride_ = 1;
};

class ConstantKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    op.Require(op.in.empty() && op.out.size() == 1, "expects no operands and one result");
    bytes_ = op.Bytes("value");
    op.Require(bytes_.size() == op.out[0].bytes(), "value holds " + std::to_string(bytes_.size()) +
                                                       " bytes, the result needs " +
                                                       std::to_string(op.out[0].bytes()));
  }
  void Run(void* const* b) override {
    if (!bytes_.empty()) std::memcpy(b[0], bytes_.data(), bytes_.size());
  }

 private:
  std::vector<uint8_t> bytes_;
};

int64_t ReadIndex(const void* p, int32_t dtype) {
  return dtype == BRT_DTYPE_I32 ? *static_cast<const int32_t*>(p) : *static_cast<const int64_t*>(p);
}

// dynamic_slice(operand, i0, i1, ...) and dynamic_update_slice(operand,
// update, i0, i1, ...): start indices are scalars, clamped so the window
// stays inside the operand (StableHLO semantics).
class DynamicSliceKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    update_ = op.kind == "dynamic_update_slice";
    const int first_index = update_ ? 2 : 1;
    const TensorInfo& in = op.in[0];
    const TensorInfo& out = op.out[0];
    rank_ = in.rank();
    op.Require(static_cast<int>(op.in.size()) == first_index + rank_ && op.out.size() == 1,
               "expects " + std::to_string(first_index + rank_) + " operands for rank " +
                   std::to_string(rank_));
    op.Require(rank_ <= kMaxRank, "rank above 16");
    op.Require(out.dtype == in.dtype, "result dtype differs from operand dtype");
    for (int d = 0; d < rank_; ++d) {
      const TensorInfo& idx = op.in[first_index + d];
      op.Require(idx.rank() == 0 && (idx.dtype == BRT_DTYPE_I32 || idx.dtype == BRT_DTYPE_I64),
                 "start index " + std::to_string(d) + " must be an i32 or i64 scalar");
      index_types_[d] = idx.dtype;
    }
    std::vector<int64_t> window;
    if (update_) {
      const TensorInfo& upd = op.in[1];
      op.Require(upd.dtype == in.dtype && upd.rank() == rank_,
                 "update must match the operand's dtype and rank");
      op.Require(out.dims == in.dims, "result shape differs from operand shape");
      window = upd.dims;
    } else {
      window = op.Ints("slice_sizes");
      op.Require(static_cast<int>(window.size()) == rank_ && window == out.dims,
                 "slice_sizes " + FormatDims(window) + " must match the result shape " +
                     FormatDims(out.dims));
    }
    for (int d = 0; d < rank_; ++d) {
      op.Require(
          window[d] >= 0 && window[d] <= in.dims[d],
          "window " + FormatDims(window) + " does not fit in operand " + FormatDims(in.dims));
      max_start_[d] = in.dims[d] - window[d];
    }
    const std::vector<int64_t> in_strides = in.Strides();
    const std::vector<int64_t> win_strides = TensorInfo{in.dtype, window, 1}.Strides();
    copy_.rank = rank_;
    copy_.elem_size = brt_dtype_size(in.dtype);
    for (int d = 0; d < rank_; ++d) {
      copy_.dims[d] = window[d];
      copy_.src_strides[d] = update_ ? win_strides[d] : in_strides[d];
      copy_.dst_strides[d] = update_ ? in_strides[d] : win_strides[d];
      big_strides_[d] = in_strides[d];
    }
    if (rank_ == 0)
      copy_.rank = 1, copy_.dims[0] = 1, copy_.src_strides[0] = copy_.dst_strides[0] = 1;
    copy_.Simplify();
    total_bytes_ = in.bytes();
    first_index_ = first_index;
  }
  void Run(void* const* b) override {
    int64_t offset = 0;
    for (int d = 0; d < rank_; ++d) {
      int64_t start = ReadIndex(b[first_index_ + d], index_types_[d]);
      start = std::clamp<int64_t>(start, 0, max_start_[d]);
      offset += start * big_strides_[d];
    }
    const int64_t es = static_cast<int64_t>(copy_.elem_size);
    if (update_) {
      char* out = static_cast<char*>(b[first_index_ + rank_]);
      if (total_bytes_ && out != b[0]) std::memcpy(out, b[0], total_bytes_);
      copy_.Run(out + offset * es, static_cast<const char*>(b[1]));
    } else {
      copy_.Run(static_cast<char*>(b[first_index_ + rank_]),
                static_cast<const char*>(b[0]) + offset * es);
    }
  }

 private:
  bool update_ = false;
  int rank_ = 0, first_index_ = 1;
  int32_t index_types_[kMaxRank] = {};
  int64_t max_start_[kMaxRank] = {};
  int64_t big_strides_[kMaxRank] = {};
  StridedCopy copy_;
  size_t total_bytes_ = 0;
};

}  // namespace

void RegisterDataMovement(std::vector<KernelDef>& defs) {
  for (const char* kind : {"broadcast_in_dim", "transpose", "slice", "reverse"})
    defs.push_back({kind, kAllTypes, false, &Make<StridedViewKernel>});
  defs.push_back({"reshape", kAllTypes, false, &Make<ReshapeKernel>});
  defs.push_back({"concatenate", kAllTypes, false, &Make<ConcatenateKernel>});
  defs.push_back({"pad", kAllTypes, false, &Make<PadKernel>});
  std::vector<int32_t> iota_types = kAllTypes;
  iota_types.erase(std::find(iota_types.begin(), iota_types.end(), BRT_DTYPE_I1));
  defs.push_back({"iota", iota_types, false, &Make<IotaKernel>});
  defs.push_back({"constant", kAllTypes, false, &Make<ConstantKernel>});
  defs.push_back({"dynamic_slice", kAllTypes, false, &Make<DynamicSliceKernel>});
  defs.push_back({"dynamic_update_slice", kAllTypes, false, &Make<DynamicSliceKernel>});
}

}  // namespace brt::cpu

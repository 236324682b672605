// gather and scatter with StableHLO dimension numbers (batching dims are not
// supported yet). Start indices of gather are clamped into the operand; a
// scatter window that does not fit is skipped whole, as in XLA.
#include <algorithm>
#include <type_traits>

#include "kernel.h"

namespace brt::cpu {
namespace {

struct IndexVectors {
  const char* data;
  int32_t dtype;
  int64_t vector_stride;  // elements between components of one index vector
  int64_t Read(int64_t offset, int64_t k) const {
    const int64_t at = offset + k * vector_stride;
    return dtype == BRT_DTYPE_I32 ? reinterpret_cast<const int32_t*>(data)[at]
                                  : reinterpret_cast<const int64_t*>(data)[at];
  }
};

// The dims of the iterated tensor (gather: result, scatter: updates) that are
// not window dims index the start-index tensor, whose index_vector_dim holds
// the index vectors (absent when it equals its rank). Returns, per iterated
// dim, the stride into the indices (0 for window dims), and checks that index
// vectors have `vector_len` components.
std::vector<int64_t> BatchStrides(const OpInfo& op, const TensorInfo& indices,
                                  int64_t index_vector_dim, const std::vector<int64_t>& window_dims,
                                  int iterated_rank, size_t vector_len, const char* map_name,
                                  int64_t* vector_stride,
                                  std::vector<int64_t>* batch_dims_out = nullptr) {
  std::vector<int64_t> batch_dims_of_iterated;
  for (int d = 0; d < iterated_rank; ++d)
    if (std::find(window_dims.begin(), window_dims.end(), d) == window_dims.end())
      batch_dims_of_iterated.push_back(d);
  if (batch_dims_out) *batch_dims_out = batch_dims_of_iterated;
  const std::vector<int64_t> istr = indices.Strides();
  op.Require(index_vector_dim >= 0 && index_vector_dim <= indices.rank(),
             "index_vector_dim " + std::to_string(index_vector_dim) + " is outside [0, rank]");
  const bool has_vector = index_vector_dim < indices.rank();
  const int64_t len = has_vector ? indices.dims[index_vector_dim] : 1;
  op.Require(len == static_cast<int64_t>(vector_len), "index vectors have " + std::to_string(len) +
                                                          " components, " + map_name + " has " +
                                                          std::to_string(vector_len));
  *vector_stride = has_vector ? istr[index_vector_dim] : 0;
  std::vector<int64_t> idims;
  for (int d = 0; d < indices.rank(); ++d)
    if (d != index_vector_dim) idims.push_back(d);
  op.Require(idims.size() == batch_dims_of_iterated.size(),
             "the indices' batch dimensions (" + std::to_string(idims.size()) +
                 ") do not match the " + std::to_string(batch_dims_of_iterated.size()) +
                 " batch dimensions of the op");
  std::vector<int64_t> strides(iterated_rank, 0);
  for (size_t k = 0; k < idims.size(); ++k) strides[batch_dims_of_iterated[k]] = istr[idims[k]];
  return strides;
}

class GatherKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    op.RequireOperands(2);
    const TensorInfo& operand = op.in[0];
    const TensorInfo& indices = op.in[1];
    const TensorInfo& out = op.out[0];
    op.Require(out.dtype == operand.dtype, "result dtype differs from operand dtype");
    op.Require(indices.dtype == BRT_DTYPE_I32 || indices.dtype == BRT_DTYPE_I64,
               "indices must be i32 or i64");
    op.Require(op.Ints("operand_batching_dims", {}).empty(),
               "operand_batching_dims are not supported yet");
    op.Require(out.rank() <= kMaxRank && operand.rank() <= kMaxRank, "rank above 16");
    const std::vector<int64_t> offset_dims = op.Ints("offset_dims");
    const std::vector<int64_t> collapsed = op.Ints("collapsed_slice_dims");
    const std::vector<int64_t> start_map = op.Ints("start_index_map");
    const std::vector<int64_t> slice_sizes = op.Ints("slice_sizes");
    const int64_t ivd = op.Int("index_vector_dim", indices.rank());
    op.RequireDims(offset_dims, out.rank(), "offset_dims");
    op.RequireDims(collapsed, operand.rank(), "collapsed_slice_dims");
    op.RequireDims(start_map, operand.rank(), "start_index_map");
    op.Require(static_cast<int>(slice_sizes.size()) == operand.rank(),
               "slice_sizes must have operand-rank entries");

    std::vector<int64_t> batch_dims;
    batch_strides_ = BatchStrides(op, indices, ivd, offset_dims, out.rank(), start_map.size(),
                                  "start_index_map", &vector_stride_, &batch_dims);
    const std::vector<int64_t> ostr = operand.Strides();
    window_strides_.assign(out.rank(), 0);
    std::vector<int64_t> window_operand_dims;
    for (int d = 0; d < operand.rank(); ++d) {
      op.Require(slice_sizes[d] >= 0 && slice_sizes[d] <= operand.dims[d],
                 "slice_sizes " + FormatDims(slice_sizes) + " exceed the operand " +
                     FormatDims(operand.dims));
      if (std::find(collapsed.begin(), collapsed.end(), d) != collapsed.end()) {
        op.Require(slice_sizes[d] <= 1,
                   "collapsed dimension " + std::to_string(d) + " must have slice size 1");
        continue;
      }
      window_operand_dims.push_back(d);
    }
    op.Require(window_operand_dims.size() == offset_dims.size(),
               "offset_dims has " + std::to_string(offset_dims.size()) +
                   " entries, the slice has " + std::to_string(window_operand_dims.size()) +
                   " uncollapsed dimensions");
    for (size_t k = 0; k < offset_dims.size(); ++k) {
      const int64_t od = window_operand_dims[k];
      op.Require(out.dims[offset_dims[k]] == slice_sizes[od],
                 "result dimension " + std::to_string(offset_dims[k]) + " must equal slice size " +
                     std::to_string(slice_sizes[od]));
      window_strides_[offset_dims[k]] = ostr[od];
    }
    for (size_t k = 0; k < batch_dims.size(); ++k) {
      int64_t idim = 0;
      for (int d = 0, seen = 0; d < indices.rank(); ++d)
        if (d != ivd && seen++ == static_cast<int>(k)) idim = d;
      op.Require(out.dims[batch_dims[k]] == indices.dims[idim],
                 "batch dimension sizes of result and indices differ");
    }
    for (size_t k = 0; k < start_map.size(); ++k) {
      start_dims_.push_back(start_map[k]);
      start_strides_.push_back(ostr[start_map[k]]);
      start_max_.push_back(operand.dims[start_map[k]] - slice_sizes[start_map[k]]);
    }
    rank_ = out.rank();
    dims_ = out.dims;
    numel_ = out.numel;
    es_ = brt_dtype_size(out.dtype);
    index_dtype_ = indices.dtype;
  }

  void Run(void* const* b) override {
    const char* operand = static_cast<const char*>(b[0]);
    const IndexVectors iv{static_cast<const char*>(b[1]), index_dtype_, vector_stride_};
    char* out = static_cast<char*>(b[2]);
    int64_t idx[kMaxRank] = {};
    const size_t nk = start_dims_.size();
    for (int64_t e = 0; e < numel_; ++e) {
      int64_t ioff = 0, woff = 0;
      for (int d = 0; d < rank_; ++d)
        ioff += idx[d] * batch_strides_[d], woff += idx[d] * window_strides_[d];
      int64_t soff = 0;
      for (size_t k = 0; k < nk; ++k)
        soff += std::clamp<int64_t>(iv.Read(ioff, k), 0, start_max_[k]) * start_strides_[k];
      std::memcpy(out + e * es_, operand + (soff + woff) * static_cast<int64_t>(es_), es_);
      for (int d = rank_ - 1; d >= 0; --d) {
        if (++idx[d] < dims_[d]) break;
        idx[d] = 0;
      }
    }
  }

 private:
  int rank_ = 0;
  std::vector<int64_t> dims_, batch_strides_, window_strides_, start_dims_, start_strides_,
      start_max_;
  int64_t vector_stride_ = 0, numel_ = 0;
  size_t es_ = 4;
  int32_t index_dtype_ = BRT_DTYPE_I32;
};

class ScatterKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    op.RequireOperands(3);
    const TensorInfo& operand = op.in[0];
    const TensorInfo& indices = op.in[1];
    const TensorInfo& updates = op.in[2];
    const TensorInfo& out = op.out[0];
    op.Require(out.dtype == operand.dtype && updates.dtype == operand.dtype,
               "operand, updates and result dtypes differ");
    op.Require(out.dims == operand.dims, "result shape differs from operand shape");
    op.Require(indices.dtype == BRT_DTYPE_I32 || indices.dtype == BRT_DTYPE_I64,
               "indices must be i32 or i64");
    op.Require(op.Ints("input_batching_dims", {}).empty(),
               "input_batching_dims are not supported yet");
    op.Require(updates.rank() <= kMaxRank && operand.rank() <= kMaxRank, "rank above 16");
    const std::string mode = op.String("mode");
    op.Require(mode == "add" || mode == "replace", "mode '" + mode + "' is not 'add' or 'replace'");
    const std::vector<int64_t> window_dims = op.Ints("update_window_dims");
    const std::vector<int64_t> inserted = op.Ints("inserted_window_dims");
    const std::vector<int64_t> to_operand = op.Ints("scatter_dims_to_operand_dims");
    const int64_t ivd = op.Int("index_vector_dim", indices.rank());
    op.RequireDims(window_dims, updates.rank(), "update_window_dims");
    op.RequireDims(inserted, operand.rank(), "inserted_window_dims");
    op.RequireDims(to_operand, operand.rank(), "scatter_dims_to_operand_dims");

    batch_strides_ = BatchStrides(op, indices, ivd, window_dims, updates.rank(), to_operand.size(),
                                  "scatter_dims_to_operand_dims", &vector_stride_);
    const std::vector<int64_t> ostr = operand.Strides();
    std::vector<int64_t> window_operand_dims;
    for (int d = 0; d < operand.rank(); ++d)
      if (std::find(inserted.begin(), inserted.end(), d) == inserted.end())
        window_operand_dims.push_back(d);
    op.Require(window_operand_dims.size() == window_dims.size(),
               "update_window_dims has " + std::to_string(window_dims.size()) +
                   " entries, the operand has " + std::to_string(window_operand_dims.size()) +
                   " window dimensions");
    window_strides_.assign(updates.rank(), 0);
    std::vector<int64_t> window_size(operand.rank(), 1);
    for (size_t k = 0; k < window_dims.size(); ++k) {
      const int64_t od = window_operand_dims[k];
      op.Require(updates.dims[window_dims[k]] <= operand.dims[od],
                 "update window is larger than the operand");
      window_strides_[window_dims[k]] = ostr[od];
      window_size[od] = updates.dims[window_dims[k]];
    }
    for (size_t k = 0; k < to_operand.size(); ++k) {
      start_strides_.push_back(ostr[to_operand[k]]);
      start_max_.push_back(operand.dims[to_operand[k]] - window_size[to_operand[k]]);
    }
    rank_ = updates.rank();
    dims_ = updates.dims;
    numel_ = updates.numel;
    operand_bytes_ = operand.bytes();
    index_dtype_ = indices.dtype;
    DispatchType(out.dtype, [&](auto t) {
      using T = decltype(t);
      if (mode == "replace") {
        apply_ = &Replace<T>;
      } else if constexpr (!std::is_same_v<T, Bool8>) {
        apply_ = &Add<T>;
      }
    });
    op.Require(apply_ != nullptr, "mode 'add' is not defined for i1");
  }

  void Run(void* const* b) override {
    char* out = static_cast<char*>(b[3]);
    if (operand_bytes_ && out != b[0]) std::memcpy(out, b[0], operand_bytes_);
    const IndexVectors iv{static_cast<const char*>(b[1]), index_dtype_, vector_stride_};
    const char* updates = static_cast<const char*>(b[2]);
    int64_t idx[kMaxRank] = {};
    const size_t nk = start_strides_.size();
    for (int64_t e = 0; e < numel_; ++e) {
      int64_t ioff = 0, woff = 0;
      for (int d = 0; d < rank_; ++d)
        ioff += idx[d] * batch_strides_[d], woff += idx[d] * window_strides_[d];
      int64_t soff = 0;
      bool inside = true;
      for (size_t k = 0; k < nk && inside; ++k) {
        const int64_t s = iv.Read(ioff, k);
        inside = s >= 0 && s <= start_max_[k];
        soff += s * start_strides_[k];
      }
      if (inside) apply_(out, soff + woff, updates, e);
      for (int d = rank_ - 1; d >= 0; --d) {
        if (++idx[d] < dims_[d]) break;
        idx[d] = 0;
      }
    }
  }

 private:
  template <typename T>
  static void Replace(char* out, int64_t at, const char* upd, int64_t e) {
    reinterpret_cast<T*>(out)[at] = reinterpret_cast<const T*>(upd)[e];
  }
  template <typename T>
  static void Add(char* out, int64_t at, const char* upd, int64_t e) {
    using C = Compute<T>;
    T& dst = reinterpret_cast<T*>(out)[at];
    const C u = C(reinterpret_cast<const T*>(upd)[e]);
    if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;  // integer sums wrap instead of overflowing
      dst = T(static_cast<C>(static_cast<U>(C(dst)) + static_cast<U>(u)));
    } else {
      dst = T(static_cast<C>(C(dst) + u));
    }
  }
  int rank_ = 0;
  std::vector<int64_t> dims_, batch_strides_, window_strides_, start_strides_, start_max_;
  int64_t vector_stride_ = 0, numel_ = 0;
  size_t operand_bytes_ = 0;
  int32_t index_dtype_ = BRT_DTYPE_I32;
  void (*apply_)(char*, int64_t, const char*, int64_t) = nullptr;
};

}  // namespace

void RegisterIndexing(std::vector<KernelDef>& defs) {
  defs.push_back({"gather", kAllTypes, false, &Make<GatherKernel>});
  defs.push_back({"scatter", kAllTypes, false, &Make<ScatterKernel>});
}

}  // namespace brt::cpu

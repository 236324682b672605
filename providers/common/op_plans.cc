// Op plans (see op_plans.h): validation and layout arithmetic per op kind.
#include "common/op_plans.h"

#include <algorithm>
#include <numeric>

namespace brt::ops {

StridedView PlanStridedView(const OpInfo& op) {
  op.RequireOperands(1);
  op.RequireSameDTypes();
  const TensorInfo& in = op.in[0];
  const TensorInfo& out = op.out[0];
  op.Require(out.rank() <= kMaxRank && in.rank() <= kMaxRank, "rank above 16");
  const std::vector<int64_t> in_strides = in.Strides();
  const std::vector<int64_t> out_strides = out.Strides();
  std::vector<int64_t> src(out.rank(), 0);
  StridedView v;
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
      v.src_offset += start[d] * in_strides[d];
      src[d] = in_strides[d] * step[d];
    }
  } else if (op.kind == "reverse") {
    std::vector<int64_t> dims = op.Ints("dimensions");
    op.RequireDims(dims, in.rank(), "dimensions");
    op.Require(in.dims == out.dims, "result shape differs from operand shape");
    src = in_strides;
    for (int64_t d : dims) {
      if (in.dims[d] > 0) v.src_offset += (in.dims[d] - 1) * in_strides[d];
      src[d] = -in_strides[d];
    }
  } else {
    throw KernelError(op.kind + ": not a strided view op");
  }
  v.copy.rank = out.rank();
  v.copy.elem_size = brt_dtype_size(out.dtype);
  for (int d = 0; d < out.rank(); ++d)
    v.copy.dims[d] = out.dims[d], v.copy.src_strides[d] = src[d],
    v.copy.dst_strides[d] = out_strides[d];
  v.copy.Simplify();
  return v;
}

size_t PlanReshape(const OpInfo& op) {
  op.RequireOperands(1);
  op.RequireSameDTypes();
  op.Require(op.in[0].numel == op.out[0].numel, "operand " + FormatDims(op.in[0].dims) +
                                                    " and result " + FormatDims(op.out[0].dims) +
                                                    " have different sizes");
  return op.out[0].bytes();
}

std::vector<ConcatPiece> PlanConcatenate(const OpInfo& op) {
  op.Require(!op.in.empty() && op.out.size() == 1, "expects operands and one result");
  op.RequireSameDTypes();
  const TensorInfo& out = op.out[0];
  const int64_t axis = op.Int("dimension");
  op.Require(axis >= 0 && axis < out.rank(),
             "dimension " + std::to_string(axis) + " is outside the rank");
  op.Require(out.rank() <= kMaxRank, "rank above 16");
  const std::vector<int64_t> out_strides = out.Strides();
  std::vector<ConcatPiece> pieces;
  int64_t pos = 0;
  for (size_t i = 0; i < op.in.size(); ++i) {
    const TensorInfo& in = op.in[i];
    op.Require(in.rank() == out.rank(), "operand " + std::to_string(i) + " has another rank");
    for (int d = 0; d < out.rank(); ++d)
      op.Require(d == axis || in.dims[d] == out.dims[d],
                 "operand " + std::to_string(i) + " shape " + FormatDims(in.dims) +
                     " does not fit result " + FormatDims(out.dims));
    ConcatPiece p;
    p.copy.rank = out.rank();
    p.copy.elem_size = brt_dtype_size(out.dtype);
    const std::vector<int64_t> in_strides = in.Strides();
    for (int d = 0; d < out.rank(); ++d)
      p.copy.dims[d] = in.dims[d], p.copy.src_strides[d] = in_strides[d],
      p.copy.dst_strides[d] = out_strides[d];
    p.copy.Simplify();
    p.dst_offset = pos * out_strides[axis];
    pieces.push_back(p);
    pos += in.dims[axis];
  }
  op.Require(pos == out.dims[axis], "operand sizes along dimension " + std::to_string(axis) +
                                        " add up to " + std::to_string(pos) + ", the result has " +
                                        std::to_string(out.dims[axis]));
  return pieces;
}

PadPlan PlanPad(const OpInfo& op) {
  op.RequireOperands(2);
  op.RequireSameDTypes();
  const TensorInfo& in = op.in[0];
  const TensorInfo& out = op.out[0];
  op.Require(op.in[1].numel == 1 && op.in[1].rank() == 0, "padding_value must be a scalar");
  const int r = in.rank();
  op.Require(r <= kMaxRank, "rank above 16");
  std::vector<int64_t> lo = op.Ints("edge_padding_low");
  std::vector<int64_t> hi = op.Ints("edge_padding_high");
  std::vector<int64_t> interior = op.Ints("interior_padding", std::vector<int64_t>(r, 0));
  op.Require(static_cast<int>(lo.size()) == r && static_cast<int>(hi.size()) == r &&
                 static_cast<int>(interior.size()) == r && out.rank() == r,
             "padding attributes must each have rank entries");
  const std::vector<int64_t> in_strides = in.Strides();
  const std::vector<int64_t> out_strides = out.Strides();
  PadPlan p;
  p.copy.rank = r;
  p.copy.elem_size = brt_dtype_size(out.dtype);
  for (int d = 0; d < r; ++d) {
    op.Require(interior[d] >= 0, "interior_padding must be non-negative");
    const int64_t n = in.dims[d];
    const int64_t expect =
        op.Add(op.Add(lo[d], hi[d]), op.Add(n, op.Mul(std::max<int64_t>(n - 1, 0), interior[d])));
    op.Require(out.dims[d] == expect && expect >= 0,
               "result dimension " + std::to_string(d) + " is " + std::to_string(out.dims[d]) +
                   ", padding gives " + std::to_string(expect));
    const int64_t step = interior[d] + 1;
    // Operand indices i with 0 <= lo + i*step < out: [first, last).
    const int64_t first = lo[d] >= 0 ? 0 : (-lo[d] + step - 1) / step;
    const int64_t room = out.dims[d] - lo[d];
    const int64_t last =
        std::max(first, room <= 0 ? int64_t{0} : std::min(n, (room + step - 1) / step));
    p.copy.dims[d] = std::max<int64_t>(last - first, 0);
    p.copy.src_strides[d] = in_strides[d];
    p.copy.dst_strides[d] = out_strides[d] * step;
    p.src_offset += first * in_strides[d];
    p.dst_offset += (lo[d] + first * step) * out_strides[d];
  }
  p.copy.Simplify();
  return p;
}

IotaPlan PlanIota(const OpInfo& op) {
  op.Require(op.in.empty() && op.out.size() == 1, "expects no operands and one result");
  const TensorInfo& out = op.out[0];
  const int64_t dim = op.Int("iota_dimension");
  op.Require(dim >= 0 && dim < out.rank(),
             "iota_dimension " + std::to_string(dim) + " is outside the rank");
  op.Require(out.dtype != BRT_DTYPE_I1, "iota is not defined for i1");
  return {out.dims[dim], out.Strides()[dim]};
}

DynamicSlicePlan PlanDynamicSlice(const OpInfo& op) {
  DynamicSlicePlan p;
  p.update = op.kind == "dynamic_update_slice";
  p.first_index = p.update ? 2 : 1;
  const TensorInfo& in = op.in.at(0);
  const TensorInfo& out = op.out.at(0);
  p.rank = in.rank();
  op.Require(static_cast<int>(op.in.size()) == p.first_index + p.rank && op.out.size() == 1,
             "expects " + std::to_string(p.first_index + p.rank) + " operands for rank " +
                 std::to_string(p.rank));
  op.Require(p.rank <= kMaxRank, "rank above 16");
  op.Require(out.dtype == in.dtype, "result dtype differs from operand dtype");
  for (int d = 0; d < p.rank; ++d) {
    const TensorInfo& idx = op.in[p.first_index + d];
    op.Require(idx.rank() == 0 && (idx.dtype == BRT_DTYPE_I32 || idx.dtype == BRT_DTYPE_I64),
               "start index " + std::to_string(d) + " must be an i32 or i64 scalar");
    p.index_dtypes[d] = idx.dtype;
  }
  std::vector<int64_t> window;
  if (p.update) {
    const TensorInfo& upd = op.in[1];
    op.Require(upd.dtype == in.dtype && upd.rank() == p.rank,
               "update must match the operand's dtype and rank");
    op.Require(out.dims == in.dims, "result shape differs from operand shape");
    window = upd.dims;
  } else {
    window = op.Ints("slice_sizes");
    op.Require(static_cast<int>(window.size()) == p.rank && window == out.dims,
               "slice_sizes " + FormatDims(window) + " must match the result shape " +
                   FormatDims(out.dims));
  }
  for (int d = 0; d < p.rank; ++d) {
    op.Require(window[d] >= 0 && window[d] <= in.dims[d],
               "window " + FormatDims(window) + " does not fit in operand " + FormatDims(in.dims));
    p.max_start[d] = in.dims[d] - window[d];
  }
  const std::vector<int64_t> in_strides = in.Strides();
  const std::vector<int64_t> win_strides = TensorInfo{in.dtype, window, 1}.Strides();
  p.copy.rank = p.rank;
  p.copy.elem_size = brt_dtype_size(in.dtype);
  for (int d = 0; d < p.rank; ++d) {
    p.copy.dims[d] = window[d];
    p.copy.src_strides[d] = p.update ? win_strides[d] : in_strides[d];
    p.copy.dst_strides[d] = p.update ? in_strides[d] : win_strides[d];
    p.operand_strides[d] = in_strides[d];
  }
  if (p.rank == 0)
    p.copy.rank = 1, p.copy.dims[0] = 1, p.copy.src_strides[0] = p.copy.dst_strides[0] = 1;
  p.copy.Simplify();
  p.operand_bytes = in.bytes();
  return p;
}

namespace {

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

}  // namespace

IndexPlan PlanGather(const OpInfo& op) {
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
  IndexPlan p;
  std::vector<int64_t> batch_dims;
  p.batch_strides = BatchStrides(op, indices, ivd, offset_dims, out.rank(), start_map.size(),
                                 "start_index_map", &p.vector_stride, &batch_dims);
  const std::vector<int64_t> ostr = operand.Strides();
  p.window_strides.assign(out.rank(), 0);
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
             "offset_dims has " + std::to_string(offset_dims.size()) + " entries, the slice has " +
                 std::to_string(window_operand_dims.size()) + " uncollapsed dimensions");
  for (size_t k = 0; k < offset_dims.size(); ++k) {
    const int64_t od = window_operand_dims[k];
    op.Require(out.dims[offset_dims[k]] == slice_sizes[od],
               "result dimension " + std::to_string(offset_dims[k]) + " must equal slice size " +
                   std::to_string(slice_sizes[od]));
    p.window_strides[offset_dims[k]] = ostr[od];
  }
  for (size_t k = 0; k < batch_dims.size(); ++k) {
    int64_t idim = 0;
    for (int d = 0, seen = 0; d < indices.rank(); ++d)
      if (d != ivd && seen++ == static_cast<int>(k)) idim = d;
    op.Require(out.dims[batch_dims[k]] == indices.dims[idim],
               "batch dimension sizes of result and indices differ");
  }
  op.Require(start_map.size() <= static_cast<size_t>(kMaxRank), "index vectors above 16 entries");
  for (int64_t d : start_map) {
    p.start_strides.push_back(ostr[d]);
    p.start_max.push_back(operand.dims[d] - slice_sizes[d]);
  }
  p.dims = out.dims;
  p.numel = out.numel;
  p.index_dtype = indices.dtype;
  return p;
}

ScatterPlan PlanScatter(const OpInfo& op) {
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
  op.Require(mode == "replace" || out.dtype != BRT_DTYPE_I1, "mode 'add' is not defined for i1");
  const std::vector<int64_t> window_dims = op.Ints("update_window_dims");
  const std::vector<int64_t> inserted = op.Ints("inserted_window_dims");
  const std::vector<int64_t> to_operand = op.Ints("scatter_dims_to_operand_dims");
  const int64_t ivd = op.Int("index_vector_dim", indices.rank());
  op.RequireDims(window_dims, updates.rank(), "update_window_dims");
  op.RequireDims(inserted, operand.rank(), "inserted_window_dims");
  op.RequireDims(to_operand, operand.rank(), "scatter_dims_to_operand_dims");
  ScatterPlan p;
  p.add = mode == "add";
  p.batch_strides = BatchStrides(op, indices, ivd, window_dims, updates.rank(), to_operand.size(),
                                 "scatter_dims_to_operand_dims", &p.vector_stride);
  const std::vector<int64_t> ostr = operand.Strides();
  std::vector<int64_t> window_operand_dims;
  for (int d = 0; d < operand.rank(); ++d)
    if (std::find(inserted.begin(), inserted.end(), d) == inserted.end())
      window_operand_dims.push_back(d);
  op.Require(window_operand_dims.size() == window_dims.size(),
             "update_window_dims has " + std::to_string(window_dims.size()) +
                 " entries, the operand has " + std::to_string(window_operand_dims.size()) +
                 " window dimensions");
  p.window_strides.assign(updates.rank(), 0);
  std::vector<int64_t> window_size(operand.rank(), 1);
  for (size_t k = 0; k < window_dims.size(); ++k) {
    const int64_t od = window_operand_dims[k];
    op.Require(updates.dims[window_dims[k]] <= operand.dims[od],
               "update window is larger than the operand");
    p.window_strides[window_dims[k]] = ostr[od];
    window_size[od] = updates.dims[window_dims[k]];
  }
  for (int64_t d : to_operand) {
    p.start_strides.push_back(ostr[d]);
    p.start_max.push_back(operand.dims[d] - window_size[d]);
  }
  p.dims = updates.dims;
  p.numel = updates.numel;
  p.operand_bytes = operand.bytes();
  p.index_dtype = indices.dtype;
  return p;
}

bool ParseReducer(const std::string& name, Reducer* r) {
  static const std::pair<const char*, Reducer> kNames[] = {
      {"add", Reducer::kAdd}, {"mul", Reducer::kMul}, {"max", Reducer::kMax},
      {"min", Reducer::kMin}, {"and", Reducer::kAnd}, {"or", Reducer::kOr}};
  for (auto [n, v] : kNames)
    if (name == n) return *r = v, true;
  return false;
}

bool ReducerDefinedFor(Reducer r, int32_t dtype) {
  return !IsFloat(dtype) || (r != Reducer::kAnd && r != Reducer::kOr);
}

ReducePlan PlanReduce(const OpInfo& op) {
  op.RequireOperands(2);
  op.RequireSameDTypes();
  const TensorInfo& in = op.in[0];
  op.Require(op.in[1].rank() == 0, "init value must be a scalar");
  op.Require(in.rank() <= kMaxRank, "rank above 16");
  std::vector<int64_t> dims = op.Ints("dimensions");
  op.RequireDims(dims, in.rank(), "dimensions");
  ReducePlan p;
  const std::string name = op.String("reducer");
  op.Require(ParseReducer(name, &p.reducer),
             "reducer '" + name + "' is not add, mul, max, min, and or or");
  if (!ReducerDefinedFor(p.reducer, in.dtype))
    throw UnsupportedError("reduce: reducer '" + name + "' is not defined for " +
                           DTypeName(in.dtype));
  std::vector<bool> reduced(in.rank(), false);
  for (int64_t d : dims) reduced[d] = true;
  std::vector<int64_t> kept;
  for (int d = 0; d < in.rank(); ++d)
    if (!reduced[d]) kept.push_back(in.dims[d]);
  op.Require(kept == op.out[0].dims,
             "result shape " + FormatDims(op.out[0].dims) + " should be " + FormatDims(kept));
  // Output strides per input dimension (0 where reduced), then collapse.
  std::vector<int64_t> ostr(in.rank(), 0);
  for (int d = in.rank() - 1, s = 1; d >= 0; --d)
    if (!reduced[d]) ostr[d] = s, s *= in.dims[d];
  for (int d = 0; d < in.rank(); ++d) {
    if (in.dims[d] == 1) continue;
    if (p.rank > 0 && p.ostr[p.rank - 1] == ostr[d] * in.dims[d] &&
        (p.ostr[p.rank - 1] == 0) == (ostr[d] == 0)) {
      p.dims[p.rank - 1] *= in.dims[d];
      p.ostr[p.rank - 1] = ostr[d];
      continue;
    }
    p.dims[p.rank] = in.dims[d], p.ostr[p.rank] = ostr[d], ++p.rank;
  }
  if (p.rank == 0) p.dims[0] = 1, p.ostr[0] = 0, p.rank = 1;
  p.in_numel = in.numel;
  p.out_numel = op.out[0].numel;
  return p;
}

ReduceWindowPlan PlanReduceWindow(const OpInfo& op) {
  op.RequireOperands(2);
  op.RequireSameDTypes();
  const TensorInfo& in = op.in[0];
  const TensorInfo& out = op.out[0];
  const int r = in.rank();
  op.Require(op.in[1].rank() == 0, "init value must be a scalar");
  op.Require(out.rank() == r && r <= kMaxRank, "result rank differs from operand rank");
  ReduceWindowPlan p;
  p.window = op.Ints("window_dimensions");
  p.strides = op.Ints("window_strides", std::vector<int64_t>(r, 1));
  p.base_dil = op.Ints("base_dilations", std::vector<int64_t>(r, 1));
  p.win_dil = op.Ints("window_dilations", std::vector<int64_t>(r, 1));
  p.padding = op.Ints("padding", std::vector<int64_t>(2 * r, 0));
  op.Require(static_cast<int>(p.window.size()) == r && static_cast<int>(p.strides.size()) == r &&
                 static_cast<int>(p.base_dil.size()) == r &&
                 static_cast<int>(p.win_dil.size()) == r &&
                 static_cast<int>(p.padding.size()) == 2 * r,
             "window attributes must have rank entries (padding: 2 per dimension)");
  p.pad_lo.resize(r);
  for (int d = 0; d < r; ++d) {
    op.Require(p.window[d] > 0 && p.strides[d] > 0 && p.base_dil[d] > 0 && p.win_dil[d] > 0,
               "window sizes, strides and dilations must be positive");
    p.pad_lo[d] = p.padding[2 * d];
    const int64_t dilated_in =
        in.dims[d] == 0 ? 0 : op.Add(op.Mul(in.dims[d] - 1, p.base_dil[d]), 1);
    const int64_t padded = op.Add(op.Add(dilated_in, p.padding[2 * d]), p.padding[2 * d + 1]);
    const int64_t dilated_win = op.Add(op.Mul(p.window[d] - 1, p.win_dil[d]), 1);
    const int64_t expect = padded < dilated_win ? 0 : (padded - dilated_win) / p.strides[d] + 1;
    op.Require(out.dims[d] == expect, "result dimension " + std::to_string(d) + " is " +
                                          std::to_string(out.dims[d]) + ", the window gives " +
                                          std::to_string(expect));
  }
  p.in_dims = in.dims;
  p.in_strides = in.Strides();
  p.out_dims = out.dims;
  p.out_numel = out.numel;
  // Windows are only walked for non-empty results, where each fits the padded input.
  if (p.out_numel > 0)
    for (int64_t w : p.window) p.window_numel = op.Mul(p.window_numel, w);
  const std::string name = op.String("reducer");
  op.Require(
      ParseReducer(name, &p.reducer) &&
          (p.reducer == Reducer::kAdd || p.reducer == Reducer::kMax || p.reducer == Reducer::kMin),
      "reducer '" + name + "' is not add, max or min");
  if (in.dtype == BRT_DTYPE_I1) throw UnsupportedError("reduce_window: not defined for i1");
  return p;
}

SoftmaxPlan PlanSoftmax(const OpInfo& op) {
  op.RequireOperands(1);
  op.RequireSameDTypes();
  op.Require(op.in[0].dims == op.out[0].dims, "result shape differs from operand shape");
  const std::vector<int64_t>& dims = op.in[0].dims;
  const int r = op.in[0].rank();
  SoftmaxPlan p;
  p.axis = op.Int("axis", r - 1);
  op.Require(r > 0 && p.axis >= 0 && p.axis < r,
             "axis " + std::to_string(p.axis) + " is outside the rank");
  for (int d = 0; d < r; ++d) (d < p.axis ? p.outer : d == p.axis ? p.size : p.inner) *= dims[d];
  return p;
}

LayerNormPlan PlanLayerNorm(const OpInfo& op) {
  op.RequireOperands(3);
  const TensorInfo& x = op.in[0];
  op.Require(x.rank() >= 1 && x.dims == op.out[0].dims && x.dtype == op.out[0].dtype,
             "result must match the operand");
  LayerNormPlan p;
  p.cols = x.dims.back();
  p.rows = p.cols ? x.numel / p.cols : 0;
  for (int i = 1; i <= 2; ++i)
    op.Require(op.in[i].dims == std::vector<int64_t>{p.cols} && op.in[i].dtype == BRT_DTYPE_F32,
               "scale and shift must be f32 of shape [" + std::to_string(p.cols) + "]");
  p.epsilon = op.Float("epsilon", 1e-5);
  op.Require(p.epsilon >= 0, "epsilon must be non-negative");
  return p;
}

Activation ParseActivation(const OpInfo& op) {
  const std::string act = op.String("activation", "none");
  static const std::pair<const char*, Activation> kActivations[] = {{"none", Activation::kNone},
                                                                    {"relu", Activation::kRelu},
                                                                    {"tanh", Activation::kTanh},
                                                                    {"gelu", Activation::kGelu}};
  for (auto [name, a] : kActivations)
    if (act == name) return a;
  throw KernelError(op.kind + ": activation '" + act + "' is not none, relu, tanh or gelu");
}

DotDims PlanDot(const OpInfo& op) {
  // brt.matmul: dot_general plus an optional bias operand (see Epilogue).
  op.Require(
      (op.in.size() == 2 || (op.kind == "brt.matmul" && op.in.size() == 3)) && op.out.size() == 1,
      "expected 2 operands" + std::string(op.kind == "brt.matmul" ? " (3 with a bias)" : "") +
          " and 1 result");
  const TensorInfo& l = op.in[0];
  const TensorInfo& r = op.in[1];
  DotDims d;
  d.lb = op.Ints("lhs_batching_dimensions", {});
  d.rb = op.Ints("rhs_batching_dimensions", {});
  d.lc = op.Ints("lhs_contracting_dimensions");
  d.rc = op.Ints("rhs_contracting_dimensions");
  op.Require(d.lb.size() == d.rb.size(),
             "lhs and rhs have different numbers of batching dimensions");
  op.Require(d.lc.size() == d.rc.size(),
             "lhs and rhs have different numbers of contracting dimensions");
  std::vector<int64_t> lall = d.lb, rall = d.rb;
  lall.insert(lall.end(), d.lc.begin(), d.lc.end());
  rall.insert(rall.end(), d.rc.begin(), d.rc.end());
  op.RequireDims(lall, l.rank(), "lhs batching+contracting dimensions");
  op.RequireDims(rall, r.rank(), "rhs batching+contracting dimensions");
  for (size_t i = 0; i < d.lb.size(); ++i) {
    op.Require(l.dims[d.lb[i]] == r.dims[d.rb[i]], "batching dimension sizes differ");
    d.B *= l.dims[d.lb[i]];
  }
  for (size_t i = 0; i < d.lc.size(); ++i) {
    op.Require(l.dims[d.lc[i]] == r.dims[d.rc[i]], "contracting dimension sizes differ: lhs " +
                                                       FormatDims(l.dims) + ", rhs " +
                                                       FormatDims(r.dims));
    d.K *= l.dims[d.lc[i]];
  }
  std::vector<int64_t> out_dims;
  for (int64_t b : d.lb) out_dims.push_back(l.dims[b]);
  for (int i = 0; i < l.rank(); ++i)
    if (std::find(lall.begin(), lall.end(), i) == lall.end())
      d.lf.push_back(i), d.M *= l.dims[i], out_dims.push_back(l.dims[i]);
  for (int i = 0; i < r.rank(); ++i)
    if (std::find(rall.begin(), rall.end(), i) == rall.end())
      d.rf.push_back(i), d.N *= r.dims[i], out_dims.push_back(r.dims[i]);
  op.Require(out_dims == op.out[0].dims,
             "result shape " + FormatDims(op.out[0].dims) + " should be " + FormatDims(out_dims));
  return d;
}

Epilogue PlanEpilogue(const OpInfo& op, const DotDims& d) {
  Epilogue e;
  if (op.kind != "brt.matmul") return e;
  if (op.in.size() == 3) {
    std::vector<int64_t> free;
    for (int64_t f : d.rf) free.push_back(op.in[1].dims[f]);
    op.Require(op.in[2].dims == free && op.in[2].dtype == op.out[0].dtype,
               "bias must have the rhs free dimensions " + FormatDims(free) +
                   " and the result dtype, got " + FormatDims(op.in[2].dims) + " " +
                   DTypeName(op.in[2].dtype));
    e.bias = true;
    e.result = 3;
  }
  e.activation = ParseActivation(op);
  return e;
}

ConvPlan PlanConvolution(const OpInfo& op) {
  const bool fused = op.kind == "brt.conv";
  op.Require((op.in.size() == 2 || (fused && op.in.size() == 3)) && op.out.size() == 1,
             fused ? "expected 2 operands (3 with a bias) and 1 result"
                   : "expected 2 operands and 1 result");
  op.RequireSameDTypes();
  ConvPlan p;
  p.activation = fused ? ParseActivation(op) : Activation::kNone;
  p.has_bias = op.in.size() == 3;
  const TensorInfo& in = op.in[0];
  const TensorInfo& k = op.in[1];
  const TensorInfo& out = op.out[0];
  const int r = in.rank();
  op.Require(r >= 3 && r <= 5 && k.rank() == r && out.rank() == r,
             "supports 1 to 3 spatial dimensions with equal ranks");
  const int ns = r - 2;
  p.spatial = ns;
  auto spatial = [&](const char* name, int64_t first) {
    std::vector<int64_t> def(ns);
    std::iota(def.begin(), def.end(), first);
    return op.Ints(name, def);
  };
  const int64_t ib = op.Int("input_batch_dimension", 0), ifd = op.Int("input_feature_dimension", 1);
  const int64_t ko = op.Int("kernel_output_feature_dimension", 0),
                ki = op.Int("kernel_input_feature_dimension", 1);
  const int64_t ob = op.Int("output_batch_dimension", 0),
                of = op.Int("output_feature_dimension", 1);
  const std::vector<int64_t> is = spatial("input_spatial_dimensions", 2);
  const std::vector<int64_t> ks = spatial("kernel_spatial_dimensions", 2);
  const std::vector<int64_t> os = spatial("output_spatial_dimensions", 2);
  op.Require(static_cast<int>(is.size()) == ns && static_cast<int>(ks.size()) == ns &&
                 static_cast<int>(os.size()) == ns,
             "spatial dimension lists must have rank-2 entries");
  std::vector<int64_t> iall = {ib, ifd}, kall = {ko, ki}, oall = {ob, of};
  iall.insert(iall.end(), is.begin(), is.end());
  kall.insert(kall.end(), ks.begin(), ks.end());
  oall.insert(oall.end(), os.begin(), os.end());
  op.RequireDims(iall, r, "input dimension numbers");
  op.RequireDims(kall, r, "kernel dimension numbers");
  op.RequireDims(oall, r, "output dimension numbers");
  const std::vector<int64_t> strides = op.Ints("window_strides", std::vector<int64_t>(ns, 1));
  const std::vector<int64_t> padding = op.Ints("padding", std::vector<int64_t>(2 * ns, 0));
  const std::vector<int64_t> lhs_dil = op.Ints("lhs_dilation", std::vector<int64_t>(ns, 1));
  const std::vector<int64_t> rhs_dil = op.Ints("rhs_dilation", std::vector<int64_t>(ns, 1));
  p.groups = op.Int("feature_group_count", 1);
  const int64_t batch_groups = op.Int("batch_group_count", 1);
  op.Require(static_cast<int>(strides.size()) == ns && static_cast<int>(padding.size()) == 2 * ns &&
                 static_cast<int>(lhs_dil.size()) == ns && static_cast<int>(rhs_dil.size()) == ns,
             "window attributes must have one entry per spatial dimension (padding: two)");
  if (batch_groups != 1)
    throw UnsupportedError("convolution: batch_group_count > 1 is not supported yet");
  for (int64_t v : lhs_dil)
    if (v != 1)
      throw UnsupportedError(
          "convolution: lhs_dilation (transposed convolution) is not supported yet");
  for (int64_t v : padding)
    if (v < 0) throw UnsupportedError("convolution: negative padding is not supported yet");
  const int64_t N = in.dims[ib], C = in.dims[ifd], O = k.dims[ko], I = k.dims[ki];
  op.Require(p.groups >= 1 && C == I * p.groups && O % p.groups == 0,
             "feature_group_count " + std::to_string(p.groups) + " does not fit input features " +
                 std::to_string(C) + ", kernel input features " + std::to_string(I) +
                 " and output features " + std::to_string(O));
  op.Require(out.dims[ob] == N && out.dims[of] == O, "result batch/feature sizes do not match");
  const auto istr = in.Strides(), kstr = k.Strides(), ostr = out.Strides();
  p.src_dims = {N, C}, p.src_strides = {istr[ib], istr[ifd]};
  p.wei_dims = {O, I}, p.wei_strides = {kstr[ko], kstr[ki]};
  p.dst_dims = {N, O}, p.dst_strides = {ostr[ob], ostr[of]};
  p.result_feature_dim = of;
  p.empty_result = N == 0 || O == 0;
  for (int s = 0; s < ns; ++s) {
    const int64_t x = in.dims[is[s]], w = k.dims[ks[s]], y = out.dims[os[s]];
    op.Require(strides[s] > 0 && rhs_dil[s] > 0, "strides and dilations must be positive");
    const int64_t span = op.Add(op.Mul(w - 1, rhs_dil[s]), 1);
    const int64_t padded = op.Add(op.Add(x, padding[2 * s]), padding[2 * s + 1]);
    const int64_t expect = padded < span ? 0 : (padded - span) / strides[s] + 1;
    op.Require(y == expect, "output spatial dimension " + std::to_string(s) + " is " +
                                std::to_string(y) + ", the window gives " + std::to_string(expect));
    p.empty_result = p.empty_result || y == 0;
    p.src_dims.push_back(x), p.src_strides.push_back(istr[is[s]]);
    p.wei_dims.push_back(w), p.wei_strides.push_back(kstr[ks[s]]);
    p.dst_dims.push_back(y), p.dst_strides.push_back(ostr[os[s]]);
    p.strides.push_back(strides[s]), p.dilations.push_back(rhs_dil[s]);
    p.pad_lo.push_back(padding[2 * s]), p.pad_hi.push_back(padding[2 * s + 1]);
  }
  if (p.has_bias)
    op.Require(op.in[2].dims == std::vector<int64_t>{O},
               "bias must have shape [" + std::to_string(O) + "] (the output features), got " +
                   FormatDims(op.in[2].dims));
  p.empty_contraction = !p.empty_result && (C == 0 || k.numel == 0);
  if (p.empty_contraction && (p.has_bias || p.activation != Activation::kNone))
    throw UnsupportedError(
        "brt.conv: an empty contraction with a bias or activation is not supported");
  return p;
}

FusedProgram PlanFusedElementwise(const OpInfo& op,
                                  const std::function<int(const std::string&)>& arity) {
  op.Require(op.in.size() >= 1 && op.out.size() == 1,
             "expects at least one operand and one result");
  const int32_t rt = op.out[0].dtype;
  op.Require(rt == BRT_DTYPE_F32 || rt == BRT_DTYPE_F16 || rt == BRT_DTYPE_BF16,
             std::string("result must be f32, f16 or bf16, got ") + DTypeName(rt));
  FusedProgram p;
  p.num_inputs = static_cast<int>(op.in.size());
  if (op.Has("constants"))
    for (double c : op.Floats("constants")) p.constants.push_back(static_cast<float>(c));
  std::vector<std::string> names;
  const std::string list = op.String("ops");
  for (size_t start = 0; start <= list.size();) {
    size_t comma = std::min(list.find(',', start), list.size());
    names.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  const std::vector<int64_t> program = op.Ints("program");
  op.Require(program.size() == names.size() * 3, "program has " + std::to_string(program.size()) +
                                                     " entries, expected 3 per op (" +
                                                     std::to_string(names.size()) + " ops)");
  int next = p.num_inputs + static_cast<int>(p.constants.size());
  for (size_t i = 0; i < names.size(); ++i) {
    FusedInstruction in;
    in.name = names[i];
    in.arity = arity(names[i]);
    op.Require(in.arity >= 1, "unknown op '" + names[i] + "' in the fused program");
    in.dst = next;
    for (int k = 0; k < 3; ++k) {
      const int64_t r = program[i * 3 + k];
      if (k < in.arity) {
        op.Require(r >= 0 && r < next, "instruction " + std::to_string(i) + " (" + names[i] +
                                           ") reads register " + std::to_string(r) +
                                           " which is not defined yet");
        in.src[k] = static_cast<int>(r);
      } else {
        op.Require(r == -1,
                   "instruction " + std::to_string(i) + " has an operand beyond its arity");
        in.src[k] = in.src[0];
      }
    }
    p.instructions.push_back(in);
    ++next;
  }
  op.Require(!p.instructions.empty(), "empty fused program");
  p.num_registers = next;
  return p;
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

GeneratedLaunch PlanGeneratedLaunch(const OpInfo& op) {
  const int64_t block = op.Int("block_size", 256);
  const bool reduce = op.kind == "reduce";
  op.Require(block >= 1 && block <= 1024,
             "block_size " + std::to_string(block) + " is outside 1..1024 (a CUDA block)");
  op.Require(!reduce || (block <= kGeneratedReduceMaxBlock && (block & (block - 1)) == 0),
             "block_size " + std::to_string(block) +
                 " does not fit the generated row reduction (a power of two up to " +
                 std::to_string(kGeneratedReduceMaxBlock) + ")");
  // Grid-stride loops: a row reduction takes a block per output element, an
  // elementwise kernel a thread per element; at most 65535 blocks.
  const int64_t n = op.out.at(0).numel;
  const int64_t blocks = reduce ? n : (n + block - 1) / block;
  return {static_cast<unsigned>(block),
          static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(blocks, 65535)))};
}

}  // namespace brt::ops

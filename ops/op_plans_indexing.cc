// Op plans (see op_plans.h) for gather, scatter, reduce and reduce_window.
#include "ops/op_attrs.h"
#include "ops/op_plans.h"

#include <algorithm>
#include <numeric>

namespace brt::ops {

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
  op.Require(IsInteger(indices.dtype),
             std::string("indices must be integers, not ") + DTypeName(indices.dtype));
  const GatherAttrs attrs = Decode<GatherAttrs>(op);
  op.Require(attrs.operand_batching_dims.value_or(std::vector<int64_t>{}).empty(),
             "operand_batching_dims are not supported yet");
  op.Require(out.rank() <= kMaxRank && operand.rank() <= kMaxRank, "rank above 16");
  const std::vector<int64_t>& offset_dims = attrs.offset_dims;
  const std::vector<int64_t>& collapsed = attrs.collapsed_slice_dims;
  const std::vector<int64_t>& start_map = attrs.start_index_map;
  // A slice size of -1 is the operand's extent (a symbolic dimension taken whole).
  std::vector<int64_t> slice_sizes = attrs.slice_sizes;
  for (size_t d = 0; d < slice_sizes.size() && d < operand.dims.size(); ++d)
    if (slice_sizes[d] == -1) slice_sizes[d] = operand.dims[d];
  const int64_t ivd = attrs.index_vector_dim.value_or(indices.rank());
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
  op.Require(IsInteger(indices.dtype),
             std::string("indices must be integers, not ") + DTypeName(indices.dtype));
  const ScatterAttrs attrs = Decode<ScatterAttrs>(op);
  op.Require(attrs.input_batching_dims.value_or(std::vector<int64_t>{}).empty(),
             "input_batching_dims are not supported yet");
  op.Require(updates.rank() <= kMaxRank && operand.rank() <= kMaxRank, "rank above 16");
  const std::string& mode = attrs.mode;
  ScatterPlan p;
  p.replace = mode == "replace";
  op.Require(p.replace || (ParseReducer(mode, &p.reducer) && IsScatterReducer(p.reducer)),
             "mode '" + mode + "' is not replace, add, mul, max or min");
  const std::vector<int64_t>& window_dims = attrs.update_window_dims;
  const std::vector<int64_t>& inserted = attrs.inserted_window_dims;
  const std::vector<int64_t>& to_operand = attrs.scatter_dims_to_operand_dims;
  const int64_t ivd = attrs.index_vector_dim.value_or(indices.rank());
  op.RequireDims(window_dims, updates.rank(), "update_window_dims");
  op.RequireDims(inserted, operand.rank(), "inserted_window_dims");
  op.RequireDims(to_operand, operand.rank(), "scatter_dims_to_operand_dims");
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
      {"add", Reducer::kAdd}, {"mul", Reducer::kMul},
      {"max", Reducer::kMax}, {"min", Reducer::kMin},
      {"and", Reducer::kAnd}, {"or", Reducer::kOr},
      {"xor", Reducer::kXor}, {"logaddexp", Reducer::kLogAddExp}};
  for (auto [n, v] : kNames)
    if (name == n) return *r = v, true;
  return false;
}

bool ReducerDefinedFor(Reducer r, int32_t dtype) {
  if (r == Reducer::kLogAddExp)
    return IsFloat(dtype) || dtype == BRT_DTYPE_C64 || dtype == BRT_DTYPE_C128;
  return IsInteger(dtype) || dtype == BRT_DTYPE_I1 ||
         (r != Reducer::kAnd && r != Reducer::kOr && r != Reducer::kXor);
}

ReducePlan PlanReduce(const OpInfo& op) {
  op.RequireOperands(2);
  op.RequireSameDTypes();
  const TensorInfo& in = op.in[0];
  op.Require(op.in[1].rank() == 0, "init value must be a scalar");
  op.Require(in.rank() <= kMaxRank, "rank above 16");
  const ReduceAttrs attrs = Decode<ReduceAttrs>(op);
  const std::vector<int64_t>& dims = attrs.dimensions;
  op.RequireDims(dims, in.rank(), "dimensions");
  ReducePlan p;
  const std::string& name = attrs.reducer;
  op.Require(ParseReducer(name, &p.reducer),
             "reducer '" + name + "' is not add, mul, max, min, and, or, xor or logaddexp");
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

namespace {

// The windows of reduce_window and select_and_scatter over operand `in`, one
// per element of `windows` (reduce_window's result, select_and_scatter's
// source; named `what` in errors). The reducer is left to the caller.
// Attrs: ReduceWindowAttrs or SelectAndScatterAttrs (which has no dilations).
template <typename Attrs>
ReduceWindowPlan PlanWindows(const OpInfo& op, const Attrs& attrs, const TensorInfo& in,
                             const TensorInfo& windows, const std::string& what) {
  const int r = in.rank();
  op.Require(windows.rank() == r && r <= kMaxRank, what + " rank differs from operand rank");
  ReduceWindowPlan p;
  const std::vector<int64_t> ones(r, 1);
  p.window = attrs.window_dimensions;
  p.strides = attrs.window_strides.value_or(ones);
  p.base_dil = p.win_dil = ones;
  if constexpr (requires { attrs.base_dilations; }) {
    p.base_dil = attrs.base_dilations.value_or(ones);
    p.win_dil = attrs.window_dilations.value_or(ones);
  }
  p.padding = attrs.padding.value_or(std::vector<int64_t>(2 * r, 0));
  if (static_cast<int>(p.window.size()) == r && static_cast<int>(p.padding.size()) == 2 * r)
    ResolveWindowExtents(in, p.window, p.padding);
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
    op.Require(windows.dims[d] == expect, what + " dimension " + std::to_string(d) + " is " +
                                              std::to_string(windows.dims[d]) +
                                              ", the window gives " + std::to_string(expect));
  }
  p.in_dims = in.dims;
  p.in_strides = in.Strides();
  p.out_dims = windows.dims;
  p.out_numel = windows.numel;
  // Windows are only walked for non-empty results, where each fits the padded input.
  if (p.out_numel > 0)
    for (int64_t w : p.window) p.window_numel = op.Mul(p.window_numel, w);
  return p;
}

}  // namespace

void ResolveWindowExtents(const TensorInfo& in, std::vector<int64_t>& window,
                          std::vector<int64_t>& padding) {
  for (size_t d = 0; d < window.size() && d < in.dims.size(); ++d) {
    // A padding of -1 elsewhere is StableHLO's: one element cropped.
    if (window[d] != -1) continue;
    window[d] = in.dims[d];
    for (size_t side : {2 * d, 2 * d + 1})
      if (side < padding.size() && padding[side] == -1) padding[side] = in.dims[d] - 1;
  }
}

ReduceWindowPlan PlanReduceWindow(const OpInfo& op) {
  op.RequireOperands(2);
  op.RequireSameDTypes();
  const TensorInfo& in = op.in[0];
  op.Require(op.in[1].rank() == 0, "init value must be a scalar");
  const ReduceWindowAttrs attrs = Decode<ReduceWindowAttrs>(op);
  ReduceWindowPlan p = PlanWindows(op, attrs, in, op.out[0], "result");
  const std::string& name = attrs.reducer;
  op.Require(ParseReducer(name, &p.reducer),
             "reducer '" + name + "' is not add, mul, max, min, and, or, xor or logaddexp");
  if (!ReducerDefinedFor(p.reducer, in.dtype))
    throw UnsupportedError("reduce_window: reducer '" + name + "' is not defined for " +
                           DTypeName(in.dtype));
  return p;
}

SelectAndScatterPlan PlanSelectAndScatter(const OpInfo& op) {
  op.RequireOperands(3);
  op.RequireSameDTypes();
  const TensorInfo& operand = op.in[0];
  op.Require(op.in[2].rank() == 0, "init value must be a scalar");
  op.Require(op.out[0].dims == operand.dims, "result shape " + FormatDims(op.out[0].dims) +
                                                 " differs from operand shape " +
                                                 FormatDims(operand.dims));
  SelectAndScatterPlan p;
  const SelectAndScatterAttrs attrs = Decode<SelectAndScatterAttrs>(op);
  p.windows = PlanWindows(op, attrs, operand, op.in[1], "source");
  const std::string& select = attrs.select;
  op.Require(ParseCmp(select, &p.select) && p.select != Cmp::kEq && p.select != Cmp::kNe,
             "select '" + select + "' is not one of GE GT LE LT");
  const std::string& scatter = attrs.scatter;
  op.Require(scatter == "add", "scatter '" + scatter + "' is not add");
  if (operand.dtype == BRT_DTYPE_I1)
    throw UnsupportedError("select_and_scatter: not defined for i1");
  return p;
}

}  // namespace brt::ops

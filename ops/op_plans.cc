// Op plans (see op_plans.h) for data movement (strided views, reshape,
// concatenate, pad, iota, dynamic slices), fused elementwise programs,
// NumPy broadcasting and generated-kernel launches.
#include "ops/op_plans.h"

#include "ops/op_attrs.h"

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
    std::vector<int64_t> bd = Decode<BroadcastInDimAttrs>(op).broadcast_dimensions;
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
    std::vector<int64_t> perm = Decode<TransposeAttrs>(op).permutation;
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
    SliceAttrs attrs = Decode<SliceAttrs>(op);
    std::vector<int64_t> start = std::move(attrs.start_indices);
    std::vector<int64_t> limit = std::move(attrs.limit_indices);
    std::vector<int64_t> step = attrs.strides.value_or(std::vector<int64_t>(in.rank(), 1));
    op.Require(static_cast<int>(start.size()) == in.rank() &&
                   static_cast<int>(limit.size()) == in.rank() &&
                   static_cast<int>(step.size()) == in.rank() && out.rank() == in.rank(),
               "start_indices/limit_indices/strides must each have rank entries");
    for (int d = 0; d < in.rank(); ++d) {
      // A limit of -1 follows from the result's size (a symbolic slice).
      // Past the operand (without overflow): the check below refuses it.
      if (limit[d] == -1 && step[d] > 0 && start[d] >= 0 && start[d] <= in.dims[d])
        limit[d] = out.dims[d] <= 0 ? start[d]
                   : out.dims[d] - 1 > (in.dims[d] - start[d]) / step[d]
                       ? in.dims[d] + 1
                       : start[d] + (out.dims[d] - 1) * step[d] + 1;
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
    std::vector<int64_t> dims = Decode<ReverseAttrs>(op).dimensions;
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

size_t PlanBitcastConvert(const OpInfo& op) {
  op.RequireOperands(1);
  const TensorInfo &in = op.in[0], &out = op.out[0];
  const size_t in_width = brt_dtype_size(in.dtype), out_width = brt_dtype_size(out.dtype);
  std::vector<int64_t> expected = in.dims;
  if (in_width > out_width) expected.push_back(static_cast<int64_t>(in_width / out_width));
  if (in_width < out_width) {
    const int64_t ratio = static_cast<int64_t>(out_width / in_width);
    op.Require(!expected.empty() && expected.back() == ratio,
               std::string("a ") + DTypeName(in.dtype) + " operand becomes " +
                   DTypeName(out.dtype) + " only with an innermost dimension of " +
                   std::to_string(ratio) + ", not " + FormatDims(in.dims));
    expected.pop_back();
  }
  op.Require(out.dims == expected, std::string("bitcasting ") + DTypeName(in.dtype) +
                                       FormatDims(in.dims) + " to " + DTypeName(out.dtype) +
                                       " gives " + FormatDims(expected) + ", not the result " +
                                       FormatDims(out.dims));
  return out.bytes();
}

std::vector<ConcatPiece> PlanConcatenate(const OpInfo& op) {
  op.Require(!op.in.empty() && op.out.size() == 1, "expects operands and one result");
  op.RequireSameDTypes();
  const TensorInfo& out = op.out[0];
  const int64_t axis = Decode<ConcatenateAttrs>(op).dimension;
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
  PadAttrs attrs = Decode<PadAttrs>(op);
  std::vector<int64_t> lo = std::move(attrs.edge_padding_low);
  std::vector<int64_t> hi = std::move(attrs.edge_padding_high);
  std::vector<int64_t> interior = attrs.interior_padding.value_or(std::vector<int64_t>(r, 0));
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

RngBitGeneratorPlan PlanRngBitGenerator(const OpInfo& op) {
  op.Require(op.in.size() == 1 && op.out.size() == 2,
             "expected 1 operand (the state) and 2 results (the new state, the bits)");
  const std::string algorithm = Decode<RngBitGeneratorAttrs>(op).rng_algorithm;
  if (algorithm != "DEFAULT" && algorithm != "PHILOX" && algorithm != "THREE_FRY")
    throw UnsupportedError(op.kind + ": algorithm " + algorithm +
                           " is not supported (DEFAULT, PHILOX and THREE_FRY are)");
  RngBitGeneratorPlan p;
  p.three_fry = algorithm == "THREE_FRY";
  const TensorInfo& state = op.in[0];
  op.Require(state.dtype == BRT_DTYPE_U64 && state.rank() == 1 &&
                 (state.dims[0] == 2 || (state.dims[0] == 3 && !p.three_fry)),
             std::string("the ") +
                 (p.three_fry ? "ThreeFry state must be u64[2]"
                              : "Philox state must be u64[2] or u64[3]") +
                 ", got " + DTypeName(state.dtype) + FormatDims(state.dims));
  op.Require(op.out[0].dtype == state.dtype && op.out[0].dims == state.dims,
             "the new state must have the state's type");
  const int32_t bits = op.out[1].dtype;
  p.element_bytes = static_cast<int>(brt_dtype_size(bits));
  op.Require(bits == BRT_DTYPE_U8 || bits == BRT_DTYPE_I8 || bits == BRT_DTYPE_U16 ||
                 bits == BRT_DTYPE_I16 || bits == BRT_DTYPE_U32 || bits == BRT_DTYPE_I32 ||
                 bits == BRT_DTYPE_U64 || bits == BRT_DTYPE_I64,
             std::string("the bits must be an 8-, 16-, 32- or 64-bit integer type, got ") +
                 DTypeName(bits));
  p.state_size = state.dims[0];
  p.numel = op.out[1].numel;
  if (!p.three_fry) {
    const int64_t words = p.element_bytes == 8 ? op.Mul(p.numel, 2) : p.numel;
    p.blocks = (words + 3) / 4;
    return p;
  }
  if (p.element_bytes == 8) {
    p.blocks = p.numel;
    return p;
  }
  const std::vector<int64_t>& dims = op.out[1].dims;
  int split_dim = -1;
  for (int d = 0; d < static_cast<int>(dims.size()) && split_dim < 0; ++d)
    if (dims[d] % 2 == 0) split_dim = d;
  for (int d = 0; d < static_cast<int>(dims.size()) && split_dim < 0; ++d)
    if (dims[d] == *std::max_element(dims.begin(), dims.end())) split_dim = d;
  if (split_dim >= 0) {
    p.split = dims[split_dim];
    for (size_t d = split_dim + 1; d < dims.size(); ++d) p.inner *= dims[d];
  }
  p.blocks = p.split == 0 ? 0 : p.numel / p.split * ((p.split + 1) / 2);
  return p;
}

SortPlan PlanSort(const OpInfo& op) {
  op.Require(!op.in.empty() && op.out.size() == op.in.size(),
             "expects as many results as operands, got " + std::to_string(op.in.size()) +
                 " operands and " + std::to_string(op.out.size()) + " results");
  const std::vector<int64_t>& dims = op.in[0].dims;
  for (size_t i = 0; i < op.in.size(); ++i) {
    op.Require(op.in[i].dims == dims, "operand " + std::to_string(i) + " is " +
                                          FormatDims(op.in[i].dims) + ", operand 0 " +
                                          FormatDims(dims) + ": sorted operands share a shape");
    op.Require(
        op.out[i].dims == dims && op.out[i].dtype == op.in[i].dtype,
        "result " + std::to_string(i) + " must have operand " + std::to_string(i) + "'s type");
  }
  const SortAttrs attrs = Decode<SortAttrs>(op);
  const int64_t dimension = attrs.dimension;
  const int rank = static_cast<int>(dims.size());
  op.Require(
      dimension >= 0 && dimension < rank,
      "dimension " + std::to_string(dimension) + " is outside the rank " + std::to_string(rank));
  const std::string& order = attrs.order;
  op.Require(order == "ascending" || order == "descending",
             "order must be ascending or descending, got '" + order + "'");
  std::vector<int64_t> keys = {attrs.key, order == "descending", attrs.total_order};
  if (attrs.tie_keys) {
    op.Require(attrs.tie_keys->size() % 3 == 0,
               "tie_keys holds (operand, descending, total_order) triples, got " +
                   std::to_string(attrs.tie_keys->size()) + " values");
    keys.insert(keys.end(), attrs.tie_keys->begin(), attrs.tie_keys->end());
  }
  SortPlan p;
  for (size_t k = 0; k < keys.size(); k += 3) {
    op.Require(keys[k] >= 0 && keys[k] < static_cast<int64_t>(op.in.size()),
               "key " + std::to_string(keys[k]) + " names no operand");
    const int32_t key_dtype = op.in[keys[k]].dtype;
    op.Require(key_dtype != BRT_DTYPE_C64 && key_dtype != BRT_DTYPE_C128,
               "key " + std::to_string(keys[k]) + " is " + DTypeName(key_dtype) +
                   ": a complex operand is sorted by its real and imaginary parts as keys of "
                   "their own");
    p.keys.push_back({static_cast<int>(keys[k]), keys[k + 1] != 0, keys[k + 2] != 0});
  }
  for (int d = 0; d < rank; ++d)
    (d < dimension ? p.outer : d > dimension ? p.inner : p.size) *= dims[d];
  return p;
}

IotaPlan PlanIota(const OpInfo& op) {
  op.Require(op.in.empty() && op.out.size() == 1, "expects no operands and one result");
  const TensorInfo& out = op.out[0];
  const int64_t dim = Decode<IotaAttrs>(op).iota_dimension;
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
    op.Require(idx.rank() == 0 && IsInteger(idx.dtype),
               "start index " + std::to_string(d) + " must be an integer scalar");
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
    window = Decode<DynamicSliceAttrs>(op).slice_sizes;
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

FusedProgram PlanFusedElementwise(const OpInfo& op,
                                  const std::function<int(const std::string&)>& arity) {
  op.Require(op.in.size() >= 1 && op.out.size() == 1,
             "expects at least one operand and one result");
  const int32_t rt = op.out[0].dtype;
  op.Require(rt == BRT_DTYPE_F32 || rt == BRT_DTYPE_F16 || rt == BRT_DTYPE_BF16,
             std::string("result must be f32, f16 or bf16, got ") + DTypeName(rt));
  FusedProgram p;
  p.num_inputs = static_cast<int>(op.in.size());
  const FusedElementwiseAttrs attrs = Decode<FusedElementwiseAttrs>(op);
  for (double c : attrs.constants.value_or(std::vector<double>{}))
    p.constants.push_back(static_cast<float>(c));
  std::vector<std::string> names;
  const std::string& list = attrs.ops;
  for (size_t start = 0; start <= list.size();) {
    size_t comma = std::min(list.find(',', start), list.size());
    names.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  const std::vector<int64_t>& program = attrs.program;
  op.Require(program.size() == names.size() * 3, "program has " + std::to_string(program.size()) +
                                                     " entries, expected 3 per op (" +
                                                     std::to_string(names.size()) + " ops)");
  const int fixed = p.num_inputs + static_cast<int>(p.constants.size());
  int next = fixed;
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
  // The program reads each instruction's value in its own register; give a
  // register back once no later instruction reads it, so that long programs
  // (a written-out digamma: ~60 instructions) need only their live values.
  std::vector<size_t> last_read(next, 0);
  for (size_t i = 0; i < p.instructions.size(); ++i)
    for (int k = 0; k < p.instructions[i].arity; ++k) last_read[p.instructions[i].src[k]] = i;
  std::vector<int> where(next);
  for (int r = 0; r < fixed; ++r) where[r] = r;
  std::vector<int> free;
  int used = fixed;
  for (size_t i = 0; i < p.instructions.size(); ++i) {
    FusedInstruction& in = p.instructions[i];
    const int value = in.dst;
    if (free.empty()) {
      in.dst = used++;
    } else {
      in.dst = free.back();
      free.pop_back();
    }
    for (int k = 0; k < 3; ++k) {
      const int r = in.src[k];
      in.src[k] = where[r];
      if (r >= fixed && last_read[r] == i && k < in.arity) {
        free.push_back(where[r]);
        last_read[r] = p.instructions.size();  // given back once
      }
    }
    where[value] = in.dst;
  }
  p.num_registers = used;
  return p;
}

// --- BroadcastPlan -------------------------------------------------------------

void BroadcastPlan::Build(const std::vector<int64_t>& out_dims,
                          const std::vector<std::vector<int64_t>>& in_dims,
                          const std::string& what) {
  const int out_rank = static_cast<int>(out_dims.size());
  if (out_rank > kMaxRank)
    throw KernelError(what + ": rank " + std::to_string(out_rank) + " is too large");
  if (in_dims.size() > static_cast<size_t>(kMaxRank))
    throw KernelError(what + ": " + std::to_string(in_dims.size()) + " operands; at most " +
                      std::to_string(kMaxRank) + " are supported");
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
  const bool reduce = op.kind == ReduceAttrs::kKind;
  const int64_t block =
      reduce ? Decode<ReduceAttrs>(op).block_size : Decode<FusedElementwiseAttrs>(op).block_size;
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

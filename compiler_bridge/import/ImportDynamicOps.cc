// Symbolic shapes, continued (see ImportSymbolic.cc): the sizes of each
// dynamic result from its op's operands, and the dynamic ops brt imports as
// static ones of symbolic size (real_dynamic_slice, dynamic_pad).
#include <set>

#include "import/Importer.h"

namespace brt::bridge {

using mlir::Operation;
using mlir::Value;

// Entry i of an optional window attribute (strides, dilations, padding), or
// its default where the attribute leaves it out.
template <typename T>
SymDim At(const llvm::SmallVector<T>& v, size_t i, int64_t missing) {
  return i < v.size() ? SymDim(v[i]) : SymDim(missing);
}

// The sizes of `op`'s result `k` (a type with dynamic dimensions), from its
// operands' refined types and the followed sizes; nullopt if this op's rule
// is unknown.
std::optional<llvm::SmallVector<SymDim>> Importer::ResultSizes(Operation& op, unsigned k) {
  const llvm::StringRef kind = op.getName().getStringRef().split('.').second;
  auto type = mlir::cast<mlir::RankedTensorType>(op.getResult(k).getType());
  auto shape = [&](unsigned i) { return SymbolicShape(op.getOperand(i).getType()); };
  auto followed = [&](unsigned i) -> std::optional<llvm::SmallVector<SymDim>> {
    auto it = shape_values_.find(op.getOperand(i));
    if (it == shape_values_.end()) return std::nullopt;
    return it->second;
  };
  if (kind == "dynamic_iota") return followed(0);
  if (kind == "dynamic_broadcast_in_dim" || kind == "dynamic_reshape") return followed(1);
  llvm::SmallVector<mlir::NamedAttribute> params;
  if (!IsDynamicReduceWindow(op) && !Params(op, params)) return std::nullopt;
  auto ints = [&](llvm::StringRef name) { return IntsParam(params, name); };
  llvm::SmallVector<SymDim> out;
  if (kind == "dynamic_pad") {
    auto in = shape(0);
    auto lo = followed(2), hi = followed(3), interior = followed(4);
    if (!in || !lo || !hi || !interior) return std::nullopt;
    for (size_t d = 0; d < in->size(); ++d)
      out.push_back((*lo)[d] + (*in)[d] + (*hi)[d] + (*interior)[d] * ((*in)[d] - 1));
    return out;
  }
  if (kind == "real_dynamic_slice") {
    auto start = followed(1), limit = followed(2), strides = followed(3);
    if (!start || !limit || !strides || start->size() != limit->size() ||
        strides->size() != limit->size())
      return std::nullopt;
    for (size_t d = 0; d < start->size(); ++d)
      out.push_back(SymDim::CeilDiv((*limit)[d] - (*start)[d], (*strides)[d]));
    return out;
  }
  if (kind == "gather" || kind == "dynamic_gather") {
    // Batch dims: the indices' (less index_vector_dim); offset dims: the
    // slice sizes not collapsed, at offset_dims.
    auto indices = shape(1);
    llvm::SmallVector<SymDim> sizes;
    if (kind == "gather")
      for (int64_t size : ints("slice_sizes")) sizes.push_back(size);
    else if (auto given = followed(2))
      sizes = *given;
    if (!indices) return std::nullopt;
    const auto offset_dims = ints("offset_dims"), collapsed = ints("collapsed_slice_dims"),
               operand_batching = ints("operand_batching_dims"),
               vector_dim = ints("index_vector_dim");
    const int64_t ivd = vector_dim.empty() ? 0 : vector_dim[0];  // left out when 0
    llvm::SmallVector<SymDim> batch, offsets;
    for (int64_t d = 0; d < static_cast<int64_t>(indices->size()); ++d)
      if (d != ivd) batch.push_back((*indices)[d]);
    for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d)
      if (!llvm::is_contained(collapsed, d) && !llvm::is_contained(operand_batching, d))
        offsets.push_back(sizes[d]);
    if (batch.size() + offsets.size() != static_cast<size_t>(type.getRank()) ||
        offsets.size() != offset_dims.size())
      return std::nullopt;
    size_t next_batch = 0, next_offset = 0;
    for (int64_t d = 0; d < type.getRank(); ++d)
      out.push_back(llvm::is_contained(offset_dims, d) ? offsets[next_offset++]
                                                       : batch[next_batch++]);
    return out;
  }
  // A loop's results are its carried values: their operands' sizes.
  if (kind == "while") return shape(k);
  if (kind == "transpose") {
    auto in = shape(0);
    if (!in) return std::nullopt;
    for (int64_t p : ints("permutation")) out.push_back((*in)[p]);
    return out;
  }
  if (kind == "dot_general") {
    auto lhs = shape(0), rhs = shape(1);
    if (!lhs || !rhs) return std::nullopt;
    const auto lb = ints("lhs_batching_dimensions"), lc = ints("lhs_contracting_dimensions"),
               rb = ints("rhs_batching_dimensions"), rc = ints("rhs_contracting_dimensions");
    for (int64_t d : lb) out.push_back((*lhs)[d]);
    for (int64_t d = 0; d < static_cast<int64_t>(lhs->size()); ++d)
      if (!llvm::is_contained(lb, d) && !llvm::is_contained(lc, d)) out.push_back((*lhs)[d]);
    for (int64_t d = 0; d < static_cast<int64_t>(rhs->size()); ++d)
      if (!llvm::is_contained(rb, d) && !llvm::is_contained(rc, d)) out.push_back((*rhs)[d]);
    return out;
  }
  if (kind == "reduce") {
    auto in = shape(0);
    if (!in) return std::nullopt;
    const auto reduced = ints("dimensions");
    for (int64_t d = 0; d < static_cast<int64_t>(in->size()); ++d)
      if (!llvm::is_contained(reduced, d)) out.push_back((*in)[d]);
    return out;
  }
  if (kind == "concatenate") {
    const auto along = ints("dimension");
    for (unsigned i = 0; i < op.getNumOperands(); ++i) {
      auto in = shape(i);
      if (!in || along.empty()) return std::nullopt;
      if (i == 0)
        out = *in;
      else
        out[along[0]] = out[along[0]] + (*in)[along[0]];
    }
    return out;
  }
  if (kind == "broadcast_in_dim") {
    auto in = shape(0);
    if (!in) return std::nullopt;
    out.assign(type.getShape().begin(), type.getShape().end());
    for (auto [i, d] : llvm::enumerate(ints("broadcast_dimensions"))) out[d] = (*in)[i];
    return out;
  }
  if (kind == "pad") {
    auto in = shape(0);
    if (!in) return std::nullopt;
    const auto lo = ints("edge_padding_low"), hi = ints("edge_padding_high"),
               interior = ints("interior_padding");
    if (lo.size() != in->size() || hi.size() != in->size() || interior.size() != in->size())
      return std::nullopt;
    for (size_t d = 0; d < in->size(); ++d)
      out.push_back((*in)[d] + lo[d] + hi[d] + interior[d] * ((*in)[d] - 1));
    return out;
  }
  if (kind == "reduce_window" || IsDynamicReduceWindow(op)) {
    auto in = shape(0);
    if (!in) return std::nullopt;
    // Window attributes: a reduce_window's, or dynamic_reduce_window's size
    // operands 2 to 6.
    auto sizes = [&](llvm::StringRef name, unsigned operand) -> llvm::SmallVector<SymDim> {
      if (kind == "reduce_window") {
        llvm::SmallVector<SymDim> v;
        for (int64_t i : ints(name)) v.push_back(i);
        return v;
      }
      return followed(operand).value_or(llvm::SmallVector<SymDim>{});
    };
    const auto window = sizes("window_dimensions", 2), strides = sizes("window_strides", 3),
               base = sizes("base_dilations", 4), dilations = sizes("window_dilations", 5),
               padding = sizes("padding", 6);
    for (size_t d = 0; d < in->size(); ++d) {
      const SymDim padded =
          ((*in)[d] - 1) * At(base, d, 1) + 1 + At(padding, 2 * d, 0) + At(padding, 2 * d + 1, 0);
      const SymDim extent = (At(window, d, 1) - 1) * At(dilations, d, 1) + 1;
      out.push_back(SymDim::FloorDiv(padded - extent, At(strides, d, 1)) + 1);
    }
    return out;
  }
  if (kind == "convolution" || kind == "dynamic_conv") {
    // dynamic_conv's padding is its third operand, [spatial, 2].
    auto in = shape(0), kernel = shape(1);
    if (!in || !kernel) return std::nullopt;
    const auto spatial = ints("input_spatial_dimensions"),
               kernel_spatial = ints("kernel_spatial_dimensions"),
               out_spatial = ints("output_spatial_dimensions"),
               in_batch = ints("input_batch_dimension"),
               kernel_out = ints("kernel_output_feature_dimension"),
               out_batch = ints("output_batch_dimension"),
               out_feature = ints("output_feature_dimension"), strides = ints("window_strides"),
               lhs_dilation = ints("lhs_dilation"), rhs_dilation = ints("rhs_dilation"),
               batch_groups = ints("batch_group_count");
    llvm::SmallVector<SymDim> padding;
    if (kind == "dynamic_conv") {
      auto given = followed(2);
      if (!given) return std::nullopt;
      padding = *given;
    } else {
      for (int64_t p : ints("padding")) padding.push_back(p);
    }
    const size_t n = spatial.size();
    if (padding.empty()) padding.assign(2 * n, 0);
    if (kernel_spatial.size() != n || out_spatial.size() != n || padding.size() != 2 * n ||
        in_batch.size() != 1 || kernel_out.size() != 1 || out_batch.size() != 1 ||
        out_feature.size() != 1 || type.getRank() != static_cast<int64_t>(n + 2))
      return std::nullopt;
    out.assign(n + 2, 0);
    out[out_batch[0]] = SymDim::FloorDiv((*in)[in_batch[0]], At(batch_groups, 0, 1));
    out[out_feature[0]] = (*kernel)[kernel_out[0]];
    for (size_t i = 0; i < n; ++i) {
      const SymDim dilated_in = ((*in)[spatial[i]] - 1) * At(lhs_dilation, i, 1) + 1;
      const SymDim window = ((*kernel)[kernel_spatial[i]] - 1) * At(rhs_dilation, i, 1) + 1;
      out[out_spatial[i]] =
          SymDim::FloorDiv(dilated_in + padding[2 * i] + padding[2 * i + 1] - window,
                           At(strides, i, 1)) +
          1;
    }
    return out;
  }
  // Shape-keeping ops (elementwise, select, sort, scatter, ...): an operand
  // whose dimensions are dynamic where the result's are.
  const std::set<llvm::StringRef> reshaping = {"reshape",
                                               "slice",
                                               "dynamic_slice",
                                               "iota",
                                               "if",
                                               "case",
                                               "custom_call",
                                               "rng_bit_generator",
                                               "fft",
                                               "select_and_scatter",
                                               "all_gather",
                                               "reduce_scatter",
                                               "all_to_all",
                                               "get_tuple_element",
                                               "tuple",
                                               "triangular_solve",
                                               "cholesky",
                                               "top_k"};
  if (reshaping.count(kind)) return std::nullopt;
  for (unsigned i = 0; i < op.getNumOperands(); ++i) {
    auto operand = mlir::dyn_cast<mlir::RankedTensorType>(op.getOperand(i).getType());
    if (!operand || operand.getShape() != type.getShape()) continue;
    if (auto in = shape(i)) return in;
  }
  return std::nullopt;
}

// Gives each result of `op` whose type has dynamic dimensions the
// expressions of its sizes.
bool Importer::RefineResultTypes(Operation& op) {
  for (unsigned k = 0; k < op.getNumResults(); ++k) {
    auto type = mlir::dyn_cast<mlir::RankedTensorType>(op.getResult(k).getType());
    if (!type || type.hasStaticShape()) continue;
    std::optional<llvm::SmallVector<SymDim>> sizes = ResultSizes(op, k);
    if (!sizes || sizes->size() != static_cast<size_t>(type.getRank()))
      return Fail(op, "'" + op.getName().getStringRef().str() + "' with the dynamic result " +
                          PrintedText(type) + ": brt cannot derive its symbolic sizes yet");
    for (auto [d, size] : llvm::enumerate(type.getShape()))
      if (!mlir::ShapedType::isDynamic(size) && (*sizes)[d].Constant() != size)
        return Fail(op, "result " + std::to_string(k) + " dimension " + std::to_string(d) + " is " +
                            std::to_string(size) + " in the program but " + (*sizes)[d].Text() +
                            " by its operands");
    op.getResult(k).setType(SymbolicTensorType(*sizes, type.getElementType()));
  }
  return true;
}

// real_dynamic_slice with constant starts and strides: a slice whose limit,
// where it is symbolic, is -1 (the runtime's "from the result's size").
bool Importer::ImportRealDynamicSlice(Operation& op, llvm::ArrayRef<Value> operands,
                                      llvm::DenseMap<Value, Value>& map, int) {
  auto sizes = [&](unsigned i) { return shape_values_.lookup(op.getOperand(i)); };
  const llvm::SmallVector<SymDim> start = sizes(1), limit = sizes(2), strides = sizes(3);
  auto in = SymbolicShape(op.getOperand(0).getType());
  if (!in || start.size() != in->size() || limit.size() != in->size() ||
      strides.size() != in->size())
    return Fail(op, "real_dynamic_slice's bounds are not sizes brt can follow");
  llvm::SmallVector<int64_t> first, last, step;
  for (size_t d = 0; d < in->size(); ++d) {
    const std::optional<int64_t> a = start[d].Constant(), z = limit[d].Constant(),
                                 k = strides[d].Constant();
    if (!a || !k || *a < 0 || *k <= 0)
      return Fail(op, "real_dynamic_slice of dimension " + std::to_string(d) + " from " +
                          start[d].Text() + " by " + strides[d].Text() +
                          ": brt slices from a constant start by a constant positive stride");
    // A symbolic limit must stay within the operand: checked when bound.
    if (!z && !(limit[d] == (*in)[d]))
      constraints_.push_back((*in)[d].Text() + " >= " + limit[d].Text());
    first.push_back(*a);
    last.push_back(z ? *z : -1);
    step.push_back(*k);
  }
  map[op.getResult(0)] = Emit(op.getLoc(), op.getResult(0).getType(), "slice", {operands[0]},
                              {b_.getNamedAttr("start_indices", b_.getDenseI64ArrayAttr(first)),
                               b_.getNamedAttr("limit_indices", b_.getDenseI64ArrayAttr(last)),
                               b_.getNamedAttr("strides", b_.getDenseI64ArrayAttr(step))});
  return true;
}

// dynamic_gather of one block from constant starts, no dimension collapsed
// (`x[: n // 2]`): a slice whose symbolic limits are -1. The gather would
// clamp a start that leaves too little room; here that is a constraint.
// 1: imported; 0: not of this form; -1: an error.
int Importer::ImportGatherAsSlice(Operation& op, llvm::ArrayRef<SymDim> in,
                                  llvm::ArrayRef<SymDim> sizes, Value operand,
                                  llvm::DenseMap<Value, Value>& map) {
  llvm::SmallVector<mlir::NamedAttribute> params;
  if (!Params(op, params)) return -1;
  auto ints = [&](llvm::StringRef name) { return IntsParam(params, name); };
  const llvm::SmallVector<SymDim> starts = shape_values_.lookup(op.getOperand(1));
  const auto offset_dims = ints("offset_dims"), index_map = ints("start_index_map"),
             vector_dim = ints("index_vector_dim");
  auto indices = mlir::cast<mlir::RankedTensorType>(op.getOperand(1).getType());
  const bool one_block =
      indices.getRank() == 1 && (vector_dim.empty() || vector_dim[0] == 0) &&
      ints("collapsed_slice_dims").empty() && ints("operand_batching_dims").empty() &&
      offset_dims.size() == in.size() && starts.size() == index_map.size() &&
      llvm::all_of(llvm::enumerate(offset_dims),
                   [](auto d) { return d.value() == static_cast<int64_t>(d.index()); });
  if (!one_block) return 0;
  llvm::SmallVector<int64_t> first(in.size(), 0), last, step(in.size(), 1);
  for (auto [i, d] : llvm::enumerate(index_map)) {
    const std::optional<int64_t> start = starts[i].Constant();
    if (d < 0 || d >= static_cast<int64_t>(in.size()) || !start || *start < 0) return 0;
    first[d] = *start;
  }
  for (size_t d = 0; d < in.size(); ++d) {
    const SymDim end = sizes[d] + first[d];
    const std::optional<int64_t> room = (in[d] - end).LowerBound();
    if (!room || *room < 0) constraints_.push_back(in[d].Text() + " >= " + end.Text());
    last.push_back(sizes[d].Constant() ? *sizes[d].Constant() + first[d] : -1);
  }
  map[op.getResult(0)] = Emit(op.getLoc(), op.getResult(0).getType(), "slice", {operand},
                              {b_.getNamedAttr("start_indices", b_.getDenseI64ArrayAttr(first)),
                               b_.getNamedAttr("limit_indices", b_.getDenseI64ArrayAttr(last)),
                               b_.getNamedAttr("strides", b_.getDenseI64ArrayAttr(step))});
  return 1;
}

// dynamic_gather whose slice sizes are constants or whole dimensions of the
// operand (`x[:, 0]` over a symbolic batch): a gather whose symbolic slice
// sizes are -1 (the runtime's "the operand's extent"); one block of part of
// a symbolic dimension from constant starts, a slice.
bool Importer::ImportDynamicGather(Operation& op, llvm::ArrayRef<Value> operands,
                                   llvm::DenseMap<Value, Value>& map, int) {
  const llvm::SmallVector<SymDim> sizes = shape_values_.lookup(op.getOperand(2));
  auto in = SymbolicShape(op.getOperand(0).getType());
  if (!in || sizes.size() != in->size())
    return Fail(op, "dynamic_gather's slice sizes are not sizes brt can follow");
  if (const int sliced = ImportGatherAsSlice(op, *in, sizes, operands[0], map); sliced != 0)
    return sliced > 0;
  llvm::SmallVector<int64_t> slice;
  for (size_t d = 0; d < in->size(); ++d) {
    if (std::optional<int64_t> c = sizes[d].Constant()) {
      slice.push_back(*c);
    } else if (sizes[d] == (*in)[d]) {
      slice.push_back(-1);
    } else {
      return Fail(op, "dynamic_gather's slice size " + sizes[d].Text() + " of dimension " +
                          std::to_string(d) + " (of size " + (*in)[d].Text() +
                          "): brt takes part of a symbolic dimension only as one block from "
                          "constant starts");
    }
  }
  llvm::SmallVector<mlir::NamedAttribute> params;
  if (!Params(op, params)) return false;
  params.push_back(b_.getNamedAttr("slice_sizes", b_.getDenseI64ArrayAttr(slice)));
  llvm::SmallVector<Value> inputs = {operands[0], operands[1]};
  if (!UnbatchIndexing(op, "gather", inputs, params)) return false;
  map[op.getResult(0)] = Emit(op.getLoc(), op.getResult(0).getType(), "gather", inputs, params);
  return true;
}

// dynamic_pad without interior padding: the operand written at its low
// padding into a broadcast of the padding value.
bool Importer::ImportDynamicPad(Operation& op, llvm::ArrayRef<Value> operands,
                                llvm::DenseMap<Value, Value>& map, int) {
  auto sizes = [&](unsigned i) { return shape_values_.lookup(op.getOperand(i)); };
  const llvm::SmallVector<SymDim> lo = sizes(2), hi = sizes(3), interior = sizes(4);
  auto in = SymbolicShape(op.getOperand(0).getType());
  if (!in || lo.size() != in->size() || hi.size() != in->size() || interior.size() != in->size())
    return Fail(op, "dynamic_pad's paddings are not sizes brt can follow");
  if (llvm::any_of(interior, [](const SymDim& d) { return d.Constant() != 0; }))
    return Fail(op, "dynamic_pad with interior padding is not supported");
  for (const SymDim& edge : llvm::concat<const SymDim>(lo, hi))
    if (!edge.LowerBound() || *edge.LowerBound() < 0) constraints_.push_back(edge.Text() + " >= 0");
  const mlir::Type type = op.getResult(0).getType();
  Value filled = Emit(op.getLoc(), type, "broadcast_in_dim", {operands[1]},
                      {b_.getNamedAttr("broadcast_dimensions", b_.getDenseI64ArrayAttr({}))});
  llvm::SmallVector<Value> inputs = {filled, operands[0]};
  for (const SymDim& start : lo) inputs.push_back(DimValue(op.getLoc(), start, b_.getI64Type()));
  map[op.getResult(0)] = Emit(op.getLoc(), type, "dynamic_update_slice", inputs);
  return true;
}

// dynamic_conv: a convolution whose padding is an operand, [spatial, 2]
// sizes (JAX's "SAME" padding of symbolic spatial dims). brt's convolution
// takes its padding as an attribute: it must not depend on the symbols.
bool Importer::ImportDynamicConv(Operation& op, llvm::ArrayRef<Value> operands,
                                 llvm::DenseMap<Value, Value>& map, int) {
  if (operands.size() != 3) return Fail(op, "dynamic_conv needs three operands");
  llvm::SmallVector<mlir::NamedAttribute> params;
  if (!CheckType(op.getResult(0).getType(), op) || !Params(op, params)) return false;
  auto padding = shape_values_.find(op.getOperand(2));
  if (padding == shape_values_.end())
    return Fail(op, "dynamic_conv's padding is not made of sizes brt can follow");
  llvm::SmallVector<int64_t> pads;
  for (const SymDim& p : padding->second) {
    const std::optional<int64_t> c = p.Constant();
    if (!c)
      return Fail(op, "dynamic_conv with padding " + p.Text() +
                          ", which depends on the symbolic sizes, is not supported (a stride "
                          "that does not divide a symbolic spatial size under \"SAME\" padding)");
    pads.push_back(*c);
  }
  params.push_back(b_.getNamedAttr("padding", b_.getDenseI64ArrayAttr(pads)));
  return ImportConvolution(op, operands.take_front(2), params, map);
}

}  // namespace brt::bridge

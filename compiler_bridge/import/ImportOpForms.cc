// Source ops imported as other kinds (see Importer.h): static forms of
// dynamic ops, is_finite, square, CHLO expansions, convolution forms, batched
// gather/scatter, collectives.
#include "import/Importer.h"

namespace brt::bridge {

using mlir::Operation;
using mlir::Value;

// jnp.isfinite: |x| < inf, false for inf and NaN.
bool Importer::ImportIsFinite(Operation& op, llvm::ArrayRef<Value> operands,
                              llvm::DenseMap<Value, Value>& map, int) {
  if (operands.size() != 1 || op.getNumResults() != 1 || !CheckType(op.getResult(0).getType(), op))
    return false;
  auto type = mlir::cast<mlir::RankedTensorType>(operands[0].getType());
  Value limit =
      FloatScalar(op.getLoc(), type.getElementType(), std::numeric_limits<double>::infinity());
  Value abs = Emit(op.getLoc(), type, "abs", operands);
  map[op.getResult(0)] = Emit(op.getLoc(), op.getResult(0).getType(), "compare", {abs, limit},
                              {b_.getNamedAttr("comparison_direction", b_.getStringAttr("LT"))});
  return true;
}

// jnp.square, and so every jnp.var: x * x.
bool Importer::ImportSquare(Operation& op, llvm::ArrayRef<Value> operands,
                            llvm::DenseMap<Value, Value>& map, int) {
  if (operands.size() != 1 || op.getNumResults() != 1 || !CheckType(op.getResult(0).getType(), op))
    return false;
  map[op.getResult(0)] =
      Emit(op.getLoc(), op.getResult(0).getType(), "multiply", {operands[0], operands[0]});
  return true;
}

// chlo.digamma, chlo.zeta, chlo.polygamma, chlo.bessel_i1e, chlo.next_after and
// chlo.mulhi, written out
// op by op as XLA does (import/ChloExpansions.h); 16-bit floats computed in
// f32.
bool Importer::ImportChloExpansion(Operation& op, llvm::ArrayRef<Value> operands,
                                   llvm::DenseMap<Value, Value>& map, int) {
  const llvm::StringRef name = op.getName().getStringRef();
  const size_t arity = name == "chlo.digamma" || name == "chlo.bessel_i1e" ? 1 : 2;
  if (operands.size() != arity || op.getNumResults() != 1)
    return Fail(op, name.str() + " needs " + std::to_string(arity) + " operand(s) and one result");
  if (!CheckType(op.getResult(0).getType(), op)) return false;
  auto type = mlir::cast<mlir::RankedTensorType>(op.getResult(0).getType());
  const mlir::Type element = type.getElementType();
  for (Value v : op.getOperands())
    if (v.getType() != type)
      return Fail(op, name.str() + " needs operands of its result's type (broadcast them first)");
  Elementwise e(b_, op.getLoc(), type.getShape());
  if (name == "chlo.mulhi") {
    if (!mlir::isa<mlir::IntegerType>(element) || element.isInteger(1))
      return Fail(op, "chlo.mulhi needs integer operands");
    map[op.getResult(0)] = ExpandMulhi(e, operands[0], operands[1]);
    return true;
  }
  if (!mlir::isa<mlir::FloatType>(element)) return Fail(op, name.str() + " needs float operands");
  const mlir::Type compute = element.getIntOrFloatBitWidth() < 32 ? b_.getF32Type() : element;
  llvm::SmallVector<Value> args;
  for (Value v : operands) args.push_back(compute == element ? v : e.Convert(v, compute));
  Value result;
  if (name == "chlo.digamma") result = ExpandDigamma(e, args[0]);
  if (name == "chlo.zeta") result = ExpandZeta(e, args[0], args[1]);
  if (name == "chlo.bessel_i1e") result = ExpandBesselI1e(e, args[0]);
  if (name == "chlo.polygamma") result = ExpandPolygamma(e, args[0], args[1]);
  if (name == "chlo.next_after") result = ExpandNextAfter(e, args[0], args[1], element);
  map[op.getResult(0)] = compute == element ? result : e.Convert(result, element);
  return true;
}

// dynamic_iota, dynamic_broadcast_in_dim and dynamic_reshape whose result
// shape is static (torch-mlir emits them with shapes it computed from
// constants): the static op, without the shape operand.
bool Importer::ImportStaticForm(Operation& op, llvm::ArrayRef<Value> operands,
                                llvm::DenseMap<Value, Value>& map, int) {
  if (operands.empty() || op.getNumResults() != 1) return Fail(op, "expects a shape operand");
  if (!CheckType(op.getResult(0).getType(), op)) return false;
  llvm::SmallVector<mlir::NamedAttribute> params, kept;
  if (!Params(op, params)) return false;
  for (const mlir::NamedAttribute& na : params)  // hints the static form has no use for
    if (!na.getName().getValue().starts_with("known_")) kept.push_back(na);
  llvm::StringRef kind = op.getName().getStringRef().split('.').second;
  kind.consume_front("dynamic_");
  map[op.getResult(0)] =
      Emit(op.getLoc(), op.getResult(0).getType(), kind, operands.drop_back(), kept);
  return true;
}

// The convolutions of gradients, in forms the runtime's convolution takes:
// an lhs_dilation (a strided convolution's input gradient) or a negative
// padding becomes an explicit pad of the lhs (interior padding dilates it);
// batch_group_count G (a grouped or depthwise convolution's filter gradient)
// becomes G convolutions of the lhs batch and kernel output feature slices,
// concatenated along the output features, as StableHLO defines it.
bool Importer::ImportConvolution(Operation& op, llvm::ArrayRef<Value> operands,
                                 llvm::SmallVectorImpl<mlir::NamedAttribute>& params,
                                 llvm::DenseMap<Value, Value>& map) {
  if (operands.size() != 2) return Fail(op, "convolution needs two operands");
  const mlir::Location loc = op.getLoc();
  auto ints = [&](llvm::StringRef name) { return IntsParam(params, name); };
  auto set = [&](llvm::StringRef name, mlir::Attribute value) {
    for (mlir::NamedAttribute& na : params)
      if (na.getName() == name) return na.setValue(value);
    params.push_back(b_.getNamedAttr(name, value));
  };
  auto lhs_type = mlir::cast<mlir::RankedTensorType>(operands[0].getType());
  auto result_type = mlir::cast<mlir::RankedTensorType>(op.getResult(0).getType());
  const llvm::SmallVector<int64_t> spatial = ints("input_spatial_dimensions"),
                                   lhs_dilation = ints("lhs_dilation");
  // StableHLO: padding left out is zero on every side.
  llvm::SmallVector<int64_t> padding = ints("padding");
  if (padding.empty()) padding.assign(2 * spatial.size(), 0);
  Value lhs = operands[0];
  const bool dilated = llvm::any_of(lhs_dilation, [](int64_t d) { return d != 1; });
  const bool negative = llvm::any_of(padding, [](int64_t p) { return p < 0; });
  const bool symbolic = !lhs_type.hasStaticShape() || !result_type.hasStaticShape();
  if (symbolic && (dilated || negative))
    return Fail(op,
                "a convolution with lhs_dilation or negative padding (a strided "
                "convolution's gradient) over symbolic sizes is not supported");
  if (dilated || negative) {
    const size_t n = spatial.size();
    if (padding.size() != 2 * n || (!lhs_dilation.empty() && lhs_dilation.size() != n))
      return Fail(op, "convolution padding or lhs_dilation does not match its spatial dimensions");
    const int64_t rank = lhs_type.getRank();
    llvm::SmallVector<int64_t> low(rank, 0), high(rank, 0), interior(rank, 0);
    llvm::SmallVector<int64_t> shape(lhs_type.getShape());
    for (size_t i = 0; i < n; ++i) {
      const int64_t d = spatial[i];
      if (d < 0 || d >= rank) return Fail(op, "input_spatial_dimensions is out of range");
      const int64_t extent = shape[d];
      low[d] = padding[2 * i], high[d] = padding[2 * i + 1];
      interior[d] = lhs_dilation.empty() ? 0 : lhs_dilation[i] - 1;
      if (interior[d] < 0) return Fail(op, "lhs_dilation must be positive");
      shape[d] = low[d] + high[d] + extent + std::max<int64_t>(extent - 1, 0) * interior[d];
      if (shape[d] < 0) return Fail(op, "convolution padding leaves a negative extent");
    }
    auto scalar = mlir::RankedTensorType::get({}, lhs_type.getElementType());
    Value zero =
        Emit(loc, scalar, "constant", {},
             {b_.getNamedAttr("value", mlir::DenseElementsAttr::get(
                                           scalar, b_.getZeroAttr(lhs_type.getElementType())))});
    lhs =
        Emit(loc, mlir::RankedTensorType::get(shape, lhs_type.getElementType()), "pad", {lhs, zero},
             {b_.getNamedAttr("edge_padding_low", b_.getDenseI64ArrayAttr(low)),
              b_.getNamedAttr("edge_padding_high", b_.getDenseI64ArrayAttr(high)),
              b_.getNamedAttr("interior_padding", b_.getDenseI64ArrayAttr(interior))});
    set("padding", b_.getDenseI64ArrayAttr(llvm::SmallVector<int64_t>(2 * n, 0)));
    set("lhs_dilation", b_.getDenseI64ArrayAttr(llvm::SmallVector<int64_t>(n, 1)));
  }
  const llvm::SmallVector<int64_t> batch_groups = ints("batch_group_count");
  const int64_t groups = batch_groups.empty() ? 1 : batch_groups[0];
  if (groups == 1) {
    map[op.getResult(0)] = Emit(loc, result_type, "convolution", {lhs, operands[1]}, params);
    return true;
  }
  if (symbolic)
    return Fail(op, "a convolution with batch_group_count " + std::to_string(groups) +
                        " (a grouped convolution's filter gradient) over symbolic sizes is not "
                        "supported");
  const llvm::SmallVector<int64_t> in_batch = ints("input_batch_dimension"),
                                   kernel_out = ints("kernel_output_feature_dimension"),
                                   out_feature = ints("output_feature_dimension");
  auto rhs_type = mlir::cast<mlir::RankedTensorType>(operands[1].getType());
  auto in_range = [](const llvm::SmallVector<int64_t>& d, mlir::RankedTensorType t) {
    return d.size() == 1 && d[0] >= 0 && d[0] < t.getRank();
  };
  if (!in_range(in_batch, lhs_type) || !in_range(kernel_out, rhs_type) ||
      !in_range(out_feature, result_type))
    return Fail(op, "convolution dimension numbers are out of range");
  if (groups < 1 ||
      mlir::cast<mlir::RankedTensorType>(lhs.getType()).getShape()[in_batch[0]] % groups != 0 ||
      rhs_type.getShape()[kernel_out[0]] % groups != 0 ||
      result_type.getShape()[out_feature[0]] % groups != 0)
    return Fail(op, "batch_group_count " + std::to_string(groups) +
                        " does not divide the input batch and the output features");
  set("batch_group_count", b_.getI64IntegerAttr(1));
  // Slice g of `v` along `dim`, a 1/groups part.
  auto part = [&](Value v, int64_t dim, int64_t g) {
    auto t = mlir::cast<mlir::RankedTensorType>(v.getType());
    llvm::SmallVector<int64_t> start(t.getRank(), 0), limit(t.getShape()), shape(t.getShape());
    shape[dim] /= groups;
    start[dim] = g * shape[dim], limit[dim] = start[dim] + shape[dim];
    return Emit(loc, mlir::RankedTensorType::get(shape, t.getElementType()), "slice", v,
                {b_.getNamedAttr("start_indices", b_.getDenseI64ArrayAttr(start)),
                 b_.getNamedAttr("limit_indices", b_.getDenseI64ArrayAttr(limit)),
                 b_.getNamedAttr("strides", b_.getDenseI64ArrayAttr(
                                                llvm::SmallVector<int64_t>(t.getRank(), 1)))});
  };
  llvm::SmallVector<int64_t> part_shape(result_type.getShape());
  part_shape[out_feature[0]] /= groups;
  auto part_type = mlir::RankedTensorType::get(part_shape, result_type.getElementType());
  llvm::SmallVector<Value> parts;
  for (int64_t g = 0; g < groups; ++g)
    parts.push_back(Emit(loc, part_type, "convolution",
                         {part(lhs, in_batch[0], g), part(operands[1], kernel_out[0], g)}, params));
  map[op.getResult(0)] = Emit(loc, result_type, "concatenate", parts,
                              {b_.getNamedAttr("dimension", b_.getI64IntegerAttr(out_feature[0]))});
  return true;
}

// gather/scatter with batching dims (what jnp.take_along_axis and its
// gradient lower to) become the plain form: each batching dim pair (operand
// dim o, indices dim i) turns into one more index component, the iota along
// i, indexing o as a collapsed (gather) or inserted (scatter) dim. Empty dim
// lists, which the printed form leaves out, are made explicit.
bool Importer::UnbatchIndexing(Operation& op, llvm::StringRef kind,
                               llvm::SmallVectorImpl<Value>& operands,
                               llvm::SmallVectorImpl<mlir::NamedAttribute>& params) {
  const bool gather = kind == "gather";
  const char* operand_batching = gather ? "operand_batching_dims" : "input_batching_dims";
  const char* indices_batching =
      gather ? "start_indices_batching_dims" : "scatter_indices_batching_dims";
  const char* folded = gather ? "collapsed_slice_dims" : "inserted_window_dims";
  const char* index_map = gather ? "start_index_map" : "scatter_dims_to_operand_dims";
  const char* windows = gather ? "offset_dims" : "update_window_dims";
  llvm::SmallVector<int64_t> operand_dims, indices_dims, folded_dims, map_dims, window_dims;
  std::optional<int64_t> vector_dim;
  llvm::SmallVector<mlir::NamedAttribute> kept;
  for (const mlir::NamedAttribute& na : params) {
    const llvm::StringRef name = na.getName().getValue();
    auto list = [&](llvm::SmallVector<int64_t>& into) {
      auto a = mlir::dyn_cast<mlir::DenseI64ArrayAttr>(na.getValue());
      if (a) into.assign(a.asArrayRef().begin(), a.asArrayRef().end());
      return a != nullptr;
    };
    bool ok = true;
    if (name == operand_batching)
      ok = list(operand_dims);
    else if (name == indices_batching)
      ok = list(indices_dims);
    else if (name == folded)
      ok = list(folded_dims);
    else if (name == index_map)
      ok = list(map_dims);
    else if (name == windows)
      ok = list(window_dims);
    else if (name == "index_vector_dim") {
      auto a = mlir::dyn_cast<mlir::IntegerAttr>(na.getValue());
      ok = a != nullptr;
      if (a) vector_dim = a.getInt();
    } else {
      kept.push_back(na);
    }
    if (!ok) return Fail(op, "attribute '" + name.str() + "' is not a list of integers");
  }
  if (operand_dims.size() != indices_dims.size())
    return Fail(
        op, std::string(operand_batching) + " and " + indices_batching + " have different lengths");
  Value indices = operands[1];
  auto type = mlir::cast<mlir::RankedTensorType>(indices.getType());
  const int64_t rank = type.getRank();
  // The printed form leaves out an index_vector_dim of 0 (its default).
  const int64_t ivd = vector_dim.value_or(0);
  if (ivd < 0 || ivd > rank) return Fail(op, "index_vector_dim is out of range");
  if (!operand_dims.empty()) {
    const mlir::Location loc = op.getLoc();
    llvm::SmallVector<int64_t> shape(type.getShape());
    auto indices_type = [&](llvm::ArrayRef<int64_t> dims) {
      return mlir::RankedTensorType::get(dims, type.getElementType());
    };
    if (ivd == rank) {  // index vectors of one implicit component: make it explicit
      shape.push_back(1);
      indices = Emit(loc, indices_type(shape), "reshape", indices);
    }
    llvm::SmallVector<Value> pieces{indices};
    llvm::SmallVector<int64_t> one = shape;
    one[ivd] = 1;
    for (int64_t d : indices_dims) {
      if (d < 0 || d >= static_cast<int64_t>(shape.size()) || d == ivd)
        return Fail(op, std::string(indices_batching) + " names a dimension out of range");
      pieces.push_back(Emit(loc, indices_type(one), "iota", {},
                            {b_.getNamedAttr("iota_dimension", b_.getI64IntegerAttr(d))}));
    }
    shape[ivd] += static_cast<int64_t>(indices_dims.size());
    operands[1] = Emit(loc, indices_type(shape), "concatenate", pieces,
                       {b_.getNamedAttr("dimension", b_.getI64IntegerAttr(ivd))});
    folded_dims.append(operand_dims.begin(), operand_dims.end());
    llvm::sort(folded_dims);
    map_dims.append(operand_dims.begin(), operand_dims.end());
  }
  kept.push_back(b_.getNamedAttr(folded, b_.getDenseI64ArrayAttr(folded_dims)));
  kept.push_back(b_.getNamedAttr(index_map, b_.getDenseI64ArrayAttr(map_dims)));
  kept.push_back(b_.getNamedAttr(windows, b_.getDenseI64ArrayAttr(window_dims)));
  kept.push_back(b_.getNamedAttr("index_vector_dim", b_.getI64IntegerAttr(ivd)));
  params.assign(kept.begin(), kept.end());
  return true;
}

// Collectives: replica_groups (a 2-D dense array) arrive flattened; their
// row length becomes group_size.
bool Importer::ImportCollective(Operation& op, llvm::StringRef kind, llvm::ArrayRef<Value> operands,
                                llvm::SmallVectorImpl<mlir::NamedAttribute>& params,
                                llvm::DenseMap<Value, Value>& map) {
  if (operands.size() != 1)
    return Fail(op,
                kind.str() + " with several operands is not supported (JAX emits one per array)");
  mlir::Attribute groups = AttrOrProperty(&op, "replica_groups");
  if (auto dense = mlir::dyn_cast_or_null<mlir::DenseIntElementsAttr>(groups)) {
    auto shape = dense.getType().getShape();
    if (shape.size() != 2) return Fail(op, "replica_groups must be a 2-D array");
    for (const llvm::APInt& v : dense.getValues<llvm::APInt>())
      if (v.isNegative())
        return Fail(op, "replica_groups of unequal sizes (padded with -1) are not supported");
    params.push_back(b_.getNamedAttr("group_size", b_.getI64IntegerAttr(shape[1])));
  }
  if ((kind == "all_reduce" || kind == "reduce_scatter") && !Reducer(op, kind, params))
    return false;
  auto k = CreateOp(b_, op.getLoc(), kind, op.getResultTypes(), operands, params);
  map[op.getResult(0)] = k->getResult(0);
  return true;
}

}  // namespace brt::bridge

// Reducer bodies, argmax/argmin and select_and_scatter (see Importer.h).
#include "import/Importer.h"

#include "import/OpaqueAttrs.h"
#include "import/ScalarBody.h"
#include "llvm/ADT/StringExtras.h"
#include "ops/scalar_ops.h"

namespace brt::bridge {

using mlir::Operation;
using mlir::Value;

namespace {

// The body ops reduce and reduce_window take by name, and their names.
constexpr std::pair<const char*, const char*> kReducers[] = {
    {"stablehlo.add", "add"},     {"stablehlo.multiply", "mul"}, {"stablehlo.maximum", "max"},
    {"stablehlo.minimum", "min"}, {"stablehlo.and", "and"},      {"stablehlo.or", "or"},
    {"stablehlo.xor", "xor"}};

// The reducer that result k of a reduce body over n operands (arguments: the
// n accumulators, then the n values) computes from accumulator k and value
// k: one op of kReducers of the two, in either order, or one JAX writes out
// of several ops (ProbedReducer); "" where neither.
std::string BodyReducer(mlir::Block& body, size_t k, size_t n) {
  Operation* ret = body.getTerminator();
  if (body.getNumArguments() != 2 * n || !ret || ret->getNumOperands() != n) return "";
  const Value acc = body.getArgument(k), value = body.getArgument(n + k);
  if (Operation* combine = ret->getOperand(k).getDefiningOp();
      combine && combine->getNumOperands() == 2) {
    const Value a = combine->getOperand(0), b = combine->getOperand(1);
    auto named = llvm::find_if(
        kReducers, [&](const auto& r) { return combine->getName().getStringRef() == r.first; });
    if (((a == acc && b == value) || (a == value && b == acc)) && named != std::end(kReducers))
      return named->second;
  }
  return ProbedReducer(body, mlir::getElementTypeOrSelf(acc.getType()), k, n);
}

}  // namespace

// reduce, reduce_window and scatter carry their computation as a region;
// the runtime takes it by name. A scatter body subtracting the update from
// the old value (lax.scatter_sub) adds the negated update (x - u is x + -u
// in IEEE and in wrapping integers alike): `operands`' update is replaced.
bool Importer::Reducer(Operation& op, llvm::StringRef kind,
                       llvm::SmallVectorImpl<mlir::NamedAttribute>& params,
                       llvm::SmallVectorImpl<Value>* operands) {
  if (op.getNumRegions() != 1 || op.getRegion(0).getBlocks().size() != 1)
    return Fail(op, kind.str() + " needs exactly one body block");
  mlir::Block& body = op.getRegion(0).front();
  const std::string reducer = BodyReducer(body, 0, 1);
  // The reducers scatter and the collectives combine by.
  const bool combines = llvm::is_contained({"add", "mul", "max", "min"}, reducer);
  if (kind == "scatter") {
    // replace: return the update; the old value minus the update; otherwise
    // a reducer of the old value and the update.
    if (body.getNumArguments() != 2) return Fail(op, "scatter's body needs two arguments");
    Operation& first = body.front();
    const Value old = body.getArgument(0), update = body.getArgument(1);
    if (body.getOperations().size() == 1 && first.getNumOperands() == 1 &&
        first.getOperand(0) == update) {
      params.push_back(b_.getNamedAttr("mode", b_.getStringAttr("replace")));
      return true;
    }
    if (body.getOperations().size() == 2 &&
        first.getName().getStringRef() == "stablehlo.subtract" && first.getOperand(0) == old &&
        first.getOperand(1) == update &&
        body.getTerminator()->getOperand(0) == first.getResult(0) && operands) {
      (*operands)[2] = Emit(op.getLoc(), (*operands)[2].getType(), "negate", (*operands)[2]);
      params.push_back(b_.getNamedAttr("mode", b_.getStringAttr("add")));
      return true;
    }
    if (!combines)
      return Fail(op,
                  "scatter computations other than replace, add, multiply, maximum and minimum "
                  "of the old value and the update, and the old value minus the update, are not "
                  "supported");
    params.push_back(b_.getNamedAttr("mode", b_.getStringAttr(reducer)));
    return true;
  }
  const bool collective = kind == "all_reduce" || kind == "reduce_scatter";
  if (collective && !reducer.empty() && !combines)
    return Fail(op, kind.str() + " reduces by add, multiply, maximum or minimum, not " + reducer);
  if (reducer.empty())
    return Fail(op, kind.str() +
                        " body is not a single add/multiply/maximum/minimum/and/or/xor, the "
                        "maximum or minimum of complex numbers, or a logaddexp");
  params.push_back(b_.getNamedAttr("reducer", b_.getStringAttr(reducer)));
  return true;
}

// select_and_scatter's two computations, taken by name: select must compare
// its two arguments in order (the direction becomes `select`), scatter must
// add them.
bool Importer::SelectAndScatterBodies(Operation& op,
                                      llvm::SmallVectorImpl<mlir::NamedAttribute>& params) {
  if (op.getNumRegions() != 2 || op.getRegion(0).getBlocks().size() != 1 ||
      op.getRegion(1).getBlocks().size() != 1)
    return Fail(op, "select_and_scatter needs one select and one scatter body");
  mlir::Block& select = op.getRegion(0).front();
  Operation& compare = select.front();
  if (select.getOperations().size() != 2 ||
      compare.getName().getStringRef() != "stablehlo.compare" || compare.getNumOperands() != 2 ||
      compare.getOperand(0) != select.getArgument(0) ||
      compare.getOperand(1) != select.getArgument(1))
    return Fail(op, "select_and_scatter's select body must be one compare of its two arguments");
  const std::string direction = CompareDirection(&compare);
  if (direction.empty())
    return Fail(op, "select_and_scatter's compare has no comparison_direction");
  params.push_back(b_.getNamedAttr("select", b_.getStringAttr(direction)));
  mlir::Block& scatter = op.getRegion(1).front();
  Operation& add = scatter.front();
  if (scatter.getOperations().size() != 2 || add.getName().getStringRef() != "stablehlo.add" ||
      add.getNumOperands() != 2)
    return Fail(op, "select_and_scatter scatter bodies other than add are not supported");
  params.push_back(b_.getNamedAttr("scatter", b_.getStringAttr("add")));
  return true;
}

namespace {

// What a two-operand reduce body computes, told by running it on scalars:
// "GT" when it is jnp.argmax's (the greater value, NaN first, the smaller
// index among equals), "LT" for argmin's, "" otherwise.
std::string ArgReduceDirection(mlir::Block& body, bool floats) {
  auto run = [&](double a, double ai, double b, double bi, double* v, double* i) {
    llvm::SmallVector<Scalar> out;
    if (!RunScalarBody(body, {a, ai, b, bi}, out) || out.size() != 2) return false;
    *v = out[0].real(), *i = out[1].real();
    return true;
  };
  // JAX's body picks a NaN, as PyTorch eager does; the body torch-mlir writes
  // (compare GE, select) skips it. Both are taken -- probed with NaN first,
  // then without -- and brt picks the NaN (docs/ops.md).
  for (bool with_nan : {true, false}) {
    std::vector<double> values = {1, 2};
    if (floats && with_nan) values.push_back(std::numeric_limits<double>::quiet_NaN());
    for (const char* dir : {"GT", "LT"}) {
      bool all = true;
      for (double a : values)
        for (double b : values)
          for (double ai : {0.0, 1.0})
            for (double bi : {0.0, 1.0}) {
              const bool better = dir[0] == 'G' ? a > b : a < b;
              const bool pick_value = better || std::isnan(a);
              const bool pick_index = pick_value || (a == b && ai < bi);
              const double want_v = pick_value ? a : b, want_i = pick_index ? ai : bi;
              double v = 0, i = 0;
              all = all && run(a, ai, b, bi, &v, &i) && i == want_i &&
                    (v == want_v || (std::isnan(v) && std::isnan(want_v)));
            }
      if (all) return dir;
    }
  }
  return "";
}

}  // namespace

namespace {

// The reducer of each result of a variadic reduce body over n operands
// (BodyReducer); false where a result has none.
bool SeparateReducers(mlir::Block& body, size_t n, llvm::SmallVectorImpl<std::string>* reducers) {
  for (size_t k = 0; k < n; ++k) {
    reducers->push_back(BodyReducer(body, k, n));
    if (reducers->back().empty()) return false;
  }
  return true;
}

}  // namespace

// reduce with several operands: where each result reduces its own operand
// (lax.reduce over a tuple with a body like (max(a0, b0), min(a1, b1))), one
// reduce per operand; otherwise jnp.argmax's or argmin's form.
bool Importer::ImportVariadicReduce(Operation& op, llvm::ArrayRef<Value> operands,
                                    llvm::SmallVectorImpl<mlir::NamedAttribute>& params,
                                    llvm::DenseMap<Value, Value>& map) {
  const size_t n = op.getNumResults();
  llvm::SmallVector<std::string> reducers;
  if (op.getNumRegions() != 1 || !op.getRegion(0).hasOneBlock() || operands.size() != 2 * n ||
      !SeparateReducers(op.getRegion(0).front(), n, &reducers))
    return ImportArgReduce(op, operands, params, map);
  for (size_t k = 0; k < n; ++k) {
    llvm::SmallVector<mlir::NamedAttribute> reduce_params(params.begin(), params.end());
    reduce_params.push_back(b_.getNamedAttr("reducer", b_.getStringAttr(reducers[k])));
    map[op.getResult(k)] = Emit(op.getLoc(), op.getResult(k).getType(), "reduce",
                                {operands[k], operands[n + k]}, reduce_params);
  }
  return true;
}

// reduce(x, indices, init value, init index) with jnp.argmax's or argmin's
// body (found by running it): m = reduce max (min) of x; the index is the
// smallest index where x equals m, or (floats) is NaN; the value, if read, is
// m. The inits must be JAX's: index 0 and the identity of max (min) in x's
// order -- -inf (+inf) for floats, the type's minimum (maximum) for integers,
// false (true) for bool.
bool Importer::ImportArgReduce(Operation& op, llvm::ArrayRef<Value> operands,
                               llvm::SmallVectorImpl<mlir::NamedAttribute>& params,
                               llvm::DenseMap<Value, Value>& map) {
  const std::string unsupported =
      "reduce with several operands is supported where each result reduces its own operand by "
      "a reducer a one-operand reduce takes, and in the form jnp.argmax and jnp.argmin write";
  if (op.getNumResults() != 2 || op.getNumRegions() != 1 || !op.getRegion(0).hasOneBlock() ||
      op.getRegion(0).front().getNumArguments() != 4)
    return Fail(op, unsupported);
  const mlir::Location loc = op.getLoc();
  auto x_type = mlir::cast<mlir::RankedTensorType>(operands[0].getType());
  auto idx_type = mlir::cast<mlir::RankedTensorType>(operands[1].getType());
  const bool floats = mlir::isa<mlir::FloatType>(x_type.getElementType());
  const std::string dir = ArgReduceDirection(op.getRegion(0).front(), floats);
  if (dir.empty() || !mlir::isa<mlir::IntegerType>(idx_type.getElementType()) ||
      idx_type.getShape() != x_type.getShape())
    return Fail(op, unsupported);
  const bool argmax = dir == "GT";
  const mlir::Type element = x_type.getElementType();
  auto init_value = operands[2].getDefiningOp<ConstantOp>();
  auto dense = init_value ? mlir::dyn_cast<mlir::DenseElementsAttr>(init_value.getValue())
                          : mlir::DenseElementsAttr();
  bool init_ok = false;
  std::string want;
  if (auto f = mlir::dyn_cast<mlir::FloatType>(element)) {
    want = argmax ? "-inf" : "+inf";
    init_ok = dense && dense.getNumElements() == 1 && mlir::isa<mlir::DenseFPElementsAttr>(dense) &&
              (*dense.getValues<llvm::APFloat>().begin())
                  .bitwiseIsEqual(llvm::APFloat::getInf(f.getFloatSemantics(), argmax));
  } else if (auto n = mlir::dyn_cast<mlir::IntegerType>(element)) {
    // Signless integers are signed in StableHLO, but i1 is bool: false < true.
    const unsigned width = n.getWidth();
    const bool is_unsigned = n.isUnsigned() || width == 1;
    const llvm::APInt bound =
        is_unsigned ? (argmax ? llvm::APInt::getMinValue(width) : llvm::APInt::getMaxValue(width))
                    : (argmax ? llvm::APInt::getSignedMinValue(width)
                              : llvm::APInt::getSignedMaxValue(width));
    want = width == 1 ? (bound.isZero() ? "false" : "true")
                      : llvm::toString(bound, 10, /*Signed=*/!is_unsigned);
    init_ok = dense && dense.getNumElements() == 1 &&
              mlir::isa<mlir::DenseIntElementsAttr>(dense) &&
              *dense.getValues<llvm::APInt>().begin() == bound;
  }
  // torch-mlir writes the signed bounds for ui8 and i1 too (128 and true for
  // argmax), where max does not start from them: refused.
  if (!init_ok || ScalarInt(operands[3].getDefiningOp()) != 0)
    return Fail(op, std::string("stablehlo.reduce computing ") + (argmax ? "argmax" : "argmin") +
                        " on " + PrintedText(element) + " is supported with the inits (" + want +
                        ", 0): the type's " + (argmax ? "minimum" : "maximum") + " and index 0");
  const llvm::SmallVector<int64_t> dims = IntsParam(params, "dimensions");
  llvm::SmallVector<int64_t> kept;
  for (int64_t d = 0; d < x_type.getRank(); ++d)
    if (!llvm::is_contained(dims, d)) kept.push_back(d);
  for (mlir::Type t : op.getResultTypes())
    if (!CheckType(t, op)) return false;
  auto reduce = [&](Value v, Value init, mlir::Type type, const char* reducer) {
    return Emit(loc, type, "reduce", {v, init},
                {b_.getNamedAttr("dimensions", b_.getDenseI64ArrayAttr(dims)),
                 b_.getNamedAttr("reducer", b_.getStringAttr(reducer))});
  };
  Value m = reduce(operands[0], operands[2], op.getResult(0).getType(), argmax ? "max" : "min");
  map[op.getResult(0)] = m;
  auto pred_type = mlir::RankedTensorType::get(x_type.getShape(), b_.getI1Type());
  auto compare = [&](Value a, Value b, const char* direction) {
    return Emit(loc, pred_type, "compare", {a, b},
                {b_.getNamedAttr("comparison_direction", b_.getStringAttr(direction))});
  };
  Value broadcast_m =
      Emit(loc, x_type, "broadcast_in_dim", m,
           {b_.getNamedAttr("broadcast_dimensions", b_.getDenseI64ArrayAttr(kept))});
  Value at_m = compare(operands[0], broadcast_m, "EQ");
  if (floats)  // a NaN is the max (min) and is not equal to it
    at_m = Emit(loc, pred_type, "or", {at_m, compare(operands[0], operands[0], "NE")});
  auto idx_element = mlir::cast<mlir::IntegerType>(idx_type.getElementType());
  auto scalar = mlir::RankedTensorType::get({}, idx_element);
  const llvm::APInt top = idx_element.isUnsigned()
                              ? llvm::APInt::getMaxValue(idx_element.getWidth())
                              : llvm::APInt::getSignedMaxValue(idx_element.getWidth());
  Value none = Emit(loc, scalar, "constant", {},
                    {b_.getNamedAttr("value", mlir::DenseElementsAttr::get(scalar, top))});
  Value candidates = Emit(loc, idx_type, "select", {at_m, operands[1], none});
  Value index = reduce(candidates, none, op.getResult(1).getType(), "min");
  // An empty reduction keeps JAX's init index, 0, where min would give `none`.
  if (llvm::any_of(dims, [&](int64_t d) {
        return d >= 0 && d < x_type.getRank() && x_type.getShape()[d] == 0;
      }))
    index = Emit(loc, op.getResult(1).getType(), "broadcast_in_dim", operands[3],
                 {b_.getNamedAttr("broadcast_dimensions", b_.getDenseI64ArrayAttr({}))});
  map[op.getResult(1)] = index;
  return true;
}

}  // namespace brt::bridge

namespace brt::bridge {

// JAX's reduce_window over a symbolic dimension (a custom_call
// "stablehlo.dynamic_reduce_window": operand, init, then window
// dimensions, strides, base and window dilations, [rank, 2] padding as
// sizes; its body a called function): a reduce_window whose window entry -1
// spans the operand's extent and padding entry -1 is that extent less 1,
// the cumulative scans (cumsum, cummax) that JAX writes this way.
bool Importer::ImportDynamicReduceWindow(Operation& op, llvm::ArrayRef<Value> operands,
                                         llvm::DenseMap<Value, Value>& map) {
  auto computations = AttrOrPropertyOf<mlir::ArrayAttr>(&op, "called_computations");
  auto body_name = computations && computations.size() == 1
                       ? mlir::dyn_cast<mlir::FlatSymbolRefAttr>(computations[0])
                       : nullptr;
  auto body = body_name ? source_.lookupSymbol<mlir::func::FuncOp>(body_name) : nullptr;
  auto in = SymbolicShape(op.getOperand(0).getType());
  if (op.getNumOperands() != 7 || !body || body.getBody().getBlocks().size() != 1 || !in)
    return Fail(op,
                "dynamic_reduce_window needs an operand, an init value, five size operands "
                "and one body function");
  const std::string reducer = BodyReducer(body.getBody().front(), 0, 1);
  if (reducer.empty())
    return Fail(op,
                "dynamic_reduce_window's body is not a reducer brt knows (add, multiply, "
                "maximum, minimum, and, or, xor, logaddexp)");
  llvm::SmallVector<llvm::SmallVector<int64_t>> attrs;  // window, strides, base, window dil.
  const size_t rank = in->size();
  for (unsigned i = 2; i < 7; ++i) {
    const llvm::SmallVector<SymDim> sizes = shape_values_.lookup(op.getOperand(i));
    if (sizes.size() != (i == 6 ? 2 * rank : rank))
      return Fail(op, "dynamic_reduce_window's window attributes are not sizes brt can follow");
    llvm::SmallVector<int64_t> values;
    for (auto [k, size] : llvm::enumerate(sizes)) {
      const SymDim& extent = (*in)[i == 6 ? k / 2 : k];
      if (std::optional<int64_t> c = size.Constant())
        values.push_back(*c);
      else if ((i == 2 && size == extent) ||
               (i == 6 && k % 2 == 0 && size == extent - 1 && attrs[0][k / 2] == -1))
        values.push_back(-1);
      else
        return Fail(op, "dynamic_reduce_window with " + size.Text() + " in its " +
                            (i == 2   ? "window"
                             : i == 6 ? "padding"
                                      : "strides or dilations") +
                            ": brt takes a window over a symbolic dimension only as a cumulative "
                            "scan (the whole extent, padded by the extent less 1 before)");
    }
    attrs.push_back(values);
  }
  for (const SymDim& d : *in)
    if (d.Constant() == 0)
      return Fail(op, "dynamic_reduce_window over an empty dimension is not supported");
  map[op.getResult(0)] =
      Emit(op.getLoc(), op.getResult(0).getType(), "reduce_window", {operands[0], operands[1]},
           {b_.getNamedAttr("window_dimensions", b_.getDenseI64ArrayAttr(attrs[0])),
            b_.getNamedAttr("window_strides", b_.getDenseI64ArrayAttr(attrs[1])),
            b_.getNamedAttr("base_dilations", b_.getDenseI64ArrayAttr(attrs[2])),
            b_.getNamedAttr("window_dilations", b_.getDenseI64ArrayAttr(attrs[3])),
            b_.getNamedAttr("padding", b_.getDenseI64ArrayAttr(attrs[4])),
            b_.getNamedAttr("reducer", b_.getStringAttr(reducer))});
  return true;
}

}  // namespace brt::bridge

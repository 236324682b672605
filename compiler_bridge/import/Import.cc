#include "import/Import.h"

#include <cmath>
#include <limits>
#include <optional>

#include "BrtDialect.h"
#include "OpKinds.h"
#include "RuntimeTypes.h"
#include "import/ChloExpansions.h"
#include "import/OpText.h"
#include "import/OpaqueAttrs.h"
#include "import/PerRank.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "ops/scalar_ops.h"

namespace brt::bridge {
namespace {

using mlir::Attribute;
using mlir::Operation;
using mlir::Value;

// Attributes that do not change what the runtime computes.
bool Ignored(llvm::StringRef name) {
  return name == "precision_config" || name == "indices_are_sorted" || name == "unique_indices" ||
         name == "compare_type" || name == "result_accuracy" ||
         // Collectives: JAX's channel ids identify nothing, and its replica
         // groups always hold global device ids (partition ids).
         name == "channel_handle" || name == "use_global_device_ids";
}

// The integer in a scalar constant: a source stablehlo.constant, or a brt
// constant the importer made.
std::optional<int64_t> ScalarInt(Operation* def) {
  if (!def) return std::nullopt;
  llvm::StringRef name = def->getName().getStringRef();
  mlir::DenseIntElementsAttr value;
  if (name == "stablehlo.constant")
    value = AttrOrPropertyOf<mlir::DenseIntElementsAttr>(def, "value");
  if (auto k = mlir::dyn_cast<KernelOp>(def); k && k.getKind() == "constant")
    value = k.getParams().getAs<mlir::DenseIntElementsAttr>("value");
  if (!value || value.getNumElements() != 1) return std::nullopt;
  return (*value.getValues<llvm::APInt>().begin()).getSExtValue();
}

// An imported op's integer list (or single integer) parameter; empty if absent.
llvm::SmallVector<int64_t> IntsParam(llvm::ArrayRef<mlir::NamedAttribute> params,
                                     llvm::StringRef name) {
  for (const mlir::NamedAttribute& na : params)
    if (na.getName() == name) {
      if (auto a = mlir::dyn_cast<mlir::DenseI64ArrayAttr>(na.getValue()))
        return llvm::SmallVector<int64_t>(a.asArrayRef());
      if (auto i = mlir::dyn_cast<mlir::IntegerAttr>(na.getValue())) return {i.getInt()};
    }
  return {};
}

// A source compare's direction ("GT", ...), decoded where the other StableHLO
// attributes are; "" when it has none.
// A stablehlo.compare's comparison_direction (EQ, LT, ...) or compare_type
// (FLOAT, TOTALORDER, ...) as text; "" when absent.
std::string CompareAttr(Operation* compare, llvm::StringRef name) {
  auto opaque = AttrOrPropertyOf<mlir::OpaqueAttr>(compare, name);
  mlir::Builder b(compare->getContext());
  llvm::SmallVector<mlir::NamedAttribute> decoded;
  std::string error;
  if (!opaque || !DecodeOpaqueAttr(opaque, b, decoded, &error) || decoded.size() != 1) return "";
  auto text = mlir::dyn_cast<mlir::StringAttr>(decoded[0].getValue());
  return text ? text.str() : "";
}

std::string CompareDirection(Operation* compare) {
  return CompareAttr(compare, "comparison_direction");
}

class Importer {
 public:
  Importer(mlir::MLIRContext& ctx, mlir::ModuleOp source) : ctx_(ctx), source_(source), b_(&ctx) {}

  ImportResult Run();

 private:
  bool ImportFunction(mlir::func::FuncOp fn, llvm::ArrayRef<Value> args,
                      llvm::SmallVectorImpl<Value>& results, int depth);
  // A body ending in func.return (or sdy.return: a shard_map's; or
  // stablehlo.return: a loop's). `outer`: the values a loop body may use from
  // around it.
  bool ImportBlock(mlir::Block& block, Operation* owner, llvm::ArrayRef<Value> args,
                   llvm::SmallVectorImpl<Value>& results, int depth,
                   const llvm::DenseMap<Value, Value>* outer = nullptr);
  bool ImportWhile(Operation& op, llvm::ArrayRef<Value> operands, llvm::DenseMap<Value, Value>& map,
                   int depth);
  bool ImportCollective(Operation& op, llvm::StringRef kind, llvm::ArrayRef<Value> operands,
                        llvm::SmallVectorImpl<mlir::NamedAttribute>& params,
                        llvm::DenseMap<Value, Value>& map);
  bool ImportOp(Operation& op, llvm::DenseMap<Value, Value>& map, int depth);
  // Source ops imported as something other than the registry kind of their
  // name: each one's handler, by name.
  using Handler = bool (Importer::*)(Operation& op, llvm::ArrayRef<Value> operands,
                                     llvm::DenseMap<Value, Value>& map, int depth);
  static const std::pair<const char*, Handler> kRewritten[];
  friend std::vector<std::string> brt::bridge::ImportedOpNames();
  bool ImportOptimizationBarrier(Operation& op, llvm::ArrayRef<Value> operands,
                                 llvm::DenseMap<Value, Value>& map, int depth);
  bool ImportIsFinite(Operation& op, llvm::ArrayRef<Value> operands,
                      llvm::DenseMap<Value, Value>& map, int depth);
  bool ImportSquare(Operation& op, llvm::ArrayRef<Value> operands,
                    llvm::DenseMap<Value, Value>& map, int depth);
  bool ImportChloExpansion(Operation& op, llvm::ArrayRef<Value> operands,
                           llvm::DenseMap<Value, Value>& map, int depth);
  bool ImportStaticForm(Operation& op, llvm::ArrayRef<Value> operands,
                        llvm::DenseMap<Value, Value>& map, int depth);
  bool ImportSort(Operation& op, llvm::ArrayRef<Value> operands, llvm::DenseMap<Value, Value>& map,
                  int depth);
  bool ImportTopK(Operation& op, llvm::ArrayRef<Value> operands, llvm::DenseMap<Value, Value>& map,
                  int depth);
  bool ImportComposite(Operation& op, llvm::ArrayRef<Value> operands,
                       llvm::DenseMap<Value, Value>& map, int depth);
  bool ImportBranches(Operation& op, llvm::ArrayRef<Value> operands,
                      llvm::DenseMap<Value, Value>& map, int depth);
  bool ImportCall(Operation& op, llvm::StringRef symbol, llvm::ArrayRef<Value> operands,
                  llvm::DenseMap<Value, Value>& map, int depth);
  // One brt.kernel of `kind` with a single result, for ops imported as others.
  Value Emit(mlir::Location loc, mlir::Type type, llvm::StringRef kind, mlir::ValueRange operands,
             llvm::ArrayRef<mlir::NamedAttribute> params = {}) {
    return KernelOp::create(b_, loc, mlir::TypeRange{type}, b_.getStringAttr(kind), operands,
                            b_.getDictionaryAttr(params))
        .getResult(0);
  }
  // A scalar constant of float element type `element`.
  Value FloatScalar(mlir::Location loc, mlir::Type element, double value) {
    return Elementwise(b_, loc, {}).Constant(element, value);
  }
  bool SelectAndScatterBodies(Operation& op, llvm::SmallVectorImpl<mlir::NamedAttribute>& params);
  bool ImportArgReduce(Operation& op, llvm::ArrayRef<Value> operands,
                       llvm::SmallVectorImpl<mlir::NamedAttribute>& params,
                       llvm::DenseMap<Value, Value>& map);
  bool ImportConvolution(Operation& op, llvm::ArrayRef<Value> operands,
                         llvm::SmallVectorImpl<mlir::NamedAttribute>& params,
                         llvm::DenseMap<Value, Value>& map);
  bool UnbatchIndexing(Operation& op, llvm::StringRef kind, llvm::SmallVectorImpl<Value>& operands,
                       llvm::SmallVectorImpl<mlir::NamedAttribute>& params);
  bool Params(Operation& op, llvm::SmallVectorImpl<mlir::NamedAttribute>& params);
  bool Reducer(Operation& op, llvm::StringRef kind,
               llvm::SmallVectorImpl<mlir::NamedAttribute>& params);
  bool CheckType(mlir::Type type, Operation& op);
  bool Fail(Operation& op, const std::string& message) {
    error_ = Where(op.getLoc()) + ": " + message;
    return false;
  }

  mlir::MLIRContext& ctx_;
  mlir::ModuleOp source_;
  mlir::OpBuilder b_;
  std::string error_;
  int source_ops_ = 0;
};

bool Importer::CheckType(mlir::Type type, Operation& op) {
  auto t = mlir::dyn_cast<mlir::RankedTensorType>(type);
  if (!t) return Fail(op, "unsupported type (not a ranked tensor)");
  if (!t.hasStaticShape())
    return Fail(op,
                "dynamic shape " + PrintedText(t) + " is not supported: export with static shapes");
  if (ToDType(t.getElementType()) != DType::kInvalid) return true;
  return Fail(op, "unsupported element type " + PrintedText(t.getElementType()) +
                      " (brt has f32, f16, bf16, f64, i1, i8, i32, i64, ui8, ui32, ui64)");
}

bool Importer::Params(Operation& op, llvm::SmallVectorImpl<mlir::NamedAttribute>& params) {
  llvm::SmallVector<mlir::NamedAttribute> attrs(op.getAttrs().begin(), op.getAttrs().end());
  if (auto props = mlir::dyn_cast_or_null<mlir::DictionaryAttr>(op.getPropertiesAsAttribute()))
    attrs.append(props.begin(), props.end());
  for (const mlir::NamedAttribute& na : attrs) {
    llvm::StringRef name = na.getName().getValue();
    Attribute a = na.getValue();
    if (Ignored(name)) continue;
    if (auto opaque = mlir::dyn_cast<mlir::OpaqueAttr>(a)) {
      std::string err;
      if (!DecodeOpaqueAttr(opaque, b_, params, &err)) return Fail(op, err);
    } else if (name == "value" &&
               mlir::isa<mlir::DenseElementsAttr, mlir::DenseResourceElementsAttr>(a)) {
      params.push_back(na);  // a constant's data
    } else if (auto dense = mlir::dyn_cast<mlir::DenseIntElementsAttr>(a)) {
      llvm::SmallVector<int64_t> flat;  // e.g. padding: dense<[[lo, hi], ...]>
      for (const llvm::APInt& v : dense.getValues<llvm::APInt>()) flat.push_back(v.getSExtValue());
      params.push_back(b_.getNamedAttr(name, b_.getDenseI64ArrayAttr(flat)));
    } else if (auto bools = mlir::dyn_cast<mlir::DenseBoolArrayAttr>(a)) {
      for (bool v : bools.asArrayRef())
        if (v) return Fail(op, "attribute '" + name.str() + "' with true entries is not supported");
    } else if (mlir::isa<mlir::DenseI64ArrayAttr, mlir::IntegerAttr, mlir::FloatAttr,
                         mlir::StringAttr, mlir::DenseElementsAttr>(a)) {
      params.push_back(na);
    } else if (auto arr = mlir::dyn_cast<mlir::ArrayAttr>(a)) {
      for (Attribute e : arr) {
        auto opaque = mlir::dyn_cast<mlir::OpaqueAttr>(e);
        llvm::SmallVector<mlir::NamedAttribute> ignored;
        std::string err;
        if (!opaque || !DecodeOpaqueAttr(opaque, b_, ignored, &err) || !ignored.empty())
          return Fail(op, "unsupported attribute '" + name.str() + "'");
      }
    } else if (!mlir::isa<mlir::UnitAttr, mlir::BoolAttr>(a)) {
      return Fail(op, "unsupported attribute '" + name.str() + "' = " + PrintedText(a));
    }
  }
  return true;
}

// reduce, reduce_window and scatter carry their computation as a region;
// the runtime takes it by name.
bool Importer::Reducer(Operation& op, llvm::StringRef kind,
                       llvm::SmallVectorImpl<mlir::NamedAttribute>& params) {
  if (op.getNumRegions() != 1 || op.getRegion(0).getBlocks().size() != 1)
    return Fail(op, kind.str() + " needs exactly one body block");
  mlir::Block& body = op.getRegion(0).front();
  llvm::SmallVector<Operation*> ops;
  for (Operation& inner : body) ops.push_back(&inner);
  auto name_of = [](Operation* o) { return o->getName().getStringRef(); };
  if (kind == "scatter") {
    // replace: return the update; add: return add(old, update)
    if (ops.size() == 1 && ops[0]->getNumOperands() == 1 &&
        ops[0]->getOperand(0) == body.getArgument(1)) {
      params.push_back(b_.getNamedAttr("mode", b_.getStringAttr("replace")));
      return true;
    }
    if (ops.size() == 2 && name_of(ops[0]) == "stablehlo.add") {
      params.push_back(b_.getNamedAttr("mode", b_.getStringAttr("add")));
      return true;
    }
    return Fail(op, "scatter computations other than replace and add are not supported");
  }
  static const std::pair<const char*, const char*> kReducers[] = {
      {"stablehlo.add", "add"},     {"stablehlo.multiply", "mul"}, {"stablehlo.maximum", "max"},
      {"stablehlo.minimum", "min"}, {"stablehlo.and", "and"},      {"stablehlo.or", "or"}};
  if (ops.size() == 2 && ops[0]->getNumOperands() == 2 &&
      ops[0]->getOperand(0) == body.getArgument(0) && ops[0]->getOperand(1) == body.getArgument(1))
    for (auto [name, reducer] : kReducers)
      if (name_of(ops[0]) == name) {
        params.push_back(b_.getNamedAttr("reducer", b_.getStringAttr(reducer)));
        return true;
      }
  return Fail(op, kind.str() + " body is not a single add/multiply/maximum/minimum/and/or");
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

// The operands as they are.
bool Importer::ImportOptimizationBarrier(Operation& op, llvm::ArrayRef<Value> operands,
                                         llvm::DenseMap<Value, Value>& map, int) {
  for (auto [from, to] : llvm::zip(op.getResults(), operands)) map[from] = to;
  return true;
}

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

const std::pair<const char*, Importer::Handler> Importer::kRewritten[] = {
    {"stablehlo.dynamic_iota", &Importer::ImportStaticForm},
    {"stablehlo.dynamic_broadcast_in_dim", &Importer::ImportStaticForm},
    {"stablehlo.dynamic_reshape", &Importer::ImportStaticForm},
    {"stablehlo.optimization_barrier", &Importer::ImportOptimizationBarrier},
    {"stablehlo.while", &Importer::ImportWhile},
    {"stablehlo.is_finite", &Importer::ImportIsFinite},
    {"chlo.square", &Importer::ImportSquare},
    {"chlo.digamma", &Importer::ImportChloExpansion},
    {"chlo.zeta", &Importer::ImportChloExpansion},
    {"chlo.bessel_i1e", &Importer::ImportChloExpansion},
    {"chlo.mulhi", &Importer::ImportChloExpansion},
    {"chlo.polygamma", &Importer::ImportChloExpansion},
    {"chlo.next_after", &Importer::ImportChloExpansion},
    {"stablehlo.sort", &Importer::ImportSort},
    {"chlo.top_k", &Importer::ImportTopK},
    {"stablehlo.composite", &Importer::ImportComposite},
    {"stablehlo.case", &Importer::ImportBranches},
    {"stablehlo.if", &Importer::ImportBranches},
};

namespace {

// Runs a reduce or sort body on scalars held as doubles (which keep an f32's
// -0 and the sign of its NaN): fills `results` with what it returns, or
// returns false where it holds an op this does not know.
bool RunScalarBody(mlir::Block& body, llvm::ArrayRef<double> args,
                   llvm::SmallVectorImpl<double>& results) {
  if (body.getNumArguments() != args.size()) return false;
  llvm::DenseMap<Value, double> env;
  for (auto [i, a] : llvm::enumerate(args)) env[body.getArgument(i)] = a;
  for (Operation& o : body) {
    const llvm::StringRef name = o.getName().getStringRef();
    auto in = [&](unsigned k) { return env.lookup(o.getOperand(k)); };
    if (name == "stablehlo.return") {
      results.clear();
      for (unsigned k = 0; k < o.getNumOperands(); ++k) results.push_back(in(k));
      return true;
    }
    if (o.getNumResults() != 1) return false;
    double r;
    if (name == "stablehlo.compare" && o.getNumOperands() == 2) {
      ops::Cmp cmp;
      if (!ops::ParseCmp(CompareDirection(&o), &cmp)) return false;
      r = CompareAttr(&o, "compare_type") == "TOTALORDER"
              ? ops::ApplyCmp(cmp, ops::SortKey(in(0), true), ops::SortKey(in(1), true))
              : ops::ApplyCmp(cmp, in(0), in(1));
    } else if (name == "stablehlo.and" && o.getNumOperands() == 2) {
      r = in(0) != 0 && in(1) != 0;
    } else if (name == "stablehlo.or" && o.getNumOperands() == 2) {
      r = in(0) != 0 || in(1) != 0;
    } else if (name == "stablehlo.not" && o.getNumOperands() == 1) {
      r = in(0) == 0;
    } else if (name == "stablehlo.select" && o.getNumOperands() == 3) {
      r = in(0) != 0 ? in(1) : in(2);
    } else if ((name == "stablehlo.minimum" || name == "stablehlo.maximum") &&
               o.getNumOperands() == 2) {
      const double x = in(0), y = in(1);
      r = std::isnan(x) || std::isnan(y) ? std::numeric_limits<double>::quiet_NaN()
          : name == "stablehlo.minimum"  ? std::min(x, y)
                                         : std::max(x, y);
    } else if (name == "stablehlo.constant") {
      auto value = AttrOrPropertyOf<mlir::DenseElementsAttr>(&o, "value");
      if (!value || value.getNumElements() != 1) return false;
      if (auto f = mlir::dyn_cast<mlir::DenseFPElementsAttr>(value))
        r = (*f.getValues<llvm::APFloat>().begin()).convertToDouble();
      else if (auto n = mlir::dyn_cast<mlir::DenseIntElementsAttr>(value))
        r = static_cast<double>((*n.getValues<llvm::APInt>().begin()).getSExtValue());
      else
        return false;
    } else {
      return false;
    }
    env[o.getResult(0)] = r;
  }
  return false;
}

// What a two-operand reduce body computes, told by running it on scalars:
// "GT" when it is jnp.argmax's (the greater value, NaN first, the smaller
// index among equals), "LT" for argmin's, "" otherwise.
std::string ArgReduceDirection(mlir::Block& body, bool floats) {
  auto run = [&](double a, double ai, double b, double bi, double* v, double* i) {
    llvm::SmallVector<double> out;
    if (!RunScalarBody(body, {a, ai, b, bi}, out) || out.size() != 2) return false;
    *v = out[0], *i = out[1];
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

// reduce(x, indices, init value, init index) with jnp.argmax's or argmin's
// body (found by running it): m = reduce max (min) of x; the index is the
// smallest index where x equals m, or is NaN; the value, if read, is m.
// JAX's inits (-inf or +inf, 0) are required.
bool Importer::ImportArgReduce(Operation& op, llvm::ArrayRef<Value> operands,
                               llvm::SmallVectorImpl<mlir::NamedAttribute>& params,
                               llvm::DenseMap<Value, Value>& map) {
  const std::string unsupported =
      "reduce with several operands is supported in the form jnp.argmax and jnp.argmin write";
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
  auto init_value = operands[2].getDefiningOp<KernelOp>();
  auto dense = init_value ? init_value.getParams().getAs<mlir::DenseFPElementsAttr>("value")
                          : mlir::DenseFPElementsAttr();
  const double bound = dir == "GT" ? -std::numeric_limits<double>::infinity()
                                   : std::numeric_limits<double>::infinity();
  if (!floats || !dense || dense.getNumElements() != 1 ||
      (*dense.getValues<llvm::APFloat>().begin()).convertToDouble() != bound ||
      ScalarInt(operands[3].getDefiningOp()) != 0)
    return Fail(op, "jnp.argmax/argmin's reduce is supported on floats with its inits (" +
                        std::string(dir == "GT" ? "-inf" : "+inf") + ", 0)");
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
  Value m =
      reduce(operands[0], operands[2], op.getResult(0).getType(), dir == "GT" ? "max" : "min");
  map[op.getResult(0)] = m;
  auto pred_type = mlir::RankedTensorType::get(x_type.getShape(), b_.getI1Type());
  auto compare = [&](Value a, Value b, const char* direction) {
    return Emit(loc, pred_type, "compare", {a, b},
                {b_.getNamedAttr("comparison_direction", b_.getStringAttr(direction))});
  };
  Value broadcast_m =
      Emit(loc, x_type, "broadcast_in_dim", m,
           {b_.getNamedAttr("broadcast_dimensions", b_.getDenseI64ArrayAttr(kept))});
  Value at_m =
      Emit(loc, pred_type, "or",
           {compare(operands[0], broadcast_m, "EQ"), compare(operands[0], operands[0], "NE")});
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

namespace {

struct SortOrder {
  int64_t key = 0;
  bool descending = false, total_order = false;
};

// What a sort comparator computes, told by running it on scalars: ordering
// by one operand's values, ascending or descending, floats by totalOrder or
// with -0 == +0 and NaN last (SortKey, ops/scalar_ops.h). A comparator
// that says false whenever a NaN is involved (torch-mlir's compare FLOAT) is
// matched on the other values, and brt puts NaN last (first descending), as
// PyTorch eager does.
bool SortComparatorOrder(mlir::Block& body, llvm::ArrayRef<mlir::Type> elements, SortOrder* found) {
  const size_t n = elements.size();
  constexpr double kInf = std::numeric_limits<double>::infinity(),
                   kNaN = std::numeric_limits<double>::quiet_NaN();
  for (size_t key = 0; key < n; ++key) {
    const mlir::Type element = elements[key];
    const bool floats = mlir::isa<mlir::FloatType>(element);
    std::vector<double> probes = {-3, 0, 1, 5};
    if (floats)
      probes = {-kNaN, -kInf, -1.5, -0.0, 0.0, 2.0, kInf, kNaN};
    else if (element.isInteger(1))
      probes = {0, 1};
    else if (element.isUnsignedInteger())
      probes = {0, 1, 3, 200};
    for (bool with_nan : {true, false}) {
      if (!with_nan && !floats) break;
      for (bool descending : {false, true})
        for (bool total : {false, true}) {
          if (total && !floats) continue;
          bool all = true;
          for (double a : probes)
            for (double b : probes)
              for (double other : {0.0, 1.0}) {  // the other operands' values, both ways round
                if (!with_nan && (std::isnan(a) || std::isnan(b))) continue;
                llvm::SmallVector<double> args;
                for (size_t j = 0; j < n; ++j) {
                  args.push_back(j == key ? a : other);
                  args.push_back(j == key ? b : 1 - other);
                }
                const uint64_t ka = ops::SortKey(a, total), kb = ops::SortKey(b, total);
                const bool first = descending ? kb < ka : ka < kb;
                llvm::SmallVector<double> out;
                all = all && RunScalarBody(body, args, out) && out.size() == 1 &&
                      (out[0] != 0) == first;
              }
          if (all) {
            *found = {static_cast<int64_t>(key), descending, total};
            return true;
          }
        }
    }
  }
  return false;
}

}  // namespace

// stablehlo.sort: brt's sort (brt/ops.def), its order read from the
// comparator (SortComparatorOrder). A sort is always stable in brt, which
// is_stable = false allows.
bool Importer::ImportSort(Operation& op, llvm::ArrayRef<Value> operands,
                          llvm::DenseMap<Value, Value>& map, int) {
  const size_t n = operands.size();
  if (n == 0 || op.getNumResults() != n || op.getNumRegions() != 1 ||
      !op.getRegion(0).hasOneBlock() || op.getRegion(0).front().getNumArguments() != 2 * n)
    return Fail(op, "stablehlo.sort needs a comparator of two arguments per operand");
  for (mlir::Type t : op.getResultTypes())
    if (!CheckType(t, op)) return false;
  const int64_t rank = mlir::cast<mlir::RankedTensorType>(operands[0].getType()).getRank();
  auto dimension_attr = AttrOrPropertyOf<mlir::IntegerAttr>(&op, "dimension");
  int64_t dimension = dimension_attr ? dimension_attr.getInt() : -1;  // StableHLO's default
  if (dimension < 0) dimension += rank;
  if (dimension < 0 || dimension >= rank)
    return Fail(op, "stablehlo.sort's dimension is outside the rank " + std::to_string(rank));
  llvm::SmallVector<mlir::Type> elements;
  for (Value v : operands)
    elements.push_back(mlir::cast<mlir::RankedTensorType>(v.getType()).getElementType());
  SortOrder order;
  if (!SortComparatorOrder(op.getRegion(0).front(), elements, &order))
    return Fail(op,
                "stablehlo.sort is supported with a comparator that orders by one operand, "
                "ascending or descending (as jnp.sort, jnp.argsort, lax.sort_key_val, lax.top_k, "
                "torch.sort, torch.argsort and torch.topk write it); this one is not");
  llvm::SmallVector<mlir::NamedAttribute> params = {
      b_.getNamedAttr("dimension", b_.getI64IntegerAttr(dimension)),
      b_.getNamedAttr("key", b_.getI64IntegerAttr(order.key)),
      b_.getNamedAttr("order", b_.getStringAttr(order.descending ? "descending" : "ascending"))};
  if (order.total_order) params.push_back(b_.getNamedAttr("total_order", b_.getI64IntegerAttr(1)));
  auto k = KernelOp::create(b_, op.getLoc(), op.getResultTypes(), b_.getStringAttr("sort"),
                            operands, b_.getDictionaryAttr(params));
  for (auto [from, to] : llvm::zip(op.getResults(), k.getResults())) map[from] = to;
  return true;
}

// chlo.top_k(x, k): the k largest along the last dimension and their
// indices, by totalOrder, the lower index first among equals -- a
// descending sort of (x, iota), sliced, as its CHLO decomposition is.
bool Importer::ImportTopK(Operation& op, llvm::ArrayRef<Value> operands,
                          llvm::DenseMap<Value, Value>& map, int) {
  auto k_attr = AttrOrPropertyOf<mlir::IntegerAttr>(&op, "k");
  if (operands.size() != 1 || op.getNumResults() != 2 || !k_attr)
    return Fail(op, "chlo.top_k needs one operand, two results and k");
  for (mlir::Type t : op.getResultTypes())
    if (!CheckType(t, op)) return false;
  const mlir::Location loc = op.getLoc();
  auto type = mlir::cast<mlir::RankedTensorType>(operands[0].getType());
  auto index_type = mlir::cast<mlir::RankedTensorType>(op.getResult(1).getType());
  const int64_t rank = type.getRank(), k = k_attr.getInt();
  if (rank == 0 || k < 0 || k > type.getShape().back())
    return Fail(op, "chlo.top_k's k " + std::to_string(k) + " is outside the last dimension");
  auto indices_type = mlir::RankedTensorType::get(type.getShape(), index_type.getElementType());
  Value iota = Emit(loc, indices_type, "iota", {},
                    {b_.getNamedAttr("iota_dimension", b_.getI64IntegerAttr(rank - 1))});
  auto sorted = KernelOp::create(
      b_, loc, mlir::TypeRange{type, indices_type}, b_.getStringAttr("sort"),
      mlir::ValueRange{operands[0], iota},
      b_.getDictionaryAttr({b_.getNamedAttr("dimension", b_.getI64IntegerAttr(rank - 1)),
                            b_.getNamedAttr("key", b_.getI64IntegerAttr(0)),
                            b_.getNamedAttr("order", b_.getStringAttr("descending")),
                            b_.getNamedAttr("total_order", b_.getI64IntegerAttr(1))}));
  llvm::SmallVector<int64_t> start(rank, 0), limit(type.getShape()), strides(rank, 1);
  limit.back() = k;
  for (unsigned r = 0; r < 2; ++r)
    map[op.getResult(r)] = Emit(loc, op.getResult(r).getType(), "slice", sorted.getResult(r),
                                {b_.getNamedAttr("start_indices", b_.getDenseI64ArrayAttr(start)),
                                 b_.getNamedAttr("limit_indices", b_.getDenseI64ArrayAttr(limit)),
                                 b_.getNamedAttr("strides", b_.getDenseI64ArrayAttr(strides))});
  return true;
}

// A call: the function that attribute `symbol` names (func.call's callee,
// stablehlo.composite's decomposition, as JAX wraps chlo.top_k in one)
// imported in place, the operands its arguments.
bool Importer::ImportCall(Operation& op, llvm::StringRef symbol, llvm::ArrayRef<Value> operands,
                          llvm::DenseMap<Value, Value>& map, int depth) {
  auto ref = AttrOrPropertyOf<mlir::FlatSymbolRefAttr>(&op, symbol);
  auto callee = ref ? source_.lookupSymbol<mlir::func::FuncOp>(ref.getValue()) : nullptr;
  if (!callee)
    return Fail(op, op.getName().getStringRef().str() + "'s " + symbol.str() +
                        " names no function of the module");
  llvm::SmallVector<Value> results;
  if (!ImportFunction(callee, operands, results, depth + 1)) return false;
  if (results.size() != op.getNumResults())
    return Fail(op, "the function returns " + std::to_string(results.size()) + " values for " +
                        std::to_string(op.getNumResults()) + " results");
  for (auto [from, to] : llvm::zip(op.getResults(), results)) map[from] = to;
  return true;
}

bool Importer::ImportComposite(Operation& op, llvm::ArrayRef<Value> operands,
                               llvm::DenseMap<Value, Value>& map, int depth) {
  return ImportCall(op, "decomposition", operands, map, depth);
}

// stablehlo.case (lax.cond, lax.switch) and stablehlo.if. brt's programs
// have no data-dependent control flow, so every branch is imported and
// runs, and a select per result picks the taken branch's value: StableHLO
// ops have no side effects, so a branch not taken costs time and changes
// nothing. A case index out of range takes the last branch, as StableHLO
// defines it. A constant index or predicate imports its branch alone.
bool Importer::ImportBranches(Operation& op, llvm::ArrayRef<Value> operands,
                              llvm::DenseMap<Value, Value>& map, int depth) {
  const llvm::StringRef name = op.getName().getStringRef();
  const bool is_if = name == "stablehlo.if";
  const unsigned n = op.getNumRegions();
  if (operands.size() != 1 || n == 0 || (is_if && n != 2))
    return Fail(op, name.str() + (is_if ? " needs a predicate and two branches"
                                        : " needs an index and at least one branch"));
  for (mlir::Region& region : op.getRegions())
    if (!region.hasOneBlock() || region.front().getNumArguments() != 0)
      return Fail(op, name.str() + "'s branches must be single blocks without arguments");
  for (Value r : op.getResults())
    if (!mlir::isa<mlir::RankedTensorType>(r.getType()))
      return Fail(op, name.str() + " returns a " + PrintedText(r.getType()) +
                          ", which brt has no value for (results must be tensors)");
  // The branch `index` takes, as StableHLO's case clamps it: an if's
  // predicate true is branch 0.
  auto branch_of = [&](int64_t index) -> unsigned {
    if (is_if) return index != 0 ? 0 : 1;
    return index < 0 || index >= n ? n - 1 : static_cast<unsigned>(index);
  };
  auto import_branch = [&](unsigned k, llvm::SmallVectorImpl<Value>& results) {
    if (!ImportBlock(op.getRegion(k).front(), &op, {}, results, depth, &map)) return false;
    if (results.size() == op.getNumResults()) return true;
    return Fail(op, name.str() + "'s branch " + std::to_string(k) + " returns " +
                        std::to_string(results.size()) + " values for " +
                        std::to_string(op.getNumResults()) + " results");
  };
  if (std::optional<int64_t> index = ScalarInt(operands[0].getDefiningOp())) {
    llvm::SmallVector<Value> results;
    if (!import_branch(branch_of(*index), results)) return false;
    for (auto [from, to] : llvm::zip(op.getResults(), results)) map[from] = to;
    return true;
  }
  llvm::SmallVector<llvm::SmallVector<Value>> branches(n);
  for (unsigned k = 0; k < n; ++k)
    if (!import_branch(k, branches[k])) return false;
  const mlir::Location loc = op.getLoc();
  // Per branch but the last (which takes the rest), the scalar predicate
  // that it is taken.
  llvm::SmallVector<Value> taken;
  if (is_if) {
    taken.push_back(operands[0]);
  } else {
    Elementwise scalar(b_, loc, {});
    const mlir::Type index_type =
        mlir::cast<mlir::RankedTensorType>(operands[0].getType()).getElementType();
    for (unsigned k = 0; k + 1 < n; ++k)
      taken.push_back(scalar.Compare(operands[0], scalar.IntConstant(index_type, k), "EQ"));
  }
  for (auto [i, result] : llvm::enumerate(op.getResults())) {
    Elementwise e(b_, loc, mlir::cast<mlir::RankedTensorType>(result.getType()).getShape());
    Value value = branches[n - 1][i];
    for (unsigned k = n - 1; k-- > 0;) value = e.Select(taken[k], branches[k][i], value);
    map[result] = value;
  }
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
                                   padding = ints("padding"), lhs_dilation = ints("lhs_dilation");
  Value lhs = operands[0];
  const bool dilated = llvm::any_of(lhs_dilation, [](int64_t d) { return d != 1; });
  const bool negative = llvm::any_of(padding, [](int64_t p) { return p < 0; });
  if (dilated || negative) {
    const size_t n = spatial.size();
    if (padding.size() != 2 * n || (!lhs_dilation.empty() && lhs_dilation.size() != n))
      return Fail(op, "convolution padding or lhs_dilation does not match its spatial dimensions");
    if (!mlir::isa<mlir::FloatType>(lhs_type.getElementType()))
      return Fail(op, "convolution with lhs_dilation or negative padding needs a float operand");
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
    lhs = Emit(loc, mlir::RankedTensorType::get(shape, lhs_type.getElementType()), "pad",
               {lhs, FloatScalar(loc, lhs_type.getElementType(), 0.0)},
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

bool Importer::ImportOp(Operation& op, llvm::DenseMap<Value, Value>& map, int depth) {
  const llvm::StringRef name = op.getName().getStringRef();
  llvm::SmallVector<Value> operands;
  for (Value v : op.getOperands()) {
    auto it = map.find(v);
    if (it == map.end()) return Fail(op, "operand defined outside the function");
    operands.push_back(it->second);
  }
  if (name == "func.call") return ImportCall(op, "callee", operands, map, depth);
  // torch-mlir's StableHLO keeps the constants it folds as arith.constant.
  if (!name.starts_with("stablehlo.") && !name.starts_with("chlo.") && name != "arith.constant")
    return Fail(op, "unsupported op '" + name.str() + "'");
  ++source_ops_;
  llvm::StringRef kind = name.split('.').second;
  for (const auto& [rewritten, handler] : kRewritten)
    if (name == rewritten) return (this->*handler)(op, operands, map, depth);
  if (name == "stablehlo.custom_call") {
    auto target = AttrOrPropertyOf<mlir::StringAttr>(&op, "call_target_name");
    return Fail(op, "unknown custom_call target '" +
                        (target ? target.getValue().str() : std::string("?")) + "'");
  }
  if (const KindInfo* info = FindKind(kind);
      !info || !(name.starts_with("chlo.") ? info->chlo : info->imported))
    return Fail(op, "unsupported op '" + name.str() + "'");
  for (mlir::Type t : op.getResultTypes())
    if (!CheckType(t, op)) return false;
  llvm::SmallVector<mlir::NamedAttribute> params;
  if (!Params(op, params)) return false;
  if (kind == "reduce" && op.getNumOperands() == 4)
    return ImportArgReduce(op, operands, params, map);
  if (kind == "reduce" || kind == "reduce_window") {
    if (op.getNumOperands() != 2)
      return Fail(op, kind.str() + " with several operands is not supported yet");
    if (!Reducer(op, kind, params)) return false;
  } else if (kind == "select_and_scatter") {
    if (!SelectAndScatterBodies(op, params)) return false;
  } else if (kind == "scatter") {
    if (op.getNumOperands() != 3)
      return Fail(op, "scatter with several operands is not supported yet");
    if (!Reducer(op, kind, params)) return false;
  }
  if ((kind == "gather" || kind == "scatter") && !UnbatchIndexing(op, kind, operands, params))
    return false;
  if (kind == "all_reduce" || kind == "all_gather" || kind == "reduce_scatter" ||
      kind == "all_to_all")
    return ImportCollective(op, kind, operands, params, map);
  if (kind == "convolution") return ImportConvolution(op, operands, params, map);
  if (kind == "constant" && op.getNumResults() == 1) {
    // A splat (torch-mlir writes them at full size: 25 MB of 0.5 for a
    // GELU at batch 32) is a scalar broadcast, which fusion folds in.
    auto value = AttrOrPropertyOf<mlir::DenseElementsAttr>(&op, "value");
    if (value && value.isSplat() && value.getNumElements() > 1) {
      auto scalar = mlir::RankedTensorType::get({}, value.getElementType());
      Value one = Emit(op.getLoc(), scalar, "constant", {},
                       {b_.getNamedAttr("value", value.resizeSplat(scalar))});
      map[op.getResult(0)] =
          Emit(op.getLoc(), op.getResult(0).getType(), "broadcast_in_dim", {one},
               {b_.getNamedAttr("broadcast_dimensions", b_.getDenseI64ArrayAttr({}))});
      return true;
    }
  }
  auto k = KernelOp::create(b_, op.getLoc(), op.getResultTypes(), b_.getStringAttr(kind), operands,
                            b_.getDictionaryAttr(params));
  for (auto [from, to] : llvm::zip(op.getResults(), k.getResults())) map[from] = to;
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
  auto k = KernelOp::create(b_, op.getLoc(), op.getResultTypes(), b_.getStringAttr(kind), operands,
                            b_.getDictionaryAttr(params));
  map[op.getResult(0)] = k.getResult(0);
  return true;
}

// A while loop of a trip count known at compile time -- a counter from a
// constant, compared LT (or LE) against a constant, stepped by a constant;
// what lax.fori_loop and lax.scan with static bounds, and JAX's threefry,
// produce -- is unrolled: its body imported once per iteration.
bool Importer::ImportWhile(Operation& op, llvm::ArrayRef<Value> operands,
                           llvm::DenseMap<Value, Value>& map, int depth) {
  constexpr int64_t kMaxUnrolledOps = 200000;
  const std::string unsupported =
      "stablehlo.while without a trip count known at compile time is not supported (brt unrolls "
      "loops whose counter starts at a constant, is compared LT or LE against a constant and "
      "stepped by a constant, as lax.fori_loop and lax.scan with static bounds make them)";
  if (op.getNumRegions() != 2 || !op.getRegion(0).hasOneBlock() || !op.getRegion(1).hasOneBlock())
    return Fail(op, "stablehlo.while needs one cond and one body block");
  mlir::Block& cond = op.getRegion(0).front();
  mlir::Block& body = op.getRegion(1).front();
  const size_t n = operands.size();
  if (cond.empty() || body.empty() || cond.getNumArguments() != n || body.getNumArguments() != n ||
      body.back().getNumOperands() != n || op.getNumResults() != n)
    return Fail(op, "stablehlo.while's blocks do not match its " + std::to_string(n) + " operands");
  Operation* ret = &cond.back();
  Operation* compare =
      ret && ret->getNumOperands() == 1 ? ret->getOperand(0).getDefiningOp() : nullptr;
  if (!compare || compare->getName().getStringRef() != "stablehlo.compare" ||
      compare->getNumOperands() != 2)
    return Fail(op, unsupported);
  auto counter = mlir::dyn_cast<mlir::BlockArgument>(compare->getOperand(0));
  const std::string dir = CompareDirection(compare);
  const bool lt = dir == "LT", le = dir == "LE";
  std::optional<int64_t> limit = ScalarInt(compare->getOperand(1).getDefiningOp());
  if (!counter || counter.getOwner() != &cond || (!lt && !le) || !limit)
    return Fail(op, unsupported);
  const unsigned k = counter.getArgNumber();
  std::optional<int64_t> start = ScalarInt(operands[k].getDefiningOp());
  Operation* next = body.back().getOperand(k).getDefiningOp();
  std::optional<int64_t> step;
  if (next && next->getName().getStringRef() == "stablehlo.add" && next->getNumOperands() == 2)
    for (int i = 0; i < 2; ++i)
      if (next->getOperand(i) == body.getArgument(k))
        step = ScalarInt(next->getOperand(1 - i).getDefiningOp());
  if (!start || !step || *step <= 0) return Fail(op, unsupported);
  const __int128 end = static_cast<__int128>(*limit) + (le ? 1 : 0);
  const __int128 span = end - *start;
  const int64_t trips = span <= 0 ? 0
                        : span / *step > kMaxUnrolledOps
                            ? kMaxUnrolledOps + 1
                            : static_cast<int64_t>((span + *step - 1) / *step);
  const int64_t body_ops = static_cast<int64_t>(body.getOperations().size());
  if (trips * body_ops > kMaxUnrolledOps)
    return Fail(op, "stablehlo.while of " + std::to_string(trips) + " iterations over " +
                        std::to_string(body_ops) +
                        " ops is too long to unroll (brt unrolls up to " +
                        std::to_string(kMaxUnrolledOps) + " ops)");
  llvm::SmallVector<Value> values(operands.begin(), operands.end());
  for (int64_t t = 0; t < trips; ++t) {
    llvm::SmallVector<Value> results;
    if (!ImportBlock(body, &op, values, results, depth, &map)) return false;
    if (results.size() != n) return Fail(op, "stablehlo.while's body returns the wrong count");
    values = std::move(results);
  }
  for (auto [from, to] : llvm::zip(op.getResults(), values)) map[from] = to;
  return true;
}

bool Importer::ImportBlock(mlir::Block& block, Operation* owner, llvm::ArrayRef<Value> args,
                           llvm::SmallVectorImpl<Value>& results, int depth,
                           const llvm::DenseMap<Value, Value>* outer) {
  llvm::DenseMap<Value, Value> map;
  if (outer) map = *outer;
  for (auto [from, to] : llvm::zip(block.getArguments(), args)) map[from] = to;
  for (Operation& op : block) {
    const llvm::StringRef name = op.getName().getStringRef();
    if (name == "func.return" || name == "sdy.return" || name == "stablehlo.return") {
      for (Value v : op.getOperands()) results.push_back(map.lookup(v));
      return true;
    }
    if (!ImportOp(op, map, depth)) return false;
  }
  return Fail(*owner, "function has no return");
}

bool Importer::ImportFunction(mlir::func::FuncOp fn, llvm::ArrayRef<Value> args,
                              llvm::SmallVectorImpl<Value>& results, int depth) {
  if (depth > 64) return Fail(*fn, "calls nested deeper than 64 (recursion?)");
  if (fn.getBody().getBlocks().size() != 1)
    return Fail(*fn, "functions with control flow are not supported");
  return ImportBlock(fn.getBody().front(), fn, args, results, depth);
}

ImportResult Importer::Run() {
  ImportResult result;
  mlir::func::FuncOp main;
  int publics = 0;
  source_.walk([&](mlir::func::FuncOp f) {
    if (f.getSymName() == "main") main = f;
    if (!f.isPrivate()) ++publics;
  });
  if (!main) {
    result.error = "no function named 'main' in the module";
    return result;
  }
  // A shard_map program: the rank's function is the per-device body.
  PerRankProgram per_rank;
  std::string sharding_error;
  if (!FindPerRankProgram(source_, main, per_rank, &sharding_error)) {
    result.error = Where(main.getLoc()) + ": " + sharding_error;
    return result;
  }
  mlir::FunctionType type = main.getFunctionType();
  if (per_rank.body) {
    llvm::SmallVector<mlir::Type> results;
    for (Value v : per_rank.body->getTerminator()->getOperands()) results.push_back(v.getType());
    type = b_.getFunctionType(per_rank.body->getArgumentTypes(), results);
  }
  for (mlir::Type t : type.getInputs())
    if (!CheckType(t, *main)) return result.error = error_, std::move(result);
  auto module = mlir::ModuleOp::create(b_.getUnknownLoc());
  b_.setInsertionPointToEnd(module.getBody());
  auto fn = mlir::func::FuncOp::create(b_, main.getLoc(), "main", type);
  b_.setInsertionPointToEnd(fn.addEntryBlock());
  llvm::SmallVector<Value> args(fn.getArguments().begin(), fn.getArguments().end()), results;
  const bool imported = per_rank.body ? ImportBlock(*per_rank.body, main, args, results, 0)
                                      : ImportFunction(main, args, results, 0);
  if (!imported) {
    module->erase();
    result.error = error_;
    return result;
  }
  mlir::func::ReturnOp::create(b_, main.getLoc(), results);
  // Donated arguments (jax.jit(..., donate_argnums=...)): the result that
  // reuses each one's buffer, where JAX named one of the same type.
  for (unsigned i = 0; i < main.getNumArguments() && i < fn.getNumArguments(); ++i) {
    if (auto k = main.getArgAttrOfType<mlir::IntegerAttr>(i, "tf.aliasing_output")) {
      const int64_t out = k.getInt();
      if (out >= 0 && out < fn.getNumResults() &&
          fn.getResultTypes()[out] == fn.getArgumentTypes()[i])
        fn.setArgAttr(i, kAliasOutputAttr, k);
    }
    if (auto name = main.getArgAttrOfType<mlir::StringAttr>(i, kArgNameAttr))
      fn.setArgAttr(i, kArgNameAttr, name);
  }
  if (per_rank.body) {
    std::string mesh;
    for (const auto& [axis, size] : per_rank.mesh)
      mesh += (mesh.empty() ? "" : ",") + axis + "=" + std::to_string(size);
    fn->setAttr(kMeshAttr, b_.getStringAttr(mesh));
    auto strings = [&](const std::vector<std::string>& dims) {
      llvm::SmallVector<mlir::Attribute> a;
      for (const std::string& d : dims) a.push_back(b_.getStringAttr(d));
      return b_.getArrayAttr(a);
    };
    for (size_t i = 0; i < per_rank.arg_sharding.size() && i < fn.getNumArguments(); ++i)
      fn.setArgAttr(i, kShardingAttr, strings(per_rank.arg_sharding[i]));
    for (size_t i = 0; i < per_rank.result_sharding.size() && i < fn.getNumResults(); ++i)
      fn.setResultAttr(i, kShardingAttr, strings(per_rank.result_sharding[i]));
  }
  result.module = module;
  result.source_ops = source_ops_;
  (void)publics;
  return result;
}

}  // namespace

std::vector<std::string> ImportedOpNames() {
  std::vector<std::string> names;
  for (const KindInfo& k : AllKinds()) {
    if (k.imported) names.push_back(std::string("stablehlo.") + k.kind);
    if (k.chlo) names.push_back(std::string("chlo.") + k.kind);
  }
  for (const auto& [name, handler] : Importer::kRewritten) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

void PrepareContext(mlir::MLIRContext& context) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, BrtDialect>();
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  context.allowUnregisteredDialects(true);
}

ImportResult ImportStableHlo(mlir::MLIRContext& context, llvm::StringRef text,
                             llvm::StringRef source_name) {
  ImportResult result;
  std::string diagnostics;
  llvm::raw_string_ostream diag_os(diagnostics);
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic& d) {
    if (!diagnostics.empty()) return mlir::success();  // keep the first: it is the cause
    d.getLocation().print(diag_os);
    diag_os << ": " << d.str();
    return mlir::success();
  });
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, source_name),
                             llvm::SMLoc());
  // Not verified after parsing: a func.call inside a shard_map's region (an
  // unregistered sdy.manual_computation, which MLIR takes for a possible
  // symbol table) would fail to find its callee. The importer checks what it
  // reads, and the brt module it makes is verified.
  mlir::ParserConfig config(&context, /*verifyAfterParse=*/false);
  mlir::OwningOpRef<mlir::ModuleOp> source = mlir::parseSourceFile<mlir::ModuleOp>(sources, config);
  if (!source) {
    result.error = diagnostics.empty() ? "cannot parse " + source_name.str() : diagnostics;
    return result;
  }
  return Importer(context, *source).Run();
}

}  // namespace brt::bridge

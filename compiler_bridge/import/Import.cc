// The importer's walk (see Importer.h): functions and blocks, attributes
// decoded to plain ones, and the dispatch of each source op by name.
#include "import/Importer.h"

#include <set>

#include "OpKinds.h"
#include "import/OpaqueAttrs.h"
#include "import/PerRank.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

namespace brt::bridge {

using mlir::Attribute;
using mlir::Operation;
using mlir::Value;

namespace {

// Attributes that do not change what the runtime computes.
bool Ignored(llvm::StringRef name) {
  return name == "precision_config" || name == "indices_are_sorted" || name == "unique_indices" ||
         name == "compare_type" || name == "result_accuracy" ||
         // Collectives: JAX's channel ids identify nothing, and its replica
         // groups always hold global device ids (partition ids).
         name == "channel_handle" || name == "use_global_device_ids";
}

}  // namespace

// The integer in a scalar constant: a source stablehlo.constant, or a brt
// constant the importer made.
std::optional<int64_t> ScalarInt(Operation* def) {
  if (!def) return std::nullopt;
  llvm::StringRef name = def->getName().getStringRef();
  mlir::DenseIntElementsAttr value;
  if (name == "stablehlo.constant")
    value = AttrOrPropertyOf<mlir::DenseIntElementsAttr>(def, "value");
  if (auto constant = mlir::dyn_cast<ConstantOp>(def))
    value = mlir::dyn_cast<mlir::DenseIntElementsAttr>(constant.getValue());
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

bool Importer::CheckType(mlir::Type type, Operation& op) {
  auto t = mlir::dyn_cast<mlir::RankedTensorType>(type);
  if (!t) return Fail(op, "unsupported type (not a ranked tensor)");
  if (!t.hasStaticShape() && !SymbolicShape(t))
    return Fail(op, "dynamic shape " + PrintedText(t) +
                        " without symbolic sizes: export with jax.export and "
                        "jax.export.symbolic_shape, or with static shapes");
  if (ToDType(t.getElementType()) != DType::kInvalid) return true;
  return Fail(op,
              "unsupported element type " + PrintedText(t.getElementType()) +
                  " (brt has f32, f16, bf16, f64, i1, i8, i16, i32, i64, ui8, ui16, ui32, ui64, "
                  "complex<f32>, complex<f64>)");
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
    } else if (auto integer = mlir::dyn_cast<mlir::IntegerAttr>(a)) {
      // The registry's integers are i64 (reduce_precision's bit counts are i32).
      const llvm::APInt& v = integer.getValue();
      params.push_back(b_.getNamedAttr(
          name, b_.getI64IntegerAttr(v.getBitWidth() == 1 ? v.getZExtValue() : v.getSExtValue())));
    } else if (auto real = mlir::dyn_cast<mlir::FloatAttr>(a)) {
      params.push_back(b_.getNamedAttr(name, b_.getF64FloatAttr(real.getValueAsDouble())));
    } else if (mlir::isa<mlir::DenseI64ArrayAttr, mlir::StringAttr, mlir::DenseElementsAttr>(a)) {
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

const std::pair<const char*, Importer::Handler> Importer::kRewritten[] = {
    {"stablehlo.dynamic_iota", &Importer::ImportStaticForm},
    {"stablehlo.dynamic_broadcast_in_dim", &Importer::ImportStaticForm},
    {"stablehlo.dynamic_reshape", &Importer::ImportStaticForm},
    {"stablehlo.dynamic_pad", &Importer::ImportDynamicPad},
    {"stablehlo.real_dynamic_slice", &Importer::ImportRealDynamicSlice},
    {"stablehlo.dynamic_gather", &Importer::ImportDynamicGather},
    {"stablehlo.dynamic_conv", &Importer::ImportDynamicConv},
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
    {"stablehlo.triangular_solve", &Importer::ImportTriangularSolve},
    {"stablehlo.clamp", &Importer::ImportClamp},
    {"stablehlo.dot_general", &Importer::ImportDotGeneral},
};

bool Importer::ImportOp(Operation& op, llvm::DenseMap<Value, Value>& map, int depth) {
  const llvm::StringRef name = op.getName().getStringRef();
  if (symbolic_) {
    const int followed = FollowShapeOp(op);
    if (followed != 0) return followed > 0;
  }
  // A followed size read as data is computed at run time; a call's
  // arguments and dynamic ops' shape operands (from `first_size` on) stay
  // sizes.
  const unsigned first_size =
      name == "func.call" || name == "shape.assuming" || name == "stablehlo.dynamic_iota" ? 0
      : name == "stablehlo.dynamic_broadcast_in_dim" || name == "stablehlo.dynamic_reshape" ||
              name == "stablehlo.real_dynamic_slice"
          ? 1
      : name == "stablehlo.dynamic_pad" || name == "stablehlo.dynamic_gather" ||
              name == "stablehlo.dynamic_conv" || IsDynamicReduceWindow(op)
          ? 2
          : op.getNumOperands();
  llvm::SmallVector<Value> operands;
  for (auto [i, v] : llvm::enumerate(op.getOperands())) {
    Value mapped = map.lookup(v);
    if (!mapped && symbolic_ && Followed(v) && i < first_size) {
      if (!(mapped = MaterializeShapeValue(op, v))) return false;
      map[v] = mapped;
    } else if (!mapped && !(symbolic_ && Followed(v))) {
      return Fail(op, "operand defined outside the function");
    }
    operands.push_back(mapped);
  }
  if (name == "func.call") return ImportCall(op, "callee", operands, map, depth);
  if (name == "shape.assuming" && symbolic_) return ImportAssuming(op, operands, map, depth);
  // torch-mlir's StableHLO keeps the constants it folds as arith.constant.
  if (!name.starts_with("stablehlo.") && !name.starts_with("chlo.") && name != "arith.constant")
    return Fail(op, "unsupported op '" + name.str() + "'");
  ++source_ops_;
  // Branches give their results' sizes when imported (ImportBranches).
  if (symbolic_ && name != "stablehlo.composite" && name != "stablehlo.case" &&
      name != "stablehlo.if" && !RefineResultTypes(op))
    return false;
  llvm::StringRef kind = name.split('.').second;
  for (const auto& [rewritten, handler] : kRewritten)
    if (name == rewritten) return (this->*handler)(op, operands, map, depth);
  if (name == "stablehlo.custom_call") {
    auto target = AttrOrPropertyOf<mlir::StringAttr>(&op, "call_target_name");
    if (target && target.getValue().starts_with("lapack_"))
      return ImportLapack(op, operands, map, depth);
    if (target && target.getValue() == "ApproxTopK")
      return ImportApproxTopK(op, operands, map, depth);
    if (IsDynamicReduceWindow(op) && symbolic_) return ImportDynamicReduceWindow(op, operands, map);
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
  if (kind == "reduce" && op.getNumOperands() > 2)
    return ImportVariadicReduce(op, operands, params, map);
  bool scatter_body = false;  // a body no scatter mode names
  if (kind == "reduce" || kind == "reduce_window") {
    if (op.getNumOperands() != 2)
      return Fail(op, kind.str() + " with several operands is not supported yet");
    if (!Reducer(op, kind, params)) return false;
  } else if (kind == "select_and_scatter") {
    if (!SelectAndScatterBodies(op, params)) return false;
  } else if (kind == "scatter") {
    if (op.getNumOperands() != 3)
      return Fail(op, "scatter with several operands is not supported yet");
    scatter_body = !Reducer(op, kind, params, &operands);
  }
  if ((kind == "gather" || kind == "scatter") && !UnbatchIndexing(op, kind, operands, params))
    return false;
  if (scatter_body) return ImportScatterBody(op, operands, params, map);
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
  auto k = CreateOp(b_, op.getLoc(), kind, op.getResultTypes(), operands, params);
  for (auto [from, to] : llvm::zip(op.getResults(), k->getResults())) map[from] = to;
  return true;
}

bool Importer::ImportBlock(mlir::Block& block, Operation* owner, llvm::ArrayRef<Value> args,
                           llvm::SmallVectorImpl<Value>& results, int depth,
                           const llvm::DenseMap<Value, Value>* outer) {
  llvm::DenseMap<Value, Value> map;
  if (outer) map = *outer;
  for (auto [from, to] : llvm::zip(block.getArguments(), args)) {
    // A region's arguments take the symbolic sizes of what they are given.
    if (symbolic_ && to) from.setType(to.getType());
    map[from] = to;
  }
  const bool keep_followed = keep_followed_results_;
  keep_followed_results_ = false;
  // What an earlier import of this block (another call) followed is stale.
  for (Operation& op : block)
    for (Value v : op.getResults()) shape_values_.erase(v), relations_.erase(v);
  for (Operation& op : block) {
    const llvm::StringRef name = op.getName().getStringRef();
    if (name == "func.return" || name == "sdy.return" || name == "stablehlo.return" ||
        name == "shape.assuming_yield") {
      for (Value v : op.getOperands()) {
        Value r = map.lookup(v);
        if (!r && symbolic_ && Followed(v) && !keep_followed && !(r = MaterializeShapeValue(op, v)))
          return false;
        results.push_back(r);
      }
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
  symbolic_ = llvm::any_of(main.getArgumentTypes(), HasSymbolicDims);
  SymDim::SetBounds({}, {});
  // jax.jit(...).lower with symbolic shapes: @main's leading arguments are
  // the dimension sizes (jax.global_constant), followed as their symbols;
  // the others are the function's inputs.
  llvm::SmallVector<unsigned> inputs;
  for (unsigned i = 0; i < main.getNumArguments(); ++i) {
    auto size = main.getArgAttrOfType<mlir::StringAttr>(i, "jax.global_constant");
    if (!size) {
      inputs.push_back(i);
      continue;
    }
    if (!symbolic_)
      return result.error = Where(main.getLoc()) + ": @main takes the size of '" + size.str() +
                            "' as an argument but no argument has a dynamic dimension",
             std::move(result);
    shape_values_[main.getArgument(i)] = {SymDim::Symbol(size.getValue())};
  }
  if (symbolic_ && per_rank.body)
    return result.error = Where(main.getLoc()) +
                          ": shard_map programs with symbolic shapes are "
                          "not supported",
           std::move(result);
  if (symbolic_ && !NameMainSymbols(main)) return result.error = error_, std::move(result);
  llvm::SmallVector<mlir::Type> input_types;
  for (unsigned i : inputs) input_types.push_back(main.getArgument(i).getType());
  mlir::FunctionType type = b_.getFunctionType(input_types, main.getFunctionType().getResults());
  if (per_rank.body) {
    llvm::SmallVector<mlir::Type> results;
    for (Value v : per_rank.body->getTerminator()->getOperands()) results.push_back(v.getType());
    type = b_.getFunctionType(per_rank.body->getArgumentTypes(), results);
  }
  for (mlir::Type t : type.getInputs())
    if (!CheckType(t, *main)) return result.error = error_, std::move(result);
  auto module = mlir::ModuleOp::create(b_.getUnknownLoc());
  module_ = module;
  b_.setInsertionPointToEnd(module.getBody());
  auto fn = mlir::func::FuncOp::create(b_, main.getLoc(), "main", type);
  b_.setInsertionPointToEnd(fn.addEntryBlock());
  llvm::SmallVector<Value> args(main.getNumArguments()), results;
  for (auto [k, i] : llvm::enumerate(inputs)) args[i] = fn.getArgument(k);
  if (per_rank.body) args.assign(fn.getArguments().begin(), fn.getArguments().end());
  const bool imported = per_rank.body ? ImportBlock(*per_rank.body, main, args, results, 0)
                                      : ImportFunction(main, args, results, 0);
  if (!imported) {
    module->erase();
    result.error = error_;
    return result;
  }
  mlir::func::ReturnOp::create(b_, main.getLoc(), results);
  if (symbolic_) {
    fn.setType(b_.getFunctionType(fn.getArgumentTypes(), mlir::ValueRange(results).getTypes()));
    llvm::SmallVector<mlir::Attribute> constraints;
    std::set<std::string> seen;
    for (const std::string& c : constraints_)
      if (seen.insert(c).second) constraints.push_back(b_.getStringAttr(c));
    if (!constraints.empty()) fn->setAttr(kConstraintsAttr, b_.getArrayAttr(constraints));
  }
  // Donated arguments (jax.jit(..., donate_argnums=...)): the result that
  // reuses each one's buffer, where JAX named one of the same type.
  for (auto [f, i] : llvm::enumerate(inputs)) {
    if (f >= fn.getNumArguments()) break;
    if (auto k = main.getArgAttrOfType<mlir::IntegerAttr>(i, "tf.aliasing_output")) {
      const int64_t out = k.getInt();
      if (out >= 0 && out < fn.getNumResults() &&
          fn.getResultTypes()[out] == fn.getArgumentTypes()[f])
        fn.setArgAttr(f, kAliasOutputAttr, k);
    }
    if (auto name = main.getArgAttrOfType<mlir::StringAttr>(i, kArgNameAttr))
      fn.setArgAttr(f, kArgNameAttr, name);
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
  // Function passes run on one function at a time: a program's functions
  // (main and its loop and branch regions) would otherwise be run in
  // parallel, and the passes keep state of their own (fold-constants' plugin
  // sessions, patterns built in initialize()).
  context.disableMultithreading();
  context.loadAllAvailableDialects();
  context.allowUnregisteredDialects(true);
}

ImportResult ImportStableHlo(mlir::MLIRContext& context, llvm::StringRef text,
                             llvm::StringRef source_name, const ImportOptions& options) {
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
  result = Importer(context, *source, options).Run();
  // What the importer made must be valid brt ops (a missing required
  // attribute would otherwise reach the passes, which read it).
  if (result.module && mlir::failed(mlir::verify(*result.module))) {
    result.module = nullptr;
    result.error = diagnostics.empty() ? "the imported program does not verify" : diagnostics;
  }
  return result;
}

}  // namespace brt::bridge

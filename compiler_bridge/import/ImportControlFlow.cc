// Calls, composites, case/if, while loops and optimization barriers (see
// Importer.h).
#include "import/Importer.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Transforms/RegionUtils.h"

namespace brt::bridge {

using mlir::Operation;
using mlir::Value;

// The operands as they are.
bool Importer::ImportOptimizationBarrier(Operation& op, llvm::ArrayRef<Value> operands,
                                         llvm::DenseMap<Value, Value>& map, int) {
  for (auto [from, to] : llvm::zip(op.getResults(), operands)) map[from] = to;
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
  // Symbolic shapes: the callee's arguments take the call's types and sizes,
  // and the call's results its returned ones.
  if (symbolic_ && !callee.getBody().empty()) {
    for (auto [arg, v] : llvm::zip(callee.getArguments(), op.getOperands())) TakeShapeOf(arg, v);
    keep_followed_results_ = true;
  }
  const bool imported = ImportFunction(callee, operands, results, depth + 1);
  keep_followed_results_ = false;
  if (!imported) return false;
  if (results.size() != op.getNumResults())
    return Fail(op, "the function returns " + std::to_string(results.size()) + " values for " +
                        std::to_string(op.getNumResults()) + " results");
  Operation* ret = symbolic_ ? callee.getBody().front().getTerminator() : nullptr;
  for (auto [i, from, to] : llvm::enumerate(op.getResults(), results)) {
    if (ret) TakeShapeOf(from, ret->getOperand(i));
    if (to) map[from] = to;
  }
  return true;
}

// `to` takes `from`'s (refined) type and the size or condition it holds.
void Importer::TakeShapeOf(Value to, Value from) {
  to.setType(from.getType());
  shape_values_.erase(to), relations_.erase(to);
  if (shape_values_.count(from)) shape_values_[to] = shape_values_.lookup(from);
  if (relations_.count(from)) relations_[to] = relations_.lookup(from);
}

// shape.assuming (torch-mlir, under symbolic shapes): its region in place;
// the witness it waits on is the kernels' own shape checks.
bool Importer::ImportAssuming(Operation& op, llvm::ArrayRef<Value>,
                              llvm::DenseMap<Value, Value>& map, int depth) {
  if (op.getNumRegions() != 1 || op.getRegion(0).getBlocks().size() != 1)
    return Fail(op, "shape.assuming without its one block");
  mlir::Block& block = op.getRegion(0).front();
  llvm::SmallVector<Value> results;
  keep_followed_results_ = true;
  const bool imported = ImportBlock(block, &op, {}, results, depth, &map);
  keep_followed_results_ = false;
  if (!imported) return false;
  Operation* yield = block.getTerminator();
  for (auto [i, from, to] : llvm::enumerate(op.getResults(), results)) {
    TakeShapeOf(from, yield->getOperand(i));
    if (to) map[from] = to;
  }
  return true;
}

bool Importer::ImportComposite(Operation& op, llvm::ArrayRef<Value> operands,
                               llvm::DenseMap<Value, Value>& map, int depth) {
  return ImportCall(op, "decomposition", operands, map, depth);
}

// A function of the brt module for one region of `op` (a loop's condition
// or body, a branch), named `name`, taking `inputs` and returning
// `results`: the source block imported into it with its arguments as
// `block_args` (positions among the function's arguments) and the values
// the region reads from around `op` (`captured`) as the arguments from
// `first_captured` on; it returns the block's results at `returned`. Its
// position in the module, which the control-flow op names it by, goes to
// `index`; regions come after the function using them. With `inferred`, the
// function returns the types its block's results have (symbolic sizes a
// branch computes), and they go there.
bool Importer::ImportRegion(Operation& op, mlir::Block& block, const std::string& name,
                            mlir::TypeRange inputs, mlir::TypeRange results,
                            llvm::ArrayRef<unsigned> block_args, llvm::ArrayRef<Value> captured,
                            unsigned first_captured, llvm::ArrayRef<unsigned> returned, int depth,
                            int64_t* index, llvm::SmallVectorImpl<mlir::Type>* inferred) {
  mlir::OpBuilder::InsertionGuard guard(b_);
  *index = std::distance(module_.getOps<mlir::func::FuncOp>().begin(),
                         module_.getOps<mlir::func::FuncOp>().end());
  b_.setInsertionPointToEnd(module_.getBody());
  auto fn = mlir::func::FuncOp::create(b_, op.getLoc(), name, b_.getFunctionType(inputs, results));
  fn->setAttr(kRegionAttr, b_.getUnitAttr());
  b_.setInsertionPointToEnd(fn.addEntryBlock());
  llvm::DenseMap<Value, Value> outer;
  for (auto [i, v] : llvm::enumerate(captured)) outer[v] = fn.getArgument(first_captured + i);
  llvm::SmallVector<Value> args, values;
  for (unsigned position : block_args) args.push_back(fn.getArgument(position));
  if (!ImportBlock(block, &op, args, values, depth + 1, &outer)) return false;
  llvm::SmallVector<Value> out;
  for (unsigned k : returned) {
    if (k >= values.size())
      return Fail(op, op.getName().getStringRef().str() + "'s region returns " +
                          std::to_string(values.size()) + " values, too few");
    out.push_back(values[k]);
  }
  if (inferred) {
    inferred->clear();
    for (Value v : out) inferred->push_back(v.getType());
    fn.setType(b_.getFunctionType(inputs, *inferred));
    results = fn.getResultTypes();
  }
  for (auto [v, t] : llvm::zip(out, results))
    if (v.getType() != t)
      return Fail(op, op.getName().getStringRef().str() + "'s region returns a " +
                          PrintedText(v.getType()) + " where " + PrintedText(t) + " is expected");
  mlir::func::ReturnOp::create(b_, op.getLoc(), out);
  return true;
}

// The values `op`'s regions read from around it, in a fixed order, and
// their imported counterparts. A size the importer follows (JAX's symbol
// arguments) has none: the regions compute it where they read it.
static void CapturedValues(Operation& op, const llvm::DenseMap<Value, Value>& map,
                           llvm::SmallVectorImpl<Value>& source,
                           llvm::SmallVectorImpl<Value>& imported) {
  llvm::SetVector<Value> above;
  mlir::getUsedValuesDefinedAbove(op.getRegions(), above);
  for (Value v : above) {
    if (!map.lookup(v)) continue;
    source.push_back(v);
    imported.push_back(map.lookup(v));
  }
}

// stablehlo.case (lax.cond, lax.switch) and stablehlo.if: a brt case op
// whose branches are regions, of which only the taken one runs. A case
// index out of range takes the last branch, as StableHLO defines it. A
// constant index or predicate imports its branch alone, in place.
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
  // Over symbolic sizes a result's sizes come from its branch (below).
  for (Value r : op.getResults())
    if (!(symbolic_ && !mlir::cast<mlir::RankedTensorType>(r.getType()).hasStaticShape()) &&
        !CheckType(r.getType(), op))
      return false;
  auto branch_of = [&](int64_t index) -> unsigned {
    if (is_if) return index != 0 ? 0 : 1;
    return index < 0 || index >= n ? n - 1 : static_cast<unsigned>(index);
  };
  if (std::optional<int64_t> index = ScalarInt(operands[0].getDefiningOp())) {
    const unsigned k = branch_of(*index);
    llvm::SmallVector<Value> results;
    if (!ImportBlock(op.getRegion(k).front(), &op, {}, results, depth, &map)) return false;
    if (results.size() != op.getNumResults())
      return Fail(op, name.str() + "'s branch " + std::to_string(k) + " returns " +
                          std::to_string(results.size()) + " values for " +
                          std::to_string(op.getNumResults()) + " results");
    for (auto [from, to] : llvm::zip(op.getResults(), results)) {
      if (symbolic_) from.setType(to.getType());  // the sizes its branch computed
      map[from] = to;
    }
    return true;
  }
  llvm::SmallVector<Value> captured, captured_imported;
  CapturedValues(op, map, captured, captured_imported);
  llvm::SmallVector<mlir::Type> inputs;
  for (Value v : captured_imported) inputs.push_back(v.getType());
  llvm::SmallVector<unsigned> returned;
  for (unsigned k = 0; k < op.getNumResults(); ++k) returned.push_back(k);
  // Over symbolic sizes the first branch's results give the sizes, which
  // every other branch must return alike.
  llvm::SmallVector<mlir::Type> result_types(op.getResultTypes());
  const bool infer = symbolic_ && llvm::any_of(result_types, [](mlir::Type t) {
                       return !mlir::cast<mlir::RankedTensorType>(t).hasStaticShape();
                     });
  const std::string prefix = "case" + std::to_string(regions_++);
  llvm::SmallVector<int64_t> branches;
  for (unsigned k = 0; k < n; ++k) {
    int64_t index = 0;
    if (!ImportRegion(op, op.getRegion(k).front(), prefix + ".branch" + std::to_string(k), inputs,
                      result_types, {}, captured, 0, returned, depth, &index,
                      infer && k == 0 ? &result_types : nullptr))
      return false;
    branches.push_back(index);
  }
  llvm::SmallVector<Value> case_operands = {operands[0]};
  case_operands.append(captured_imported.begin(), captured_imported.end());
  auto k = CreateOp(b_, op.getLoc(), "case", result_types, case_operands,
                    {b_.getNamedAttr("branches", b_.getDenseI64ArrayAttr(branches))});
  for (auto [from, to] : llvm::zip(op.getResults(), k->getResults())) {
    if (infer) from.setType(to.getType());
    map[from] = to;
  }
  return true;
}

// The trip count of a loop whose counter starts at a constant, is compared
// LT (or LE) against a constant and stepped by a constant: what
// lax.fori_loop and lax.scan with static bounds, and JAX's threefry, make.
// Saturates at `cap` + 1.
static std::optional<int64_t> StaticTripCount(Operation& op, llvm::ArrayRef<Value> operands,
                                              int64_t cap) {
  mlir::Block& cond = op.getRegion(0).front();
  mlir::Block& body = op.getRegion(1).front();
  Operation* ret = &cond.back();
  Operation* compare = ret->getNumOperands() == 1 ? ret->getOperand(0).getDefiningOp() : nullptr;
  if (!compare || compare->getName().getStringRef() != "stablehlo.compare" ||
      compare->getNumOperands() != 2)
    return std::nullopt;
  auto counter = mlir::dyn_cast<mlir::BlockArgument>(compare->getOperand(0));
  const std::string dir = CompareDirection(compare);
  const bool lt = dir == "LT", le = dir == "LE";
  std::optional<int64_t> limit = ScalarInt(compare->getOperand(1).getDefiningOp());
  if (!counter || counter.getOwner() != &cond || (!lt && !le) || !limit) return std::nullopt;
  const unsigned k = counter.getArgNumber();
  std::optional<int64_t> start = ScalarInt(operands[k].getDefiningOp());
  Operation* next = body.back().getOperand(k).getDefiningOp();
  std::optional<int64_t> step;
  if (next && next->getName().getStringRef() == "stablehlo.add" && next->getNumOperands() == 2)
    for (int i = 0; i < 2; ++i)
      if (next->getOperand(i) == body.getArgument(k))
        step = ScalarInt(next->getOperand(1 - i).getDefiningOp());
  if (!start || !step || *step <= 0) return std::nullopt;
  const __int128 span = static_cast<__int128>(*limit) + (le ? 1 : 0) - *start;
  if (span <= 0) return 0;
  const __int128 trips = (span + *step - 1) / *step;
  return trips > cap ? cap + 1 : static_cast<int64_t>(trips);
}

// stablehlo.while. A loop of few iterations known at compile time (trips x
// body ops up to ImportOptions::unroll_max_ops) is unrolled: its body
// imported once per iteration. Any other is a brt while op whose condition
// and body are regions. Carried values the body returns unchanged (JAX
// carries a loop's constants so) are read by the regions, not carried.
bool Importer::ImportWhile(Operation& op, llvm::ArrayRef<Value> operands,
                           llvm::DenseMap<Value, Value>& map, int depth) {
  if (op.getNumRegions() != 2 || !op.getRegion(0).hasOneBlock() || !op.getRegion(1).hasOneBlock())
    return Fail(op, "stablehlo.while needs one cond and one body block");
  mlir::Block& cond = op.getRegion(0).front();
  mlir::Block& body = op.getRegion(1).front();
  const size_t n = operands.size();
  if (cond.empty() || body.empty() || cond.getNumArguments() != n || body.getNumArguments() != n ||
      body.back().getNumOperands() != n || op.getNumResults() != n)
    return Fail(op, "stablehlo.while's blocks do not match its " + std::to_string(n) + " operands");
  for (Value r : op.getResults())
    if (!CheckType(r.getType(), op)) return false;
  const int64_t body_ops = std::max<int64_t>(1, body.getOperations().size());
  const int64_t cap = options_.unroll_max_ops / body_ops;
  if (std::optional<int64_t> trips = StaticTripCount(op, operands, cap); trips && *trips <= cap) {
    llvm::SmallVector<Value> values(operands.begin(), operands.end());
    for (int64_t t = 0; t < *trips; ++t) {
      llvm::SmallVector<Value> results;
      if (!ImportBlock(body, &op, values, results, depth, &map)) return false;
      if (results.size() != n) return Fail(op, "stablehlo.while's body returns the wrong count");
      values = std::move(results);
    }
    for (auto [from, to] : llvm::zip(op.getResults(), values)) map[from] = to;
    return true;
  }
  // Arguments of both regions: the carried values, then the invariant ones,
  // then what the regions read from around the loop.
  llvm::SmallVector<unsigned> carried, invariant;
  for (unsigned k = 0; k < n; ++k)
    (body.back().getOperand(k) == body.getArgument(k) ? invariant : carried).push_back(k);
  llvm::SmallVector<Value> captured, captured_imported;
  CapturedValues(op, map, captured, captured_imported);
  llvm::SmallVector<Value> loop_operands;
  llvm::SmallVector<unsigned> block_args(n);
  llvm::SmallVector<mlir::Type> inputs, carried_types;
  for (unsigned k : carried) {
    block_args[k] = loop_operands.size();
    loop_operands.push_back(operands[k]);
    carried_types.push_back(operands[k].getType());
  }
  for (unsigned k : invariant) {
    block_args[k] = loop_operands.size();
    loop_operands.push_back(operands[k]);
  }
  loop_operands.append(captured_imported.begin(), captured_imported.end());
  for (Value v : loop_operands) inputs.push_back(v.getType());
  const unsigned first_captured = n;
  const std::string prefix = "while" + std::to_string(regions_++);
  int64_t cond_index = 0, body_index = 0;
  const mlir::Type predicate = mlir::RankedTensorType::get({}, b_.getI1Type());
  if (!ImportRegion(op, cond, prefix + ".cond", inputs, predicate, block_args, captured,
                    first_captured, {0}, depth, &cond_index) ||
      !ImportRegion(op, body, prefix + ".body", inputs, carried_types, block_args, captured,
                    first_captured, carried, depth, &body_index))
    return false;
  // The body updates the carried values in place: each is state written by
  // the result of its position.
  auto body_fn = *std::next(module_.getOps<mlir::func::FuncOp>().begin(), body_index);
  for (unsigned j = 0; j < carried.size(); ++j)
    body_fn.setArgAttr(j, kAliasOutputAttr, b_.getI64IntegerAttr(j));
  auto loop = CreateOp(b_, op.getLoc(), "while", carried_types, loop_operands,
                       {b_.getNamedAttr("cond", b_.getI64IntegerAttr(cond_index)),
                        b_.getNamedAttr("body", b_.getI64IntegerAttr(body_index))});
  for (auto [j, k] : llvm::enumerate(carried)) map[op.getResult(k)] = loop->getResult(j);
  for (unsigned k : invariant) map[op.getResult(k)] = operands[k];
  return true;
}

}  // namespace brt::bridge

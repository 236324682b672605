// Calls, composites, case/if, while loops and optimization barriers (see
// Importer.h).
#include "import/Importer.h"

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

}  // namespace brt::bridge

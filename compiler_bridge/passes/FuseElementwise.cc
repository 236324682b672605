// brt-fuse-elementwise: chains of f32/f16/bf16 elementwise ops, each used
// only inside its chain, become one brt.fused_elementwise, with
// NumPy-compatible broadcasts and scalar constants folded in.
#include "BrtDialect.h"
#include "OpKinds.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "ops/op_plans.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "passes/Passes.h.inc"

namespace {

bool IsFusable(BrtOp k) {
  if (!k || k->getNumResults() != 1 || !IsElementwise(FindKind(k.getKind()))) return false;
  auto is_float = [](mlir::Type t) {
    mlir::Type e = mlir::cast<mlir::RankedTensorType>(t).getElementType();
    return e.isF32() || e.isF16() || e.isBF16();
  };
  auto is_pred = [](mlir::Type t) {
    return mlir::cast<mlir::RankedTensorType>(t).getElementType().isInteger(1);
  };
  const mlir::Type result = k->getResult(0).getType();
  if (mlir::isa<CompareOp>(k)) return is_float(k.getInputs()[0].getType()) && is_pred(result);
  if (!is_float(result)) return false;
  for (mlir::Value v : k.getInputs())
    if (!is_float(v.getType()) && !(mlir::isa<SelectOp>(k) && is_pred(v.getType()))) return false;
  return true;
}

// The groups to fuse, each by its root: its ops in block order, the root last.
using Groups = llvm::DenseMap<mlir::Operation*, llvm::SmallVector<BrtOp>>;

// A group's root becomes one brt.fused_elementwise, which reads what the
// group reads from outside it; the group's other ops, which the walk has
// visited before the root, go.
struct FuseGroup : mlir::OpInterfaceRewritePattern<BrtOp> {
  FuseGroup(mlir::MLIRContext* ctx, const Groups& groups)
      : OpInterfaceRewritePattern(ctx), groups(groups) {}

  mlir::LogicalResult matchAndRewrite(BrtOp root, mlir::PatternRewriter& rewriter) const override {
    auto group = groups.find(root);
    if (group == groups.end()) return mlir::failure();
    const llvm::ArrayRef<BrtOp> ops = group->second;
    llvm::DenseSet<mlir::Operation*> in_group;
    for (BrtOp k : ops) in_group.insert(k);
    // The program's last instruction must compute the root. A convert is no
    // instruction: it passes its operand's register on.
    mlir::Operation* computed = root;
    while (mlir::isa<ConvertOp>(computed) &&
           in_group.count(computed->getOperand(0).getDefiningOp()))
      computed = computed->getOperand(0).getDefiningOp();
    mlir::Operation* last = nullptr;
    for (BrtOp k : ops)
      if (!mlir::isa<ConvertOp>(k)) last = k;
    if (last != computed) return mlir::failure();
    llvm::DenseMap<mlir::Value, int64_t> reg;  // value -> register
    llvm::SetVector<mlir::Value> inputs;
    llvm::SmallVector<double> constants;
    llvm::SmallVector<std::pair<mlir::Value, double>> constant_values;
    const mlir::Type out_type = root->getResult(0).getType();
    llvm::DenseMap<mlir::Value, mlir::Value> aligned;
    // Operands from outside: scalar constants become immediates; NumPy
    // broadcasts are read at their source, and so are broadcasts that keep
    // their dims in order (a per-channel vector over NCHW, as batch norm
    // writes it), through a reshape that aligns the source NumPy-style
    // ([64] -> [64, 1, 1] against [n, 64, h, w]).
    auto outside = [&](mlir::Value v) -> mlir::Value {
      if (ScalarConstant(v)) return v;
      mlir::Value src = v;
      while (mlir::Value s = NumpyBroadcastSource(src)) src = s;
      if (src != v) return src;
      if (auto it = aligned.find(v); it != aligned.end()) return it->second;
      if (!SameShape(v.getType(), out_type)) return v;
      mlir::Value reshaped = AlignInOrderBroadcast(rewriter, root.getLoc(), v);
      return reshaped ? aligned[v] = reshaped : v;
    };
    for (BrtOp k : ops)
      for (mlir::Value v : k.getInputs()) {
        if (in_group.count(v.getDefiningOp())) continue;
        if (auto c = ScalarConstant(v)) {
          if (!llvm::any_of(constant_values, [&](auto& p) { return p.first == v; }))
            constant_values.push_back({v, *c});
          continue;
        }
        mlir::Value src = outside(v);
        if (TypeOf(src).getRank() > TypeOf(root->getResult(0)).getRank()) src = v;
        inputs.insert(src);
      }
    if (inputs.empty()) return mlir::failure();  // constants only: nothing to stream
    for (auto [i, v] : llvm::enumerate(inputs)) reg[v] = static_cast<int64_t>(i);
    for (auto& [v, c] : constant_values) {
      reg[v] = static_cast<int64_t>(inputs.size() + constants.size());
      constants.push_back(c);
    }
    auto lookup = [&](mlir::Value v) -> int64_t {
      if (auto it = reg.find(v); it != reg.end()) return it->second;
      return reg.lookup(outside(v));
    };
    std::string names;
    llvm::SmallVector<int64_t> program;
    int64_t next = static_cast<int64_t>(inputs.size() + constants.size());
    for (BrtOp k : ops) {
      if (mlir::isa<ConvertOp>(k)) {  // float to float: computed in f32 anyway
        reg[k->getResult(0)] = lookup(k.getInputs()[0]);
        continue;
      }
      std::string name = k.getKind().str();
      if (auto compare = mlir::dyn_cast<CompareOp>(k.getOperation()))
        name += "_" + compare.getComparisonDirection().str();
      names += (names.empty() ? "" : ",") + name;
      for (int slot = 0; slot < 3; ++slot)
        program.push_back(
            slot < static_cast<int>(k.getInputs().size()) ? lookup(k.getInputs()[slot]) : -1);
      reg[k->getResult(0)] = next++;
    }
    auto fused = FusedElementwiseOp::create(
        rewriter, root.getLoc(), mlir::TypeRange{root->getResult(0).getType()},
        inputs.getArrayRef(), rewriter.getStringAttr(names), rewriter.getDenseI64ArrayAttr(program),
        constants.empty() ? nullptr : rewriter.getDenseF64ArrayAttr(constants), nullptr);
    rewriter.replaceOp(root, fused);
    for (BrtOp k : llvm::reverse(ops.drop_back())) rewriter.eraseOp(k);
    return mlir::success();
  }

  const Groups& groups;
};

struct FuseElementwisePass : impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    // Groups: a fusable producer whose only user is a fusable consumer of the
    // same shape joins the consumer's group. Each group has one root, the one
    // op used outside it.
    llvm::EquivalenceClasses<mlir::Operation*> groups;
    // What each group reads from outside it (scalar constants aside), by
    // leader: groups that would read more than a fused op may take
    // (kMaxFusedInputs) stay apart. Counted before broadcasts are traced to
    // their sources, so at least as many as the fused op gets.
    llvm::DenseMap<mlir::Operation*, llvm::SetVector<mlir::Value>> reads;
    // Joins the groups of a and b, of which b reads `joined` from a.
    auto join = [&](mlir::Operation* a, mlir::Operation* b, mlir::Value joined) {
      mlir::Operation *la = groups.getLeaderValue(a), *lb = groups.getLeaderValue(b);
      if (la == lb) return false;
      llvm::SetVector<mlir::Value> merged = reads[la];
      merged.insert(reads[lb].begin(), reads[lb].end());
      merged.remove(joined);
      if (merged.size() > static_cast<size_t>(ops::kMaxFusedInputs)) return false;
      reads.erase(la), reads.erase(lb);
      groups.unionSets(la, lb);
      reads[groups.getLeaderValue(la)] = std::move(merged);
      return true;
    };
    llvm::SmallVector<BrtOp> order;
    getOperation().walk([&](BrtOp k) {
      if (!IsFusable(k)) return;
      order.push_back(k);
      groups.insert(k);
      for (mlir::Value v : k.getInputs())
        if (!ScalarConstant(v)) reads[k].insert(v);
      for (mlir::Value v : k.getInputs()) {
        auto p = v.getDefiningOp<BrtOp>();
        if (IsFusable(p) && v.hasOneUse() && SameShape(v.getType(), k->getResult(0).getType()))
          join(p, k, v);
      }
    });
    // A producer used several times joins its users' group when every use is
    // in that one group (x + b feeding each term of a GELU), until no more do.
    for (bool changed = true; changed;) {
      changed = false;
      for (BrtOp p : order) {
        mlir::Value v = p->getResult(0);
        if (v.use_empty() || v.hasOneUse()) continue;
        mlir::Operation* group = nullptr;
        bool joins = true;
        for (mlir::Operation* user : v.getUsers()) {
          auto k = mlir::dyn_cast<BrtOp>(user);
          if (!k || !IsFusable(k) || !SameShape(k->getResult(0).getType(), v.getType()) ||
              (group && groups.getLeaderValue(k) != group)) {
            joins = false;
            break;
          }
          group = groups.getLeaderValue(k);
        }
        if (joins && join(p, group, v)) changed = true;
      }
    }
    llvm::MapVector<mlir::Operation*, llvm::SmallVector<BrtOp>> members;
    for (BrtOp k : order) members[groups.getLeaderValue(k)].push_back(k);
    Groups to_fuse;
    for (auto& [leader, ops] : members) {
      BrtOp root = ops.back();  // block order: the root comes last
      // One op alone is worth fusing when it then reads a broadcast operand
      // at its source instead of the broadcast's materialized result.
      const bool reads_broadcast = llvm::any_of(root.getInputs(), [](mlir::Value v) {
        return ScalarConstant(v) || NumpyBroadcastSource(v);
      });
      if ((ops.size() < 2 && !reads_broadcast) ||
          !mlir::isa<mlir::FloatType>(TypeOf(root->getResult(0)).getElementType()))
        continue;
      to_fuse[root] = std::move(ops);
    }
    mlir::RewritePatternSet set(&getContext());
    set.add<FuseGroup>(&getContext(), to_fuse);
    mlir::walkAndApplyPatterns(getOperation(), mlir::FrozenRewritePatternSet(std::move(set)));
  }
};

}  // namespace
}  // namespace brt::bridge

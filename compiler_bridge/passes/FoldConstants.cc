// brt-fold-constants: ops whose operands are all constants (or broadcasts of
// constants) are evaluated at compile time -- by the runtime itself (a one-op
// executable run on the CPU provider), so the compiler has no second
// implementation of any op's semantics -- when their results are small, or
// no larger than a constant operand nothing else reads (batch norm's scale
// folded into convolution weights replaces them). An elementwise op of
// broadcast scalars is evaluated on the scalars and its result broadcast.
#include "BrtDialect.h"
#include "OpKinds.h"
#include "RuntimeTypes.h"
#include "SymbolicDims.h"
#include "brt/builder.h"
#include "brt/session.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_FOLDCONSTANTS
#include "passes/Passes.h.inc"
namespace {

constexpr int64_t kFoldMaxBytes = 4096;

mlir::DenseElementsAttr FromBytes(mlir::RankedTensorType type, const uint8_t* data) {
  if (type.getElementType().isInteger(1)) {
    llvm::SmallVector<bool> bits(data, data + type.getNumElements());
    return mlir::DenseElementsAttr::get(type, bits);
  }
  return mlir::DenseElementsAttr::getFromRawBuffer(
      type, llvm::ArrayRef<char>(reinterpret_cast<const char*>(data),
                                 static_cast<size_t>(ByteSize(type))));
}

// The constant v is, or is a broadcast of (through any chain of broadcasts,
// their dims composed into *dims), or null.
ConstantOp ConstantSource(mlir::Value v, std::optional<std::vector<int64_t>>* dims) {
  while (auto broadcast = v.getDefiningOp<BroadcastInDimOp>()) {
    const llvm::ArrayRef<int64_t> inner = broadcast.getBroadcastDimensions();
    std::vector<int64_t> composed(inner.begin(), inner.end());
    if (*dims)  // the outer broadcast moves dim d of this one's result to (*dims)[d]
      for (int64_t& d : composed) d = (**dims)[d];
    *dims = std::move(composed);
    v = broadcast.getInputs()[0];
  }
  return v.getDefiningOp<ConstantOp>();
}

struct FoldConstantsPass : impl::FoldConstantsBase<FoldConstantsPass> {
  using FoldConstantsBase::FoldConstantsBase;

  // Runs `k` on constant operands; nullopt when it cannot be folded.
  static std::optional<std::vector<mlir::DenseElementsAttr>> Evaluate(BrtOp k) {
    ExecutableBuilder b("brt-fold-constants");
    FunctionBuilder& f = b.AddFunction("fold");
    std::vector<ValueId> operands;
    int64_t replaced_bytes = kFoldMaxBytes;  // a result this big adds nothing to the program
    for (mlir::Value v : k.getInputs()) {
      std::optional<std::vector<int64_t>> dims;
      ConstantOp c = ConstantSource(v, &dims);
      if (!c || ToDType(TypeOf(v).getElementType()) == DType::kInvalid) return std::nullopt;
      auto bytes = ConstantBytes(c.getValue(), "brt-fold-constants");
      if (!bytes.ok()) return std::nullopt;
      ValueId operand = f.Op(ConstantOp::kKind.str(), {}, {ToTensorType(c.getResult(0).getType())},
                             {{"value", std::move(*bytes)}})[0];
      if (dims)
        operand = f.Op(BroadcastInDimOp::kKind.str(), {operand}, {ToTensorType(v.getType())},
                       {{"broadcast_dimensions", *dims}})[0];
      else if (c->hasOneUse())
        replaced_bytes = std::max(replaced_bytes, ByteSize(v.getType()));
      operands.push_back(operand);
    }
    std::vector<TensorType> results;
    for (mlir::Type r : k->getResultTypes()) {
      const TensorType t = ToTensorType(r);
      if (t.dtype == DType::kInvalid || ByteSize(r) > replaced_bytes) return std::nullopt;
      results.push_back(t);
    }
    std::vector<Attribute> attrs;
    for (const mlir::NamedAttribute& na : k.getParams()) {
      mlir::Attribute a = na.getValue();
      const std::string name = na.getName().str();
      if (auto ints = mlir::dyn_cast<mlir::DenseI64ArrayAttr>(a))
        attrs.emplace_back(
            name, std::vector<int64_t>(ints.asArrayRef().begin(), ints.asArrayRef().end()));
      else if (auto i = mlir::dyn_cast<mlir::IntegerAttr>(a))
        attrs.emplace_back(name, static_cast<int64_t>(i.getValue().getSExtValue()));
      else if (auto fl = mlir::dyn_cast<mlir::FloatAttr>(a))
        attrs.emplace_back(name, fl.getValueAsDouble());
      else if (auto s = mlir::dyn_cast<mlir::StringAttr>(a))
        attrs.emplace_back(name, s.getValue().str());
      else
        return std::nullopt;
    }
    auto outs = f.Op(k.getKind().str(), operands, results, std::move(attrs));
    for (size_t i = 0; i < outs.size(); ++i) f.Output("r" + std::to_string(i), outs[i]);
    auto bytes = b.Serialize();
    if (!bytes.ok()) return std::nullopt;
    auto session = Session::LoadMemory(*bytes);  // fails quietly if no CPU provider is around
    if (!session.ok()) return std::nullopt;
    auto ctx = (*session)->NewRequest();
    if (!ctx.ok() || !(*ctx)->Run().ok()) return std::nullopt;
    auto values = (*ctx)->Outputs();
    if (!values.ok()) return std::nullopt;
    std::vector<mlir::DenseElementsAttr> folded;
    for (auto [t, r] : llvm::zip(*values, k->getResultTypes()))
      folded.push_back(
          FromBytes(mlir::cast<mlir::RankedTensorType>(r), static_cast<const uint8_t*>(t.data())));
    return folded;
  }

  // The rank-0 constant `v` holds in every element (a broadcast scalar, or a
  // splat constant), or null.
  static mlir::Value ScalarSource(mlir::Value v, mlir::OpBuilder& b) {
    if (auto broadcast = v.getDefiningOp<BroadcastInDimOp>()) {
      auto c = broadcast.getInputs()[0].getDefiningOp<ConstantOp>();
      return c && TypeOf(c.getResult(0)).getRank() == 0 ? c.getResult(0) : nullptr;
    }
    auto c = v.getDefiningOp<ConstantOp>();
    auto value = c ? mlir::dyn_cast<mlir::DenseElementsAttr>(c.getValue()) : nullptr;
    if (!value || !value.isSplat()) return nullptr;
    if (TypeOf(v).getRank() == 0) return v;
    auto scalar = mlir::RankedTensorType::get({}, TypeOf(v).getElementType());
    return ConstantOp::create(b, c.getLoc(), mlir::TypeRange{scalar}, mlir::ValueRange{},
                              value.resizeSplat(scalar))
        .getResult(0);
  }

  // rsqrt(broadcast(2.0)) -> broadcast(0.707...): the scalar op is folded
  // and the result broadcast again, which keeps it a scalar for fusion.
  // Returns whether it folded k.
  static bool FoldOnScalars(BrtOp k) {
    if (!IsElementwise(FindKind(k.getKind())) || k->getNumResults() != 1 ||
        TypeOf(k->getResult(0)).getRank() == 0 || !llvm::any_of(k.getInputs(), [](mlir::Value v) {
          return v.getDefiningOp<BroadcastInDimOp>();
        }))
      return false;
    mlir::OpBuilder b(k);
    llvm::SmallVector<mlir::Value> scalars;
    for (mlir::Value v : k.getInputs()) {
      mlir::Value s = ScalarSource(v, b);
      if (!s) return false;
      scalars.push_back(s);
    }
    const auto type = TypeOf(k->getResult(0));
    // An op of k's kind, whichever elementwise kind that is, on the scalars.
    auto scalar = mlir::cast<BrtOp>(
        CreateOp(b, k->getLoc(), k.getKind(),
                 mlir::TypeRange{mlir::RankedTensorType::get({}, type.getElementType())}, scalars,
                 k.getParams().getValue()));
    auto folded = Evaluate(scalar);
    if (!folded) {
      scalar->erase();
      return false;
    }
    auto c = ConstantOp::create(b, k->getLoc(), mlir::TypeRange{scalar->getResult(0).getType()},
                                mlir::ValueRange{}, (*folded)[0]);
    scalar->erase();
    k->getResult(0).replaceAllUsesWith(BroadcastScalar(b, k->getLoc(), c.getResult(0), type));
    k->erase();
    return true;
  }

  static bool IsConstant(mlir::Value v) {
    std::optional<std::vector<int64_t>> dims;
    return ConstantSource(v, &dims);
  }

  void runOnOperation() override {
    llvm::SmallVector<BrtOp> ops;
    getOperation().walk([&](BrtOp k) { ops.push_back(k); });
    for (BrtOp k : ops) {
      // Broadcasts stay: a broadcast scalar is cheaper than the constant tensor
      // it would fold into, and fusion reads the scalar as an immediate.
      // Control flow would need its regions, which a one-op program lacks.
      if (mlir::isa<ConstantOp, CopyOp, BroadcastInDimOp, WhileOp, CaseOp>(k) ||
          k.getInputs().empty())
        continue;
      if (FoldOnScalars(k) || !llvm::all_of(k.getInputs(), IsConstant)) continue;
      // A constant of symbolic size has no bytes to fold into.
      if (llvm::any_of(k->getResultTypes(), HasSymbolicDims)) continue;
      auto folded = Evaluate(k);
      if (!folded) continue;
      mlir::OpBuilder b(k);
      for (auto [result, value] : llvm::zip(k->getResults(), *folded)) {
        auto c = ConstantOp::create(b, k->getLoc(), mlir::TypeRange{result.getType()},
                                    mlir::ValueRange{}, value);
        result.replaceAllUsesWith(c.getResult(0));
      }
      k->erase();
    }
  }
};

}  // namespace

}  // namespace brt::bridge

// brt-fold-transpose-into-dot: dot_general reads a transposed operand
// directly, with its dimension numbers remapped.
#include "BrtDialect.h"
#include "OpKinds.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_FOLDTRANSPOSEINTODOT
#include "passes/Passes.h.inc"

namespace {

// dot_general(transpose(x), y) reads x directly when the permutation keeps
// the operand's free dimensions in order (so the result layout is the same).
struct FoldTransposeIntoDotPass : impl::FoldTransposeIntoDotBase<FoldTransposeIntoDotPass> {
  void runOnOperation() override {
    getOperation().walk([&](KernelOp dot) {
      if (dot.getKind() != "dot_general") return;
      for (int side = 0; side < 2; ++side) {
        KernelOp t = Kernel(dot.getInputs()[side], "transpose");
        if (!t) continue;
        auto perm = t.getParams().getAs<mlir::DenseI64ArrayAttr>("permutation");
        const char* batch_name = side == 0 ? "lhs_batching_dimensions" : "rhs_batching_dimensions";
        const char* contract_name =
            side == 0 ? "lhs_contracting_dimensions" : "rhs_contracting_dimensions";
        auto batch = dot.getParams().getAs<mlir::DenseI64ArrayAttr>(batch_name);
        auto contract = dot.getParams().getAs<mlir::DenseI64ArrayAttr>(contract_name);
        if (!perm || !contract) continue;
        llvm::SmallVector<int64_t> b_dims(batch ? batch.asArrayRef() : llvm::ArrayRef<int64_t>{}),
            c_dims(contract.asArrayRef()), free_mapped;
        const int64_t rank = static_cast<int64_t>(perm.size());
        for (int64_t d = 0; d < rank; ++d)
          if (!llvm::is_contained(b_dims, d) && !llvm::is_contained(c_dims, d))
            free_mapped.push_back(perm[d]);
        if (!llvm::is_sorted(free_mapped)) continue;
        for (int64_t& d : b_dims) d = perm[d];
        for (int64_t& d : c_dims) d = perm[d];
        mlir::OpBuilder b(dot);
        mlir::NamedAttrList params(dot.getParams());
        if (batch) params.set(batch_name, b.getDenseI64ArrayAttr(b_dims));
        params.set(contract_name, b.getDenseI64ArrayAttr(c_dims));
        dot.setParamsAttr(params.getDictionary(b.getContext()));
        dot->setOperand(side, t.getInputs()[0]);
      }
    });
  }
};

}  // namespace
}  // namespace brt::bridge

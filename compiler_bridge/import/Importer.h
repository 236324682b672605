// The StableHLO importer's class and helpers, shared by its files (not an
// API): Import.cc (the walk over functions and blocks, attributes, the
// dispatch by op name), ImportReductions.cc (reducer bodies, argmax/argmin,
// sort, top_k, select_and_scatter), ImportControlFlow.cc (calls, composites,
// case/if, while loops, optimization barriers) and ImportOpForms.cc (ops
// imported as other kinds: static forms, is_finite, square, CHLO expansions,
// convolution forms, batched gather/scatter, collectives), ImportSymbolic.cc
// and ImportDynamicOps.cc (symbolic shapes).
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "BrtDialect.h"
#include "RuntimeTypes.h"
#include "SymbolicDims.h"
#include "import/ChloExpansions.h"
#include "import/Import.h"
#include "import/OpText.h"
#include "llvm/ADT/DenseMap.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace brt::bridge {

// JAX's reduce_window over symbolic sizes: a custom_call whose window
// attributes are size operands.
inline bool IsDynamicReduceWindow(mlir::Operation& op) {
  auto target = AttrOrPropertyOf<mlir::StringAttr>(&op, "call_target_name");
  return op.getName().getStringRef() == "stablehlo.custom_call" && target &&
         target.getValue() == "stablehlo.dynamic_reduce_window";
}

// The integer in a scalar constant: a source stablehlo.constant, or a brt
// constant the importer made.
std::optional<int64_t> ScalarInt(mlir::Operation* def);

// An imported op's integer list (or single integer) parameter; empty if absent.
llvm::SmallVector<int64_t> IntsParam(llvm::ArrayRef<mlir::NamedAttribute> params,
                                     llvm::StringRef name);

// A stablehlo.compare's comparison_direction (EQ, LT, ...) or compare_type
// (FLOAT, TOTALORDER, ...) as text; "" when absent.
std::string CompareAttr(mlir::Operation* compare, llvm::StringRef name);

// A source compare's direction ("GT", ...); "" when it has none.
std::string CompareDirection(mlir::Operation* compare);

class Importer {
 public:
  Importer(mlir::MLIRContext& ctx, mlir::ModuleOp source, const ImportOptions& options)
      : ctx_(ctx), source_(source), b_(&ctx), options_(options) {}

  ImportResult Run();

 private:
  bool ImportFunction(mlir::func::FuncOp fn, llvm::ArrayRef<mlir::Value> args,
                      llvm::SmallVectorImpl<mlir::Value>& results, int depth);
  // A body ending in func.return (or sdy.return: a shard_map's; or
  // stablehlo.return: a loop's). `outer`: the values a loop body may use from
  // around it.
  bool ImportBlock(mlir::Block& block, mlir::Operation* owner, llvm::ArrayRef<mlir::Value> args,
                   llvm::SmallVectorImpl<mlir::Value>& results, int depth,
                   const llvm::DenseMap<mlir::Value, mlir::Value>* outer = nullptr);
  bool ImportWhile(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                   llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  bool ImportRegion(mlir::Operation& op, mlir::Block& block, const std::string& name,
                    mlir::TypeRange inputs, mlir::TypeRange results,
                    llvm::ArrayRef<unsigned> block_args, llvm::ArrayRef<mlir::Value> captured,
                    unsigned first_captured, llvm::ArrayRef<unsigned> returned, int depth,
                    int64_t* index, llvm::SmallVectorImpl<mlir::Type>* inferred = nullptr);
  bool ImportCollective(mlir::Operation& op, llvm::StringRef kind,
                        llvm::ArrayRef<mlir::Value> operands,
                        llvm::SmallVectorImpl<mlir::NamedAttribute>& params,
                        llvm::DenseMap<mlir::Value, mlir::Value>& map);
  bool ImportOp(mlir::Operation& op, llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  // Source ops imported as something other than the registry kind of their
  // name: each one's handler, by name.
  using Handler = bool (Importer::*)(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                                     llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  static const std::pair<const char*, Handler> kRewritten[];
  friend std::vector<std::string> brt::bridge::ImportedOpNames();
  bool ImportOptimizationBarrier(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                                 llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  bool ImportIsFinite(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                      llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  bool ImportSquare(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                    llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  bool ImportChloExpansion(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                           llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  bool ImportStaticForm(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                        llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  bool ImportSort(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                  llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  bool ImportTopK(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                  llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  bool ImportComposite(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                       llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  bool ImportBranches(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                      llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  bool ImportCall(mlir::Operation& op, llvm::StringRef symbol, llvm::ArrayRef<mlir::Value> operands,
                  llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  // ImportLinalg.cc: JAX's LAPACK custom_calls, stablehlo.triangular_solve.
  bool ImportLapack(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                    llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  bool ImportLapackDecomposition(mlir::Operation& op, llvm::StringRef routine,
                                 llvm::ArrayRef<mlir::Value> operands,
                                 llvm::DenseMap<mlir::Value, mlir::Value>& map);
  bool ImportTriangularSolve(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                             llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  bool ImportApproxTopK(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                        llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  bool ImportClamp(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                   llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  bool ImportDotGeneral(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                        llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  // One op of `kind` with a single result, for ops imported as others.
  mlir::Value Emit(mlir::Location loc, mlir::Type type, llvm::StringRef kind,
                   mlir::ValueRange operands, llvm::ArrayRef<mlir::NamedAttribute> params = {}) {
    return CreateOp(b_, loc, kind, mlir::TypeRange{type}, operands, params)->getResult(0);
  }
  // A scalar constant of float or complex element type `element` (value + 0i).
  mlir::Value FloatScalar(mlir::Location loc, mlir::Type element, double value) {
    return Elementwise(b_, loc, {}).Constant(element, value);
  }
  bool SelectAndScatterBodies(mlir::Operation& op,
                              llvm::SmallVectorImpl<mlir::NamedAttribute>& params);
  bool ImportScatterBody(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                         llvm::ArrayRef<mlir::NamedAttribute> params,
                         llvm::DenseMap<mlir::Value, mlir::Value>& map);
  bool ImportVariadicReduce(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                            llvm::SmallVectorImpl<mlir::NamedAttribute>& params,
                            llvm::DenseMap<mlir::Value, mlir::Value>& map);
  bool ImportArgReduce(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                       llvm::SmallVectorImpl<mlir::NamedAttribute>& params,
                       llvm::DenseMap<mlir::Value, mlir::Value>& map);
  bool ImportConvolution(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                         llvm::SmallVectorImpl<mlir::NamedAttribute>& params,
                         llvm::DenseMap<mlir::Value, mlir::Value>& map);

  bool UnbatchIndexing(mlir::Operation& op, llvm::StringRef kind,
                       llvm::SmallVectorImpl<mlir::Value>& operands,
                       llvm::SmallVectorImpl<mlir::NamedAttribute>& params);
  bool Params(mlir::Operation& op, llvm::SmallVectorImpl<mlir::NamedAttribute>& params);
  bool Reducer(mlir::Operation& op, llvm::StringRef kind,
               llvm::SmallVectorImpl<mlir::NamedAttribute>& params,
               llvm::SmallVectorImpl<mlir::Value>* operands = nullptr);
  bool CheckType(mlir::Type type, mlir::Operation& op);
  // ImportSymbolic.cc: symbolic shapes.
  bool NameMainSymbols(mlir::func::FuncOp main);
  int FollowShapeOp(mlir::Operation& op);
  int FollowBuiltinShapeOp(mlir::Operation& op);
  bool ImportAssuming(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                      llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  std::string FollowShapeArithmetic(mlir::Operation& op,
                                    llvm::ArrayRef<const llvm::SmallVector<SymDim>*> in,
                                    mlir::RankedTensorType type);
  bool Followed(mlir::Value v) const { return shape_values_.count(v) || relations_.count(v); }
  void TakeShapeOf(mlir::Value to, mlir::Value from);
  mlir::Value DimValue(mlir::Location loc, const SymDim& size, mlir::Type element);
  mlir::Value MaterializeShapeValue(mlir::Operation& user, mlir::Value source);
  std::optional<llvm::SmallVector<SymDim>> ResultSizes(mlir::Operation& op, unsigned k);
  bool RefineResultTypes(mlir::Operation& op);
  bool ImportRealDynamicSlice(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                              llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  bool ImportDynamicGather(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                           llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  int ImportGatherAsSlice(mlir::Operation& op, llvm::ArrayRef<SymDim> in,
                          llvm::ArrayRef<SymDim> sizes, mlir::Value operand,
                          llvm::DenseMap<mlir::Value, mlir::Value>& map);
  bool ImportDynamicPad(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                        llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  bool ImportDynamicConv(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                         llvm::DenseMap<mlir::Value, mlir::Value>& map, int depth);
  bool ImportDynamicReduceWindow(mlir::Operation& op, llvm::ArrayRef<mlir::Value> operands,
                                 llvm::DenseMap<mlir::Value, mlir::Value>& map);
  bool Fail(mlir::Operation& op, const std::string& message) {
    error_ = Where(op.getLoc()) + ": " + message;
    return false;
  }

  mlir::MLIRContext& ctx_;
  mlir::ModuleOp source_;
  mlir::OpBuilder b_;
  ImportOptions options_;
  mlir::ModuleOp module_;  // the brt module being made
  int regions_ = 0;        // control-flow ops made into regions so far, for their names
  std::string error_;
  int source_ops_ = 0;
  // Symbolic shapes: on when @main has dynamic dimensions. The sizes (and
  // conditions on them) that source integer values hold, followed at compile
  // time; the constraints for @main; whether the block being imported hands
  // followed sizes back to its caller instead of computing them.
  bool symbolic_ = false;
  llvm::DenseMap<mlir::Value, llvm::SmallVector<SymDim>> shape_values_;
  llvm::DenseMap<mlir::Value, std::string> relations_;
  std::vector<std::string> constraints_;
  bool keep_followed_results_ = false;
};

}  // namespace brt::bridge

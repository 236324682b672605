// brt-channels-last (--target=cpu): every convolution reads and writes its
// activations channels-last ([batch, spatial..., feature]), the layout
// oneDNN's convolutions run in on the CPU; PyTorch's NCHW convolutions
// otherwise pay a reorder at each edge, every run. The transpose put after
// each convolution moves down through the elementwise ops, pooling and
// reductions after it until it meets the transpose before the next
// convolution and cancels, so an NCHW network is transposed at its edges only.
// It is one propagation over the function, not local rewrites (so no
// patterns): only the transposes this pass makes move down, a program's own
// stay, each taken in turn from a worklist; a last sweep drops the transposes
// left unused.
#include <numeric>

#include "BrtDialect.h"
#include "OpKinds.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_CHANNELSLAST
#include "passes/Passes.h.inc"

namespace {

llvm::SmallVector<int64_t> Inverse(llvm::ArrayRef<int64_t> perm) {
  llvm::SmallVector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  return inverse;
}

// `type` with its dims in the order `order` (dim i of the result is dim
// order[i] of `type`), as transpose(., order) makes it.
mlir::RankedTensorType Permuted(mlir::RankedTensorType type, llvm::ArrayRef<int64_t> order) {
  llvm::SmallVector<int64_t> shape;
  for (int64_t d : order) shape.push_back(type.getDimSize(d));
  return mlir::RankedTensorType::get(shape, type.getElementType());
}

mlir::Value Transpose(mlir::OpBuilder& b, mlir::Location loc, mlir::Value x,
                      llvm::ArrayRef<int64_t> perm) {
  if (IsIdentity(perm)) return x;
  return TransposeOp::create(b, loc, mlir::TypeRange{Permuted(TypeOf(x), perm)},
                             mlir::ValueRange{x}, perm)
      .getResult(0);
}

struct ChannelsLastPass : impl::ChannelsLastBase<ChannelsLastPass> {
  using ChannelsLastBase::ChannelsLastBase;

  void runOnOperation() override {
    if (target != "cpu") return;  // the CUDA provider keeps each convolution's own layout
    llvm::SmallVector<ConvolutionOp> convolutions;
    getOperation().walk([&](ConvolutionOp conv) { convolutions.push_back(conv); });
    llvm::SmallVector<TransposeOp> transposes;  // each to move down, all its users
    for (ConvolutionOp conv : convolutions)
      if (TransposeOp t = MakeChannelsLast(conv)) transposes.push_back(t);
    while (!transposes.empty()) {
      TransposeOp t = transposes.pop_back_val();
      for (mlir::Operation* user : llvm::SmallSetVector<mlir::Operation*, 4>(
               t.getResult(0).getUsers().begin(), t.getResult(0).getUsers().end()))
        if (auto k = mlir::dyn_cast<BrtOp>(user))  // not the function's return
          if (TransposeOp moved = MoveBelow(t, k)) transposes.push_back(moved);
      if (t->use_empty()) t->erase();
    }
    // A transpose whose last user moved down from under another transpose
    // (select(compare(t, 0), 0, t) takes two turns) is left unused, and an
    // unused op would stop fuse-epilogues (its chains are single users).
    for (mlir::Operation& op :
         llvm::make_early_inc_range(llvm::reverse(getOperation().getBody().front())))
      if (mlir::isa<TransposeOp>(op) && op.use_empty()) op.erase();
  }

  // conv on transposes of its activations, channels-last; the transpose of
  // its result back to the original layout, or null if it already was
  // channels-last.
  static TransposeOp MakeChannelsLast(ConvolutionOp conv) {
    const int64_t rank = TypeOf(conv.getResult(0)).getRank(), spatial = rank - 2;
    auto spatial_dims = [&](std::optional<llvm::ArrayRef<int64_t>> given) {
      llvm::SmallVector<int64_t> dims(given.value_or(llvm::ArrayRef<int64_t>()));
      if (dims.empty()) dims.resize(spatial), std::iota(dims.begin(), dims.end(), 2);
      return dims;
    };
    llvm::SmallVector<int64_t> in_order = {static_cast<int64_t>(conv.getInputBatchDimension())};
    llvm::SmallVector<int64_t> out_order = {static_cast<int64_t>(conv.getOutputBatchDimension())};
    llvm::append_range(in_order, spatial_dims(conv.getInputSpatialDimensions()));
    llvm::append_range(out_order, spatial_dims(conv.getOutputSpatialDimensions()));
    in_order.push_back(static_cast<int64_t>(conv.getInputFeatureDimension()));
    out_order.push_back(static_cast<int64_t>(conv.getOutputFeatureDimension()));
    if (static_cast<int64_t>(in_order.size()) != rank ||
        static_cast<int64_t>(out_order.size()) != rank)
      return nullptr;
    if (IsIdentity(in_order) && IsIdentity(out_order)) return nullptr;
    mlir::OpBuilder b(conv);
    const mlir::Location loc = conv.getLoc();
    llvm::SmallVector<mlir::Value> inputs(conv.getInputs());
    inputs[0] = Transpose(b, loc, inputs[0], in_order);
    auto channels_last = ConvolutionOp::create(
        b, loc, mlir::TypeRange{Permuted(TypeOf(conv.getResult(0)), out_order)}, inputs,
        conv.getParams().getValue());
    llvm::SmallVector<int64_t> spatial_last(spatial);
    std::iota(spatial_last.begin(), spatial_last.end(), 1);
    if (!IsIdentity(in_order)) {
      channels_last.setInputBatchDimension(0);
      channels_last.setInputFeatureDimension(rank - 1);
      channels_last.setInputSpatialDimensions(llvm::ArrayRef<int64_t>(spatial_last));
    }
    if (!IsIdentity(out_order)) {
      channels_last.setOutputBatchDimension(0);
      channels_last.setOutputFeatureDimension(rank - 1);
      channels_last.setOutputSpatialDimensions(llvm::ArrayRef<int64_t>(spatial_last));
    }
    mlir::Value result = Transpose(b, loc, channels_last.getResult(0), Inverse(out_order));
    conv.getResult(0).replaceAllUsesWith(result);
    conv->erase();
    return result.getDefiningOp<TransposeOp>();
  }

  // Rewrites `user` of transpose `t` to work on t's operand, followed by
  // the same transpose, which it returns (to move down further); null when
  // `user` stays as it is or needs no transpose after.
  static TransposeOp MoveBelow(TransposeOp t, BrtOp user) {
    const llvm::ArrayRef<int64_t> perm = t.getPermutation();
    const mlir::Value x = t.getInputs()[0];
    mlir::OpBuilder b(user);
    const mlir::Location loc = user->getLoc();
    // Dim i of t's result is dim perm[i] of x.
    auto to_x = [&](llvm::ArrayRef<int64_t> dims) {
      llvm::SmallVector<int64_t> mapped;
      for (int64_t d : dims) mapped.push_back(perm[d]);
      return mapped;
    };
    auto replace = [&](mlir::Operation* op, mlir::Value with) {
      op->getResult(0).replaceAllUsesWith(with);
      op->erase();
      return with.getDefiningOp<TransposeOp>();
    };
    if (auto inner = mlir::dyn_cast<TransposeOp>(user.getOperation())) {
      replace(inner, Transpose(b, loc, x, to_x(inner.getPermutation())));
      return nullptr;
    }
    const mlir::RankedTensorType x_type = TypeOf(x);
    if (IsElementwise(FindKind(user.getKind())) && user->getNumResults() == 1 &&
        TypeOf(user->getResult(0)).getShape() == TypeOf(t.getResult(0)).getShape()) {
      if (!llvm::all_of(user.getInputs(), [&](mlir::Value v) { return ReadsInLayoutOf(v, t); }))
        return nullptr;
      llvm::SmallVector<mlir::Value> operands;
      for (mlir::Value v : user.getInputs()) operands.push_back(InLayoutOf(b, v, t));
      // An op of user's kind, whichever elementwise kind that is.
      mlir::Operation* moved =
          CreateOp(b, loc, user.getKind(),
                   mlir::TypeRange{mlir::RankedTensorType::get(
                       x_type.getShape(), TypeOf(user->getResult(0)).getElementType())},
                   operands, user.getParams().getValue());
      return replace(user, Transpose(b, loc, moved->getResult(0), perm));
    }
    if (auto pool = mlir::dyn_cast<ReduceWindowOp>(user.getOperation());
        pool && pool.getInputs().size() == 2 && pool.getInputs()[0] == t.getResult(0)) {
      // Window attributes follow their dims; padding has a (low, high) pair per dim.
      bool follows = true;
      auto moved = [&](mlir::DenseI64ArrayAttr values) -> mlir::DenseI64ArrayAttr {
        if (!values) return nullptr;
        const size_t width = values.size() / perm.size();
        if (width * perm.size() != static_cast<size_t>(values.size())) {
          follows = false;
          return nullptr;
        }
        llvm::SmallVector<int64_t> permuted(values.size());
        for (size_t i = 0; i < perm.size(); ++i)
          for (size_t w = 0; w < width; ++w) permuted[perm[i] * width + w] = values[i * width + w];
        return b.getDenseI64ArrayAttr(permuted);
      };
      const mlir::DenseI64ArrayAttr window = moved(pool.getWindowDimensionsAttr()),
                                    strides = moved(pool.getWindowStridesAttr()),
                                    padding = moved(pool.getPaddingAttr()),
                                    base_dilations = moved(pool.getBaseDilationsAttr()),
                                    window_dilations = moved(pool.getWindowDilationsAttr());
      if (!follows) return nullptr;
      auto pooled = ReduceWindowOp::create(
          b, loc, mlir::TypeRange{Permuted(TypeOf(pool.getResult(0)), Inverse(perm))},
          mlir::ValueRange{x, pool.getInputs()[1]}, window, pool.getReducerAttr(), strides, padding,
          base_dilations, window_dilations);
      return replace(pool, Transpose(b, loc, pooled.getResult(0), perm));
    }
    if (auto reduce = mlir::dyn_cast<ReduceOp>(user.getOperation());
        reduce && reduce.getInputs().size() == 2 && reduce.getInputs()[0] == t.getResult(0)) {
      llvm::SmallVector<int64_t> reduced = to_x(reduce.getDimensions());
      llvm::sort(reduced);
      // The kept dims of x, in x's order; the result wants them in t's.
      llvm::SmallVector<int64_t> kept, kept_t_order;
      for (int64_t d = 0; d < x_type.getRank(); ++d)
        if (!llvm::is_contained(reduced, d)) kept.push_back(d);
      for (int64_t d = 0; d < static_cast<int64_t>(perm.size()); ++d)
        if (!llvm::is_contained(reduced, perm[d]))
          kept_t_order.push_back(llvm::find(kept, perm[d]) - kept.begin());
      auto moved = ReduceOp::create(
          b, loc, mlir::TypeRange{Permuted(TypeOf(reduce.getResult(0)), Inverse(kept_t_order))},
          mlir::ValueRange{x, reduce.getInputs()[1]}, b.getDenseI64ArrayAttr(reduced),
          reduce.getReducerAttr(), reduce.getBlockSizeAttr());
      return replace(reduce, Transpose(b, loc, moved.getResult(0), kept_t_order));
    }
    return nullptr;
  }

  // Whether operand `v` of an elementwise user of transpose `t` can be had in
  // the layout of t's operand: it is t, another value under the same
  // transpose, a rank-0 value or a broadcast (made again).
  static bool ReadsInLayoutOf(mlir::Value v, TransposeOp t) {
    auto other = v.getDefiningOp<TransposeOp>();
    return TypeOf(v).getRank() == 0 || (other && other.getPermutation() == t.getPermutation()) ||
           v.getDefiningOp<BroadcastInDimOp>();
  }

  // Operand `v`, for which ReadsInLayoutOf holds, in the layout of t's operand.
  static mlir::Value InLayoutOf(mlir::OpBuilder& b, mlir::Value v, TransposeOp t) {
    const llvm::ArrayRef<int64_t> perm = t.getPermutation();
    if (TypeOf(v).getRank() == 0) return v;
    if (auto other = v.getDefiningOp<TransposeOp>(); other && other.getPermutation() == perm)
      return other.getInputs()[0];
    auto broadcast = v.getDefiningOp<BroadcastInDimOp>();
    // Dim d of v is dim perm[d] of t's operand.
    llvm::SmallVector<int64_t> dims;
    for (int64_t d : broadcast.getBroadcastDimensions()) dims.push_back(perm[d]);
    return BroadcastInDimOp::create(
               b, broadcast.getLoc(),
               mlir::TypeRange{mlir::RankedTensorType::get(TypeOf(t.getInputs()[0]).getShape(),
                                                           TypeOf(v).getElementType())},
               broadcast.getInputs(), dims)
        .getResult(0);
  }
};

}  // namespace
}  // namespace brt::bridge

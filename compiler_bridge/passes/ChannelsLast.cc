// brt-channels-last (--target=cpu): every convolution reads and writes its
// activations channels-last ([batch, spatial..., feature]), the layout
// oneDNN's convolutions run in on the CPU; PyTorch's NCHW convolutions
// otherwise pay a reorder at each edge, every run. The transpose put after
// each convolution moves down through the elementwise ops, pooling and
// reductions after it until it meets the transpose before the next
// convolution and cancels, so an NCHW network is transposed at its edges only.
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
  return KernelOp::create(
             b, loc, mlir::TypeRange{Permuted(TypeOf(x), perm)}, b.getStringAttr("transpose"),
             mlir::ValueRange{x},
             b.getDictionaryAttr({b.getNamedAttr("permutation", b.getDenseI64ArrayAttr(perm))}))
      .getResult(0);
}

llvm::ArrayRef<int64_t> PermutationOf(KernelOp transpose) {
  return IntsParam(transpose, "permutation");
}

struct ChannelsLastPass : impl::ChannelsLastBase<ChannelsLastPass> {
  using ChannelsLastBase::ChannelsLastBase;

  void runOnOperation() override {
    if (target != "cpu") return;  // the CUDA provider keeps each convolution's own layout
    llvm::SmallVector<KernelOp> convolutions;
    getOperation().walk([&](KernelOp k) {
      if (k.getKind() == "convolution") convolutions.push_back(k);
    });
    llvm::SmallVector<KernelOp> transposes;  // each to move down, all its users
    for (KernelOp conv : convolutions)
      if (KernelOp t = MakeChannelsLast(conv)) transposes.push_back(t);
    while (!transposes.empty()) {
      KernelOp t = transposes.pop_back_val();
      for (mlir::Operation* user : llvm::SmallSetVector<mlir::Operation*, 4>(
               t.getResult(0).getUsers().begin(), t.getResult(0).getUsers().end()))
        if (auto k = mlir::dyn_cast<KernelOp>(user))  // not the function's return
          if (KernelOp moved = MoveBelow(t, k)) transposes.push_back(moved);
      if (t->use_empty()) t->erase();
    }
    // A transpose whose last user moved down from under another transpose
    // (select(compare(t, 0), 0, t) takes two turns) is left unused, and an
    // unused op would stop fuse-epilogues (its chains are single users).
    for (mlir::Operation& op :
         llvm::make_early_inc_range(llvm::reverse(getOperation().getBody().front())))
      if (auto k = mlir::dyn_cast<KernelOp>(op); k && k.getKind() == "transpose" && k->use_empty())
        k->erase();
  }

  // conv on transposes of its activations, channels-last; the transpose of
  // its result back to the original layout, or null if it already was
  // channels-last.
  static KernelOp MakeChannelsLast(KernelOp conv) {
    const int64_t rank = TypeOf(conv.getResult(0)).getRank(), spatial = rank - 2;
    auto dim = [&](llvm::StringRef name, int64_t fallback) {
      auto a = conv.getParams().getAs<mlir::IntegerAttr>(name);
      return a ? a.getInt() : fallback;
    };
    auto spatial_dims = [&](llvm::StringRef name) {
      llvm::SmallVector<int64_t> dims(IntsParam(conv, name));
      if (dims.empty()) dims.resize(spatial), std::iota(dims.begin(), dims.end(), 2);
      return dims;
    };
    llvm::SmallVector<int64_t> in_order = {dim("input_batch_dimension", 0)};
    llvm::SmallVector<int64_t> out_order = {dim("output_batch_dimension", 0)};
    llvm::append_range(in_order, spatial_dims("input_spatial_dimensions"));
    llvm::append_range(out_order, spatial_dims("output_spatial_dimensions"));
    in_order.push_back(dim("input_feature_dimension", 1));
    out_order.push_back(dim("output_feature_dimension", 1));
    if (static_cast<int64_t>(in_order.size()) != rank ||
        static_cast<int64_t>(out_order.size()) != rank)
      return nullptr;
    if (IsIdentity(in_order) && IsIdentity(out_order)) return nullptr;
    mlir::OpBuilder b(conv);
    const mlir::Location loc = conv.getLoc();
    llvm::SmallVector<int64_t> spatial_last(spatial);
    std::iota(spatial_last.begin(), spatial_last.end(), 1);
    mlir::NamedAttrList params(conv.getParams());
    for (auto [side, order] : {std::pair{"input", &in_order}, {"output", &out_order}}) {
      if (IsIdentity(*order)) continue;
      params.set(std::string(side) + "_batch_dimension", b.getI64IntegerAttr(0));
      params.set(std::string(side) + "_feature_dimension", b.getI64IntegerAttr(rank - 1));
      params.set(std::string(side) + "_spatial_dimensions", b.getDenseI64ArrayAttr(spatial_last));
    }
    llvm::SmallVector<mlir::Value> inputs(conv.getInputs());
    inputs[0] = Transpose(b, loc, inputs[0], in_order);
    auto channels_last =
        KernelOp::create(b, loc, mlir::TypeRange{Permuted(TypeOf(conv.getResult(0)), out_order)},
                         conv.getKindAttr(), inputs, params.getDictionary(b.getContext()));
    mlir::Value result = Transpose(b, loc, channels_last.getResult(0), Inverse(out_order));
    conv.getResult(0).replaceAllUsesWith(result);
    conv->erase();
    return result.getDefiningOp<KernelOp>();
  }

  // Rewrites `user` of transpose `t` to work on t's operand, followed by
  // the same transpose, which it returns (to move down further); null when
  // `user` stays as it is or needs no transpose after.
  static KernelOp MoveBelow(KernelOp t, KernelOp user) {
    const llvm::ArrayRef<int64_t> perm = PermutationOf(t);
    const mlir::Value x = t.getInputs()[0];
    mlir::OpBuilder b(user);
    const mlir::Location loc = user.getLoc();
    // Dim i of t's result is dim perm[i] of x.
    auto to_x = [&](llvm::ArrayRef<int64_t> dims) {
      llvm::SmallVector<int64_t> mapped;
      for (int64_t d : dims) mapped.push_back(perm[d]);
      return mapped;
    };
    auto replace = [&](KernelOp k, mlir::Value with) {
      k.getResult(0).replaceAllUsesWith(with);
      k->erase();
      return Kernel(with, "transpose");
    };
    const llvm::StringRef kind = user.getKind();
    if (kind == "transpose") {
      replace(user, Transpose(b, loc, x, to_x(PermutationOf(user))));
      return nullptr;
    }
    const mlir::RankedTensorType x_type = TypeOf(x);
    if (IsElementwise(FindKind(kind)) && user.getNumResults() == 1 &&
        TypeOf(user.getResult(0)).getShape() == TypeOf(t.getResult(0)).getShape()) {
      if (!llvm::all_of(user.getInputs(), [&](mlir::Value v) { return ReadsInLayoutOf(v, t); }))
        return nullptr;
      llvm::SmallVector<mlir::Value> operands;
      for (mlir::Value v : user.getInputs()) operands.push_back(InLayoutOf(b, v, t));
      auto moved =
          KernelOp::create(b, loc,
                           mlir::TypeRange{mlir::RankedTensorType::get(
                               x_type.getShape(), TypeOf(user.getResult(0)).getElementType())},
                           user.getKindAttr(), operands, user.getParams());
      return replace(user, Transpose(b, loc, moved.getResult(0), perm));
    }
    if (kind == "reduce_window" && user.getInputs().size() == 2 &&
        user.getInputs()[0] == t.getResult(0)) {
      // Window attributes follow their dims; padding has a (low, high) pair per dim.
      mlir::NamedAttrList params(user.getParams());
      for (const mlir::NamedAttribute& na : user.getParams()) {
        auto values = mlir::dyn_cast<mlir::DenseI64ArrayAttr>(na.getValue());
        if (!values) continue;
        const size_t width = values.size() / perm.size();
        if (width * perm.size() != values.size()) return nullptr;
        llvm::SmallVector<int64_t> moved(values.size());
        for (size_t i = 0; i < perm.size(); ++i)
          for (size_t w = 0; w < width; ++w) moved[perm[i] * width + w] = values[i * width + w];
        params.set(na.getName(), b.getDenseI64ArrayAttr(moved));
      }
      auto pooled = KernelOp::create(
          b, loc, mlir::TypeRange{Permuted(TypeOf(user.getResult(0)), Inverse(perm))},
          user.getKindAttr(), mlir::ValueRange{x, user.getInputs()[1]},
          params.getDictionary(b.getContext()));
      return replace(user, Transpose(b, loc, pooled.getResult(0), perm));
    }
    if (kind == "reduce" && user.getInputs().size() == 2 && user.getInputs()[0] == t.getResult(0)) {
      llvm::SmallVector<int64_t> reduced = to_x(IntsParam(user, "dimensions"));
      llvm::sort(reduced);
      // The kept dims of x, in x's order; the result wants them in t's.
      llvm::SmallVector<int64_t> kept, kept_t_order;
      for (int64_t d = 0; d < x_type.getRank(); ++d)
        if (!llvm::is_contained(reduced, d)) kept.push_back(d);
      for (int64_t d = 0; d < static_cast<int64_t>(perm.size()); ++d)
        if (!llvm::is_contained(reduced, perm[d]))
          kept_t_order.push_back(llvm::find(kept, perm[d]) - kept.begin());
      mlir::NamedAttrList params(user.getParams());
      params.set("dimensions", b.getDenseI64ArrayAttr(reduced));
      auto reduce = KernelOp::create(
          b, loc, mlir::TypeRange{Permuted(TypeOf(user.getResult(0)), Inverse(kept_t_order))},
          user.getKindAttr(), mlir::ValueRange{x, user.getInputs()[1]},
          params.getDictionary(b.getContext()));
      return replace(user, Transpose(b, loc, reduce.getResult(0), kept_t_order));
    }
    return nullptr;
  }

  // Whether operand `v` of an elementwise user of transpose `t` can be had in
  // the layout of t's operand: it is t, another value under the same
  // transpose, a rank-0 value or a broadcast (made again).
  static bool ReadsInLayoutOf(mlir::Value v, KernelOp t) {
    KernelOp other = Kernel(v, "transpose");
    return TypeOf(v).getRank() == 0 || (other && PermutationOf(other) == PermutationOf(t)) ||
           Kernel(v, "broadcast_in_dim");
  }

  // Operand `v`, for which ReadsInLayoutOf holds, in the layout of t's operand.
  static mlir::Value InLayoutOf(mlir::OpBuilder& b, mlir::Value v, KernelOp t) {
    const llvm::ArrayRef<int64_t> perm = PermutationOf(t);
    if (TypeOf(v).getRank() == 0) return v;
    if (KernelOp other = Kernel(v, "transpose"); other && PermutationOf(other) == perm)
      return other.getInputs()[0];
    KernelOp broadcast = Kernel(v, "broadcast_in_dim");
    // Dim d of v is dim perm[d] of t's operand.
    llvm::SmallVector<int64_t> dims;
    for (int64_t d : IntsParam(broadcast, "broadcast_dimensions")) dims.push_back(perm[d]);
    return KernelOp::create(b, broadcast.getLoc(),
                            mlir::TypeRange{mlir::RankedTensorType::get(
                                TypeOf(t.getInputs()[0]).getShape(), TypeOf(v).getElementType())},
                            broadcast.getKindAttr(), broadcast.getInputs(),
                            b.getDictionaryAttr({b.getNamedAttr("broadcast_dimensions",
                                                                b.getDenseI64ArrayAttr(dims))}))
        .getResult(0);
  }
};

}  // namespace
}  // namespace brt::bridge

// Matching helpers shared by the fusion passes, on the typed ops of the
// registry (BrtDialect.h): what a value is, seen through broadcasts and
// splat constants. Sizes are compared and made as SymbolicDims.h says: a
// symbolic one by its expression.
#pragma once

#include <optional>

#include "BrtDialect.h"
#include "SymbolicDims.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"

namespace brt::bridge {

inline mlir::RankedTensorType TypeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

// Whether dims are 0, 1, 2, ... (a transpose or broadcast that moves nothing).
inline bool IsIdentity(llvm::ArrayRef<int64_t> dims) {
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// broadcast_in_dim of the rank-0 `scalar` to `type`, at b's insertion point.
inline mlir::Value BroadcastScalar(mlir::OpBuilder& b, mlir::Location loc, mlir::Value scalar,
                                   mlir::Type type) {
  return BroadcastInDimOp::create(b, loc, mlir::TypeRange{type}, mlir::ValueRange{scalar},
                                  llvm::ArrayRef<int64_t>{})
      .getResult(0);
}

// reshape of `v` to `sizes` (its element type kept; a symbolic size keeps its
// expression), at b's insertion point.
inline mlir::Value Reshape(mlir::OpBuilder& b, mlir::Location loc, mlir::Value v,
                           llvm::ArrayRef<SymDim> sizes) {
  return ReshapeOp::create(b, loc,
                           mlir::TypeRange{SymbolicTensorType(sizes, TypeOf(v).getElementType())},
                           mlir::ValueRange{v})
      .getResult(0);
}

// broadcast_in_dim that only aligns an operand NumPy-style (its dims go to
// the trailing result dims, in order): a consumer that broadcasts can read the
// operand directly.
inline mlir::Value NumpyBroadcastSource(mlir::Value v) {
  auto b = v.getDefiningOp<BroadcastInDimOp>();
  if (!b) return nullptr;
  const llvm::ArrayRef<int64_t> dims = b.getBroadcastDimensions();
  const int64_t in_rank = TypeOf(b.getInputs()[0]).getRank(), out_rank = TypeOf(v).getRank();
  if (static_cast<int64_t>(dims.size()) != in_rank) return nullptr;
  for (int64_t i = 0; i < in_rank; ++i)
    if (dims[i] != out_rank - in_rank + i) return nullptr;
  return b.getInputs()[0];
}

// broadcast_in_dim whose operand dims keep their order (a per-channel [C]
// onto dim 1 of NCHW, as batch norm writes it): its operand reshaped to align
// with the result NumPy-style ([C, 1, 1]), made at b's insertion point; null
// for any other value (or an operand with a `?` of no expression).
inline mlir::Value AlignInOrderBroadcast(mlir::OpBuilder& b, mlir::Location loc, mlir::Value v) {
  auto bc = v.getDefiningOp<BroadcastInDimOp>();
  if (!bc) return nullptr;
  const llvm::ArrayRef<int64_t> dims = bc.getBroadcastDimensions();
  const std::optional<llvm::SmallVector<SymDim>> from = SymbolicShape(bc.getInputs()[0].getType());
  if (dims.empty() || !llvm::is_sorted(dims) || !from) return nullptr;
  llvm::SmallVector<SymDim> shape(TypeOf(v).getRank() - dims[0], 1);
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (i > 0 && d == dims[i - 1]) return nullptr;
    shape[d - dims[0]] = (*from)[i];
  }
  return Reshape(b, loc, bc.getInputs()[0], shape);
}

// A reshape that only adds or drops unit dims ([1, 128] -> [1, 128, 1], as
// PyTorch's keepdim reductions write it): the same values, row by row. A
// symbolic size counts as non-unit ([b, s] -> [s, b] is no such reshape).
inline bool OnlyUnitDims(ReshapeOp reshape) {
  auto non_unit = [](mlir::Value v) -> std::optional<llvm::SmallVector<SymDim>> {
    std::optional<llvm::SmallVector<SymDim>> sizes = SymbolicShape(v.getType());
    if (sizes) llvm::erase(*sizes, SymDim(1));
    return sizes;
  };
  const auto from = non_unit(reshape.getInputs()[0]), to = non_unit(reshape.getResult(0));
  return from && to && *from == *to;
}

// What broadcasts, and reshapes that only add or drop unit dims, spread over
// a value: `value`, and for each of its dims the dim of the spread value that
// holds it (its place decides which values meet: on a square [n, n] a
// broadcast of [n] along dim 0 and one along dim 1 have the same type). A dim
// of size 1 is kAnyDim: its one value goes everywhere alike.
struct BroadcastSource {
  static constexpr int64_t kAnyDim = -1;
  mlir::Value value;
  llvm::SmallVector<int64_t> dims;
};

inline BroadcastSource TraceBroadcasts(mlir::Value v) {
  llvm::SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(0, TypeOf(v).getRank()));
  for (;;) {
    llvm::SmallVector<int64_t> from;
    if (auto b = v.getDefiningOp<BroadcastInDimOp>()) {
      for (int64_t d : b.getBroadcastDimensions()) from.push_back(dims[d]);
      v = b.getInputs()[0];
    } else if (auto r = v.getDefiningOp<ReshapeOp>(); r && OnlyUnitDims(r)) {
      // The dims of other sizes keep their order: the i-th of the operand is
      // the i-th of the result.
      const llvm::SmallVector<SymDim> in = *SymbolicShape(r.getInputs()[0].getType());
      const llvm::SmallVector<SymDim> out = *SymbolicShape(r.getResult(0).getType());
      size_t o = 0;
      for (const SymDim& size : in) {
        if (size == SymDim(1)) {
          from.push_back(BroadcastSource::kAnyDim);
          continue;
        }
        while (out[o] == SymDim(1)) ++o;
        from.push_back(dims[o++]);
      }
      v = r.getInputs()[0];
    } else {
      break;
    }
    dims = std::move(from);
  }
  for (auto [d, size] : llvm::enumerate(TypeOf(v).getShape()))
    if (size == 1) dims[d] = BroadcastSource::kAnyDim;
  return {v, std::move(dims)};
}

// Follows broadcasts, and reshapes that only add or drop unit dims, back to
// what they broadcast.
inline mlir::Value StripBroadcasts(mlir::Value v) { return TraceBroadcasts(v).value; }

// Whether the dims of StripBroadcasts(v) land on v's `dims`, in order (a
// layer norm's [C] scale on the last dim of x, not on another of size C).
inline bool BroadcastsOnto(mlir::Value v, llvm::ArrayRef<int64_t> dims) {
  const BroadcastSource source = TraceBroadcasts(v);
  if (source.dims.size() != dims.size()) return false;
  for (auto [from, to] : llvm::zip_equal(source.dims, dims))
    if (from != BroadcastSource::kAnyDim && from != to) return false;
  return true;
}

// Whether v, a reduce over `axes` of a rank-`rank` value (or what is computed
// from one) spread back by StripBroadcasts' broadcasts and reshapes, has each
// reduced line's value where that line was: v and what it spreads each hold
// either every dim (a keepdim reduction: the reduced ones of size 1) or the
// kept dims, in order, and each dim must land on the one standing for the
// same dim. On a square [n, n], the [n] maxima over dim 1 broadcast along
// dim 1 instead of 0 (x - max(x, 1)[None, :]) pair row j's max with column j:
// not the reduction's own lines.
inline bool RestoresReducedDims(mlir::Value v, int64_t rank, llvm::ArrayRef<int64_t> axes) {
  // The dims of the reduced value that a value of rank r holds.
  auto held = [&](int64_t r) {
    llvm::SmallVector<int64_t> dims;
    for (int64_t d = 0; d < rank; ++d)
      if (r == rank || !llvm::is_contained(axes, d)) dims.push_back(d);
    return dims;
  };
  const BroadcastSource source = TraceBroadcasts(v);
  const int64_t v_rank = TypeOf(v).getRank();
  const llvm::SmallVector<int64_t> in_v = held(v_rank);
  const llvm::SmallVector<int64_t> in_source = held(source.dims.size());
  if (static_cast<int64_t>(in_v.size()) != v_rank || in_source.size() != source.dims.size())
    return false;
  for (auto [from, dim] : llvm::zip_equal(source.dims, in_source))
    if (from != BroadcastSource::kAnyDim && in_v[from] != dim) return false;
  return true;
}

// The value holding just the [output features] vector (a bias, batch norm's
// mean or scale) that broadcast `v` spreads over the output feature dim of
// convolution `conv`, followed back through each broadcast: the deepest such
// value on the way (a scalar broadcast to [C] is one, the scalar is not), of
// rank 1 or with unit dims around the features ([C, 1, 1]). Null if v is not
// one (so is a symbolic feature count). Creates nothing.
inline mlir::Value FindOutputFeatureVector(ConvolutionOp conv, mlir::Value v) {
  const int64_t feature_dim = conv.getOutputFeatureDimension();
  const int64_t features = TypeOf(conv.getResult(0)).getShape()[feature_dim];
  if (mlir::ShapedType::isDynamic(features)) return nullptr;
  mlir::Value found;
  for (int64_t pos = feature_dim;;) {
    const auto shape = TypeOf(v).getShape();
    bool only_features = pos < static_cast<int64_t>(shape.size());
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      only_features = only_features && shape[d] == (d == pos ? features : 1);
    if (only_features) found = v;
    auto bc = v.getDefiningOp<BroadcastInDimOp>();
    const llvm::ArrayRef<int64_t> dims =
        bc ? bc.getBroadcastDimensions() : llvm::ArrayRef<int64_t>();
    const auto it = llvm::find(dims, pos);
    if (it == dims.end()) return found;
    pos = it - dims.begin();
    v = bc.getInputs()[0];
  }
}

// FindOutputFeatureVector's value as a [C] vector: one with unit dims around
// the features is reshaped at b's insertion point.
inline mlir::Value OutputFeatureVector(mlir::OpBuilder& b, ConvolutionOp conv, mlir::Value v) {
  mlir::Value found = FindOutputFeatureVector(conv, v);
  if (!found || TypeOf(found).getRank() == 1) return found;
  const int64_t features = TypeOf(conv.getResult(0)).getShape()[conv.getOutputFeatureDimension()];
  return Reshape(b, found.getLoc(), found, {features});
}

inline std::optional<double> ScalarConstant(mlir::Value v) {
  auto c = StripBroadcasts(v).getDefiningOp<ConstantOp>();
  auto value = c ? mlir::dyn_cast<mlir::DenseFPElementsAttr>(c.getValue()) : nullptr;
  if (!value || !value.isSplat()) return std::nullopt;
  return value.getSplatValue<llvm::APFloat>().convertToDouble();
}

// A reduce of `reducer` over the single dimension `axis`.
inline bool ReducesOver(ReduceOp r, llvm::StringRef reducer, int64_t axis) {
  return r && r.getDimensions().size() == 1 && r.getDimensions()[0] == axis &&
         r.getReducer() == reducer;
}

}  // namespace brt::bridge

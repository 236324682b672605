// Matching helpers shared by the fusion passes: what a value's defining
// brt.kernel is, seen through broadcasts and splat constants.
#pragma once

#include <optional>

#include "BrtDialect.h"

namespace brt::bridge {

inline KernelOp Kernel(mlir::Value v, llvm::StringRef kind) {
  auto k = v.getDefiningOp<KernelOp>();
  return k && k.getKind() == kind ? k : KernelOp();
}

inline mlir::RankedTensorType TypeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

// An integer-list parameter of `k` (dot_general's dimension lists), empty
// when absent. The values live in the MLIR context.
inline llvm::ArrayRef<int64_t> IntsParam(KernelOp k, llvm::StringRef name) {
  auto a = k.getParams().getAs<mlir::DenseI64ArrayAttr>(name);
  return a ? a.asArrayRef() : llvm::ArrayRef<int64_t>();
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
  return KernelOp::create(b, loc, mlir::TypeRange{type}, b.getStringAttr("broadcast_in_dim"),
                          mlir::ValueRange{scalar},
                          b.getDictionaryAttr(
                              {b.getNamedAttr("broadcast_dimensions", b.getDenseI64ArrayAttr({}))}))
      .getResult(0);
}

// reshape of `v` to `shape` (its element type kept), at b's insertion point.
inline mlir::Value Reshape(mlir::OpBuilder& b, mlir::Location loc, mlir::Value v,
                           llvm::ArrayRef<int64_t> shape) {
  return KernelOp::create(
             b, loc,
             mlir::TypeRange{mlir::RankedTensorType::get(shape, TypeOf(v).getElementType())},
             b.getStringAttr("reshape"), mlir::ValueRange{v}, b.getDictionaryAttr({}))
      .getResult(0);
}

// broadcast_in_dim that only aligns an operand NumPy-style (its dims go to
// the trailing result dims, in order): a consumer that broadcasts can read the
// operand directly.
inline mlir::Value NumpyBroadcastSource(mlir::Value v) {
  KernelOp b = Kernel(v, "broadcast_in_dim");
  if (!b) return nullptr;
  auto dims = b.getParams().getAs<mlir::DenseI64ArrayAttr>("broadcast_dimensions");
  const int64_t in_rank = TypeOf(b.getInputs()[0]).getRank(), out_rank = TypeOf(v).getRank();
  if (!dims || static_cast<int64_t>(dims.size()) != in_rank) return nullptr;
  for (int64_t i = 0; i < in_rank; ++i)
    if (dims[i] != out_rank - in_rank + i) return nullptr;
  return b.getInputs()[0];
}

// broadcast_in_dim whose operand dims keep their order (a per-channel [C]
// onto dim 1 of NCHW, as batch norm writes it): its operand reshaped to align
// with the result NumPy-style ([C, 1, 1]), made at b's insertion point; null
// for any other value.
inline mlir::Value AlignInOrderBroadcast(mlir::OpBuilder& b, mlir::Location loc, mlir::Value v) {
  KernelOp bc = Kernel(v, "broadcast_in_dim");
  auto dims = bc ? bc.getParams().getAs<mlir::DenseI64ArrayAttr>("broadcast_dimensions") : nullptr;
  if (!dims || dims.empty() || !llvm::is_sorted(dims.asArrayRef())) return nullptr;
  const auto from = TypeOf(bc.getInputs()[0]).getShape();
  llvm::SmallVector<int64_t> shape(TypeOf(v).getRank() - dims[0], 1);
  for (auto [i, d] : llvm::enumerate(dims.asArrayRef())) {
    if (i > 0 && d == dims[i - 1]) return nullptr;
    shape[d - dims[0]] = from[i];
  }
  return Reshape(b, loc, bc.getInputs()[0], shape);
}

// A reshape that only adds or drops unit dims ([1, 128] -> [1, 128, 1], as
// PyTorch's keepdim reductions write it): the same values, row by row.
inline bool OnlyUnitDims(KernelOp reshape) {
  auto non_unit = [](mlir::Value v) {
    llvm::SmallVector<int64_t> dims;
    for (int64_t d : TypeOf(v).getShape())
      if (d != 1) dims.push_back(d);
    return dims;
  };
  return non_unit(reshape.getInputs()[0]) == non_unit(reshape.getResult(0));
}

// Follows broadcasts, and reshapes that only add or drop unit dims, back to
// what they broadcast.
inline mlir::Value StripBroadcasts(mlir::Value v) {
  for (;;) {
    if (KernelOp b = Kernel(v, "broadcast_in_dim"))
      v = b.getInputs()[0];
    else if (KernelOp r = Kernel(v, "reshape"); r && OnlyUnitDims(r))
      v = r.getInputs()[0];
    else
      return v;
  }
}

// The [output features] vector that broadcast `v` spreads over the output
// feature dim of convolution `conv` (a bias, batch norm's mean or scale),
// followed through each broadcast; a source with unit dims around the
// features ([C, 1, 1]) is reshaped to [C] at b's insertion point. Null if v
// is not one.
inline mlir::Value OutputFeatureVector(mlir::OpBuilder& b, KernelOp conv, mlir::Value v) {
  auto feature = conv.getParams().getAs<mlir::IntegerAttr>("output_feature_dimension");
  if (!feature) return nullptr;
  const int64_t features = TypeOf(conv.getResult(0)).getShape()[feature.getInt()];
  // The deepest value on the way that holds just the features (a scalar
  // broadcast to [C] is one, the scalar is not).
  mlir::Value found;
  for (int64_t pos = feature.getInt();;) {
    const auto shape = TypeOf(v).getShape();
    bool only_features = pos < static_cast<int64_t>(shape.size());
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      only_features = only_features && shape[d] == (d == pos ? features : 1);
    if (only_features) found = v;
    KernelOp bc = Kernel(v, "broadcast_in_dim");
    const llvm::ArrayRef<int64_t> dims =
        bc ? IntsParam(bc, "broadcast_dimensions") : llvm::ArrayRef<int64_t>();
    const auto it = llvm::find(dims, pos);
    if (it == dims.end()) break;
    pos = it - dims.begin();
    v = bc.getInputs()[0];
  }
  if (!found || TypeOf(found).getRank() == 1) return found;
  return Reshape(b, found.getLoc(), found, {features});
}

inline std::optional<double> ScalarConstant(mlir::Value v) {
  KernelOp c = Kernel(StripBroadcasts(v), "constant");
  if (!c) return std::nullopt;
  auto value = c.getParams().getAs<mlir::DenseFPElementsAttr>("value");
  if (!value || !value.isSplat()) return std::nullopt;
  return value.getSplatValue<llvm::APFloat>().convertToDouble();
}

inline bool ReducesOver(KernelOp r, llvm::StringRef reducer, int64_t axis) {
  if (!r || r.getKind() != "reduce") return false;
  auto dims = r.getParams().getAs<mlir::DenseI64ArrayAttr>("dimensions");
  auto red = r.getParams().getAs<mlir::StringAttr>("reducer");
  return dims && dims.size() == 1 && dims[0] == axis && red && red.getValue() == reducer;
}

}  // namespace brt::bridge

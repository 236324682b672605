// Linear algebra (see Importer.h): JAX's LAPACK custom_calls on the CPU
// (lapack_{s,d,c,z}potrf_ffi for cholesky, lapack_{s,d,c,z}trsm_ffi for
// triangular_solve, lapack_{s,d,c,z}getrf_ffi for lu; their options are
// characters in mhlo.backend_config) and stablehlo.triangular_solve, as the
// registry's cholesky, triangular_solve and lu; the decompositions' calls
// (syevd/heevd, gesdd, geqrf, orgqr/ungqr, geev, gehrd, sytrd/hetrd, gtsv)
// as the registry's op of the same purpose (ImportLapackDecomposition). The
// custom_calls' column-major layouts are XLA's business: what they compute
// on the logical arrays is what brt computes.
#include "import/Importer.h"

namespace brt::bridge {

using mlir::Operation;
using mlir::Value;

namespace {

// An integer option of a LAPACK custom_call's mhlo.backend_config.
std::optional<int64_t> LapackIntOption(Operation& op, llvm::StringRef name) {
  auto config = mlir::dyn_cast_or_null<mlir::DictionaryAttr>(op.getAttr("mhlo.backend_config"));
  auto value = config ? mlir::dyn_cast_or_null<mlir::IntegerAttr>(config.get(name)) : nullptr;
  if (!value) return std::nullopt;
  return value.getValue().getSExtValue();
}

// A character option (uplo = 76 : ui8 is 'L'); 0 when absent.
char LapackOption(Operation& op, llvm::StringRef name) {
  auto value = mlir::dyn_cast_or_null<mlir::DictionaryAttr>(op.getAttr("mhlo.backend_config"));
  auto option = value ? mlir::dyn_cast_or_null<mlir::IntegerAttr>(value.get(name)) : nullptr;
  return option ? static_cast<char>(option.getValue().getZExtValue()) : 0;
}

// Whether `v` is an integer zero: a constant, possibly broadcast.
bool IsZero(Value v) {
  Operation* def = v.getDefiningOp();
  while (def && def->getName().getStringRef() == "stablehlo.broadcast_in_dim" &&
         def->getNumOperands() == 1)
    def = def->getOperand(0).getDefiningOp();
  std::optional<int64_t> value = ScalarInt(def);
  return value && *value == 0;
}

// An i32 tensor of zeros: an info that LAPACK leaves 0.
Value ZeroInfo(mlir::OpBuilder& b, mlir::Location loc, mlir::Type type) {
  Value zero = Elementwise(b, loc, {}).IntConstant(b.getI32Type(), 0);
  return CreateOp(b, loc, "broadcast_in_dim", type, zero,
                  {b.getNamedAttr("broadcast_dimensions", b.getDenseI64ArrayAttr({}))})
      ->getResult(0);
}

}  // namespace

bool Importer::ImportLapack(Operation& op, llvm::ArrayRef<Value> operands,
                            llvm::DenseMap<Value, Value>& map, int) {
  const std::string target =
      AttrOrPropertyOf<mlir::StringAttr>(&op, "call_target_name").getValue().str();
  // lapack_<s|d|c|z><routine>_ffi: the letter is the element type.
  llvm::StringRef routine(target);
  const bool known =
      routine.consume_front("lapack_") && routine.consume_back("_ffi") && routine.size() > 1 &&
      llvm::is_contained({'s', 'd', 'c', 'z'}, routine[0]) &&
      llvm::is_contained({"trsm", "potrf", "getrf", "syevd", "heevd", "gesdd", "geqrf", "orgqr",
                          "ungqr", "geev", "gehrd", "sytrd", "hetrd", "gtsv"},
                         routine.drop_front());
  if (!known) return Fail(op, "unknown custom_call target '" + target + "'");
  if (op.getNumResults() == 0) return Fail(op, target + " has no result");
  for (mlir::Type t : op.getResultTypes())
    if (!CheckType(t, op)) return false;
  auto type = mlir::cast<mlir::RankedTensorType>(op.getResult(0).getType());
  const mlir::Type element = type.getElementType();
  const DType expected = routine[0] == 's'   ? DType::kF32
                         : routine[0] == 'd' ? DType::kF64
                         : routine[0] == 'c' ? DType::kC64
                                             : DType::kC128;
  if (ToDType(element) != expected)
    return Fail(op,
                target + " on " + PrintedText(element) + " (expects " + DTypeName(expected) + ")");
  if (!llvm::is_contained({"trsm", "potrf", "getrf"}, routine.drop_front()))
    return ImportLapackDecomposition(op, routine.drop_front(), operands, map);
  const mlir::Location loc = op.getLoc();
  auto flag = [&](llvm::StringRef name, bool value) {
    return b_.getNamedAttr(name, b_.getI64IntegerAttr(value));
  };

  if (routine.drop_front() == "trsm") {
    if (operands.size() != 2 || op.getNumResults() != 1 || operands[1].getType() != type)
      return Fail(op, target + " expects a and b and one result of b's type");
    const char side = LapackOption(op, "side"), uplo = LapackOption(op, "uplo"),
               trans = LapackOption(op, "trans_x"), diag = LapackOption(op, "diag");
    if (!llvm::is_contained({'L', 'R'}, side) || !llvm::is_contained({'L', 'U'}, uplo) ||
        !llvm::is_contained({'N', 'T', 'C'}, trans) || !llvm::is_contained({'N', 'U'}, diag))
      return Fail(op, target + " needs side, uplo, trans_x and diag in its mhlo.backend_config");
    map[op.getResult(0)] =
        Emit(loc, type, "triangular_solve", operands,
             {flag("left_side", side == 'L'), flag("lower", uplo == 'L'),
              flag("unit_diagonal", diag == 'U'),
              b_.getNamedAttr("transpose_a", b_.getStringAttr(trans == 'N'   ? "NO_TRANSPOSE"
                                                              : trans == 'T' ? "TRANSPOSE"
                                                                             : "ADJOINT"))});
    return true;
  }

  const int64_t rank = type.getRank();
  auto index_type = mlir::RankedTensorType::get(type.getShape(), b_.getI32Type());
  auto iota = [&](int64_t dim) {
    return Emit(loc, index_type, "iota", {},
                {b_.getNamedAttr("iota_dimension", b_.getI64IntegerAttr(dim))});
  };
  Elementwise matrices(b_, loc, type.getShape());

  if (routine.drop_front() == "getrf") {  // (lu, 1-based pivots, info)
    if (operands.size() != 1 || op.getNumResults() != 3 || operands[0].getType() != type ||
        rank < 2)
      return Fail(op, target + " expects one batch of matrices and three results");
    Operation* lu = CreateOp(b_, loc, "lu", {type, op.getResult(1).getType()}, operands, {});
    map[op.getResult(0)] = lu->getResult(0);
    map[op.getResult(1)] = lu->getResult(1);
    Value info = op.getResult(2);
    if (info.use_empty()) return true;
    // info: the first i (1-based) with U(i, i) exactly 0, else 0, as LAPACK's.
    const mlir::Type i32 = b_.getI32Type();
    const int64_t none = std::numeric_limits<int32_t>::max();
    Value rows = iota(rank - 2);
    Value zero_pivot = matrices.Op(
        "and", {matrices.Compare(rows, iota(rank - 1), "EQ"),
                matrices.Compare(lu->getResult(0), FloatScalar(loc, element, 0), "EQ")});
    Value at = matrices.Select(zero_pivot, matrices.Op("add", {rows, matrices.IntConstant(i32, 1)}),
                               matrices.IntConstant(i32, none));
    auto info_type = mlir::cast<mlir::RankedTensorType>(info.getType());
    Elementwise batch(b_, loc, info_type.getShape());
    Value first =
        Emit(loc, info_type, "reduce", {at, batch.IntConstant(i32, none)},
             {b_.getNamedAttr("dimensions", b_.getDenseI64ArrayAttr({rank - 2, rank - 1})),
              b_.getNamedAttr("reducer", b_.getStringAttr("min"))});
    map[info] = batch.Select(batch.Compare(first, batch.IntConstant(i32, none), "EQ"),
                             batch.IntConstant(i32, 0), first);
    return true;
  }

  // potrf: (the factor, info). LAPACK leaves the other triangle as it was.
  if (operands.size() != 1 || op.getNumResults() != 2 || operands[0].getType() != type || rank < 2)
    return Fail(op, target + " expects one batch of matrices and two results");
  const char uplo = LapackOption(op, "uplo");
  if (uplo != 'L' && uplo != 'U') return Fail(op, target + " needs uplo in mhlo.backend_config");
  const bool lower = uplo == 'L';
  Value factor = Emit(loc, type, "cholesky", operands, {flag("lower", lower)});
  Value in_factor = matrices.Compare(iota(rank - 2), iota(rank - 1), lower ? "GE" : "LE");
  map[op.getResult(0)] = matrices.Select(in_factor, factor, operands[0]);

  // info: brt's factor holds NaN where LAPACK's info is nonzero (a leading
  // minor not positive definite), and its first diagonal element is not NaN
  // elsewhere. That tells zero from nonzero, not which minor failed: every
  // use must be a comparison with zero (JAX's is info == 0).
  Value info = op.getResult(1);
  if (info.use_empty()) return true;
  for (Operation* user : info.getUsers())
    if (user->getName().getStringRef() != "stablehlo.compare" ||
        !IsZero(user->getOperand(user->getOperand(0) == info ? 1 : 0)))
      return Fail(op, target + "'s info result is used other than compared with 0 (as by '" +
                          user->getName().getStringRef().str() +
                          "'): brt tells only whether it is 0");
  auto info_type = mlir::cast<mlir::RankedTensorType>(info.getType());
  Elementwise batch(b_, loc, info_type.getShape());
  const int64_t n = type.getShape()[rank - 1];
  if (n == 0) {  // nothing to factor: success
    map[info] = ZeroInfo(b_, loc, info_type);
    return true;
  }
  llvm::SmallVector<int64_t> start(rank, 0), limit(type.getShape()), first(type.getShape());
  limit[rank - 2] = limit[rank - 1] = first[rank - 2] = first[rank - 1] = 1;
  Value corner = Emit(
      loc, mlir::RankedTensorType::get(first, element), "slice", factor,
      {b_.getNamedAttr("start_indices", b_.getDenseI64ArrayAttr(start)),
       b_.getNamedAttr("limit_indices", b_.getDenseI64ArrayAttr(limit)),
       b_.getNamedAttr("strides", b_.getDenseI64ArrayAttr(llvm::SmallVector<int64_t>(rank, 1)))});
  corner = Emit(loc, mlir::RankedTensorType::get(info_type.getShape(), element), "reshape", corner);
  map[info] = batch.Convert(batch.Compare(corner, corner, "NE"), b_.getI32Type());
  return true;
}

// One registry op per call: kind, attributes, and where each of the call's
// results comes from (Source). Results a call overwrites for nothing (its
// operands' copies) must be unused; so must vectors it was told not to
// compute, which brt's op gives as 0 x 0 matrices.
bool Importer::ImportLapackDecomposition(Operation& op, llvm::StringRef routine,
                                         llvm::ArrayRef<Value> operands,
                                         llvm::DenseMap<Value, Value>& map) {
  const std::string target =
      AttrOrPropertyOf<mlir::StringAttr>(&op, "call_target_name").getValue().str();
  const mlir::Location loc = op.getLoc();
  auto type = [&](unsigned i) {
    return mlir::cast<mlir::RankedTensorType>(op.getResultTypes()[i]);
  };
  auto operand = mlir::dyn_cast<mlir::RankedTensorType>(op.getOperand(0).getType());
  if (!operand || operand.getRank() < (routine == "gtsv" ? 1 : 2))
    return Fail(op, target + " expects a batch of " + (routine == "gtsv" ? "vectors" : "matrices"));
  auto flag = [&](llvm::StringRef name, bool value) {
    return b_.getNamedAttr(name, b_.getI64IntegerAttr(value));
  };
  auto matrices = [&](mlir::RankedTensorType t, bool computed) {  // vectors, or 0 x 0 ones
    llvm::SmallVector<int64_t> dims(t.getShape());
    if (!computed && dims.size() >= 2) dims[dims.size() - 1] = dims[dims.size() - 2] = 0;
    return mlir::RankedTensorType::get(dims, t.getElementType());
  };
  // Else the brt result's index. kPart: the real or imaginary part of
  // result 0 (geev's real form's eigenvalues).
  enum Source : int { kUnused = -1, kZero = -2, kPart = -3 };
  std::string kind;
  llvm::SmallVector<mlir::NamedAttribute> attrs;
  llvm::SmallVector<mlir::Type> types;
  llvm::SmallVector<int> from;  // per call result
  unsigned want_operands = 1, want_results = 0;
  const char uplo = LapackOption(op, "uplo");
  const bool needs_uplo = llvm::is_contained({"syevd", "heevd", "sytrd", "hetrd"}, routine);
  if (needs_uplo && uplo != 'L' && uplo != 'U')
    return Fail(op, target + " needs uplo in mhlo.backend_config");
  if (routine == "syevd" || routine == "heevd") {  // (v, w, info)
    if (LapackOption(op, "mode") != 'V')
      return Fail(op, target + " needs mode V (eigenvectors) in mhlo.backend_config");
    kind = "eigh", want_results = 3, from = {0, 1, 2};
    attrs.push_back(flag("lower", uplo == 'L'));
  } else if (routine == "gesdd") {  // (a, s, u, vt, info)
    const char mode = LapackOption(op, "mode");
    if (!llvm::is_contained({'A', 'S', 'N'}, mode))
      return Fail(op, target + " needs mode A, S or N in mhlo.backend_config");
    kind = "svd", want_results = 5;
    from = {kUnused, 0, mode == 'N' ? kUnused : 1, mode == 'N' ? kUnused : 2, 3};
    attrs = {flag("full_matrices", mode == 'A'), flag("compute_uv", mode != 'N')};
    if (op.getNumResults() == 5)
      types = {type(1), matrices(type(2), mode != 'N'), matrices(type(3), mode != 'N'), type(4)};
  } else if (routine == "geqrf") {  // (a, taus)
    kind = "geqrf", want_results = 2, from = {0, 1};
  } else if (routine == "orgqr" || routine == "ungqr") {  // (q)
    kind = "householder_product", want_operands = 2, want_results = 1, from = {0};
  } else if (routine == "geev") {  // real (wr, wi, vl, vr, info), complex (w, vl, vr, info)
    const char left = LapackOption(op, "compute_left"), right = LapackOption(op, "compute_right");
    if (!llvm::is_contained({'V', 'N'}, left) || !llvm::is_contained({'V', 'N'}, right))
      return Fail(op, target + " needs compute_left and compute_right (V or N)");
    const bool real = !mlir::isa<mlir::ComplexType>(type(0).getElementType());
    kind = "eig", want_results = real ? 5 : 4;
    from = {kPart, kPart, left == 'V' ? 1 : kUnused, right == 'V' ? 2 : kUnused, 3};
    if (!real) from.erase(from.begin()), from[0] = 0;
    attrs = {flag("compute_left", left == 'V'), flag("compute_right", right == 'V')};
    if (op.getNumResults() == want_results) {
      const unsigned vl = real ? 2 : 1;
      types = {mlir::RankedTensorType::get(type(0).getShape(), type(vl).getElementType()),
               matrices(type(vl), left == 'V'), matrices(type(vl + 1), right == 'V'), type(vl + 2)};
    }
  } else if (routine == "gehrd") {  // (a, taus, info)
    if (LapackIntOption(op, "low") != 1 || LapackIntOption(op, "high") != type(0).getShape().back())
      return Fail(op, target + " needs low 1 and high n (the whole matrix)");
    kind = "hessenberg", want_results = 3, from = {0, 1, kZero};
  } else if (routine == "sytrd" || routine == "hetrd") {  // (a, d, e, taus, info)
    kind = "tridiagonal", want_results = 5, from = {0, 1, 2, 3, kZero};
    attrs.push_back(flag("lower", uplo == 'L'));
  } else {  // gtsv: (dl, d, du, x, info)
    kind = "tridiagonal_solve", want_operands = 4, want_results = 5;
    from = {kUnused, kUnused, kUnused, 0, 1};
  }
  if (operands.size() != want_operands || op.getNumResults() != want_results)
    return Fail(op, target + " expects " + std::to_string(want_operands) + " operand(s) and " +
                        std::to_string(want_results) + " results");
  if (types.empty())
    for (unsigned i = 0; i < want_results; ++i)
      if (from[i] >= 0) types.push_back(type(i));
  for (unsigned i = 0; i < want_results; ++i)
    if (from[i] == kUnused && !op.getResult(i).use_empty())
      return Fail(op, target + "'s result " + std::to_string(i) + " is used: brt's " + kind +
                          " does not compute it");
  Operation* made = CreateOp(b_, loc, kind, types, operands, attrs);
  for (unsigned i = 0; i < want_results; ++i) {
    Value result = op.getResult(i);
    if (from[i] >= 0) {
      map[result] = made->getResult(from[i]);
    } else if (from[i] == kPart) {
      map[result] = Emit(loc, result.getType(), i == 0 ? "real" : "imag", made->getResult(0));
    } else if (from[i] == kZero && !result.use_empty()) {  // LAPACK fails only on bad arguments
      map[result] = ZeroInfo(b_, loc, result.getType());
    }
  }
  return true;
}

// stablehlo.triangular_solve: its transpose_a is an enum
// (#stablehlo<transpose TRANSPOSE>), the rest booleans.
bool Importer::ImportTriangularSolve(Operation& op, llvm::ArrayRef<Value> operands,
                                     llvm::DenseMap<Value, Value>& map, int) {
  if (operands.size() != 2 || op.getNumResults() != 1)
    return Fail(op, "triangular_solve expects two operands and one result");
  if (!CheckType(op.getResult(0).getType(), op)) return false;
  llvm::SmallVector<mlir::NamedAttribute> params;
  for (llvm::StringRef name : {"left_side", "lower", "unit_diagonal"}) {
    auto value = AttrOrPropertyOf<mlir::BoolAttr>(&op, name);
    if (!value) return Fail(op, "triangular_solve needs the boolean attribute " + name.str());
    params.push_back(b_.getNamedAttr(name, b_.getI64IntegerAttr(value.getValue())));
  }
  auto transpose = AttrOrPropertyOf<mlir::OpaqueAttr>(&op, "transpose_a");
  llvm::StringRef how = transpose ? transpose.getAttrData() : "";
  if (!transpose || transpose.getDialectNamespace() != "stablehlo" ||
      !how.consume_front("transpose ") ||
      !llvm::is_contained({"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}, how = how.trim()))
    return Fail(op,
                "triangular_solve needs transpose_a as #stablehlo<transpose NO_TRANSPOSE>, "
                "TRANSPOSE or ADJOINT");
  params.push_back(b_.getNamedAttr("transpose_a", b_.getStringAttr(how)));
  map[op.getResult(0)] =
      Emit(op.getLoc(), op.getResult(0).getType(), "triangular_solve", operands, params);
  return true;
}

}  // namespace brt::bridge

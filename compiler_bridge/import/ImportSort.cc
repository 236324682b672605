// stablehlo.sort, chlo.top_k and the ApproxTopK custom_call (see
// Importer.h): brt's sort, its keys read from the comparator.
#include "import/Importer.h"
#include "import/OpaqueAttrs.h"
#include "import/ScalarBody.h"
#include "ops/op_plans.h"
#include "ops/scalar_ops.h"

namespace brt::bridge {

using mlir::Operation;
using mlir::Value;

namespace {

// The values a sort comparator is probed with for an operand of `element`.
std::vector<double> SortProbes(mlir::Type element, bool with_nan) {
  constexpr double kInf = std::numeric_limits<double>::infinity(),
                   kNaN = std::numeric_limits<double>::quiet_NaN();
  if (mlir::isa<mlir::FloatType>(element)) {
    if (with_nan) return {-kNaN, -kInf, -1.5, -0.0, 0.0, 2.0, kInf, kNaN};
    return {-kInf, -1.5, -0.0, 0.0, 2.0, kInf};
  }
  if (element.isInteger(1)) return {0, 1};
  if (element.isUnsignedInteger()) return {0, 1, 3, 200};
  return {-3, 0, 1, 5};
}

// What a comparator is probed on, and sorted by: a real operand (part -1),
// or the real or imaginary part (0, 1) of a complex one, of float type
// `element`.
struct SortPart {
  size_t operand;
  int part;
  mlir::Type element;
};

// The keys of a lexicographic comparator over `parts`, found one after
// another: the next key is the part whose order (ascending or descending;
// floats by totalOrder or with -0 == +0 and NaN last, SortKey in
// ops/scalar_ops.h) the comparator follows wherever the keys found so far
// tie, whatever the other parts hold; the comparator is told once it says
// false wherever all of its keys tie. Probed with NaNs, then without: a
// comparator that says false whenever a NaN is involved (torch-mlir's compare
// FLOAT) is matched on the other values, and brt puts NaN last (first
// descending), as PyTorch eager does. A key's `operand` is its part's index.
bool SortComparatorKeys(mlir::Block& body, llvm::ArrayRef<SortPart> parts, size_t n,
                        llvm::SmallVectorImpl<ops::SortKeyOrder>* keys) {
  const size_t m = parts.size();
  for (bool with_nan : {true, false}) {
    keys->clear();
    // Per key found, the pairs of values it ties on.
    std::vector<std::vector<std::pair<double, double>>> ties;
    // Runs the comparator with the found keys at their tie pair `tie` (each
    // cycling through its own), part `probed` at (a, b) and the others at
    // (other, 1 - other); false where it cannot be run.
    auto run = [&](size_t probed, double a, double b, size_t tie, double other, bool* less) {
      std::vector<std::pair<double, double>> pairs;
      for (size_t j = 0; j < m; ++j) {
        auto found = llvm::find_if(
            *keys, [&](const ops::SortKeyOrder& k) { return static_cast<size_t>(k.operand) == j; });
        std::pair<double, double> pair = {other, 1 - other};
        if (j == probed) pair = {a, b};
        if (found != keys->end()) {
          const auto& key_ties = ties[found - keys->begin()];
          pair = key_ties[tie % key_ties.size()];
        }
        pairs.push_back(pair);
      }
      llvm::SmallVector<Scalar> args(2 * n);
      for (size_t j = 0; j < m; ++j) {
        Scalar &lhs = args[2 * parts[j].operand], &rhs = args[2 * parts[j].operand + 1];
        if (parts[j].part == 1)
          lhs.imag(pairs[j].first), rhs.imag(pairs[j].second);
        else
          lhs.real(pairs[j].first), rhs.real(pairs[j].second);
      }
      llvm::SmallVector<Scalar> out;
      if (!RunScalarBody(body, args, out) || out.size() != 1) return false;
      *less = out[0].real() != 0;
      return true;
    };
    auto all_ties = [&](auto&& holds) {
      size_t tie_count = 1;
      for (const auto& key_ties : ties) tie_count = std::max(tie_count, key_ties.size());
      for (size_t tie = 0; tie < tie_count; ++tie)
        for (double other : {0.0, 1.0})
          if (!holds(tie, other)) return false;
      return true;
    };
    for (;;) {
      const bool told = all_ties([&](size_t tie, double other) {
        bool less = true;
        return run(m, 0, 0, tie, other, &less) && !less;
      });
      if (told) return !keys->empty();
      bool found = false;
      for (size_t candidate = 0; candidate < m && !found; ++candidate) {
        if (llvm::any_of(*keys, [&](const ops::SortKeyOrder& k) {
              return static_cast<size_t>(k.operand) == candidate;
            }))
          continue;
        const mlir::Type element = parts[candidate].element;
        const std::vector<double> probes = SortProbes(element, with_nan);
        for (bool descending : {false, true})
          for (bool total : {false, true}) {
            if (found || (total && !mlir::isa<mlir::FloatType>(element))) continue;
            const bool follows = all_ties([&](size_t tie, double other) {
              for (double a : probes)
                for (double b : probes) {
                  const uint64_t ka = ops::SortKey(a, total), kb = ops::SortKey(b, total);
                  bool less = false;
                  if (ka != kb && (!run(candidate, a, b, tie, other, &less) ||
                                   less != (descending ? kb < ka : ka < kb)))
                    return false;
                }
              return true;
            });
            if (!follows) continue;
            keys->push_back({static_cast<int>(candidate), descending, total});
            ties.emplace_back();
            for (double a : probes)
              for (double b : probes)
                if (ops::SortKey(a, total) == ops::SortKey(b, total)) ties.back().push_back({a, b});
            found = true;
          }
      }
      if (!found) break;
    }
  }
  return false;
}

// brt's sort attributes for `keys` along `dimension`.
llvm::SmallVector<mlir::NamedAttribute> SortParams(mlir::OpBuilder& b, int64_t dimension,
                                                   llvm::ArrayRef<ops::SortKeyOrder> keys) {
  llvm::SmallVector<mlir::NamedAttribute> params = {
      b.getNamedAttr("dimension", b.getI64IntegerAttr(dimension)),
      b.getNamedAttr("key", b.getI64IntegerAttr(keys[0].operand)),
      b.getNamedAttr("order", b.getStringAttr(keys[0].descending ? "descending" : "ascending"))};
  if (keys[0].total_order) params.push_back(b.getNamedAttr("total_order", b.getI64IntegerAttr(1)));
  llvm::SmallVector<int64_t> tie_keys;
  for (const ops::SortKeyOrder& key : llvm::drop_begin(keys))
    tie_keys.append({key.operand, key.descending, key.total_order});
  if (!tie_keys.empty())
    params.push_back(b.getNamedAttr("tie_keys", b.getDenseI64ArrayAttr(tie_keys)));
  return params;
}

// The keys of comparator `body` of `operands` (SortComparatorKeys), each
// complex operand probed as its real and imaginary parts; the parts that are
// keys are appended to `operands` (real or imag of the operand), and sorted
// by, as the runtime's sort orders real values. False where the comparator
// is not lexicographic.
bool SortKeys(mlir::OpBuilder& b, mlir::Location loc, mlir::Block& body,
              llvm::SmallVectorImpl<Value>& operands,
              llvm::SmallVectorImpl<ops::SortKeyOrder>* keys) {
  const size_t n = operands.size();
  llvm::SmallVector<SortPart> parts;
  for (size_t j = 0; j < n; ++j) {
    const mlir::Type element = mlir::getElementTypeOrSelf(operands[j].getType());
    if (auto complex = mlir::dyn_cast<mlir::ComplexType>(element))
      parts.append({{j, 0, complex.getElementType()}, {j, 1, complex.getElementType()}});
    else
      parts.push_back({j, -1, element});
  }
  if (!SortComparatorKeys(body, parts, n, keys)) return false;
  for (ops::SortKeyOrder& key : *keys) {
    const SortPart& part = parts[key.operand];
    key.operand = static_cast<int>(part.operand);
    if (part.part < 0) continue;
    auto type = mlir::RankedTensorType::get(
        mlir::cast<mlir::RankedTensorType>(operands[part.operand].getType()).getShape(),
        part.element);
    key.operand = static_cast<int>(operands.size());
    operands.push_back(CreateOp(b, loc, part.part ? "imag" : "real", mlir::TypeRange{type},
                                mlir::ValueRange{operands[part.operand]}, {})
                           ->getResult(0));
  }
  return true;
}

}  // namespace

// stablehlo.sort: brt's sort (brt/ops.def), its order read from the
// comparator (SortComparatorKeys). A sort is always stable in brt, which
// is_stable = false allows.
bool Importer::ImportSort(Operation& op, llvm::ArrayRef<Value> operands,
                          llvm::DenseMap<Value, Value>& map, int) {
  const size_t n = operands.size();
  if (n == 0 || op.getNumResults() != n || op.getNumRegions() != 1 ||
      !op.getRegion(0).hasOneBlock() || op.getRegion(0).front().getNumArguments() != 2 * n)
    return Fail(op, "stablehlo.sort needs a comparator of two arguments per operand");
  for (mlir::Type t : op.getResultTypes())
    if (!CheckType(t, op)) return false;
  const int64_t rank = mlir::cast<mlir::RankedTensorType>(operands[0].getType()).getRank();
  auto dimension_attr = AttrOrPropertyOf<mlir::IntegerAttr>(&op, "dimension");
  int64_t dimension = dimension_attr ? dimension_attr.getInt() : -1;  // StableHLO's default
  if (dimension < 0) dimension += rank;
  if (dimension < 0 || dimension >= rank)
    return Fail(op, "stablehlo.sort's dimension is outside the rank " + std::to_string(rank));
  llvm::SmallVector<Value> sorted(operands);
  llvm::SmallVector<ops::SortKeyOrder> keys;
  if (!SortKeys(b_, op.getLoc(), op.getRegion(0).front(), sorted, &keys))
    return Fail(op,
                "stablehlo.sort is supported with a lexicographic comparator: by operands one "
                "after another, each ascending or descending (as jnp.sort, jnp.lexsort, "
                "lax.sort with num_keys, lax.top_k, torch.sort and torch.topk write it); this one "
                "is not");
  auto k = CreateOp(b_, op.getLoc(), "sort", mlir::ValueRange(sorted).getTypes(), sorted,
                    SortParams(b_, dimension, keys));
  for (auto [from, to] : llvm::zip(op.getResults(), k->getResults())) map[from] = to;
  return true;
}

// chlo.top_k(x, k): the k largest along the last dimension and their
// indices, by totalOrder, the lower index first among equals -- a
// descending sort of (x, iota), sliced, as its CHLO decomposition is.
bool Importer::ImportTopK(Operation& op, llvm::ArrayRef<Value> operands,
                          llvm::DenseMap<Value, Value>& map, int) {
  auto k_attr = AttrOrPropertyOf<mlir::IntegerAttr>(&op, "k");
  if (operands.size() != 1 || op.getNumResults() != 2 || !k_attr)
    return Fail(op, "chlo.top_k needs one operand, two results and k");
  for (mlir::Type t : op.getResultTypes())
    if (!CheckType(t, op)) return false;
  const mlir::Location loc = op.getLoc();
  auto type = mlir::cast<mlir::RankedTensorType>(operands[0].getType());
  auto index_type = mlir::cast<mlir::RankedTensorType>(op.getResult(1).getType());
  const int64_t rank = type.getRank(), k = k_attr.getInt();
  if (rank == 0 || k < 0 || k > type.getShape().back())
    return Fail(op, "chlo.top_k's k " + std::to_string(k) + " is outside the last dimension");
  auto indices_type = mlir::RankedTensorType::get(type.getShape(), index_type.getElementType());
  Value iota = Emit(loc, indices_type, "iota", {},
                    {b_.getNamedAttr("iota_dimension", b_.getI64IntegerAttr(rank - 1))});
  auto sorted = CreateOp(b_, loc, "sort", mlir::TypeRange{type, indices_type},
                         mlir::ValueRange{operands[0], iota},
                         {b_.getNamedAttr("dimension", b_.getI64IntegerAttr(rank - 1)),
                          b_.getNamedAttr("key", b_.getI64IntegerAttr(0)),
                          b_.getNamedAttr("order", b_.getStringAttr("descending")),
                          b_.getNamedAttr("total_order", b_.getI64IntegerAttr(1))});
  llvm::SmallVector<int64_t> start(rank, 0), limit(type.getShape()), strides(rank, 1);
  limit.back() = k;
  for (unsigned r = 0; r < 2; ++r)
    map[op.getResult(r)] = Emit(loc, op.getResult(r).getType(), "slice", sorted->getResult(r),
                                {b_.getNamedAttr("start_indices", b_.getDenseI64ArrayAttr(start)),
                                 b_.getNamedAttr("limit_indices", b_.getDenseI64ArrayAttr(limit)),
                                 b_.getNamedAttr("strides", b_.getDenseI64ArrayAttr(strides))});
  return true;
}

// JAX's ApproxTopK custom_call (lax.approx_max_k, approx_min_k): XLA on the
// CPU computes it exactly, as its fallback, so brt does: a sort of the
// operands along reduction_dim by its comparator (called_computations), the
// first top_k kept.
bool Importer::ImportApproxTopK(Operation& op, llvm::ArrayRef<Value> operands,
                                llvm::DenseMap<Value, Value>& map, int) {
  const size_t n = op.getNumResults();
  auto config = op.getAttrOfType<mlir::DictionaryAttr>("mhlo.backend_config");
  auto computations = AttrOrPropertyOf<mlir::ArrayAttr>(&op, "called_computations");
  auto top_k = config ? config.getAs<mlir::IntegerAttr>("top_k") : nullptr;
  auto dim = config ? config.getAs<mlir::IntegerAttr>("reduction_dim") : nullptr;
  if (operands.size() != 2 * n || !top_k || !dim || !computations || computations.size() != 1)
    return Fail(op,
                "ApproxTopK needs its operands and their inits, mhlo.backend_config's top_k and "
                "reduction_dim, and one comparator");
  for (mlir::Type t : op.getResultTypes())
    if (!CheckType(t, op)) return false;
  auto comparator_name = mlir::dyn_cast<mlir::FlatSymbolRefAttr>(computations[0]);
  auto comparator = comparator_name ? source_.lookupSymbol<mlir::func::FuncOp>(comparator_name)
                                    : mlir::func::FuncOp();
  if (!comparator || comparator.getBody().getBlocks().size() != 1)
    return Fail(op, "ApproxTopK's comparator is not a function of the module");
  auto type = mlir::cast<mlir::RankedTensorType>(operands[0].getType());
  const int64_t rank = type.getRank(), d = dim.getInt(), k = top_k.getInt();
  if (d < 0 || d >= rank || k < 0 || k > type.getShape()[d])
    return Fail(op, "ApproxTopK's reduction_dim " + std::to_string(d) + " or top_k " +
                        std::to_string(k) + " is outside the operand's shape");
  const mlir::Location loc = op.getLoc();
  llvm::SmallVector<Value> sorted_operands(operands.take_front(n));
  llvm::SmallVector<ops::SortKeyOrder> keys;
  if (!SortKeys(b_, loc, comparator.getBody().front(), sorted_operands, &keys))
    return Fail(op, "ApproxTopK's comparator is not lexicographic");
  auto sorted = CreateOp(b_, loc, "sort", mlir::ValueRange(sorted_operands).getTypes(),
                         sorted_operands, SortParams(b_, d, keys));
  llvm::SmallVector<int64_t> start(rank, 0), strides(rank, 1);
  for (size_t r = 0; r < n; ++r) {
    llvm::SmallVector<int64_t> limit(
        mlir::cast<mlir::RankedTensorType>(operands[r].getType()).getShape());
    limit[d] = k;
    map[op.getResult(r)] = Emit(loc, op.getResult(r).getType(), "slice", sorted->getResult(r),
                                {b_.getNamedAttr("start_indices", b_.getDenseI64ArrayAttr(start)),
                                 b_.getNamedAttr("limit_indices", b_.getDenseI64ArrayAttr(limit)),
                                 b_.getNamedAttr("strides", b_.getDenseI64ArrayAttr(strides))});
  }
  return true;
}

}  // namespace brt::bridge

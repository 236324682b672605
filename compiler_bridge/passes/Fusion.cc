#include "BrtDialect.h"
#include "OpKinds.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/Passes.h"
#include "passes/Passes.h"

namespace brt::bridge {
namespace {

KernelOp Kernel(mlir::Value v, llvm::StringRef kind) {
  auto k = v.getDefiningOp<KernelOp>();
  return k && k.getKind() == kind ? k : KernelOp();
}

mlir::RankedTensorType TypeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

// broadcast_in_dim that only aligns an operand NumPy-style (its dims go to
// the trailing result dims, in order): a consumer that broadcasts can read the
// operand directly.
mlir::Value NumpyBroadcastSource(mlir::Value v) {
  KernelOp b = Kernel(v, "broadcast_in_dim");
  if (!b) return nullptr;
  auto dims = b.getParams().getAs<mlir::DenseI64ArrayAttr>("broadcast_dimensions");
  const int64_t in_rank = TypeOf(b.getInputs()[0]).getRank(), out_rank = TypeOf(v).getRank();
  if (!dims || static_cast<int64_t>(dims.size()) != in_rank) return nullptr;
  for (int64_t i = 0; i < in_rank; ++i)
    if (dims[i] != out_rank - in_rank + i) return nullptr;
  return b.getInputs()[0];
}

// Follows broadcasts back to what they broadcast.
mlir::Value StripBroadcasts(mlir::Value v) {
  while (KernelOp b = Kernel(v, "broadcast_in_dim")) v = b.getInputs()[0];
  return v;
}

std::optional<double> ScalarConstant(mlir::Value v) {
  KernelOp c = Kernel(StripBroadcasts(v), "constant");
  if (!c) return std::nullopt;
  auto value = c.getParams().getAs<mlir::DenseFPElementsAttr>("value");
  if (!value || !value.isSplat()) return std::nullopt;
  return value.getSplatValue<llvm::APFloat>().convertToDouble();
}

bool ReducesOver(KernelOp r, llvm::StringRef reducer, int64_t axis) {
  if (!r || r.getKind() != "reduce") return false;
  auto dims = r.getParams().getAs<mlir::DenseI64ArrayAttr>("dimensions");
  auto red = r.getParams().getAs<mlir::StringAttr>("reducer");
  return dims && dims.size() == 1 && dims[0] == axis && red && red.getValue() == reducer;
}

// ---------------------------------------------------------------------------

struct FuseSoftmax : mlir::PassWrapper<FuseSoftmax, mlir::OperationPass<mlir::func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseSoftmax)
  llvm::StringRef getArgument() const override { return "brt-fuse-softmax"; }
  llvm::StringRef getDescription() const override {
    return "Fuse softmax patterns into brt.softmax";
  }

  // divide(e, B(reduce_add(e))) with e = exp(subtract(x, B([maximum(c,] reduce_max(x)[)])))
  void runOnOperation() override {
    llvm::SmallVector<KernelOp> divides;
    getOperation().walk([&](KernelOp k) {
      if (k.getKind() == "divide") divides.push_back(k);
    });
    for (KernelOp div : divides) {
      KernelOp exp = Kernel(div.getInputs()[0], "exponential");
      if (!exp) continue;
      KernelOp sum = Kernel(StripBroadcasts(div.getInputs()[1]), "reduce");
      KernelOp sub = Kernel(exp.getInputs()[0], "subtract");
      if (!sum || !sub || sum.getInputs()[0] != exp.getResult(0)) continue;
      auto dims = sum.getParams().getAs<mlir::DenseI64ArrayAttr>("dimensions");
      if (!dims || dims.size() != 1) continue;
      const int64_t axis = dims[0];
      mlir::Value x = sub.getInputs()[0];
      mlir::Value max = StripBroadcasts(sub.getInputs()[1]);
      if (KernelOp guard = Kernel(max, "maximum")) max = guard.getInputs()[1];  // max(-inf, m)
      KernelOp reduce_max = max.getDefiningOp<KernelOp>();
      if (!ReducesOver(sum, "add", axis) || !ReducesOver(reduce_max, "max", axis) ||
          reduce_max.getInputs()[0] != x || !ScalarConstant(sum.getInputs()[1]) ||
          *ScalarConstant(sum.getInputs()[1]) != 0.0)
        continue;
      // exp's value is used by the sum and the divide only (else it must stay).
      if (!llvm::all_of(exp->getUsers(), [&](mlir::Operation* u) { return u == sum || u == div; }))
        continue;
      if (TypeOf(x) != TypeOf(div.getResult(0))) continue;
      mlir::OpBuilder b(div);
      auto fused = KernelOp::create(
          b, div.getLoc(), mlir::TypeRange{div.getResult(0).getType()},
          b.getStringAttr("brt.softmax"), mlir::ValueRange{x},
          b.getDictionaryAttr({b.getNamedAttr("axis", b.getI64IntegerAttr(axis))}));
      div.getResult(0).replaceAllUsesWith(fused.getResult(0));
      div->erase();
    }
  }
};

// ---------------------------------------------------------------------------

// Matches `k` as binary `kind` with operands (a, b) in either order, calling
// `match(a, b)` until it succeeds.
template <typename F>
bool Commuted(KernelOp k, llvm::StringRef kind, F&& match) {
  if (!k || k.getKind() != kind || k.getInputs().size() != 2) return false;
  return match(k.getInputs()[0], k.getInputs()[1]) || match(k.getInputs()[1], k.getInputs()[0]);
}

// divide(B(reduce_add(v over last)), B(C)) with C the size of the last dim.
bool IsMeanOverLast(mlir::Value mean, mlir::Value of) {
  KernelOp div = mean.getDefiningOp<KernelOp>();
  if (!div || div.getKind() != "divide") return false;
  const int64_t rank = TypeOf(of).getRank();
  KernelOp sum = Kernel(StripBroadcasts(div.getInputs()[0]), "reduce");
  auto n = ScalarConstant(div.getInputs()[1]);
  return ReducesOver(sum, "add", rank - 1) && sum.getInputs()[0] == of &&
         ScalarConstant(sum.getInputs()[1]) == 0.0 && n &&
         *n == static_cast<double>(TypeOf(of).getShape().back());
}

struct FuseLayerNorm : mlir::PassWrapper<FuseLayerNorm, mlir::OperationPass<mlir::func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseLayerNorm)
  llvm::StringRef getArgument() const override { return "brt-fuse-layer-norm"; }
  llvm::StringRef getDescription() const override {
    return "Fuse layer-norm patterns into brt.layer_norm";
  }

  // add(multiply(multiply(d, B(rsqrt(add(var, B(eps))))), B(g)), B(b)) with
  // d = x - B(mean(x)), var = mean(d * d), over the last dimension.
  void runOnOperation() override {
    llvm::SmallVector<KernelOp> adds;
    getOperation().walk([&](KernelOp k) {
      if (k.getKind() == "add") adds.push_back(k);
    });
    for (KernelOp add : adds) {
      mlir::Value x, scale, shift;
      double eps = 0;
      auto normalized = [&](mlir::Value v) {  // multiply(d, B(rsqrt(var + eps)))
        return Commuted(v.getDefiningOp<KernelOp>(), "multiply", [&](mlir::Value d, mlir::Value r) {
          KernelOp sub = Kernel(d, "subtract");
          KernelOp rsqrt = Kernel(StripBroadcasts(r), "rsqrt");
          if (!sub || !rsqrt) return false;
          return Commuted(
              rsqrt.getInputs()[0].getDefiningOp<KernelOp>(), "add",
              [&](mlir::Value var, mlir::Value e) {
                auto eps_value = ScalarConstant(e);
                KernelOp square = Kernel(
                    StripBroadcasts(var.getDefiningOp<KernelOp>() &&
                                            var.getDefiningOp<KernelOp>().getKind() == "divide"
                                        ? var.getDefiningOp<KernelOp>().getInputs()[0]
                                        : mlir::Value()),
                    "reduce");
                if (!eps_value || !square) return false;
                KernelOp mul = Kernel(square.getInputs()[0], "multiply");
                if (!mul || mul.getInputs()[0] != d || mul.getInputs()[1] != d) return false;
                if (!IsMeanOverLast(var, mul.getResult(0))) return false;
                if (!IsMeanOverLast(StripBroadcasts(sub.getInputs()[1]), sub.getInputs()[0]))
                  return false;
                x = sub.getInputs()[0], eps = *eps_value;
                return true;
              });
        });
      };
      auto is_vector = [&](mlir::Value v) {
        auto t = TypeOf(v);
        return t.getRank() == 1 && t.getElementType().isF32();
      };
      const bool matched = Commuted(add, "add", [&](mlir::Value scaled, mlir::Value b) {
        return Commuted(scaled.getDefiningOp<KernelOp>(), "multiply",
                        [&](mlir::Value n, mlir::Value g) {
                          if (!normalized(n) || !is_vector(StripBroadcasts(g)) ||
                              !is_vector(StripBroadcasts(b)))
                            return false;
                          scale = StripBroadcasts(g), shift = StripBroadcasts(b);
                          return true;
                        });
      });
      if (!matched || TypeOf(x) != TypeOf(add.getResult(0)) ||
          !TypeOf(x).getElementType().isF32() ||
          TypeOf(scale).getShape()[0] != TypeOf(x).getShape().back() ||
          TypeOf(shift) != TypeOf(scale))
        continue;
      mlir::OpBuilder b(add);
      auto fused = KernelOp::create(
          b, add.getLoc(), mlir::TypeRange{add.getResult(0).getType()},
          b.getStringAttr("brt.layer_norm"), mlir::ValueRange{x, scale, shift},
          b.getDictionaryAttr({b.getNamedAttr("epsilon", b.getF64FloatAttr(eps))}));
      add.getResult(0).replaceAllUsesWith(fused.getResult(0));
      add->erase();
    }
  }
};

// dot_general -> add(B(bias)) -> maximum(., 0) | tanh | exact GELU, each the
// single user of the previous, where the bias covers the rhs free dims ->
// brt.matmul.
struct FuseEpilogues : mlir::PassWrapper<FuseEpilogues, mlir::OperationPass<mlir::func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseEpilogues)
  llvm::StringRef getArgument() const override { return "brt-fuse-epilogues"; }
  llvm::StringRef getDescription() const override {
    return "Fuse bias add and relu/tanh/gelu into the matmul or convolution producing them";
  }

  // The bias `other` adds to `producer`'s result, seen through its broadcasts:
  // for dot_general it must cover the rhs free dims (trailing), for a
  // convolution the output feature dim. nullptr if it does not.
  static mlir::Value BiasOf(KernelOp producer, mlir::Value other) {
    if (TypeOf(other).getElementType() != TypeOf(producer.getResult(0)).getElementType())
      return nullptr;
    const auto out_shape = TypeOf(producer.getResult(0)).getShape();
    if (producer.getKind() == "dot_general") {
      auto contract =
          producer.getParams().getAs<mlir::DenseI64ArrayAttr>("rhs_contracting_dimensions");
      auto batch = producer.getParams().getAs<mlir::DenseI64ArrayAttr>("rhs_batching_dimensions");
      const int64_t rhs_free = TypeOf(producer.getInputs()[1]).getRank() -
                               static_cast<int64_t>(contract ? contract.size() : 0) -
                               static_cast<int64_t>(batch ? batch.size() : 0);
      mlir::Value src = other;
      while (mlir::Value s = NumpyBroadcastSource(src)) src = s;
      const auto bias_shape = TypeOf(src).getShape();
      return rhs_free > 0 && static_cast<int64_t>(bias_shape.size()) == rhs_free &&
                     bias_shape == out_shape.take_back(rhs_free)
                 ? src
                 : nullptr;
    }
    auto feature = producer.getParams().getAs<mlir::IntegerAttr>("output_feature_dimension");
    if (!feature) return nullptr;
    // Follow where the feature dim comes from through each broadcast.
    int64_t pos = feature.getInt();
    mlir::Value src = other;
    while (KernelOp b = Kernel(src, "broadcast_in_dim")) {
      auto dims = b.getParams().getAs<mlir::DenseI64ArrayAttr>("broadcast_dimensions");
      const auto it = dims ? llvm::find(dims.asArrayRef(), pos) : nullptr;
      if (!dims || it == dims.asArrayRef().end()) return nullptr;
      pos = it - dims.asArrayRef().begin();
      src = b.getInputs()[0];
    }
    return TypeOf(src).getRank() == 1 && pos == 0 &&
                   TypeOf(src).getShape()[0] == out_shape[feature.getInt()]
               ? src
               : nullptr;
  }

  // Exact GELU of h, as JAX lowers it after the erfc decomposition:
  // multiply(multiply(h, 0.5), subtract(1, erf(multiply(negate(h), 1/sqrt(2))))).
  // Returns its ops in order (the last is the result), or nothing.
  static llvm::SmallVector<KernelOp> MatchGeluErf(mlir::Value h) {
    if (!llvm::hasNItems(h.getUsers(), 2)) return {};
    KernelOp half, neg;
    for (mlir::Operation* u : h.getUsers()) {
      auto k = mlir::dyn_cast<KernelOp>(u);
      if (k && k.getKind() == "negate") neg = k;
      if (k && k.getKind() == "multiply") half = k;
    }
    if (!half || !neg) return {};
    mlir::Value half_c = half.getInputs()[0] == h ? half.getInputs()[1] : half.getInputs()[0];
    if (ScalarConstant(half_c) != 0.5) return {};
    KernelOp scale = OnlyUser(neg);
    if (!scale || scale.getKind() != "multiply") return {};
    auto c = ScalarConstant(scale.getInputs()[0] == neg.getResult(0) ? scale.getInputs()[1]
                                                                     : scale.getInputs()[0]);
    if (!c || std::abs(*c - 0.70710678118654752) > 1e-6) return {};
    KernelOp erf = OnlyUser(scale);
    KernelOp one_minus = erf && erf.getKind() == "erf" ? OnlyUser(erf) : KernelOp();
    if (!one_minus || one_minus.getKind() != "subtract" ||
        one_minus.getInputs()[1] != erf.getResult(0) ||
        ScalarConstant(one_minus.getInputs()[0]) != 1.0)
      return {};
    KernelOp out = OnlyUser(one_minus);
    if (!out || out.getKind() != "multiply" || OnlyUser(half) != out) return {};
    return {half, neg, scale, erf, one_minus, out};
  }

  static KernelOp OnlyUser(KernelOp k) {
    mlir::Value v = k.getResult(0);
    return v.hasOneUse() ? mlir::dyn_cast<KernelOp>(*v.getUsers().begin()) : KernelOp();
  }

  void runOnOperation() override {
    llvm::SmallVector<KernelOp> producers;  // matmuls and convolutions
    getOperation().walk([&](KernelOp k) {
      if ((k.getKind() == "dot_general" || k.getKind() == "convolution") &&
          mlir::isa<mlir::FloatType>(TypeOf(k.getResult(0)).getElementType()))
        producers.push_back(k);
    });
    for (KernelOp dot : producers) {
      KernelOp last = dot;
      llvm::SmallVector<KernelOp, 3> chain = {dot};
      mlir::Value bias;
      if (KernelOp add = OnlyUser(dot); add && add.getKind() == "add") {
        mlir::Value other =
            add.getInputs()[0] == dot.getResult(0) ? add.getInputs()[1] : add.getInputs()[0];
        if ((bias = BiasOf(dot, other))) last = add, chain.push_back(add);
      }
      llvm::StringRef activation = "none";
      if (llvm::SmallVector<KernelOp> gelu = MatchGeluErf(last.getResult(0)); !gelu.empty()) {
        activation = "gelu", last = gelu.back();
        chain.append(gelu.begin(), gelu.end());
      } else if (KernelOp act = OnlyUser(last)) {
        if (act.getKind() == "tanh") {
          activation = "tanh", last = act, chain.push_back(act);
        } else if (act.getKind() == "maximum") {
          mlir::Value other =
              act.getInputs()[0] == last.getResult(0) ? act.getInputs()[1] : act.getInputs()[0];
          if (ScalarConstant(other) == 0.0) activation = "relu", last = act, chain.push_back(act);
        }
      }
      if (last == dot) continue;
      mlir::OpBuilder b(last);
      mlir::NamedAttrList params(dot.getParams());
      params.set("activation", b.getStringAttr(activation));
      llvm::SmallVector<mlir::Value> inputs(dot.getInputs().begin(), dot.getInputs().end());
      if (bias) inputs.push_back(bias);
      auto fused = KernelOp::create(
          b, last.getLoc(), mlir::TypeRange{last.getResult(0).getType()},
          b.getStringAttr(dot.getKind() == "dot_general" ? "brt.matmul" : "brt.conv"), inputs,
          params.getDictionary(b.getContext()));
      last.getResult(0).replaceAllUsesWith(fused.getResult(0));
      // Each op of the chain was the single user of the one before it.
      for (KernelOp k : llvm::reverse(chain)) k->erase();
    }
  }
};

// dot_general(transpose(x), y) reads x directly when the permutation keeps
// the operand's free dimensions in order (so the result layout is the same).
struct FoldTransposeIntoDot
    : mlir::PassWrapper<FoldTransposeIntoDot, mlir::OperationPass<mlir::func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FoldTransposeIntoDot)
  llvm::StringRef getArgument() const override { return "brt-fold-transpose-into-dot"; }
  llvm::StringRef getDescription() const override {
    return "Fold transposes into dot_general operands";
  }

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

// ---------------------------------------------------------------------------

bool IsFusable(KernelOp k) {
  if (!k || k->getNumResults() != 1 || !IsElementwise(FindKind(k.getKind()))) return false;
  auto is_float = [](mlir::Type t) {
    mlir::Type e = mlir::cast<mlir::RankedTensorType>(t).getElementType();
    return e.isF32() || e.isF16() || e.isBF16();
  };
  auto is_pred = [](mlir::Type t) {
    return mlir::cast<mlir::RankedTensorType>(t).getElementType().isInteger(1);
  };
  const mlir::Type result = k.getResult(0).getType();
  if (k.getKind() == "compare") return is_float(k.getInputs()[0].getType()) && is_pred(result);
  if (!is_float(result)) return false;
  for (mlir::Value v : k.getInputs())
    if (!is_float(v.getType()) && !(k.getKind() == "select" && is_pred(v.getType()))) return false;
  return true;
}

struct FuseElementwise
    : mlir::PassWrapper<FuseElementwise, mlir::OperationPass<mlir::func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseElementwise)
  llvm::StringRef getArgument() const override { return "brt-fuse-elementwise"; }
  llvm::StringRef getDescription() const override {
    return "Fuse chains of elementwise ops into brt.fused_elementwise";
  }

  void runOnOperation() override {
    // Groups: a fusable producer whose only user is a fusable consumer of the
    // same shape joins the consumer's group. Each group is a tree whose root
    // is the one op used outside it.
    llvm::EquivalenceClasses<mlir::Operation*> groups;
    llvm::SmallVector<KernelOp> order;
    getOperation().walk([&](KernelOp k) {
      if (!IsFusable(k)) return;
      order.push_back(k);
      groups.insert(k);
      for (mlir::Value v : k.getInputs()) {
        KernelOp p = v.getDefiningOp<KernelOp>();
        if (IsFusable(p) && v.hasOneUse() &&
            TypeOf(v).getShape() == TypeOf(k.getResult(0)).getShape())
          groups.unionSets(p, k);
      }
    });
    llvm::MapVector<mlir::Operation*, llvm::SmallVector<KernelOp>> members;
    for (KernelOp k : order) members[groups.getLeaderValue(k)].push_back(k);
    for (auto& [leader, ops] : members) {
      KernelOp root = ops.back();  // block order: the root comes last
      if (ops.size() < 2 || !mlir::isa<mlir::FloatType>(TypeOf(root.getResult(0)).getElementType()))
        continue;
      Fuse(ops, root);
    }
  }

  void Fuse(llvm::ArrayRef<KernelOp> ops, KernelOp root) {
    llvm::DenseMap<mlir::Value, int64_t> reg;  // value -> register
    llvm::SetVector<mlir::Value> inputs;
    llvm::SmallVector<double> constants;
    llvm::SmallVector<std::pair<mlir::Value, double>> constant_values;
    llvm::DenseSet<mlir::Operation*> in_group;
    for (KernelOp k : ops) in_group.insert(k);
    const auto out_shape = TypeOf(root.getResult(0)).getShape();
    // Operands from outside: scalar constants become immediates; NumPy
    // broadcasts are read at their source.
    auto outside = [&](mlir::Value v) -> mlir::Value {
      if (ScalarConstant(v)) return v;
      mlir::Value src = v;
      while (mlir::Value s = NumpyBroadcastSource(src)) src = s;
      return src;
    };
    for (KernelOp k : ops)
      for (mlir::Value v : k.getInputs()) {
        if (in_group.count(v.getDefiningOp())) continue;
        if (auto c = ScalarConstant(v)) {
          if (!llvm::any_of(constant_values, [&](auto& p) { return p.first == v; }))
            constant_values.push_back({v, *c});
          continue;
        }
        mlir::Value src = outside(v);
        if (TypeOf(src).getRank() > static_cast<int64_t>(out_shape.size())) src = v;
        inputs.insert(src);
      }
    if (inputs.empty()) return;  // constants only: nothing to stream, leave it alone
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
    for (KernelOp k : ops) {
      if (k.getKind() == "convert") {  // float to float: computed in f32 anyway
        reg[k.getResult(0)] = lookup(k.getInputs()[0]);
        continue;
      }
      std::string name = k.getKind().str();
      if (name == "compare")
        name += "_" + k.getParams().getAs<mlir::StringAttr>("comparison_direction").str();
      names += (names.empty() ? "" : ",") + name;
      for (int slot = 0; slot < 3; ++slot)
        program.push_back(
            slot < static_cast<int>(k.getInputs().size()) ? lookup(k.getInputs()[slot]) : -1);
      reg[k.getResult(0)] = next++;
    }
    if (names.empty() || reg.lookup(root.getResult(0)) != next - 1)
      return;  // root must be the last instruction
    mlir::OpBuilder b(root);
    llvm::SmallVector<mlir::NamedAttribute> params = {
        b.getNamedAttr("ops", b.getStringAttr(names)),
        b.getNamedAttr("program", b.getDenseI64ArrayAttr(program))};
    if (!constants.empty())
      params.push_back(b.getNamedAttr("constants", b.getDenseF64ArrayAttr(constants)));
    auto fused = KernelOp::create(b, root.getLoc(), mlir::TypeRange{root.getResult(0).getType()},
                                  b.getStringAttr("brt.fused_elementwise"), inputs.getArrayRef(),
                                  b.getDictionaryAttr(params));
    root.getResult(0).replaceAllUsesWith(fused.getResult(0));
    for (KernelOp k : llvm::reverse(ops)) k->erase();
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateFuseSoftmaxPass() { return std::make_unique<FuseSoftmax>(); }
std::unique_ptr<mlir::Pass> CreateFuseElementwisePass() {
  return std::make_unique<FuseElementwise>();
}
std::unique_ptr<mlir::Pass> CreateFuseLayerNormPass() { return std::make_unique<FuseLayerNorm>(); }
std::unique_ptr<mlir::Pass> CreateFuseEpiloguesPass() { return std::make_unique<FuseEpilogues>(); }
std::unique_ptr<mlir::Pass> CreateFoldTransposeIntoDotPass() {
  return std::make_unique<FoldTransposeIntoDot>();
}

void RegisterPasses() {
  RegisterVerifyPass();
  RegisterPlacePass();
  RegisterFoldConstantsPass();
  mlir::PassRegistration<FuseSoftmax>();
  mlir::PassRegistration<FuseElementwise>();
  mlir::PassRegistration<FuseLayerNorm>();
  mlir::PassRegistration<FuseEpilogues>();
  mlir::PassRegistration<FoldTransposeIntoDot>();
}

std::vector<PipelineStep> CompilerPipeline(const std::string& target) {
  std::vector<PipelineStep> steps;
  steps.push_back({"verify", CreateVerifyPass()});
  steps.push_back({"fold-constants", CreateFoldConstantsPass()});
  steps.push_back({"cse", mlir::createCSEPass()});
  steps.push_back({"fold-transpose-into-dot", CreateFoldTransposeIntoDotPass()});
  steps.push_back({"fuse-softmax", CreateFuseSoftmaxPass()});
  steps.push_back({"fuse-layer-norm", CreateFuseLayerNormPass()});
  steps.push_back({"fuse-epilogues", CreateFuseEpiloguesPass()});
  steps.push_back({"canonicalize", mlir::createCanonicalizerPass()});
  steps.push_back({"fuse-elementwise", CreateFuseElementwisePass()});
  steps.push_back({"cleanup", mlir::createCanonicalizerPass()});
  steps.push_back({"place", CreatePlacePass(target)});
  return steps;
}

}  // namespace brt::bridge

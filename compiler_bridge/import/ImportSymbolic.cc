// Symbolic shapes (JAX shape polymorphism, `jax.export` with
// `symbolic_shape`): the importer names each dynamic dimension of @main's
// arguments, follows the integer arithmetic JAX writes on dimension sizes
// (get_dimension_size, convert, reshape, concatenate, divide, ...) at
// compile time instead of importing it, turns shape_assertion custom calls
// into the function's constraints, and gives every dynamic result type the
// expressions of its sizes (SymbolicDims.h).
#include "import/Importer.h"

namespace brt::bridge {

using mlir::Operation;
using mlir::Value;

namespace {

// The argument dimension a dimension size comes from: through converts, a
// get_dimension_size of a block argument of `main`.
std::optional<std::pair<unsigned, unsigned>> ArgumentDim(Value v, mlir::Block& main) {
  Operation* def = v.getDefiningOp();
  while (def && def->getName().getStringRef() == "stablehlo.convert")
    def = def->getOperand(0).getDefiningOp();
  if (!def || def->getName().getStringRef() != "stablehlo.get_dimension_size") return std::nullopt;
  auto arg = mlir::dyn_cast<mlir::BlockArgument>(def->getOperand(0));
  auto dim = AttrOrPropertyOf<mlir::IntegerAttr>(def, "dimension");
  if (!arg || arg.getOwner() != &main || !dim) return std::nullopt;
  return std::make_pair(arg.getArgNumber(), static_cast<unsigned>(dim.getInt()));
}

bool IsIdentifier(llvm::StringRef name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
    return false;
  return llvm::all_of(
      name, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

const char* Relation(llvm::StringRef direction) {
  if (direction == "EQ") return "==";
  if (direction == "NE") return "!=";
  if (direction == "GE") return ">=";
  if (direction == "GT") return ">";
  if (direction == "LE") return "<=";
  if (direction == "LT") return "<";
  return nullptr;
}

// lhs OP rhs decided from lower bounds (every symbol >= 1), or nullopt.
std::optional<bool> Decide(const SymDim& lhs, llvm::StringRef direction, const SymDim& rhs) {
  const std::optional<int64_t> up = (lhs - rhs).LowerBound(), down = (rhs - lhs).LowerBound();
  auto at_least = [](std::optional<int64_t> bound, int64_t v) { return bound && *bound >= v; };
  if (direction == "EQ" || direction == "NE") {
    std::optional<bool> equal;
    if (auto d = (lhs - rhs).Constant()) equal = *d == 0;
    if (at_least(up, 1) || at_least(down, 1)) equal = false;
    if (!equal) return std::nullopt;
    return direction == "EQ" ? *equal : !*equal;
  }
  if (direction == "LE" || direction == "LT")
    return Decide(rhs, direction == "LE" ? "GE" : "GT", lhs);
  const int64_t margin = direction == "GE" ? 0 : 1;  // lhs - rhs >= margin
  if (at_least(up, margin)) return true;
  if (at_least(down, 1 - margin)) return false;
  return std::nullopt;
}

// lhs OP rhs of integer sizes as a size that is 1 where it holds and 0
// where not (min and max of the difference), for conditions no bound
// decides: selects and JAX's floor-division helpers then compute sizes
// with them. Decided ones fold to constants.
SymDim Indicator(const SymDim& lhs, llvm::StringRef direction, const SymDim& rhs) {
  auto positive = [](const SymDim& d) { return SymDim::Min(1, SymDim::Max(0, d)); };
  if (direction == "GT") return positive(lhs - rhs);
  if (direction == "GE") return positive(lhs - rhs + 1);
  if (direction == "LT") return positive(rhs - lhs);
  if (direction == "LE") return positive(rhs - lhs + 1);
  const SymDim differ = SymDim::Min(1, SymDim::Max(lhs - rhs, rhs - lhs));
  return direction == "NE" ? differ : 1 - differ;
}

// lhs OP rhs as a constant where bounds decide it, else as an Indicator.
SymDim Condition(const SymDim& lhs, llvm::StringRef direction, const SymDim& rhs) {
  const std::optional<bool> decided = Decide(lhs, direction, rhs);
  return decided ? SymDim(*decided ? 1 : 0) : Indicator(lhs, direction, rhs);
}

// A binary operation on sizes, by its StableHLO name (and floordiv,
// ceildiv); nullopt where its result is no size expression. Truncating
// division and remainder are floor division and mod where nothing is
// negative, and their negations of -a where a is never positive (JAX's
// `-n % 8` of a round-up).
std::optional<SymDim> SizeArithmetic(llvm::StringRef kind, const SymDim& a, const SymDim& b) {
  const std::optional<int64_t> lower = a.LowerBound(), upper = a.UpperBound(),
                               divisor = b.Constant();
  const bool nonnegative = lower && *lower >= 0, by_positive = divisor && *divisor > 0;
  if (by_positive && !nonnegative && upper && *upper <= 0 &&
      (kind == "divide" || kind == "remainder")) {
    const SymDim negated = SymDim(0) - a;
    return SymDim(0) - (kind == "divide" ? SymDim::FloorDiv(negated, b) : SymDim::Mod(negated, b));
  }
  if (kind == "add") return a + b;
  if (kind == "subtract") return a - b;
  if (kind == "multiply") return a * b;
  if (kind == "maximum") return SymDim::Max(a, b);
  if (kind == "minimum") return SymDim::Min(a, b);
  if (kind == "floordiv") return SymDim::FloorDiv(a, b);
  if (kind == "ceildiv") return SymDim::CeilDiv(a, b);
  if (kind == "divide" && nonnegative && (by_positive || a.DividedExactly(b)))
    return SymDim::FloorDiv(a, b);
  if (kind == "remainder" && nonnegative && by_positive) return SymDim::Mod(a, b);
  return std::nullopt;
}

}  // namespace

// Symbols for @main's dynamic dimensions: the names JAX's exported wrapper
// gives them (`jax.global_constant` on the arguments it passes the sizes
// to), shared with a dimension that a shape assertion requires equal to a
// named one; otherwise "<argument>_<dim>".
bool Importer::NameMainSymbols(mlir::func::FuncOp main) {
  mlir::Block& body = main.getBody().front();
  std::map<std::pair<unsigned, unsigned>, std::string> names;
  std::map<std::string, int64_t> lower_bounds, upper_bounds;
  main.walk([&](Operation* op) {
    if (op->getName().getStringRef() != "func.call") return;
    auto ref = AttrOrPropertyOf<mlir::FlatSymbolRefAttr>(op, "callee");
    auto callee = ref ? source_.lookupSymbol<mlir::func::FuncOp>(ref.getValue()) : nullptr;
    for (unsigned k = 0; callee && k < op->getNumOperands() && k < callee.getNumArguments(); ++k) {
      auto name = callee.getArgAttrOfType<mlir::StringAttr>(k, "jax.global_constant");
      auto dim = ArgumentDim(op->getOperand(k), body);
      if (name && dim && IsIdentifier(name.getValue())) names.emplace(*dim, name.str());
    }
  });
  main.walk([&](Operation* op) {
    auto target = AttrOrPropertyOf<mlir::StringAttr>(op, "call_target_name");
    if (!target || target.getValue() != "shape_assertion" || op->getNumOperands() == 0) return;
    Operation* compare = op->getOperand(0).getDefiningOp();
    if (!compare || compare->getName().getStringRef() != "stablehlo.compare" ||
        CompareDirection(compare) != "EQ")
      return;
    auto a = ArgumentDim(compare->getOperand(0), body),
         b = ArgumentDim(compare->getOperand(1), body);
    if (!a || !b) return;
    if (names.count(*a) && !names.count(*b)) names[*b] = names[*a];
    if (names.count(*b) && !names.count(*a)) names[*a] = names[*b];
  });
  for (mlir::BlockArgument arg : body.getArguments()) {
    auto type = mlir::dyn_cast<mlir::RankedTensorType>(arg.getType());
    if (!type || type.hasStaticShape()) continue;
    if (type.getEncoding()) return Fail(*main, "argument types with an encoding are not supported");
    llvm::SmallVector<SymDim> dims;
    for (auto [d, size] : llvm::enumerate(type.getShape())) {
      if (!mlir::ShapedType::isDynamic(size)) {
        dims.push_back(size);
        continue;
      }
      auto named = names.find({arg.getArgNumber(), static_cast<unsigned>(d)});
      // brt.compile_torch names them after torch.export's Dims.
      auto given = main.getArgAttrOfType<mlir::ArrayAttr>(arg.getArgNumber(), kDimNamesAttr);
      auto given_name = given && d < given.size() ? mlir::dyn_cast<mlir::StringAttr>(given[d])
                                                  : mlir::StringAttr();
      auto most = main.getArgAttrOfType<mlir::DenseI64ArrayAttr>(arg.getArgNumber(), kDimMaxAttr);
      if (given_name && most && d < most.size() && most[d] > 0)
        upper_bounds[given_name.str()] = most[d];
      auto least = main.getArgAttrOfType<mlir::DenseI64ArrayAttr>(arg.getArgNumber(), kDimMinAttr);
      if (given_name && least && d < least.size() && least[d] > 1)
        lower_bounds[given_name.str()] = least[d];
      if (given_name && IsIdentifier(given_name.getValue()))
        named =
            names.insert_or_assign({arg.getArgNumber(), static_cast<unsigned>(d)}, given_name.str())
                .first;
      const std::string symbol = named != names.end() ? named->second
                                                      : "arg" + std::to_string(arg.getArgNumber()) +
                                                            "_" + std::to_string(d);
      // What the importer assumes when it decides conditions on sizes: a
      // named symbol is >= 1, as JAX's shape assertions check; a dimension
      // that is no symbol of its own (JAX's `t - 1`) may be 0.
      if (named != names.end())
        constraints_.push_back(symbol + " >= 1");
      else
        lower_bounds[symbol] = 0;
      dims.push_back(SymDim::Symbol(symbol));
    }
    arg.setType(SymbolicTensorType(dims, type.getElementType()));
  }
  for (const auto& [symbol, most] : upper_bounds)
    constraints_.push_back(symbol + " <= " + std::to_string(most));
  for (const auto& [symbol, least] : lower_bounds)
    if (least > 1) constraints_.push_back(symbol + " >= " + std::to_string(least));
  SymDim::SetBounds(std::move(lower_bounds), std::move(upper_bounds));
  return true;
}

// 1: `op` is arithmetic on dimension sizes, followed here and not imported;
// 0: import it (a constant is both: followed and imported); -1: an error.
int Importer::FollowShapeOp(Operation& op) {
  const llvm::StringRef name = op.getName().getStringRef();
  auto known = [&](Value v) -> const llvm::SmallVector<SymDim>* {
    auto it = shape_values_.find(v);
    return it == shape_values_.end() ? nullptr : &it->second;
  };
  if (name == "stablehlo.get_dimension_size") {
    auto dim = AttrOrPropertyOf<mlir::IntegerAttr>(&op, "dimension");
    std::optional<llvm::SmallVector<SymDim>> shape = SymbolicShape(op.getOperand(0).getType());
    if (!dim || !shape || dim.getInt() < 0 || dim.getInt() >= static_cast<int64_t>(shape->size()))
      return Fail(op, "get_dimension_size of a dimension whose size is unknown"), -1;
    shape_values_[op.getResult(0)] = {(*shape)[dim.getInt()]};
    return 1;
  }
  auto target = AttrOrPropertyOf<mlir::StringAttr>(&op, "call_target_name");
  if (target && target.getValue() == "shape_assertion") {
    if (op.getNumOperands() == 0) return Fail(op, "shape_assertion without a predicate"), -1;
    Value predicate = op.getOperand(0);
    auto message = AttrOrPropertyOf<mlir::StringAttr>(&op, "error_message");
    // Recorded even where it holds for symbols >= 1: that is what it checks.
    const auto* decided = known(predicate);
    if (decided && (*decided)[0].Constant() == 0)
      return Fail(op, "this shape assertion always fails: " +
                          (message ? message.str() : std::string("(no message)"))),
             -1;
    auto relation = relations_.find(predicate);
    if (relation != relations_.end()) constraints_.push_back(relation->second);
    // A condition made of others (an and, a select) is a size of 0 or 1.
    else if (decided && !(*decided)[0].Constant())
      constraints_.push_back((*decided)[0].Text() + " == 1");
    if (relation == relations_.end() && !decided)
      return Fail(op, "a shape assertion on a condition brt cannot express"), -1;
    return 1;
  }
  if (name.starts_with("arith.") || name.starts_with("tensor.") ||
      (name.starts_with("shape.") && name != "shape.assuming"))
    return FollowBuiltinShapeOp(op);
  if (op.getNumResults() != 1 || op.getNumRegions() != 0 ||
      !(name.starts_with("stablehlo.") || name == "arith.constant"))
    return 0;
  auto type = mlir::dyn_cast<mlir::RankedTensorType>(op.getResult(0).getType());
  // Floats too: torch-mlir computes arange's length as ceil(f64(n) / step).
  // Sizes are lists, held row-major: a matrix of them (dynamic_conv's
  // [spatial, 2] padding) is made by reshapes and concatenations along its
  // rows only.
  auto concatenates_rows = [&] {
    auto dim = AttrOrPropertyOf<mlir::IntegerAttr>(&op, "dimension");
    return name == "stablehlo.concatenate" && dim && dim.getInt() == 0;
  };
  const bool list_form =
      type && (type.getRank() <= 1 || name == "stablehlo.reshape" || name == "stablehlo.constant" ||
               name == "arith.constant" || concatenates_rows());
  if (!type || !type.hasStaticShape() || !list_form || type.getNumElements() > 64 ||
      !mlir::isa<mlir::IntegerType, mlir::FloatType>(type.getElementType()))
    return 0;
  if (name == "stablehlo.constant" || name == "arith.constant") {
    llvm::SmallVector<SymDim> values;
    if (auto reals = AttrOrPropertyOf<mlir::DenseFPElementsAttr>(&op, "value")) {
      for (const llvm::APFloat& v : reals.getValues<llvm::APFloat>()) {
        const double d = v.convertToDouble();
        if (d != std::floor(d) || std::abs(d) > 1e15) return 0;  // not a size
        values.push_back(static_cast<int64_t>(d));
      }
      shape_values_[op.getResult(0)] = values;
      return 0;
    }
    auto value = AttrOrPropertyOf<mlir::DenseIntElementsAttr>(&op, "value");
    if (!value) return 0;
    for (const llvm::APInt& v : value.getValues<llvm::APInt>())
      values.push_back(type.getElementType().isUnsignedInteger() || v.getBitWidth() == 1
                           ? static_cast<int64_t>(v.getZExtValue())
                           : v.getSExtValue());
    shape_values_[op.getResult(0)] = values;
    return 0;
  }
  llvm::SmallVector<const llvm::SmallVector<SymDim>*> in;
  bool any_followed = false;
  for (Value v : op.getOperands()) {
    in.push_back(known(v));
    if (!in.back() && !relations_.count(v)) return 0;
    any_followed = any_followed || !in.back() ||
                   llvm::any_of(*in.back(), [](const SymDim& d) { return !d.Constant(); });
  }
  // Sizes computed from constants alone are imported too (and folded).
  std::string why = FollowShapeArithmetic(op, in, type);
  if (why.empty()) return any_followed ? 1 : 0;
  if (!any_followed) return 0;
  return Fail(op, "a computation on dimension sizes brt cannot follow: " + why), -1;
}

// The sizes `op` computes from its operands' (`in`; null for an undecided
// condition) into shape_values_ (or relations_); "" or why it cannot.
std::string Importer::FollowShapeArithmetic(Operation& op,
                                            llvm::ArrayRef<const llvm::SmallVector<SymDim>*> in,
                                            mlir::RankedTensorType type) {
  auto scalar = [&](unsigned i) -> std::optional<SymDim> {
    if (!in[i] || in[i]->size() != 1) return std::nullopt;
    return (*in[i])[0];
  };
  llvm::SmallVector<SymDim> out;
  const llvm::StringRef kind = op.getName().getStringRef().split('.').second;
  const bool boolean = type.getElementType().isInteger(1);
  if (kind == "convert" || kind == "reshape") {
    if (!in[0] || static_cast<int64_t>(in[0]->size()) != type.getNumElements())
      return kind.str() + " changes the number of sizes";
    out = *in[0];
    // A size converted to a boolean is `size != 0`, 0 or 1 as selects read it.
    auto from = mlir::cast<mlir::ShapedType>(op.getOperand(0).getType()).getElementType();
    if (kind == "convert" && boolean && !from.isInteger(1))
      for (SymDim& d : out) d = Condition(d, "NE", 0);
  } else if (kind == "broadcast_in_dim") {
    if (!scalar(0)) return "broadcast of several sizes";
    out.assign(type.getNumElements(), *scalar(0));
  } else if (kind == "concatenate") {
    for (const auto* v : in) {
      if (!v) return "concatenate of a condition";
      out.append(v->begin(), v->end());
    }
  } else if (kind == "slice") {
    if (!in[0]) return "slice of a condition";
    llvm::SmallVector<mlir::NamedAttribute> params;
    if (!Params(op, params)) return error_;
    const llvm::SmallVector<int64_t> start = IntsParam(params, "start_indices"),
                                     stride = IntsParam(params, "strides");
    if (start.size() != 1) return "slice without a start";
    for (int64_t i = 0; i < type.getNumElements(); ++i) {
      const size_t at = static_cast<size_t>(start[0] + i * (stride.empty() ? 1 : stride[0]));
      if (at >= in[0]->size()) return "slice out of range";
      out.push_back((*in[0])[at]);
    }
  } else if (kind == "compare") {
    const std::string direction = CompareDirection(&op);
    std::optional<SymDim> a = scalar(0), b = scalar(1);
    const char* relation = Relation(direction);
    if (!a || !b || !relation) return "compare " + direction;
    relations_[op.getResult(0)] = a->Text() + " " + relation + " " + b->Text();
    out.push_back(Condition(*a, direction, *b));
  } else if ((kind == "and" || kind == "or") && !boolean) {
    // Bitwise on integers: exact for constants, no expression of sizes else.
    std::optional<SymDim> a = scalar(0), b = scalar(1);
    const std::optional<int64_t> ca = a ? a->Constant() : std::nullopt,
                                 cb = b ? b->Constant() : std::nullopt;
    if (!ca || !cb) return kind.str() + " of integer sizes";
    out.push_back(kind == "and" ? (*ca & *cb) : (*ca | *cb));
  } else if (kind == "and" || kind == "or") {
    std::optional<SymDim> a = scalar(0), b = scalar(1);
    const int64_t absorbing = kind == "and" ? 0 : 1;
    if ((a && a->Constant() == absorbing) || (b && b->Constant() == absorbing))
      out.push_back(absorbing);
    else if (a && b)  // conditions are 0 or 1
      out.push_back(kind == "and" ? SymDim::Min(*a, *b) : SymDim::Max(*a, *b));
    else
      return kind.str() + " of conditions brt cannot decide at compile time";
  } else if (kind == "select") {
    std::optional<SymDim> p = scalar(0);
    if (!p) return "select on a condition brt cannot decide";
    if (std::optional<int64_t> taken = p->Constant()) {
      if (!in[*taken ? 1 : 2]) return "select of a value that is not a size";
      out = *in[*taken ? 1 : 2];
    } else {
      if (!in[1] || !in[2] || in[1]->size() != in[2]->size())
        return "select of a value that is not a size";
      for (size_t i = 0; i < in[1]->size(); ++i)  // p is 0 or 1
        out.push_back(*p * (*in[1])[i] + (1 - *p) * (*in[2])[i]);
    }
  } else {
    std::optional<SymDim> a = scalar(0), b = in.size() > 1 ? scalar(1) : std::nullopt;
    if (!a || (in.size() > 1 && !b)) return kind.str() + " of several sizes";
    const bool integer = mlir::isa<mlir::IntegerType>(type.getElementType());
    std::optional<SymDim> result;
    if (!b) {
      if (kind == "negate") result = SymDim(0) - *a;
      if (kind == "ceil" || kind == "floor" || kind.starts_with("round_")) result = *a;  // integers
      if (kind == "sign") result = Indicator(*a, "GT", 0) - Indicator(*a, "LT", 0);
      if (kind == "abs") result = SymDim::Max(*a, SymDim(0) - *a);
    } else if (kind == "divide" && b->Constant() == 1) {
      result = *a;
    } else if (integer || kind != "divide") {  // a float division is no size
      result = SizeArithmetic(kind, *a, *b);
    }
    if (!result) return kind.str() + " of " + a->Text() + (b ? ", " + b->Text() : "");
    out.push_back(*result);
  }
  if (!out.empty()) shape_values_[op.getResult(0)] = out;
  return "";
}

// torch-mlir's arithmetic on sizes, in MLIR's builtin dialects: arith on
// i64/index scalars, tensor.dim and tensor.from_elements, and shape's
// shape_of, broadcast and the witnesses of its constraints (the kernels
// check shapes at run time).
int Importer::FollowBuiltinShapeOp(Operation& op) {
  const llvm::StringRef name = op.getName().getStringRef();
  if (op.getNumResults() != 1) return 0;
  auto values = [&](unsigned i) -> const llvm::SmallVector<SymDim>* {
    auto it = shape_values_.find(op.getOperand(i));
    return it == shape_values_.end() ? nullptr : &it->second;
  };
  auto scalar = [&](unsigned i) -> std::optional<SymDim> {
    const auto* v = values(i);
    if (!v || v->size() != 1) return std::nullopt;
    return (*v)[0];
  };
  auto cannot = [&](const std::string& why) {
    return Fail(op, "a computation on dimension sizes brt cannot follow: " + why), -1;
  };
  for (unsigned i = 0; i < op.getNumOperands(); ++i)
    if (!values(i) && name != "tensor.dim" && name != "shape.shape_of")
      return name == "arith.constant" ? 0
                                      : cannot("an operand of '" + name.str() + "' is not a size");
  // arith and from_elements read single sizes (a select's choices may be lists).
  const bool single =
      (name.starts_with("arith.") && name != "arith.select") || name == "tensor.from_elements";
  for (unsigned i = 0; i < op.getNumOperands(); ++i)
    if ((single || (name == "arith.select" && i == 0)) && !scalar(i))
      return cannot("'" + name.str() + "' of a list of sizes");
  llvm::SmallVector<SymDim> out;
  const llvm::StringRef kind = name.split('.').second;
  if (name == "arith.constant") {
    if (auto integer = AttrOrPropertyOf<mlir::IntegerAttr>(&op, "value")) {
      shape_values_[op.getResult(0)] = {integer.getValue().getSExtValue()};
      return 1;
    }
    auto dense = AttrOrPropertyOf<mlir::DenseIntElementsAttr>(&op, "value");
    if (dense && dense.getNumElements() <= 64)
      for (const llvm::APInt& v : dense.getValues<llvm::APInt>()) out.push_back(v.getSExtValue());
    if (dense && dense.getNumElements() <= 64) shape_values_[op.getResult(0)] = out;
    return 0;  // a tensor constant is data too
  } else if (name == "tensor.dim") {
    auto shape = SymbolicShape(op.getOperand(0).getType());
    std::optional<SymDim> index = scalar(1);
    std::optional<int64_t> d = index ? index->Constant() : std::nullopt;
    if (!shape || !d || *d < 0 || *d >= static_cast<int64_t>(shape->size()))
      return cannot("tensor.dim of a dimension brt cannot tell");
    out.push_back((*shape)[*d]);
  } else if (name == "shape.const_shape") {
    auto shape = AttrOrPropertyOf<mlir::DenseIntElementsAttr>(&op, "shape");
    if (!shape) return cannot("shape.const_shape without its shape");
    for (const llvm::APInt& v : shape.getValues<llvm::APInt>()) out.push_back(v.getSExtValue());
  } else if (name == "arith.cmpi") {
    static const char* const kDirections[] = {"EQ", "NE", "LT", "LE", "GT",
                                              "GE", "LT", "LE", "GT", "GE"};
    auto predicate = AttrOrPropertyOf<mlir::IntegerAttr>(&op, "predicate");
    if (!predicate || predicate.getInt() < 0 || predicate.getInt() > 9)
      return cannot("arith.cmpi without a predicate");
    const char* direction = kDirections[predicate.getInt()];
    std::optional<bool> decided = Decide(*scalar(0), direction, *scalar(1));
    if (!decided)
      return cannot("a comparison of sizes brt cannot decide at compile time: " +
                    scalar(0)->Text() + " " + direction + " " + scalar(1)->Text());
    out.push_back(*decided ? 1 : 0);
  } else if (name == "arith.select") {
    std::optional<int64_t> p = scalar(0)->Constant();
    if (!p) return cannot("arith.select on a condition brt cannot decide");
    out = *values(*p ? 1 : 2);
  } else if (name == "shape.shape_of") {
    auto shape = SymbolicShape(op.getOperand(0).getType());
    if (!shape) return cannot("shape_of a value of unknown sizes");
    out = *shape;
  } else if (name == "tensor.from_elements") {
    for (unsigned i = 0; i < op.getNumOperands(); ++i) out.push_back(*scalar(i));
  } else if (kind == "index_cast" || kind == "index_castui" || kind == "extsi" || kind == "extui" ||
             kind == "trunci" || name == "tensor.cast" || name == "shape.index_to_size" ||
             name == "shape.size_to_index" || name == "shape.to_extent_tensor") {
    out = *values(0);
  } else if (name == "tensor.extract") {
    std::optional<SymDim> index = op.getNumOperands() == 2 ? scalar(1) : SymDim(0);
    std::optional<int64_t> at = index ? index->Constant() : std::nullopt;
    if (!at || *at < 0 || *at >= static_cast<int64_t>(values(0)->size()))
      return cannot("tensor.extract at an index brt cannot tell");
    out.push_back((*values(0))[*at]);
  } else if (name == "shape.broadcast") {
    // NumPy's rule, right-aligned; a 1 takes the other's size.
    size_t rank = 0;
    for (unsigned i = 0; i < op.getNumOperands(); ++i) rank = std::max(rank, values(i)->size());
    out.assign(rank, SymDim(1));
    for (unsigned i = 0; i < op.getNumOperands(); ++i) {
      const auto& v = *values(i);
      for (size_t k = 0; k < v.size(); ++k) {
        SymDim& slot = out[rank - v.size() + k];
        if (v[k].Constant() == 1 || slot == v[k]) continue;
        if (slot.Constant() != 1)
          return cannot("broadcast of sizes " + slot.Text() + " and " + v[k].Text());
        slot = v[k];
      }
    }
  } else if (name == "shape.num_elements") {
    out.push_back(1);
    for (const SymDim& d : *values(0)) out[0] = out[0] * d;
  } else if (name == "shape.cstr_broadcastable" || name == "shape.cstr_eq" ||
             name == "shape.const_witness" || name == "shape.assuming_all") {
    out.push_back(1);  // a witness: the kernels check shapes when they run
  } else if (name.starts_with("arith.") && op.getNumOperands() == 2) {
    static const llvm::StringMap<llvm::StringRef> kStableHloName = {
        {"addi", "add"},          {"subi", "subtract"},
        {"muli", "multiply"},     {"maxsi", "maximum"},
        {"maxui", "maximum"},     {"minsi", "minimum"},
        {"minui", "minimum"},     {"divsi", "divide"},
        {"divui", "divide"},      {"floordivsi", "floordiv"},
        {"ceildivsi", "ceildiv"}, {"ceildivui", "ceildiv"},
        {"remsi", "remainder"},   {"remui", "remainder"}};
    const SymDim a = *scalar(0), b = *scalar(1);
    std::optional<SymDim> result = SizeArithmetic(kStableHloName.lookup(kind), a, b);
    if (!result) return cannot(name.str() + " of " + a.Text() + " and " + b.Text());
    out.push_back(*result);
  } else {
    return 0;
  }
  shape_values_[op.getResult(0)] = out;
  return 1;
}

// A dimension size's value at run time, as a scalar of `element`: the sum of
// a broadcast of ones to that many elements. A size brt cannot show to be
// non-negative becomes a constraint checked when the inputs are bound.
Value Importer::DimValue(mlir::Location loc, const SymDim& size, mlir::Type element) {
  Elementwise scalars(b_, loc, {});
  if (!mlir::isa<mlir::IntegerType>(element)) {  // counted exactly in i64, then converted
    if (std::optional<int64_t> c = size.Constant())
      return scalars.Constant(element, static_cast<double>(*c));
    return scalars.Convert(DimValue(loc, size, b_.getI64Type()), element);
  }
  if (std::optional<int64_t> c = size.Constant()) return scalars.IntConstant(element, *c);
  if (!size.LowerBound() || *size.LowerBound() < 0) constraints_.push_back(size.Text() + " >= 0");
  Value ones = Emit(loc, SymbolicTensorType({size}, element), "broadcast_in_dim",
                    {scalars.IntConstant(element, 1)},
                    {b_.getNamedAttr("broadcast_dimensions", b_.getDenseI64ArrayAttr({}))});
  return Emit(loc, mlir::RankedTensorType::get({}, element), "reduce",
              {ones, scalars.IntConstant(element, 0)},
              {b_.getNamedAttr("dimensions", b_.getDenseI64ArrayAttr({0})),
               b_.getNamedAttr("reducer", b_.getStringAttr("add"))});
}

// A followed size (or list of sizes) that an op reads as data.
Value Importer::MaterializeShapeValue(Operation& user, Value source) {
  auto type = mlir::dyn_cast<mlir::RankedTensorType>(source.getType());
  if (!type) {
    Fail(user, "reads a size of type " + PrintedText(source.getType()) + " as data");
    return nullptr;
  }
  const mlir::Type element = type.getElementType();
  if (!shape_values_.count(source)) {
    Fail(user, "reads the condition '" + relations_.lookup(source) +
                   "' as data, which brt does not compute at run time");
    return nullptr;
  }
  llvm::SmallVector<Value> parts;
  for (const SymDim& v : shape_values_.lookup(source))
    parts.push_back(DimValue(user.getLoc(), v, element));
  if (type.getRank() == 0) return parts[0];
  auto one = mlir::RankedTensorType::get({1}, element);
  for (Value& p : parts) p = Emit(user.getLoc(), one, "reshape", {p});
  return parts.size() == 1 ? parts[0]
                           : Emit(user.getLoc(), type, "concatenate", parts,
                                  {b_.getNamedAttr("dimension", b_.getI64IntegerAttr(0))});
}

}  // namespace brt::bridge

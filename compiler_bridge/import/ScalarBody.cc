// Bodies run on scalars (see ScalarBody.h).
#include "import/ScalarBody.h"

#include <cmath>
#include <limits>
#include <vector>

#include "import/Importer.h"
#include "ops/op_plans.h"
#include "ops/scalar_ops.h"

namespace brt::bridge {

using mlir::Operation;
using mlir::Value;

namespace {

// One-operand op `name` on x (`complex`: its result is a complex number);
// false where it is none of these.
bool RunUnary(llvm::StringRef name, bool complex, Scalar x, Scalar* r) {
  const double a = x.real();
  if (name == "stablehlo.not")
    *r = a == 0;
  else if (name == "stablehlo.negate")
    *r = -x;
  else if (name == "stablehlo.real")
    *r = a;
  else if (name == "stablehlo.imag")
    *r = x.imag();
  else if (name == "stablehlo.abs")
    *r = std::abs(x);
  else if (name == "stablehlo.exponential")
    *r = complex ? std::exp(x) : Scalar(std::exp(a));
  else if (name == "stablehlo.log")
    *r = complex ? std::log(x) : Scalar(std::log(a));
  else if (name == "stablehlo.log_plus_one")
    *r = complex ? ops::ComplexLog1p(x) : Scalar(std::log1p(a));
  else
    return false;
  return true;
}

// Two-operand op `name` on x and y (compare aside); false where it is none
// of these. Real operands compute on real parts alone, so that an infinity
// times 0i makes no NaN.
bool RunBinary(llvm::StringRef name, bool complex, Scalar x, Scalar y, Scalar* r) {
  const double a = x.real(), b = y.real();
  if (name == "stablehlo.add")
    *r = complex ? x + y : Scalar(a + b);
  else if (name == "stablehlo.subtract")
    *r = complex ? x - y : Scalar(a - b);
  else if (name == "stablehlo.multiply")
    *r = complex ? x * y : Scalar(a * b);
  else if (name == "stablehlo.divide")
    *r = complex ? x / y : Scalar(a / b);
  else if (name == "stablehlo.remainder" && !complex)
    *r = std::fmod(a, b);
  else if (name == "stablehlo.complex")
    *r = Scalar(a, b);
  else if (name == "stablehlo.and")
    *r = a != 0 && b != 0;
  else if (name == "stablehlo.or")
    *r = a != 0 || b != 0;
  else if ((name == "stablehlo.maximum" || name == "stablehlo.minimum") && complex)
    *r = name == "stablehlo.maximum" ? ops::ComplexBinary<ops::Binary::kMax>(x, y)
                                     : ops::ComplexBinary<ops::Binary::kMin>(x, y);
  else if (name == "stablehlo.maximum" || name == "stablehlo.minimum")
    *r = std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN()
         : name == "stablehlo.minimum"  ? std::min(a, b)
                                        : std::max(a, b);
  else
    return false;
  return true;
}

// A scalar constant's value; false where `o` holds none.
bool ConstantValue(Operation& o, Scalar* r) {
  auto value = AttrOrPropertyOf<mlir::DenseElementsAttr>(&o, "value");
  if (!value || value.getNumElements() != 1) return false;
  if (auto f = mlir::dyn_cast<mlir::DenseFPElementsAttr>(value)) {
    *r = (*f.getValues<llvm::APFloat>().begin()).convertToDouble();
  } else if (auto n = mlir::dyn_cast<mlir::DenseIntElementsAttr>(value)) {
    *r = static_cast<double>((*n.getValues<llvm::APInt>().begin()).getSExtValue());
  } else if (mlir::isa<mlir::ComplexType>(value.getElementType())) {
    const std::complex<llvm::APFloat> z = *value.getValues<std::complex<llvm::APFloat>>().begin();
    *r = Scalar(z.real().convertToDouble(), z.imag().convertToDouble());
  } else {
    return false;
  }
  return true;
}

// Whether a body's result matches a reducer's: exactly, or (`close`) to a
// relative 1e-6, for a logaddexp whose constants (JAX's pi) are rounded to
// the body's type.
bool Matches(Scalar got, Scalar want, bool close) {
  auto same = [&](double g, double w) {
    if (std::isnan(g) || std::isnan(w)) return std::isnan(g) && std::isnan(w);
    return g == w || (close && std::fabs(g - w) <= 1e-6 * std::max(1.0, std::fabs(w)));
  };
  return same(got.real(), want.real()) && same(got.imag(), want.imag());
}

}  // namespace

bool RunScalarBody(mlir::Block& body, llvm::ArrayRef<Scalar> args,
                   llvm::SmallVectorImpl<Scalar>& results) {
  if (body.getNumArguments() != args.size()) return false;
  llvm::DenseMap<Value, Scalar> env;
  for (auto [i, a] : llvm::enumerate(args)) env[body.getArgument(i)] = a;
  for (Operation& o : body) {
    const llvm::StringRef name = o.getName().getStringRef();
    auto in = [&](unsigned k) { return env.lookup(o.getOperand(k)); };
    if (name == "stablehlo.return") {
      results.clear();
      for (unsigned k = 0; k < o.getNumOperands(); ++k) results.push_back(in(k));
      return true;
    }
    if (o.getNumResults() != 1) return false;
    const bool complex =
        mlir::isa<mlir::ComplexType>(mlir::getElementTypeOrSelf(o.getResult(0).getType()));
    const unsigned arity = o.getNumOperands();
    Scalar r;
    if (name == "stablehlo.compare" && arity == 2) {
      ops::Cmp cmp;
      if (!ops::ParseCmp(CompareDirection(&o), &cmp)) return false;
      const Scalar x = in(0), y = in(1);
      if (mlir::isa<mlir::ComplexType>(mlir::getElementTypeOrSelf(o.getOperand(0).getType()))) {
        if (cmp != ops::Cmp::kEq && cmp != ops::Cmp::kNe) return false;
        r = (x == y) == (cmp == ops::Cmp::kEq);
      } else {
        r = CompareAttr(&o, "compare_type") == "TOTALORDER"
                ? ops::ApplyCmp(cmp, ops::SortKey(x.real(), true), ops::SortKey(y.real(), true))
                : ops::ApplyCmp(cmp, x.real(), y.real());
      }
    } else if (name == "stablehlo.select" && arity == 3) {
      r = in(0).real() != 0 ? in(1) : in(2);
    } else if (name == "stablehlo.constant" && arity == 0) {
      if (!ConstantValue(o, &r)) return false;
    } else if (!(arity == 1 && RunUnary(name, complex, in(0), &r)) &&
               !(arity == 2 && RunBinary(name, complex, in(0), in(1), &r))) {
      return false;
    }
    env[o.getResult(0)] = r;
  }
  return false;
}

std::string ProbedReducer(mlir::Block& body, mlir::Type element, size_t k, size_t n) {
  const bool complex = mlir::isa<mlir::ComplexType>(element);
  if ((!complex && !mlir::isa<mlir::FloatType>(element)) || k >= n ||
      body.getNumArguments() != 2 * n)
    return "";
  constexpr double kInf = std::numeric_limits<double>::infinity(),
                   kNaN = std::numeric_limits<double>::quiet_NaN();
  // Complex probes tie on the real part, and on the imaginary part, without
  // infinities or NaN (where JAX's bodies give whatever their selects pick).
  const std::vector<Scalar> probes =
      complex ? std::vector<Scalar>{{-1.5, 2}, {-1.5, -0.5}, {0.5, 2}, {2, -3}, {0.25, 1}}
              : std::vector<Scalar>{-kInf, -2.5, -1, 0, 0.75, 3, kInf, kNaN};
  for (const char* name : {"max", "min", "logaddexp"}) {
    ops::Reducer reducer;
    ops::ParseReducer(name, &reducer);
    bool all = true;
    for (int setting = 0; setting < 2 && all; ++setting)
      for (Scalar a : probes)
        for (Scalar b : probes) {
          llvm::SmallVector<Scalar> args(2 * n), out;
          for (size_t j = 0; j < n; ++j) args[j] = 1 + setting, args[n + j] = 2 - setting;
          args[k] = a, args[n + k] = b;
          if (!RunScalarBody(body, args, out) || out.size() != n) return "";
          const Scalar want = ops::WithReducer(reducer, [&](auto r) {
            constexpr ops::Reducer R = decltype(r)::value;
            return complex ? ops::Combine<R, Scalar>(a, b)
                           : Scalar(ops::Combine<R, double>(a.real(), b.real()));
          });
          all = all && Matches(out[k], want, reducer == ops::Reducer::kLogAddExp);
        }
    if (all) return name;
  }
  return "";
}

}  // namespace brt::bridge

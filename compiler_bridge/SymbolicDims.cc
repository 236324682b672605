#include "SymbolicDims.h"

#include <algorithm>
#include <cctype>

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace brt::bridge {

namespace {

int64_t PyFloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t PyMod(int64_t a, int64_t b) { return a - b * PyFloorDiv(a, b); }

// A recursive-descent reader of the expression grammar (docs/format.md).
class Reader {
 public:
  explicit Reader(llvm::StringRef text) : rest_(text) {}

  std::optional<SymDim> Whole() {
    std::optional<SymDim> e = Expr();
    Skip();
    if (!e || !rest_.empty()) return std::nullopt;
    return e;
  }

  // "name(a, b)": the function's name and arguments.
  bool Call(std::string& name, std::optional<SymDim>& a, std::optional<SymDim>& b) {
    name = Identifier();
    if (name.empty() || !Eat('(')) return false;
    a = Expr();
    if (!a || !Eat(',')) return false;
    b = Expr();
    return b && Eat(')') && (Skip(), rest_.empty());
  }

 private:
  void Skip() { rest_ = rest_.ltrim(); }
  bool Eat(char c) {
    Skip();
    if (!rest_.starts_with(std::string(1, c))) return false;
    rest_ = rest_.drop_front();
    return true;
  }
  std::string Identifier() {
    Skip();
    size_t n = 0;
    while (n < rest_.size() &&
           (std::isalpha(static_cast<unsigned char>(rest_[n])) || rest_[n] == '_' ||
            (n > 0 && std::isdigit(static_cast<unsigned char>(rest_[n])))))
      ++n;
    std::string name = rest_.take_front(n).str();
    rest_ = rest_.drop_front(n);
    return name;
  }
  std::optional<SymDim> Expr() {
    std::optional<SymDim> sum = Term();
    while (sum) {
      if (Eat('+')) {
        std::optional<SymDim> t = Term();
        if (!t) return std::nullopt;
        sum = *sum + *t;
      } else if (Eat('-')) {
        std::optional<SymDim> t = Term();
        if (!t) return std::nullopt;
        sum = *sum - *t;
      } else {
        break;
      }
    }
    return sum;
  }
  std::optional<SymDim> Term() {
    std::optional<SymDim> product = Factor();
    while (product && Eat('*')) {
      std::optional<SymDim> f = Factor();
      if (!f) return std::nullopt;
      product = *product * *f;
    }
    return product;
  }
  std::optional<SymDim> Factor() {
    Skip();
    if (Eat('-')) {
      std::optional<SymDim> f = Factor();
      if (!f) return std::nullopt;
      return SymDim(0) - *f;
    }
    if (Eat('(')) {
      std::optional<SymDim> e = Expr();
      if (!e || !Eat(')')) return std::nullopt;
      return e;
    }
    if (!rest_.empty() && std::isdigit(static_cast<unsigned char>(rest_[0]))) {
      size_t n = 0;
      while (n < rest_.size() && std::isdigit(static_cast<unsigned char>(rest_[n]))) ++n;
      int64_t value = 0;
      if (n > 18 || rest_.take_front(n).getAsInteger(10, value)) return std::nullopt;
      rest_ = rest_.drop_front(n);
      return SymDim(value);
    }
    std::string name = Identifier();
    if (name.empty()) return std::nullopt;
    Skip();
    if (!rest_.starts_with("(")) return SymDim::Symbol(name);
    Eat('(');
    std::optional<SymDim> a = Expr();
    if (!a || !Eat(',')) return std::nullopt;
    std::optional<SymDim> b = Expr();
    if (!b || !Eat(')')) return std::nullopt;
    if (name == "floordiv") return SymDim::FloorDiv(*a, *b);
    if (name == "ceildiv") return SymDim::CeilDiv(*a, *b);
    if (name == "mod") return SymDim::Mod(*a, *b);
    if (name == "min") return SymDim::Min(*a, *b);
    if (name == "max") return SymDim::Max(*a, *b);
    return std::nullopt;
  }

  llvm::StringRef rest_;
};

thread_local std::map<std::string, int64_t> lower_bounds, upper_bounds;

// An atom's bounds: a symbol is >= 1 and at most its upper bound; a
// function of others by its kind.
std::optional<int64_t> AtomBound(const std::string& atom, bool upper) {
  std::string name;
  std::optional<SymDim> a, b;
  if (!Reader(atom).Call(name, a, b)) {  // a symbol
    if (!upper) {
      auto it = lower_bounds.find(atom);
      return it == lower_bounds.end() ? 1 : it->second;
    }
    auto it = upper_bounds.find(atom);
    return it == upper_bounds.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }
  auto bound = [&](const SymDim& d) { return upper ? d.UpperBound() : d.LowerBound(); };
  const std::optional<int64_t> ba = bound(*a), bb = bound(*b), divisor = b->Constant();
  if (name == "mod" && divisor && *divisor > 0) return upper ? *divisor - 1 : 0;
  if ((name == "floordiv" || name == "ceildiv") && divisor && *divisor > 0 && ba)
    return name == "floordiv" ? PyFloorDiv(*ba, *divisor) : -PyFloorDiv(-*ba, *divisor);
  // min is at least the smaller lower bound and at most either upper bound.
  if (name == (upper ? "max" : "min") && ba && bb)
    return upper ? std::max(*ba, *bb) : std::min(*ba, *bb);
  if (name == (upper ? "min" : "max") && (ba || bb))
    return upper ? std::min(ba.value_or(*bb), bb.value_or(*ba))
                 : std::max(ba.value_or(*bb), bb.value_or(*ba));
  return std::nullopt;
}

// A sum's bound from its terms' (a non-negative monomial's bounds, scaled by
// the coefficient, whose sign picks which bound).
std::optional<int64_t> SumBound(const std::map<std::vector<std::string>, int64_t>& terms,
                                bool upper) {
  int64_t bound = 0;
  for (const auto& [monomial, coefficient] : terms) {
    const bool need_upper = upper == (coefficient > 0);
    int64_t product = 1;
    for (const std::string& atom : monomial) {
      std::optional<int64_t> lo = AtomBound(atom, false);
      std::optional<int64_t> b = need_upper ? AtomBound(atom, true) : lo;
      if (!lo || *lo < 0 || !b) return std::nullopt;
      product *= *b;
    }
    bound += coefficient * product;
  }
  return bound;
}

}  // namespace

SymDim::SymDim(int64_t constant) {
  if (constant != 0) terms_[{}] = constant;
}

SymDim SymDim::Atom(std::string text) {
  SymDim d;
  d.terms_[{std::move(text)}] = 1;
  return d;
}

SymDim SymDim::Symbol(llvm::StringRef name) { return Atom(name.str()); }

std::optional<SymDim> SymDim::Parse(llvm::StringRef text) { return Reader(text).Whole(); }

std::optional<int64_t> SymDim::Constant() const {
  if (terms_.empty()) return 0;
  if (terms_.size() == 1 && terms_.begin()->first.empty()) return terms_.begin()->second;
  return std::nullopt;
}

std::optional<int64_t> SymDim::LowerBound() const { return Bound(false); }

std::optional<int64_t> SymDim::UpperBound() const { return Bound(true); }

std::optional<int64_t> SymDim::Bound(bool upper) const {
  std::optional<int64_t> direct = SumBound(terms_, upper);
  const SymDim rewritten = FloorDivsAsMods();
  if (rewritten.terms_ == terms_) return direct;
  std::optional<int64_t> other = SumBound(rewritten.terms_, upper);
  if (!direct || !other) return direct ? direct : other;
  return upper ? std::min(*direct, *other) : std::max(*direct, *other);
}

SymDim SymDim::FloorDivsAsMods() const {
  SymDim out;
  for (const auto& [monomial, coefficient] : terms_) {
    std::string name;
    std::optional<SymDim> a, b;
    std::optional<int64_t> k;
    if (monomial.size() == 1 && Reader(monomial[0]).Call(name, a, b) && name == "floordiv" &&
        (k = b->Constant()) && *k > 0 && coefficient % *k == 0) {
      out = out + SymDim(coefficient / *k) * (*a - Mod(*a, *b));
      continue;
    }
    SymDim term;
    term.terms_[monomial] = coefficient;
    out = out + term;
  }
  return out;
}

void SymDim::SetBounds(std::map<std::string, int64_t> lower, std::map<std::string, int64_t> upper) {
  lower_bounds = std::move(lower);
  upper_bounds = std::move(upper);
}

std::string SymDim::Text() const {
  if (terms_.empty()) return "0";
  std::string out;
  auto term = [&](const Monomial& monomial, int64_t coefficient) {
    const int64_t magnitude = coefficient < 0 ? -coefficient : coefficient;
    if (out.empty())
      out += coefficient < 0 ? "-" : "";
    else
      out += coefficient < 0 ? " - " : " + ";
    if (monomial.empty() || magnitude != 1)
      out += std::to_string(magnitude) + (monomial.empty() ? "" : "*");
    for (size_t i = 0; i < monomial.size(); ++i) out += (i ? "*" : "") + monomial[i];
  };
  for (const auto& [monomial, coefficient] : terms_)
    if (!monomial.empty()) term(monomial, coefficient);
  if (auto it = terms_.find({}); it != terms_.end()) term({}, it->second);
  return out;
}

SymDim operator+(const SymDim& a, const SymDim& b) {
  SymDim sum = a;
  for (const auto& [monomial, coefficient] : b.terms_)
    if ((sum.terms_[monomial] += coefficient) == 0) sum.terms_.erase(monomial);
  return sum;
}

SymDim operator-(const SymDim& a, const SymDim& b) { return a + SymDim(-1) * b; }

SymDim operator*(const SymDim& a, const SymDim& b) {
  SymDim product;
  for (const auto& [ma, ca] : a.terms_)
    for (const auto& [mb, cb] : b.terms_) {
      SymDim::Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      if ((product.terms_[m] += ca * cb) == 0) product.terms_.erase(m);
    }
  return product;
}

SymDim SymDim::Function(llvm::StringRef name, const SymDim& a, const SymDim& b) {
  return Atom(name.str() + "(" + a.Text() + ", " + b.Text() + ")");
}

// With a positive constant divisor k, the terms whose coefficients k divides
// come out of the division: floordiv(k*q + r, k) = q + floordiv(r, k).
SymDim SymDim::FloorDiv(const SymDim& a, const SymDim& b) {
  const std::optional<int64_t> ca = a.Constant(), k = b.Constant();
  if (ca && k && *k != 0) return PyFloorDiv(*ca, *k);
  if (std::optional<SymDim> exact = a.DividedExactly(b)) return *exact;
  if (!k || *k <= 0) return Function("floordiv", a, b);
  SymDim quotient, rest;
  for (const auto& [monomial, coefficient] : a.terms_)
    (coefficient % *k == 0 ? quotient.terms_[monomial] = coefficient / *k
                           : rest.terms_[monomial] = coefficient);
  if (auto r = rest.Constant()) return quotient + PyFloorDiv(*r, *k);
  return quotient + Function("floordiv", rest, b);
}

// a / b when b is one term (2*s) that divides every term of a (6*b*s*s).
std::optional<SymDim> SymDim::DividedExactly(const SymDim& b) const {
  if (b.terms_.size() != 1 || b.terms_.begin()->first.empty() || b.terms_.begin()->second <= 0)
    return std::nullopt;
  const auto& [divisor, c] = *b.terms_.begin();
  SymDim quotient;
  for (const auto& [monomial, coefficient] : terms_) {
    if (coefficient % c != 0) return std::nullopt;
    Monomial rest = monomial;
    for (const std::string& atom : divisor) {
      auto it = std::find(rest.begin(), rest.end(), atom);
      if (it == rest.end()) return std::nullopt;
      rest.erase(it);
    }
    quotient.terms_[rest] = coefficient / c;
  }
  return quotient;
}

SymDim SymDim::CeilDiv(const SymDim& a, const SymDim& b) {
  const std::optional<int64_t> ca = a.Constant(), k = b.Constant();
  if (ca && k && *k != 0) return -PyFloorDiv(-*ca, *k);
  if (!k || *k <= 0) return Function("ceildiv", a, b);
  SymDim quotient, rest;
  for (const auto& [monomial, coefficient] : a.terms_)
    (coefficient % *k == 0 ? quotient.terms_[monomial] = coefficient / *k
                           : rest.terms_[monomial] = coefficient);
  if (auto r = rest.Constant()) return quotient + -PyFloorDiv(-*r, *k);
  return quotient + Function("ceildiv", rest, b);
}

SymDim SymDim::Mod(const SymDim& a, const SymDim& b) {
  const std::optional<int64_t> ca = a.Constant(), k = b.Constant();
  if (ca && k && *k != 0) return PyMod(*ca, *k);
  if (!k || *k <= 0) return Function("mod", a, b);
  SymDim rest;
  for (const auto& [monomial, coefficient] : a.terms_)
    if (coefficient % *k != 0) rest.terms_[monomial] = coefficient;
  if (auto r = rest.Constant()) return PyMod(*r, *k);
  return Function("mod", rest, b);
}

SymDim SymDim::Min(const SymDim& a, const SymDim& b) {
  if (auto d = (a - b).Constant()) return *d <= 0 ? a : b;
  if (auto d = (b - a).LowerBound(); d && *d >= 0) return a;
  if (auto d = (a - b).LowerBound(); d && *d >= 0) return b;
  return a.Text() < b.Text() ? Function("min", a, b) : Function("min", b, a);
}

SymDim SymDim::Max(const SymDim& a, const SymDim& b) {
  if (auto d = (a - b).Constant()) return *d >= 0 ? a : b;
  if (auto d = (a - b).LowerBound(); d && *d >= 0) return a;
  if (auto d = (b - a).LowerBound(); d && *d >= 0) return b;
  return a.Text() < b.Text() ? Function("max", a, b) : Function("max", b, a);
}

mlir::RankedTensorType SymbolicTensorType(llvm::ArrayRef<SymDim> dims, mlir::Type element) {
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<mlir::Attribute> texts;
  bool symbolic = false;
  mlir::Builder b(element.getContext());
  for (const SymDim& d : dims) {
    const std::optional<int64_t> c = d.Constant();
    shape.push_back(c ? *c : mlir::ShapedType::kDynamic);
    texts.push_back(b.getStringAttr(c ? "" : d.Text()));
    symbolic = symbolic || !c;
  }
  return mlir::RankedTensorType::get(shape, element, symbolic ? b.getArrayAttr(texts) : nullptr);
}

std::optional<llvm::SmallVector<SymDim>> SymbolicShape(mlir::Type type) {
  auto t = mlir::dyn_cast<mlir::RankedTensorType>(type);
  if (!t) return std::nullopt;
  auto texts = mlir::dyn_cast_or_null<mlir::ArrayAttr>(t.getEncoding());
  llvm::SmallVector<SymDim> dims;
  for (auto [i, size] : llvm::enumerate(t.getShape())) {
    if (!mlir::ShapedType::isDynamic(size)) {
      dims.push_back(size);
      continue;
    }
    if (!texts || texts.size() != static_cast<size_t>(t.getRank())) return std::nullopt;
    auto text = mlir::dyn_cast<mlir::StringAttr>(texts[i]);
    std::optional<SymDim> d = text ? SymDim::Parse(text.getValue()) : std::nullopt;
    if (!d) return std::nullopt;
    dims.push_back(*d);
  }
  return dims;
}

bool HasSymbolicDims(mlir::Type type) {
  auto t = mlir::dyn_cast<mlir::RankedTensorType>(type);
  return t && !t.hasStaticShape();
}

bool SameShape(mlir::Type a, mlir::Type b) {
  auto ta = mlir::dyn_cast<mlir::RankedTensorType>(a),
       tb = mlir::dyn_cast<mlir::RankedTensorType>(b);
  if (!ta || !tb || ta.getShape() != tb.getShape()) return false;
  if (ta.hasStaticShape()) return true;
  const std::optional<llvm::SmallVector<SymDim>> sa = SymbolicShape(a), sb = SymbolicShape(b);
  return sa && sb && *sa == *sb;
}

}  // namespace brt::bridge

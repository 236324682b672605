#include "dim_expr.h"

#include "brt/session.h"

#include <algorithm>
#include <cctype>

namespace brt::core {

namespace {

// Bounds for untrusted text: a dimension is a short formula.
constexpr size_t kMaxTextLength = 1024;
constexpr int kMaxDepth = 64;

Status Bad(std::string_view text, size_t at, const std::string& what) {
  return Status(StatusCode::kInvalidExecutable, "dimension expression '" + std::string(text) +
                                                    "': " + what + " at offset " +
                                                    std::to_string(at));
}

// floor(a / b) and its mod, for b != 0 (checked by the caller).
int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

}  // namespace

// Recursive descent into DimExpr's postfix program.
class DimExprParser {
 public:
  DimExprParser(std::string_view text, std::vector<std::string>* symbols, DimExpr* out)
      : text_(text), symbols_(symbols), out_(out) {}

  Status ParseAll() {
    if (text_.size() > kMaxTextLength)
      return Bad(text_.substr(0, 32), 0, "longer than " + std::to_string(kMaxTextLength));
    BRT_RETURN_IF_ERROR(Sum(0));
    Skip();
    if (at_ != text_.size())
      return Bad(text_, at_, "unexpected '" + std::string(1, text_[at_]) + "'");
    return Status::Ok();
  }

  // Parses one expression from the current position (for constraints).
  Status Sum(int depth) {
    if (depth > kMaxDepth) return Bad(text_, at_, "nested too deeply");
    BRT_RETURN_IF_ERROR(Product(depth));
    while (true) {
      Skip();
      if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) {
        const bool plus = text_[at_++] == '+';
        BRT_RETURN_IF_ERROR(Product(depth));
        Emit(plus ? DimExpr::Step::kAdd : DimExpr::Step::kSub);
      } else {
        return Status::Ok();
      }
    }
  }

  size_t at() const { return at_; }
  void set_at(size_t at) { at_ = at; }

 private:
  Status Product(int depth) {
    BRT_RETURN_IF_ERROR(Factor(depth));
    while (true) {
      Skip();
      if (at_ < text_.size() && text_[at_] == '*') {
        ++at_;
        BRT_RETURN_IF_ERROR(Factor(depth));
        Emit(DimExpr::Step::kMul);
      } else {
        return Status::Ok();
      }
    }
  }

  Status Factor(int depth) {
    if (depth > kMaxDepth) return Bad(text_, at_, "nested too deeply");
    Skip();
    if (at_ >= text_.size()) return Bad(text_, at_, "expected a number, symbol or '('");
    const char c = text_[at_];
    if (c == '-') {
      ++at_;
      BRT_RETURN_IF_ERROR(Factor(depth + 1));
      Emit(DimExpr::Step::kNegate);
      return Status::Ok();
    }
    if (c == '(') {
      ++at_;
      BRT_RETURN_IF_ERROR(Sum(depth + 1));
      return Expect(')');
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t value = 0;
      const size_t start = at_;
      while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) {
        if (__builtin_mul_overflow(value, 10, &value) ||
            __builtin_add_overflow(value, text_[at_] - '0', &value))
          return Bad(text_, start, "number out of range");
        ++at_;
      }
      Emit(DimExpr::Step::kConstant, value);
      return Status::Ok();
    }
    if (!std::isalpha(static_cast<unsigned char>(c)) && c != '_')
      return Bad(text_, at_, "unexpected '" + std::string(1, c) + "'");
    const size_t start = at_;
    while (at_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_'))
      ++at_;
    const std::string name(text_.substr(start, at_ - start));
    Skip();
    if (at_ < text_.size() && text_[at_] == '(') return Call(name, start, depth);
    auto it = std::find(symbols_->begin(), symbols_->end(), name);
    if (it == symbols_->end()) it = symbols_->insert(symbols_->end(), name);
    Emit(DimExpr::Step::kSymbol, it - symbols_->begin());
    return Status::Ok();
  }

  Status Call(const std::string& name, size_t start, int depth) {
    static const std::pair<const char*, DimExpr::Step> kFunctions[] = {
        {"floordiv", DimExpr::Step::kFloorDiv},
        {"ceildiv", DimExpr::Step::kCeilDiv},
        {"mod", DimExpr::Step::kMod},
        {"min", DimExpr::Step::kMin},
        {"max", DimExpr::Step::kMax}};
    const auto* f = std::find_if(std::begin(kFunctions), std::end(kFunctions),
                                 [&](const auto& e) { return name == e.first; });
    if (f == std::end(kFunctions))
      return Bad(text_, start,
                 "unknown function '" + name + "' (floordiv, ceildiv, mod, min, max)");
    ++at_;  // '('
    BRT_RETURN_IF_ERROR(Sum(depth + 1));
    BRT_RETURN_IF_ERROR(Expect(','));
    BRT_RETURN_IF_ERROR(Sum(depth + 1));
    BRT_RETURN_IF_ERROR(Expect(')'));
    Emit(f->second);
    return Status::Ok();
  }

  Status Expect(char c) {
    Skip();
    if (at_ >= text_.size() || text_[at_] != c)
      return Bad(text_, at_, std::string("expected '") + c + "'");
    ++at_;
    return Status::Ok();
  }
  void Skip() {
    while (at_ < text_.size() && text_[at_] == ' ') ++at_;
  }
  void Emit(DimExpr::Step step, int64_t operand = 0) { out_->program_.push_back({step, operand}); }

  std::string_view text_;
  std::vector<std::string>* symbols_;
  DimExpr* out_;
  size_t at_ = 0;
};

Expected<DimExpr> DimExpr::Parse(std::string_view text, std::vector<std::string>* symbols) {
  DimExpr e;
  e.text_ = std::string(text);
  DimExprParser parser(text, symbols, &e);
  BRT_RETURN_IF_ERROR(parser.ParseAll());
  return e;
}

int DimExpr::AsSymbol() const {
  return program_.size() == 1 && program_[0].step == Step::kSymbol
             ? static_cast<int>(program_[0].operand)
             : -1;
}

Expected<int64_t> DimExpr::Evaluate(const std::vector<int64_t>& symbol_values) const {
  int64_t stack[2 * kMaxDepth + 8];
  int top = 0;
  auto fail = [&](const std::string& why) {
    return Status(StatusCode::kInvalidArgument, "dimension '" + text_ + "': " + why);
  };
  for (const Instruction& in : program_) {
    if (in.step == Step::kConstant || in.step == Step::kSymbol) {
      if (top == static_cast<int>(std::size(stack))) return fail("too many terms");
      stack[top++] = in.step == Step::kConstant ? in.operand : symbol_values.at(in.operand);
      continue;
    }
    if (in.step == Step::kNegate) {
      if (__builtin_sub_overflow(int64_t{0}, stack[top - 1], &stack[top - 1]))
        return fail("overflows");
      continue;
    }
    const int64_t b = stack[--top];
    int64_t& a = stack[top - 1];
    bool overflow = false;
    switch (in.step) {
      case Step::kAdd:
        overflow = __builtin_add_overflow(a, b, &a);
        break;
      case Step::kSub:
        overflow = __builtin_sub_overflow(a, b, &a);
        break;
      case Step::kMul:
        overflow = __builtin_mul_overflow(a, b, &a);
        break;
      case Step::kFloorDiv:
      case Step::kCeilDiv:
      case Step::kMod: {
        if (b == 0) return fail("divides by zero");
        if (b == -1 && a == INT64_MIN) return fail("overflows");
        const int64_t q = FloorDiv(a, b);
        if (in.step == Step::kMod)
          a -= q * b;
        else
          a = in.step == Step::kFloorDiv ? q : -FloorDiv(-a, b);
        break;
      }
      case Step::kMin:
        a = std::min(a, b);
        break;
      case Step::kMax:
        a = std::max(a, b);
        break;
      default:
        break;
    }
    if (overflow) return fail("overflows");
  }
  return stack[0];
}

Expected<DimConstraint> DimConstraint::Parse(std::string_view text,
                                             std::vector<std::string>* symbols) {
  static const char* kRelations[] = {">=", "<=", "==", "!=", ">", "<"};
  for (const char* relation : kRelations) {
    const size_t at = text.find(relation);
    if (at == std::string_view::npos) continue;
    DimConstraint c;
    c.text_ = std::string(text);
    c.relation_ = relation;
    auto lhs = DimExpr::Parse(text.substr(0, at), symbols);
    if (!lhs.ok())
      return Status(lhs.status().code(), "constraint '" + c.text_ + "': " + lhs.status().message());
    auto rhs = DimExpr::Parse(text.substr(at + c.relation_.size()), symbols);
    if (!rhs.ok())
      return Status(rhs.status().code(), "constraint '" + c.text_ + "': " + rhs.status().message());
    c.lhs_ = std::move(*lhs);
    c.rhs_ = std::move(*rhs);
    return c;
  }
  return Status(StatusCode::kInvalidExecutable,
                "constraint '" + std::string(text) + "' has no relation (>=, <=, ==, !=, >, <)");
}

Status DimConstraint::Check(const std::vector<int64_t>& values,
                            const std::vector<std::string>& names) const {
  auto lhs = lhs_.Evaluate(values);
  if (!lhs.ok()) return lhs.status();
  auto rhs = rhs_.Evaluate(values);
  if (!rhs.ok()) return rhs.status();
  const int64_t a = *lhs, b = *rhs;
  const bool holds = relation_ == ">="   ? a >= b
                     : relation_ == "<=" ? a <= b
                     : relation_ == "==" ? a == b
                     : relation_ == "!=" ? a != b
                     : relation_ == ">"  ? a > b
                                         : a < b;
  if (holds) return Status::Ok();
  std::string given;
  for (size_t s = 0; s < names.size() && s < values.size(); ++s)
    given += (given.empty() ? "" : ", ") + names[s] + " = " + std::to_string(values[s]);
  return Status(StatusCode::kInvalidArgument,
                "shape constraint '" + text_ + "' does not hold (" + std::to_string(a) + " " +
                    relation_ + " " + std::to_string(b) + " is false with " + given + ")");
}

}  // namespace brt::core

namespace brt {

Expected<int64_t> DimSize(const Dim& dim, const std::map<std::string, int64_t>& symbols) {
  if (dim.is_static()) return dim.size;
  std::vector<std::string> names;
  auto expr = core::DimExpr::Parse(dim.symbol, &names);
  if (!expr.ok()) return expr.status();
  std::vector<int64_t> values;
  for (const std::string& name : names) {
    auto it = symbols.find(name);
    if (it == symbols.end())
      return Status(StatusCode::kInvalidArgument,
                    "dimension '" + dim.symbol + "' needs a value for symbol '" + name + "'");
    values.push_back(it->second);
  }
  return expr->Evaluate(values);
}

}  // namespace brt

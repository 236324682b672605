// Symbolic dimension sizes and the constraints between them (format 1.6,
// docs/format.md): a dimension's symbol is an integer expression of the
// function's symbols, which the bound inputs fix. Parsed once at load,
// evaluated per set of symbol values. Files are untrusted: every parse error
// says what and where, and evaluation refuses overflow and division by zero.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "brt/status.h"

namespace brt::core {

// Grammar: sums and differences of products of factors; a factor is a
// non-negative integer, a symbol (a letter or '_' then letters, digits, '_'),
// a unary minus, a parenthesized expression, or one of floordiv(a, b),
// ceildiv(a, b), mod(a, b) (the result has b's sign, as in Python and JAX),
// min(a, b), max(a, b). "b", "2*b", "s + 1", "ceildiv(s, 8)*8".
class DimExpr {
 public:
  // Symbols are numbered by their place in *symbols; new ones are appended.
  static Expected<DimExpr> Parse(std::string_view text, std::vector<std::string>* symbols);

  // The value for these symbol values (indexed as Parse numbered them).
  Expected<int64_t> Evaluate(const std::vector<int64_t>& symbol_values) const;

  // The symbol's index when the expression is a symbol alone, else -1.
  int AsSymbol() const;
  const std::string& text() const { return text_; }

 private:
  enum class Step : uint8_t {
    kConstant,
    kSymbol,
    kNegate,
    kAdd,
    kSub,
    kMul,
    kFloorDiv,
    kCeilDiv,
    kMod,
    kMin,
    kMax
  };
  struct Instruction {
    Step step;
    int64_t operand;  // the constant, or the symbol's index
  };
  friend class DimExprParser;
  std::vector<Instruction> program_;  // postfix
  std::string text_;
};

// "lhs OP rhs" with OP one of >=, <=, ==, >, <, != over two DimExprs, e.g.
// "b >= 1" or "mod(s, 8) == 0".
class DimConstraint {
 public:
  static Expected<DimConstraint> Parse(std::string_view text, std::vector<std::string>* symbols);
  // OK when it holds; otherwise an error naming the constraint and the
  // symbols' values.
  Status Check(const std::vector<int64_t>& symbol_values,
               const std::vector<std::string>& symbol_names) const;
  const std::string& text() const { return text_; }

 private:
  DimExpr lhs_, rhs_;
  std::string relation_;
  std::string text_;
};

}  // namespace brt::core

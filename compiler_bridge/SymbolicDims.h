// Symbolic dimension sizes in the bridge: integer polynomials in a
// function's dimension symbols ("b", "2*b*s + 1"), with floordiv, ceildiv and
// mod by constants and min/max kept as atoms ("floordiv(s + 7, 8)"). They
// are canonical, so equal sizes compare equal and print the same text; that
// text is what the runtime's expression parser reads (docs/format.md).
//
// A tensor type carries its symbolic sizes in its encoding: an array of
// strings, one per dimension, "" for a static one (`tensor<?x16xf32,
// ["b", ""]>`), so passes that keep types keep the expressions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "mlir/IR/BuiltinTypes.h"

namespace brt::bridge {

class SymDim {
 public:
  SymDim(int64_t constant = 0);  // NOLINT: implicit so constants read as sizes
  static SymDim Symbol(llvm::StringRef name);
  // Parses what Text() prints (and the runtime's grammar); nullopt if malformed.
  static std::optional<SymDim> Parse(llvm::StringRef text);

  std::optional<int64_t> Constant() const;
  // Bounds, taking every symbol to be at least its lower bound (1 unless set:
  // JAX asserts it) and at most its upper bound where one is set; nullopt
  // when unknown.
  std::optional<int64_t> LowerBound() const;
  std::optional<int64_t> UpperBound() const;
  // Bounds of symbols (torch.export Dims' max; 0 for a dimension that is no
  // named symbol) for the program being imported, on this thread; they
  // decide comparisons and simplify min/max.
  static void SetBounds(std::map<std::string, int64_t> lower, std::map<std::string, int64_t> upper);
  std::string Text() const;
  bool operator==(const SymDim& other) const { return terms_ == other.terms_; }

  friend SymDim operator+(const SymDim& a, const SymDim& b);
  friend SymDim operator-(const SymDim& a, const SymDim& b);
  friend SymDim operator*(const SymDim& a, const SymDim& b);
  // Python's floor division and modulo (the result has the divisor's sign).
  static SymDim FloorDiv(const SymDim& a, const SymDim& b);
  static SymDim CeilDiv(const SymDim& a, const SymDim& b);
  static SymDim Mod(const SymDim& a, const SymDim& b);
  static SymDim Min(const SymDim& a, const SymDim& b);
  static SymDim Max(const SymDim& a, const SymDim& b);
  // *this / b when b is one term that divides every term exactly.
  std::optional<SymDim> DividedExactly(const SymDim& b) const;

 private:
  using Monomial = std::vector<std::string>;  // sorted atoms; empty: the constant term
  static SymDim Atom(std::string text);
  static SymDim Function(llvm::StringRef name, const SymDim& a, const SymDim& b);
  // The same value with each k*c*floordiv(a, k) written c*(a - mod(a, k)),
  // whose bounds can be tighter: 2*floordiv(h, 2) - h + 2*mod(h, 2) is
  // mod(h, 2) >= 0.
  SymDim FloorDivsAsMods() const;
  std::optional<int64_t> Bound(bool upper) const;
  std::map<Monomial, int64_t> terms_;  // no zero coefficients
};

// A ranked tensor type of these sizes: `?` where a size is symbolic, with the
// expressions in its encoding; a plain static type when none is.
mlir::RankedTensorType SymbolicTensorType(llvm::ArrayRef<SymDim> dims, mlir::Type element);

// A ranked tensor type's sizes (constants where static); nullopt when a
// dynamic dimension has no expression (a type no importer refined).
std::optional<llvm::SmallVector<SymDim>> SymbolicShape(mlir::Type type);

// Whether the type is a ranked tensor with a dynamic dimension.
bool HasSymbolicDims(mlir::Type type);

// Whether a and b are ranked tensors of the same sizes, a symbolic size
// compared by its expression (`?` of b and `?` of 2*b differ; one without an
// expression equals nothing). Passes compare shapes by this, never by
// getShape(), whose `?`s all look alike.
bool SameShape(mlir::Type a, mlir::Type b);

}  // namespace brt::bridge

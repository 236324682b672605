// CHLO ops without a runtime op of their own (the special functions
// chlo.digamma, zeta, polygamma, bessel_i1e and next_after, and the integer
// chlo.mulhi), written out as the elementwise brt kernels the
// CHLO-to-StableHLO legalization would make, so that brt computes what XLA
// does and every provider runs them (fusion makes one kernel of each
// expansion's float arithmetic).
#pragma once

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace brt::bridge {

// Builds elementwise brt kernels over tensors of one shape at one location.
// Constants are scalars (the runtime broadcasts them).
class Elementwise {
 public:
  Elementwise(mlir::OpBuilder& b, mlir::Location loc, llvm::ArrayRef<int64_t> shape)
      : b_(b), loc_(loc), shape_(shape) {}

  // A scalar of `element` (float or integer) holding `value`.
  mlir::Value Constant(mlir::Type element, double value);
  mlir::Value IntConstant(mlir::Type element, int64_t value);
  // A kernel of `kind` whose result has the shape and the element type of
  // `operands[result_like]`.
  mlir::Value Op(llvm::StringRef kind, mlir::ValueRange operands, unsigned result_like = 0);
  // compare -> i1; convert and bitcast_convert -> `element`.
  mlir::Value Compare(mlir::Value a, mlir::Value b, llvm::StringRef direction);
  mlir::Value Convert(mlir::Value v, mlir::Type element, llvm::StringRef kind = "convert");
  mlir::Value Select(mlir::Value pred, mlir::Value a, mlir::Value b) {
    return Op("select", {pred, a, b}, 1);
  }

  mlir::OpBuilder& builder() { return b_; }

 private:
  mlir::Value Scalar(mlir::TypedAttr value);

  mlir::OpBuilder& b_;
  mlir::Location loc_;
  llvm::SmallVector<int64_t> shape_;
};

// x, q, n, y: tensors of the Elementwise's shape, all of one float type,
// f32 or f64 (the importer computes 16-bit floats in f32, as XLA does).
mlir::Value ExpandDigamma(Elementwise& e, mlir::Value x);
// Hurwitz zeta(x, q) = sum over k >= 0 of (q + k)^-x.
mlir::Value ExpandZeta(Elementwise& e, mlir::Value x, mlir::Value q);
// exp(-|x|) I1(x), the modified Bessel function of the first kind of order 1.
mlir::Value ExpandBesselI1e(Elementwise& e, mlir::Value x);
// The n-th derivative of digamma; NaN where n is not a natural number.
mlir::Value ExpandPolygamma(Elementwise& e, mlir::Value n, mlir::Value x);
// The next value after x towards y in the element type `element` (f16, bf16,
// f32 or f64), computed on the bits of x and y, which are of type `element`
// or, for 16-bit elements, f32 values converted exactly from it.
mlir::Value ExpandNextAfter(Elementwise& e, mlir::Value x, mlir::Value y, mlir::Type element);
// The high half of the double-width product of integers a and b (signed or
// unsigned, 8 to 64 bits), as JAX's Philox PRNGs use it.
mlir::Value ExpandMulhi(Elementwise& e, mlir::Value a, mlir::Value b);

}  // namespace brt::bridge

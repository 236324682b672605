// The checks of the complex-only ops, shared by the CPU provider and the CUDA
// provider's own kernels: real, imag and abs of a complex operand (a result
// of its part type), complex of two parts, and real and imag of a real
// operand (itself, and zeros). Header-only.
#pragma once

#include <cstdint>
#include <string>

#include "ops/op_info.h"

namespace brt::ops {

// The real dtype of a c64 (c128) number's parts: f32 (f64).
inline int32_t ComplexPartDType(int32_t complex_dtype) {
  return complex_dtype == BRT_DTYPE_C64 ? BRT_DTYPE_F32 : BRT_DTYPE_F64;
}

// real, imag, abs: one complex operand, a result of its part type and shape.
inline void CheckComplexToReal(const OpInfo& op) {
  op.RequireOperands(1);
  const int32_t from = op.in[0].dtype;
  op.Require(op.out[0].dtype == ComplexPartDType(from),
             std::string("the result of a ") + DTypeName(from) + " operand is " +
                 DTypeName(ComplexPartDType(from)) + ", got " + DTypeName(op.out[0].dtype));
  op.RequireShapeOfResult(0);
}

// complex(real, imag): two operands of the result's part type and shape.
inline void CheckMakeComplex(const OpInfo& op) {
  op.RequireOperands(2);
  const int32_t part = ComplexPartDType(op.out[0].dtype);
  for (int i = 0; i < 2; ++i) {
    op.Require(op.in[i].dtype == part, std::string("a ") + DTypeName(op.out[0].dtype) +
                                           " result takes " + DTypeName(part) + " parts, operand " +
                                           std::to_string(i) + " is " + DTypeName(op.in[i].dtype));
    op.RequireShapeOfResult(i);
  }
}

// real and imag of a real operand: its dtype and shape.
inline void CheckRealOfReal(const OpInfo& op) {
  op.RequireOperands(1);
  op.RequireSameDTypes();
  op.RequireShapeOfResult(0);
}

}  // namespace brt::ops

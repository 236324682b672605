// Bodies of reduce, reduce_window, scatter and sort run on scalars at import
// time, to tell what they compute where it is written out of several ops.
#pragma once

#include <complex>
#include <string>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/Types.h"

namespace brt::bridge {

// A body's scalar: real values have imaginary part 0; doubles keep an f32's
// -0 and the sign of its NaN.
using Scalar = std::complex<double>;

// Runs a body on scalars: fills `results` with what it returns, or returns
// false where it holds an op this does not know.
bool RunScalarBody(mlir::Block& body, llvm::ArrayRef<Scalar> args,
                   llvm::SmallVectorImpl<Scalar>& results);

// The reducer (ops::ParseReducer's name) that result k of a body over n
// operands (arguments: the n accumulators, then the n values) computes from
// accumulator k and value k alone, where their element type is a float or
// complex one: "max" or "min" (complex numbers by ops::ComplexLess's order)
// or "logaddexp" (ops::LogAddExp), as JAX writes them out of several ops
// (complex maximum and minimum, lax.cumlogsumexp). Told by running the body
// on probe values, the other operands at two settings, against
// ops::Combine; "" where none matches.
std::string ProbedReducer(mlir::Block& body, mlir::Type element, size_t k = 0, size_t n = 1);

}  // namespace brt::bridge

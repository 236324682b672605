// Op plans (see op_plans.h) for the linear algebra kinds: cholesky,
// triangular_solve and lu, batched over every dimension but the last two.
#include <algorithm>

#include "ops/op_attrs.h"
#include "ops/op_plans.h"

namespace brt::ops {
namespace {

// The problems in a [batch..., rows, cols] tensor, and checks its rank.
int64_t Batch(const OpInfo& op, const TensorInfo& t, const std::string& what) {
  op.Require(t.rank() >= 2, what + " " + FormatDims(t.dims) + " has fewer than two dimensions");
  int64_t batch = 1;
  for (int d = 0; d + 2 < t.rank(); ++d) batch = op.Mul(batch, t.dims[d]);
  return batch;
}

}  // namespace

CholeskyPlan PlanCholesky(const OpInfo& op) {
  op.RequireOperands(1);
  op.RequireSameDTypes();
  const TensorInfo& a = op.in[0];
  op.Require(op.out[0].dims == a.dims, "result " + FormatDims(op.out[0].dims) +
                                           " differs from operand " + FormatDims(a.dims));
  CholeskyPlan p;
  p.batch = Batch(op, a, "operand");
  p.n = a.dims[a.rank() - 1];
  op.Require(a.dims[a.rank() - 2] == p.n,
             "operand " + FormatDims(a.dims) + " is not a batch of square matrices");
  p.lower = Decode<CholeskyAttrs>(op).lower != 0;
  return p;
}

TriangularSolvePlan PlanTriangularSolve(const OpInfo& op) {
  op.RequireOperands(2);
  op.RequireSameDTypes();
  const TensorInfo &a = op.in[0], &b = op.in[1];
  op.Require(op.out[0].dims == b.dims,
             "result " + FormatDims(op.out[0].dims) + " differs from b " + FormatDims(b.dims));
  const TriangularSolveAttrs attrs = Decode<TriangularSolveAttrs>(op);
  TriangularSolvePlan p;
  p.batch = Batch(op, b, "b");
  Batch(op, a, "a");
  const int r = a.rank();
  op.Require(r == b.rank() && std::equal(a.dims.begin(), a.dims.end() - 2, b.dims.begin()),
             "a " + FormatDims(a.dims) + " and b " + FormatDims(b.dims) +
                 " have different batch dimensions");
  p.k = a.dims[r - 1], p.m = b.dims[r - 2], p.n = b.dims[r - 1];
  p.left_side = attrs.left_side != 0;
  op.Require(a.dims[r - 2] == p.k && p.k == (p.left_side ? p.m : p.n),
             "a " + FormatDims(a.dims) + " is not a batch of square matrices matching b " +
                 FormatDims(b.dims) + (p.left_side ? "'s rows" : "'s columns"));
  p.lower = attrs.lower != 0;
  p.unit_diagonal = attrs.unit_diagonal != 0;
  const std::string& t = attrs.transpose_a;
  op.Require(t == "NO_TRANSPOSE" || t == "TRANSPOSE" || t == "ADJOINT",
             "transpose_a must be NO_TRANSPOSE, TRANSPOSE or ADJOINT, got '" + t + "'");
  // The adjoint of a real matrix is its transpose.
  p.transpose = t != "NO_TRANSPOSE";
  p.conjugate = t == "ADJOINT";
  return p;
}

LuPlan PlanLu(const OpInfo& op) {
  op.Require(op.in.size() == 1 && op.out.size() == 2,
             "expects one operand and two results (the factors and the pivots)");
  const TensorInfo &a = op.in[0], &pivots = op.out[1];
  op.Require(op.out[0].dims == a.dims && op.out[0].dtype == a.dtype,
             "result 0 must have the operand's type");
  LuPlan p;
  p.batch = Batch(op, a, "operand");
  p.m = a.dims[a.rank() - 2], p.n = a.dims[a.rank() - 1];
  std::vector<int64_t> want(a.dims.begin(), a.dims.end() - 2);
  want.push_back(std::min(p.m, p.n));
  op.Require(pivots.dtype == BRT_DTYPE_I32 && pivots.dims == want,
             "the pivots must be i32 " + FormatDims(want) + ", got " + DTypeName(pivots.dtype) +
                 " " + FormatDims(pivots.dims));
  return p;
}

}  // namespace brt::ops

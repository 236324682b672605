// Op plans (see op_plans.h) for the linear algebra kinds: cholesky,
// triangular_solve, lu and the LAPACK decompositions after it (eigh, svd,
// geqrf, householder_product, eig, hessenberg, tridiagonal,
// tridiagonal_solve), batched over every dimension but the last two.
#include <algorithm>
#include <initializer_list>
#include <tuple>

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

// The real type of a complex dtype; `dtype` itself otherwise.
int32_t RealPart(int32_t dtype) {
  return dtype == BRT_DTYPE_C64 ? BRT_DTYPE_F32 : dtype == BRT_DTYPE_C128 ? BRT_DTYPE_F64 : dtype;
}
// The complex type of a real dtype; `dtype` itself otherwise.
int32_t WithImaginaryPart(int32_t dtype) {
  return dtype == BRT_DTYPE_F32 ? BRT_DTYPE_C64 : dtype == BRT_DTYPE_F64 ? BRT_DTYPE_C128 : dtype;
}

// Operand 0's leading (batch) dims followed by `tail`.
std::vector<int64_t> BatchDims(const OpInfo& op, std::initializer_list<int64_t> tail) {
  const std::vector<int64_t>& a = op.in[0].dims;
  std::vector<int64_t> dims(a.begin(), a.end() - 2);
  dims.insert(dims.end(), tail);
  return dims;
}

void RequireArity(const OpInfo& op, size_t operands, size_t results) {
  op.Require(op.in.size() == operands && op.out.size() == results,
             "expected " + std::to_string(operands) + " operand(s) and " + std::to_string(results) +
                 " results, got " + std::to_string(op.in.size()) + " and " +
                 std::to_string(op.out.size()));
}

void RequireResult(const OpInfo& op, size_t i, int32_t dtype, const std::vector<int64_t>& dims,
                   const std::string& what) {
  const TensorInfo& t = op.out[i];
  op.Require(t.dtype == dtype && t.dims == dims,
             "result " + std::to_string(i) + " (" + what + ") must be " + DTypeName(dtype) + " " +
                 FormatDims(dims) + ", got " + DTypeName(t.dtype) + " " + FormatDims(t.dims));
}

// The batch, rows and columns of operand 0, a batch of matrices, and checks
// the arity.
std::tuple<int64_t, int64_t, int64_t> MatrixOperand(const OpInfo& op, size_t operands,
                                                    size_t results) {
  RequireArity(op, operands, results);
  const TensorInfo& a = op.in[0];
  return {Batch(op, a, "operand"), a.dims[a.rank() - 2], a.dims[a.rank() - 1]};
}

// The batch and order of the one operand, a batch of square matrices.
std::pair<int64_t, int64_t> SquareOperand(const OpInfo& op, size_t results) {
  const auto [batch, m, n] = MatrixOperand(op, 1, results);
  op.Require(m == n, "operand " + FormatDims(op.in[0].dims) + " is not a batch of square matrices");
  return {batch, n};
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

SymmetricPlan PlanEigh(const OpInfo& op) {
  SymmetricPlan p;
  std::tie(p.batch, p.n) = SquareOperand(op, 3);
  const int32_t dtype = op.in[0].dtype;
  RequireResult(op, 0, dtype, op.in[0].dims, "eigenvectors");
  RequireResult(op, 1, RealPart(dtype), BatchDims(op, {p.n}), "eigenvalues");
  RequireResult(op, 2, BRT_DTYPE_I32, BatchDims(op, {}), "info");
  p.lower = Decode<EighAttrs>(op).lower != 0;
  return p;
}

SymmetricPlan PlanTridiagonal(const OpInfo& op) {
  SymmetricPlan p;
  std::tie(p.batch, p.n) = SquareOperand(op, 4);
  const int32_t dtype = op.in[0].dtype;
  const int64_t off = std::max<int64_t>(p.n - 1, 0);
  RequireResult(op, 0, dtype, op.in[0].dims, "reduced matrix");
  RequireResult(op, 1, RealPart(dtype), BatchDims(op, {p.n}), "diagonal");
  RequireResult(op, 2, RealPart(dtype), BatchDims(op, {off}), "off-diagonal");
  RequireResult(op, 3, dtype, BatchDims(op, {off}), "taus");
  p.lower = Decode<TridiagonalAttrs>(op).lower != 0;
  return p;
}

SvdPlan PlanSvd(const OpInfo& op) {
  SvdPlan p;
  std::tie(p.batch, p.m, p.n) = MatrixOperand(op, 1, 4);
  p.k = std::min(p.m, p.n);
  const TensorInfo& a = op.in[0];
  const SvdAttrs attrs = Decode<SvdAttrs>(op);
  p.full_matrices = attrs.full_matrices != 0;
  p.compute_uv = attrs.compute_uv != 0;
  const int64_t u_cols = !p.compute_uv ? 0 : p.full_matrices ? p.m : p.k;
  const int64_t vt_rows = !p.compute_uv ? 0 : p.full_matrices ? p.n : p.k;
  RequireResult(op, 0, RealPart(a.dtype), BatchDims(op, {p.k}), "singular values");
  RequireResult(op, 1, a.dtype, BatchDims(op, {p.compute_uv ? p.m : 0, u_cols}), "u");
  RequireResult(op, 2, a.dtype, BatchDims(op, {vt_rows, p.compute_uv ? p.n : 0}), "vt");
  RequireResult(op, 3, BRT_DTYPE_I32, BatchDims(op, {}), "info");
  return p;
}

QrPlan PlanGeqrf(const OpInfo& op) {
  QrPlan p;
  std::tie(p.batch, p.m, p.n) = MatrixOperand(op, 1, 2);
  p.k = std::min(p.m, p.n);
  const TensorInfo& a = op.in[0];
  RequireResult(op, 0, a.dtype, a.dims, "factors");
  RequireResult(op, 1, a.dtype, BatchDims(op, {p.k}), "taus");
  return p;
}

QrPlan PlanHouseholderProduct(const OpInfo& op) {
  QrPlan p;
  std::tie(p.batch, p.m, p.n) = MatrixOperand(op, 2, 1);
  op.RequireSameDTypes();
  const TensorInfo &a = op.in[0], &taus = op.in[1];
  op.Require(taus.rank() == a.rank() - 1 &&
                 std::equal(a.dims.begin(), a.dims.end() - 2, taus.dims.begin()),
             "taus " + FormatDims(taus.dims) + " must have a's batch dimensions " +
                 FormatDims(a.dims) + " and one more");
  p.k = taus.dims.back();
  op.Require(p.m >= p.n && p.n >= p.k, "needs rows >= columns >= taus, got a " +
                                           FormatDims(a.dims) + " and taus " +
                                           FormatDims(taus.dims));
  RequireResult(op, 0, a.dtype, a.dims, "product");
  return p;
}

EigPlan PlanEig(const OpInfo& op) {
  EigPlan p;
  std::tie(p.batch, p.n) = SquareOperand(op, 4);
  const EigAttrs attrs = Decode<EigAttrs>(op);
  p.left = attrs.compute_left != 0;
  p.right = attrs.compute_right != 0;
  const int32_t complex = WithImaginaryPart(op.in[0].dtype);
  const int64_t l = p.left ? p.n : 0, r = p.right ? p.n : 0;
  RequireResult(op, 0, complex, BatchDims(op, {p.n}), "eigenvalues");
  RequireResult(op, 1, complex, BatchDims(op, {l, l}), "left eigenvectors");
  RequireResult(op, 2, complex, BatchDims(op, {r, r}), "right eigenvectors");
  RequireResult(op, 3, BRT_DTYPE_I32, BatchDims(op, {}), "info");
  return p;
}

HessenbergPlan PlanHessenberg(const OpInfo& op) {
  HessenbergPlan p;
  std::tie(p.batch, p.n) = SquareOperand(op, 2);
  RequireResult(op, 0, op.in[0].dtype, op.in[0].dims, "reduced matrix");
  RequireResult(op, 1, op.in[0].dtype, BatchDims(op, {std::max<int64_t>(p.n - 1, 0)}), "taus");
  return p;
}

TridiagonalSolvePlan PlanTridiagonalSolve(const OpInfo& op) {
  RequireArity(op, 4, 2);
  const TensorInfo& b = op.in[3];
  TridiagonalSolvePlan p;
  p.batch = Batch(op, b, "b");
  p.m = b.dims[b.rank() - 2], p.nrhs = b.dims[b.rank() - 1];
  std::vector<int64_t> diagonal(b.dims.begin(), b.dims.end() - 1);
  for (int i = 0; i < 3; ++i)
    op.Require(op.in[i].dtype == b.dtype && op.in[i].dims == diagonal,
               "operand " + std::to_string(i) + " must be " + DTypeName(b.dtype) + " " +
                   FormatDims(diagonal) + " (b " + FormatDims(b.dims) + "'s diagonal), got " +
                   DTypeName(op.in[i].dtype) + " " + FormatDims(op.in[i].dims));
  RequireResult(op, 0, b.dtype, b.dims, "solution");
  diagonal.pop_back();
  RequireResult(op, 1, BRT_DTYPE_I32, diagonal, "info");
  return p;
}

}  // namespace brt::ops

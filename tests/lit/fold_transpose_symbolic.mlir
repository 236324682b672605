// RUN: brt-opt %s --brt-fold-transpose-into-dot --canonicalize | FileCheck %s

// Attention's q @ k^T over heads split from [b, s, 4, 16], b and s symbolic
// (SymbolicDims.h): both transposes fold into the dot's dimension numbers.
// The pass compares no sizes, and the dot keeps its result type.
// CHECK-LABEL: func.func @symbolic_scores
// CHECK-NEXT: %[[D:.*]] = brt.dot_general(%arg0, %arg1) {lhs_batching_dimensions = array<i64: 0, 2>, lhs_contracting_dimensions = array<i64: 3>, rhs_batching_dimensions = array<i64: 0, 2>, rhs_contracting_dimensions = array<i64: 3>}
// CHECK-SAME: -> tensor<?x4x?x?xf32, ["b", "", "s", "s"]>
// CHECK-NEXT: return %[[D]]
func.func @symbolic_scores(%q: tensor<?x?x4x16xf32, ["b", "s", "", ""]>, %k: tensor<?x?x4x16xf32, ["b", "s", "", ""]>) -> tensor<?x4x?x?xf32, ["b", "", "s", "s"]> {
  %0 = brt.transpose(%q) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x16xf32, ["b", "s", "", ""]>) -> tensor<?x4x?x16xf32, ["b", "", "s", ""]>
  %1 = brt.transpose(%k) {permutation = array<i64: 0, 2, 3, 1>} : (tensor<?x?x4x16xf32, ["b", "s", "", ""]>) -> tensor<?x4x16x?xf32, ["b", "", "", "s"]>
  %2 = brt.dot_general(%0, %1) {lhs_batching_dimensions = array<i64: 0, 1>, lhs_contracting_dimensions = array<i64: 3>, rhs_batching_dimensions = array<i64: 0, 1>, rhs_contracting_dimensions = array<i64: 2>} : (tensor<?x4x?x16xf32, ["b", "", "s", ""]>, tensor<?x4x16x?xf32, ["b", "", "", "s"]>) -> tensor<?x4x?x?xf32, ["b", "", "s", "s"]>
  return %2 : tensor<?x4x?x?xf32, ["b", "", "s", "s"]>
}

// A transpose that swaps the lhs free dims [b, s] stays: the result's layout
// would change (the same rule as for static sizes).
// CHECK-LABEL: func.func @symbolic_free_dims_swapped
// CHECK: brt.transpose
func.func @symbolic_free_dims_swapped(%x: tensor<?x?x8xf32, ["b", "s", ""]>, %w: tensor<8x3xf32>) -> tensor<?x?x3xf32, ["s", "b", ""]> {
  %0 = brt.transpose(%x) {permutation = array<i64: 1, 0, 2>} : (tensor<?x?x8xf32, ["b", "s", ""]>) -> tensor<?x?x8xf32, ["s", "b", ""]>
  %1 = brt.dot_general(%0, %w) {lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x?x8xf32, ["s", "b", ""]>, tensor<8x3xf32>) -> tensor<?x?x3xf32, ["s", "b", ""]>
  return %1 : tensor<?x?x3xf32, ["s", "b", ""]>
}

// RUN: brt-opt %s --brt-fold-transpose-into-dot --canonicalize | FileCheck %s

// a.T @ b: the dot reads a with its contracting dimension remapped.
// CHECK-LABEL: func.func @lhs_transposed
// CHECK-NEXT: %[[D:.*]] = brt.dot_general(%arg0, %arg1) {lhs_contracting_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 0>}
// CHECK-NEXT: return %[[D]]
func.func @lhs_transposed(%a: tensor<6x5xf32>, %b: tensor<6x3xf32>) -> tensor<5x3xf32> {
  %0 = brt.transpose(%a) {permutation = array<i64: 1, 0>} : (tensor<6x5xf32>) -> tensor<5x6xf32>
  %1 = brt.dot_general(%0, %b) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<5x6xf32>, tensor<6x3xf32>) -> tensor<5x3xf32>
  return %1 : tensor<5x3xf32>
}

// Batch dims map too: [b, k, m] -> [b, m, k] contracted over k.
// CHECK-LABEL: func.func @batched
// CHECK: brt.dot_general(%arg0, %arg1) {lhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 1>
func.func @batched(%a: tensor<2x7x5xf32>, %b: tensor<2x7x3xf32>) -> tensor<2x5x3xf32> {
  %0 = brt.transpose(%a) {permutation = array<i64: 0, 2, 1>} : (tensor<2x7x5xf32>) -> tensor<2x5x7xf32>
  %1 = brt.dot_general(%0, %b) {lhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_batching_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<2x5x7xf32>, tensor<2x7x3xf32>) -> tensor<2x5x3xf32>
  return %1 : tensor<2x5x3xf32>
}

// Reordering two free dimensions changes the result layout: kept.
// CHECK-LABEL: func.func @free_dims_swapped
// CHECK: brt.transpose
func.func @free_dims_swapped(%a: tensor<3x4x6xf32>, %b: tensor<6x2xf32>) -> tensor<4x3x2xf32> {
  %0 = brt.transpose(%a) {permutation = array<i64: 1, 0, 2>} : (tensor<3x4x6xf32>) -> tensor<4x3x6xf32>
  %1 = brt.dot_general(%0, %b) {lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x3x6xf32>, tensor<6x2xf32>) -> tensor<4x3x2xf32>
  return %1 : tensor<4x3x2xf32>
}

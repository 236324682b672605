// RUN: brt-opt %s --brt-fuse-epilogues --canonicalize | FileCheck %s

// relu(x @ w + b) over [b, s, 8] rows, b and s symbolic (SymbolicDims.h),
// the bias folded to [1, 3]: bias and relu fuse, the bias reshaped to [3].
// CHECK-LABEL: func.func @symbolic_dense_relu
// CHECK-NEXT: %[[B:.*]] = brt.reshape(%arg2) : (tensor<1x3xf32>) -> tensor<3xf32>
// CHECK-NEXT: %[[M:.*]] = brt.matmul(%arg0, %arg1, %[[B]]) {activation = "relu"
// CHECK-SAME: -> tensor<?x?x3xf32, ["b", "s", ""]>
// CHECK-NEXT: return %[[M]]
func.func @symbolic_dense_relu(%x: tensor<?x?x8xf32, ["b", "s", ""]>, %w: tensor<8x3xf32>, %b: tensor<1x3xf32>) -> tensor<?x?x3xf32, ["b", "s", ""]> {
  %0 = brt.dot_general(%x, %w) {lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x?x8xf32, ["b", "s", ""]>, tensor<8x3xf32>) -> tensor<?x?x3xf32, ["b", "s", ""]>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<1x3xf32>) -> tensor<?x?x3xf32, ["b", "s", ""]>
  %2 = brt.add(%0, %1) : (tensor<?x?x3xf32, ["b", "s", ""]>, tensor<?x?x3xf32, ["b", "s", ""]>) -> tensor<?x?x3xf32, ["b", "s", ""]>
  %3 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %4 = brt.broadcast_in_dim(%3) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<?x?x3xf32, ["b", "s", ""]>
  %5 = brt.maximum(%2, %4) : (tensor<?x?x3xf32, ["b", "s", ""]>, tensor<?x?x3xf32, ["b", "s", ""]>) -> tensor<?x?x3xf32, ["b", "s", ""]>
  return %5 : tensor<?x?x3xf32, ["b", "s", ""]>
}

// PyTorch's linear on [b, s, 8] as a matmul of [b*s, 8], then exact GELU
// after the reshape back: the reshape that moves after the fused op keeps
// the expressions of its type.
// CHECK-LABEL: func.func @symbolic_linear_gelu
// CHECK-NEXT: %[[M:.*]] = brt.matmul(%arg0, %arg1, %arg2) {activation = "gelu"{{.*}} -> tensor<?x16xf32, ["b*s", ""]>
// CHECK-NEXT: %[[R:.*]] = brt.reshape(%[[M]]) : (tensor<?x16xf32, ["b*s", ""]>) -> tensor<?x?x16xf32, ["b", "s", ""]>
// CHECK-NEXT: return %[[R]]
func.func @symbolic_linear_gelu(%x: tensor<?x8xf32, ["b*s", ""]>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<?x?x16xf32, ["b", "s", ""]> {
  %0 = brt.dot_general(%x, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x8xf32, ["b*s", ""]>, tensor<8x16xf32>) -> tensor<?x16xf32, ["b*s", ""]>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<16xf32>) -> tensor<?x16xf32, ["b*s", ""]>
  %2 = brt.add(%0, %1) : (tensor<?x16xf32, ["b*s", ""]>, tensor<?x16xf32, ["b*s", ""]>) -> tensor<?x16xf32, ["b*s", ""]>
  %3 = brt.reshape(%2) : (tensor<?x16xf32, ["b*s", ""]>) -> tensor<?x?x16xf32, ["b", "s", ""]>
  %4 = brt.constant() {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
  %5 = brt.broadcast_in_dim(%4) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<?x?x16xf32, ["b", "s", ""]>
  %6 = brt.multiply(%3, %5) : (tensor<?x?x16xf32, ["b", "s", ""]>, tensor<?x?x16xf32, ["b", "s", ""]>) -> tensor<?x?x16xf32, ["b", "s", ""]>
  %7 = brt.constant() {value = dense<0.707106769> : tensor<f32>} : () -> tensor<f32>
  %8 = brt.broadcast_in_dim(%7) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<?x?x16xf32, ["b", "s", ""]>
  %9 = brt.multiply(%3, %8) : (tensor<?x?x16xf32, ["b", "s", ""]>, tensor<?x?x16xf32, ["b", "s", ""]>) -> tensor<?x?x16xf32, ["b", "s", ""]>
  %10 = brt.erf(%9) : (tensor<?x?x16xf32, ["b", "s", ""]>) -> tensor<?x?x16xf32, ["b", "s", ""]>
  %11 = brt.constant() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %12 = brt.broadcast_in_dim(%11) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<?x?x16xf32, ["b", "s", ""]>
  %13 = brt.add(%10, %12) : (tensor<?x?x16xf32, ["b", "s", ""]>, tensor<?x?x16xf32, ["b", "s", ""]>) -> tensor<?x?x16xf32, ["b", "s", ""]>
  %14 = brt.multiply(%13, %6) : (tensor<?x?x16xf32, ["b", "s", ""]>, tensor<?x?x16xf32, ["b", "s", ""]>) -> tensor<?x?x16xf32, ["b", "s", ""]>
  return %14 : tensor<?x?x16xf32, ["b", "s", ""]>
}

// A weight of n columns (symbolic) and a bias of n: the bias fuses.
// CHECK-LABEL: func.func @symbolic_bias
// CHECK-NEXT: %[[M:.*]] = brt.matmul(%arg0, %arg1, %arg2) {lhs_contracting_dimensions
// CHECK-NEXT: return %[[M]]
func.func @symbolic_bias(%x: tensor<4x8xf32>, %w: tensor<8x?xf32, ["", "n"]>, %b: tensor<?xf32, ["n"]>) -> tensor<4x?xf32, ["", "n"]> {
  %0 = brt.dot_general(%x, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x8xf32>, tensor<8x?xf32, ["", "n"]>) -> tensor<4x?xf32, ["", "n"]>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<?xf32, ["n"]>) -> tensor<4x?xf32, ["", "n"]>
  %2 = brt.add(%0, %1) : (tensor<4x?xf32, ["", "n"]>, tensor<4x?xf32, ["", "n"]>) -> tensor<4x?xf32, ["", "n"]>
  return %2 : tensor<4x?xf32, ["", "n"]>
}

// The same with a bias of 2*n, though both sizes read `?`: no bias of the
// product, so nothing fuses.
// CHECK-LABEL: func.func @symbolic_bias_differs
// CHECK-NOT: brt.matmul
func.func @symbolic_bias_differs(%x: tensor<4x8xf32>, %w: tensor<8x?xf32, ["", "n"]>, %b: tensor<?xf32, ["2*n"]>) -> tensor<4x?xf32, ["", "n"]> {
  %0 = brt.dot_general(%x, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x8xf32>, tensor<8x?xf32, ["", "n"]>) -> tensor<4x?xf32, ["", "n"]>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<?xf32, ["2*n"]>) -> tensor<4x?xf32, ["", "n"]>
  %2 = brt.add(%0, %1) : (tensor<4x?xf32, ["", "n"]>, tensor<4x?xf32, ["", "n"]>) -> tensor<4x?xf32, ["", "n"]>
  return %2 : tensor<4x?xf32, ["", "n"]>
}

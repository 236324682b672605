// RUN: brt-opt %s --brt-fuse-layer-norm --canonicalize | FileCheck %s

// fuse_layer_norm.mlir's layer norm over [b, 8], b symbolic (SymbolicDims.h):
// the last dim is static, so the divisor 8 is its size; one brt.layer_norm
// of x's type.
// CHECK-LABEL: func.func @symbolic_batch
// CHECK-NEXT: %[[N:.*]] = brt.layer_norm(%arg0, %arg1, %arg2) {epsilon = 9.99999974{{[0-9]*}}E-6 : f64}
// CHECK-SAME: -> tensor<?x8xf32, ["b", ""]>
// CHECK-NEXT: return %[[N]]
func.func @symbolic_batch(%arg0: tensor<?x8xf32, ["b", ""]>, %arg1: tensor<8xf32>, %arg2: tensor<8xf32>) -> tensor<?x8xf32, ["b", ""]> {
  %0 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %1 = brt.reduce(%arg0, %0) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<?x8xf32, ["b", ""]>, tensor<f32>) -> tensor<?xf32, ["b"]>
  %2 = brt.broadcast_in_dim(%1) {broadcast_dimensions = array<i64: 0>} : (tensor<?xf32, ["b"]>) -> tensor<?x1xf32, ["b", ""]>
  %3 = brt.constant() {value = dense<8.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %4 = brt.broadcast_in_dim(%3) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<?x1xf32, ["b", ""]>
  %5 = brt.divide(%2, %4) : (tensor<?x1xf32, ["b", ""]>, tensor<?x1xf32, ["b", ""]>) -> tensor<?x1xf32, ["b", ""]>
  %6 = brt.broadcast_in_dim(%5) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x1xf32, ["b", ""]>) -> tensor<?x8xf32, ["b", ""]>
  %7 = brt.subtract(%arg0, %6) : (tensor<?x8xf32, ["b", ""]>, tensor<?x8xf32, ["b", ""]>) -> tensor<?x8xf32, ["b", ""]>
  %8 = brt.multiply(%7, %7) : (tensor<?x8xf32, ["b", ""]>, tensor<?x8xf32, ["b", ""]>) -> tensor<?x8xf32, ["b", ""]>
  %9 = brt.reduce(%8, %0) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<?x8xf32, ["b", ""]>, tensor<f32>) -> tensor<?xf32, ["b"]>
  %10 = brt.broadcast_in_dim(%9) {broadcast_dimensions = array<i64: 0>} : (tensor<?xf32, ["b"]>) -> tensor<?x1xf32, ["b", ""]>
  %11 = brt.divide(%10, %4) : (tensor<?x1xf32, ["b", ""]>, tensor<?x1xf32, ["b", ""]>) -> tensor<?x1xf32, ["b", ""]>
  %12 = brt.constant() {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %13 = brt.broadcast_in_dim(%12) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<?x1xf32, ["b", ""]>
  %14 = brt.add(%11, %13) : (tensor<?x1xf32, ["b", ""]>, tensor<?x1xf32, ["b", ""]>) -> tensor<?x1xf32, ["b", ""]>
  %15 = brt.rsqrt(%14) : (tensor<?x1xf32, ["b", ""]>) -> tensor<?x1xf32, ["b", ""]>
  %16 = brt.broadcast_in_dim(%15) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x1xf32, ["b", ""]>) -> tensor<?x8xf32, ["b", ""]>
  %17 = brt.multiply(%7, %16) : (tensor<?x8xf32, ["b", ""]>, tensor<?x8xf32, ["b", ""]>) -> tensor<?x8xf32, ["b", ""]>
  %18 = brt.broadcast_in_dim(%arg1) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<1x8xf32>
  %19 = brt.broadcast_in_dim(%18) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<1x8xf32>) -> tensor<?x8xf32, ["b", ""]>
  %20 = brt.multiply(%17, %19) : (tensor<?x8xf32, ["b", ""]>, tensor<?x8xf32, ["b", ""]>) -> tensor<?x8xf32, ["b", ""]>
  %21 = brt.broadcast_in_dim(%arg2) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<1x8xf32>
  %22 = brt.broadcast_in_dim(%21) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<1x8xf32>) -> tensor<?x8xf32, ["b", ""]>
  %23 = brt.add(%20, %22) : (tensor<?x8xf32, ["b", ""]>, tensor<?x8xf32, ["b", ""]>) -> tensor<?x8xf32, ["b", ""]>
  return %23 : tensor<?x8xf32, ["b", ""]>
}

// The same over [4, s], s symbolic, divided by 8: a constant proves nothing
// about s, so no layer norm (at s = 8 the static program fuses).
// CHECK-LABEL: func.func @symbolic_last_dim
// CHECK-NOT: brt.layer_norm
func.func @symbolic_last_dim(%arg0: tensor<4x?xf32, ["", "s"]>, %arg1: tensor<?xf32, ["s"]>, %arg2: tensor<?xf32, ["s"]>) -> tensor<4x?xf32, ["", "s"]> {
  %0 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %1 = brt.reduce(%arg0, %0) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x?xf32, ["", "s"]>, tensor<f32>) -> tensor<4xf32>
  %2 = brt.broadcast_in_dim(%1) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %3 = brt.constant() {value = dense<8.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %4 = brt.broadcast_in_dim(%3) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %5 = brt.divide(%2, %4) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %6 = brt.broadcast_in_dim(%5) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x?xf32, ["", "s"]>
  %7 = brt.subtract(%arg0, %6) : (tensor<4x?xf32, ["", "s"]>, tensor<4x?xf32, ["", "s"]>) -> tensor<4x?xf32, ["", "s"]>
  %8 = brt.multiply(%7, %7) : (tensor<4x?xf32, ["", "s"]>, tensor<4x?xf32, ["", "s"]>) -> tensor<4x?xf32, ["", "s"]>
  %9 = brt.reduce(%8, %0) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x?xf32, ["", "s"]>, tensor<f32>) -> tensor<4xf32>
  %10 = brt.broadcast_in_dim(%9) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %11 = brt.divide(%10, %4) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %12 = brt.constant() {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %13 = brt.broadcast_in_dim(%12) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %14 = brt.add(%11, %13) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %15 = brt.rsqrt(%14) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %16 = brt.broadcast_in_dim(%15) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x?xf32, ["", "s"]>
  %17 = brt.multiply(%7, %16) : (tensor<4x?xf32, ["", "s"]>, tensor<4x?xf32, ["", "s"]>) -> tensor<4x?xf32, ["", "s"]>
  %18 = brt.broadcast_in_dim(%arg1) {broadcast_dimensions = array<i64: 1>} : (tensor<?xf32, ["s"]>) -> tensor<1x?xf32, ["", "s"]>
  %19 = brt.broadcast_in_dim(%18) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<1x?xf32, ["", "s"]>) -> tensor<4x?xf32, ["", "s"]>
  %20 = brt.multiply(%17, %19) : (tensor<4x?xf32, ["", "s"]>, tensor<4x?xf32, ["", "s"]>) -> tensor<4x?xf32, ["", "s"]>
  %21 = brt.broadcast_in_dim(%arg2) {broadcast_dimensions = array<i64: 1>} : (tensor<?xf32, ["s"]>) -> tensor<1x?xf32, ["", "s"]>
  %22 = brt.broadcast_in_dim(%21) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<1x?xf32, ["", "s"]>) -> tensor<4x?xf32, ["", "s"]>
  %23 = brt.add(%20, %22) : (tensor<4x?xf32, ["", "s"]>, tensor<4x?xf32, ["", "s"]>) -> tensor<4x?xf32, ["", "s"]>
  return %23 : tensor<4x?xf32, ["", "s"]>
}

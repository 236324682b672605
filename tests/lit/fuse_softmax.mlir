// RUN: brt-opt %s --cse --brt-fuse-softmax --canonicalize | FileCheck %s

// jax.nn.softmax(x, axis=-1) as the importer writes it.
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT: %[[S:.*]] = brt.kernel "brt.softmax"(%arg0) {axis = 1 : i64}
// CHECK-NEXT: return %[[S]]
func.func @softmax(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = brt.kernel "constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %1 = brt.kernel "reduce"(%arg0, %0) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = brt.kernel "constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %3 = brt.kernel "broadcast_in_dim"(%2) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %4 = brt.kernel "maximum"(%3, %1) {} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = brt.kernel "broadcast_in_dim"(%4) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %6 = brt.kernel "broadcast_in_dim"(%5) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %7 = brt.kernel "subtract"(%arg0, %6) {} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = brt.kernel "exponential"(%7) {} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = brt.kernel "constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %10 = brt.kernel "reduce"(%8, %9) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %11 = brt.kernel "broadcast_in_dim"(%10) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %12 = brt.kernel "broadcast_in_dim"(%11) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %13 = brt.kernel "divide"(%8, %12) {} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %13 : tensor<4x8xf32>
}

// The exponentials are also returned: the pattern must not fire.
// CHECK-LABEL: func.func @exp_escapes
// CHECK-NOT: brt.softmax
func.func @exp_escapes(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = brt.kernel "constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %1 = brt.kernel "reduce"(%x, %0) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %2 = brt.kernel "broadcast_in_dim"(%1) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x3xf32>
  %3 = brt.kernel "subtract"(%x, %2) {} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = brt.kernel "exponential"(%3) {} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = brt.kernel "constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %6 = brt.kernel "reduce"(%4, %5) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %7 = brt.kernel "broadcast_in_dim"(%6) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x3xf32>
  %8 = brt.kernel "divide"(%4, %7) {} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %8, %4 : tensor<2x3xf32>, tensor<2x3xf32>
}

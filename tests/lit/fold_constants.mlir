// RUN: brt-opt %s --brt-fold-constants --canonicalize | FileCheck %s

// sqrt(convert(16)) and 1 / that are evaluated at compile time (the
// transformer's attention scale looks like this); the broadcast stays.
// CHECK-LABEL: func.func @attention_scale
// CHECK-NEXT: %[[C:.*]] = brt.kernel "constant"() {value = dense<2.500000e-01> : tensor<f32>}
// CHECK-NEXT: %[[B:.*]] = brt.kernel "broadcast_in_dim"(%[[C]])
// CHECK-NEXT: %[[M:.*]] = brt.kernel "multiply"(%arg0, %[[B]])
// CHECK-NEXT: return %[[M]]
func.func @attention_scale(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = brt.kernel "constant"() {value = dense<16> : tensor<i32>} : () -> tensor<i32>
  %1 = brt.kernel "convert"(%0) {} : (tensor<i32>) -> tensor<f32>
  %2 = brt.kernel "sqrt"(%1) {} : (tensor<f32>) -> tensor<f32>
  %3 = brt.kernel "constant"() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %4 = brt.kernel "divide"(%3, %2) {} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %5 = brt.kernel "broadcast_in_dim"(%4) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x4xf32>
  %6 = brt.kernel "multiply"(%x, %5) {} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %6 : tensor<2x4xf32>
}

// An op with a non-constant operand is left alone.
// CHECK-LABEL: func.func @not_constant
// CHECK: brt.kernel "sqrt"(%arg0)
func.func @not_constant(%x: tensor<f32>) -> tensor<f32> {
  %0 = brt.kernel "sqrt"(%x) {} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// An elementwise op of broadcast scalars (torch-mlir's GELU takes rsqrt of a
// broadcast 2.0) is evaluated on the scalar and broadcast again.
// CHECK-LABEL: func.func @broadcast_scalars
// CHECK-NEXT: %[[C:.*]] = brt.kernel "constant"() {value = dense<0.707106769> : tensor<f32>}
// CHECK-NEXT: %[[B:.*]] = brt.kernel "broadcast_in_dim"(%[[C]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[M:.*]] = brt.kernel "multiply"(%arg0, %[[B]])
// CHECK-NEXT: return %[[M]]
func.func @broadcast_scalars(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = brt.kernel "constant"() {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %1 = brt.kernel "broadcast_in_dim"(%0) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x4xf32>
  %2 = brt.kernel "rsqrt"(%1) {} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = brt.kernel "multiply"(%x, %2) {} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %3 : tensor<2x4xf32>
}

// A broadcast that is not of a scalar is not folded through.
// CHECK-LABEL: func.func @broadcast_vector
// CHECK: brt.kernel "rsqrt"
func.func @broadcast_vector() -> tensor<2x4xf32> {
  %0 = brt.kernel "constant"() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %1 = brt.kernel "broadcast_in_dim"(%0) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<2x4xf32>
  %2 = brt.kernel "rsqrt"(%1) {} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %2 : tensor<2x4xf32>
}

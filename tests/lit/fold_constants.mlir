// RUN: brt-opt %s --brt-fold-constants --canonicalize | FileCheck %s

// sqrt(convert(16)) and 1 / that are evaluated at compile time (the
// transformer's attention scale looks like this); the broadcast stays.
// CHECK-LABEL: func.func @attention_scale
// CHECK-NEXT: %[[C:.*]] = brt.constant() {value = dense<2.500000e-01> : tensor<f32>}
// CHECK-NEXT: %[[B:.*]] = brt.broadcast_in_dim(%[[C]])
// CHECK-NEXT: %[[M:.*]] = brt.multiply(%arg0, %[[B]])
// CHECK-NEXT: return %[[M]]
func.func @attention_scale(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = brt.constant() {value = dense<16> : tensor<i32>} : () -> tensor<i32>
  %1 = brt.convert(%0) : (tensor<i32>) -> tensor<f32>
  %2 = brt.sqrt(%1) : (tensor<f32>) -> tensor<f32>
  %3 = brt.constant() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %4 = brt.divide(%3, %2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %5 = brt.broadcast_in_dim(%4) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x4xf32>
  %6 = brt.multiply(%x, %5) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %6 : tensor<2x4xf32>
}

// An op with a non-constant operand is left alone.
// CHECK-LABEL: func.func @not_constant
// CHECK: brt.sqrt(%arg0)
func.func @not_constant(%x: tensor<f32>) -> tensor<f32> {
  %0 = brt.sqrt(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// An elementwise op of broadcast scalars (torch-mlir's GELU takes rsqrt of a
// broadcast 2.0) is evaluated on the scalar and broadcast again.
// CHECK-LABEL: func.func @broadcast_scalars
// CHECK-NEXT: %[[C:.*]] = brt.constant() {value = dense<0.707106769> : tensor<f32>}
// CHECK-NEXT: %[[B:.*]] = brt.broadcast_in_dim(%[[C]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[M:.*]] = brt.multiply(%arg0, %[[B]])
// CHECK-NEXT: return %[[M]]
func.func @broadcast_scalars(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = brt.constant() {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %1 = brt.broadcast_in_dim(%0) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x4xf32>
  %2 = brt.rsqrt(%1) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = brt.multiply(%x, %2) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %3 : tensor<2x4xf32>
}

// A broadcast vector is folded through when the result is small; over
// 4 KiB (and replacing no constant) it stays.
// CHECK-LABEL: func.func @broadcast_vector
// CHECK-NEXT: %[[C:.*]] = brt.constant() {value = dense<{{\[\[}}1.000000e+00, 5.000000e-01, 2.500000e-01, 1.250000e-01], [1.000000e+00, 5.000000e-01, 2.500000e-01, 1.250000e-01]]> : tensor<2x4xf32>}
// CHECK-NEXT: return %[[C]]
// CHECK-LABEL: func.func @broadcast_vector_large
// CHECK: brt.rsqrt
func.func @broadcast_vector() -> tensor<2x4xf32> {
  %0 = brt.constant() {value = dense<[1.0, 4.0, 16.0, 64.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %1 = brt.broadcast_in_dim(%0) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<2x4xf32>
  %2 = brt.rsqrt(%1) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %2 : tensor<2x4xf32>
}
func.func @broadcast_vector_large() -> tensor<2048x4xf32> {
  %0 = brt.constant() {value = dense<[1.0, 4.0, 16.0, 64.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %1 = brt.broadcast_in_dim(%0) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<2048x4xf32>
  %2 = brt.rsqrt(%1) : (tensor<2048x4xf32>) -> tensor<2048x4xf32>
  return %2 : tensor<2048x4xf32>
}

// Weights scaled per output feature (batch norm folded into a convolution:
// rows of 2, 4, 6, 8) fold although they are over 4 KiB: the result replaces
// the weights, which nothing else reads. Weights read twice stay, and so does
// their scaling.
// CHECK-LABEL: func.func @scaled_weights
// CHECK-NEXT: %[[W:.*]] = brt.constant() {value = dense<"0x00000040{{.*}}00008040{{.*}}0000C040{{.*}}00000041"> : tensor<4x320x1xf32>}
// CHECK-NEXT: %[[C:.*]] = brt.convolution(%arg0, %[[W]])
// CHECK-LABEL: func.func @weights_read_twice
// CHECK: brt.multiply
func.func @scaled_weights(%x: tensor<1x320x3xf32>) -> tensor<1x4x3xf32> {
  %w = brt.constant() {value = dense<2.0> : tensor<4x320xf32>} : () -> tensor<4x320xf32>
  %s = brt.constant() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %b = brt.broadcast_in_dim(%s) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x320xf32>
  %ws = brt.multiply(%w, %b) : (tensor<4x320xf32>, tensor<4x320xf32>) -> tensor<4x320xf32>
  %w3 = brt.reshape(%ws) : (tensor<4x320xf32>) -> tensor<4x320x1xf32>
  %c = brt.convolution(%x, %w3) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2>} : (tensor<1x320x3xf32>, tensor<4x320x1xf32>) -> tensor<1x4x3xf32>
  return %c : tensor<1x4x3xf32>
}
func.func @weights_read_twice() -> (tensor<4x320xf32>, tensor<4x320xf32>) {
  %w = brt.constant() {value = dense<2.0> : tensor<4x320xf32>} : () -> tensor<4x320xf32>
  %s = brt.constant() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %b = brt.broadcast_in_dim(%s) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x320xf32>
  %ws = brt.multiply(%w, %b) : (tensor<4x320xf32>, tensor<4x320xf32>) -> tensor<4x320xf32>
  return %ws, %w : tensor<4x320xf32>, tensor<4x320xf32>
}

// A dense_resource constant (torch-mlir writes parameters so) is read.
// CHECK-LABEL: func.func @resource
// CHECK-NEXT: %[[C:.*]] = brt.constant() {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}
// CHECK-NEXT: return %[[C]]
func.func @resource() -> tensor<2xf32> {
  %0 = brt.constant() {value = dense_resource<squares> : tensor<2xf32>} : () -> tensor<2xf32>
  %1 = brt.sqrt(%0) : (tensor<2xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      squares: "0x040000000000803F00008040"
    }
  }
#-}

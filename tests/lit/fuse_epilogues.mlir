// RUN: brt-opt %s --brt-fuse-epilogues --canonicalize | FileCheck %s

// jax.nn.relu(x @ w + b): bias (through its broadcasts) and relu fuse.
// CHECK-LABEL: func.func @dense_relu
// CHECK-NEXT: %[[M:.*]] = brt.matmul(%arg0, %arg1, %arg2) {activation = "relu", lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>}
// CHECK-NEXT: return %[[M]]
func.func @dense_relu(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = brt.dot_general(%x, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<1x3xf32>
  %2 = brt.broadcast_in_dim(%1) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<1x3xf32>) -> tensor<4x3xf32>
  %3 = brt.add(%0, %2) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %4 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %5 = brt.broadcast_in_dim(%4) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x3xf32>
  %6 = brt.maximum(%3, %5) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %6 : tensor<4x3xf32>
}

// tanh without a bias.
// CHECK-LABEL: func.func @tanh_only
// CHECK: brt.matmul(%arg0, %arg1) {activation = "tanh"
func.func @tanh_only(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %0 = brt.dot_general(%x, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %1 = brt.tanh(%0) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}

// The product is also returned: nothing fuses into it.
// CHECK-LABEL: func.func @shared_product
// CHECK-NOT: brt.matmul
func.func @shared_product(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %0 = brt.dot_general(%x, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %1 = brt.tanh(%0) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0, %1 : tensor<4x3xf32>, tensor<4x3xf32>
}

// jax.nn.gelu(x @ w + b, approximate=False) after the erfc decomposition.
// CHECK-LABEL: func.func @dense_gelu
// CHECK-NEXT: %[[M:.*]] = brt.matmul(%arg0, %arg1, %arg2) {activation = "gelu"
// CHECK-NEXT: return %[[M]]
func.func @dense_gelu(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %0 = brt.dot_general(%x, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<16xf32>) -> tensor<4x16xf32>
  %3 = brt.add(%0, %1) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %4 = brt.constant() {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
  %5 = brt.broadcast_in_dim(%4) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x16xf32>
  %6 = brt.multiply(%5, %3) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %7 = brt.negate(%3) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %8 = brt.constant() {value = dense<0.707106769> : tensor<f32>} : () -> tensor<f32>
  %9 = brt.broadcast_in_dim(%8) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x16xf32>
  %10 = brt.multiply(%7, %9) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %11 = brt.constant() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %12 = brt.erf(%10) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %13 = brt.subtract(%11, %12) : (tensor<f32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %14 = brt.multiply(%6, %13) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %14 : tensor<4x16xf32>
}

// jax.nn.gelu(x @ w + b, approximate=False) as imported: chlo.erfc is an op.
// CHECK-LABEL: func.func @dense_gelu_erfc
// CHECK-NEXT: %[[M:.*]] = brt.matmul(%arg0, %arg1, %arg2) {activation = "gelu"
// CHECK-NEXT: return %[[M]]
func.func @dense_gelu_erfc(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %0 = brt.dot_general(%x, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<16xf32>) -> tensor<4x16xf32>
  %3 = brt.add(%0, %1) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %4 = brt.constant() {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
  %5 = brt.broadcast_in_dim(%4) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x16xf32>
  %6 = brt.multiply(%5, %3) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %7 = brt.negate(%3) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %8 = brt.constant() {value = dense<0.707106769> : tensor<f32>} : () -> tensor<f32>
  %9 = brt.broadcast_in_dim(%8) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x16xf32>
  %10 = brt.multiply(%7, %9) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %12 = brt.erfc(%10) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %14 = brt.multiply(%6, %12) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %14 : tensor<4x16xf32>
}

// PyTorch's exact GELU after its linear on [2, 2, 8] as a matmul of [4, 8]:
// the activation comes after the reshape back; the reshape moves after the
// fused op.
// CHECK-LABEL: func.func @torch_linear_gelu
// CHECK-NEXT: %[[M:.*]] = brt.matmul(%arg0, %arg1, %arg2) {activation = "gelu"{{.*}} -> tensor<4x16xf32>
// CHECK-NEXT: %[[R:.*]] = brt.reshape(%[[M]]) : (tensor<4x16xf32>) -> tensor<2x2x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @torch_linear_gelu(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<2x2x16xf32> {
  %0 = brt.dot_general(%x, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<16xf32>) -> tensor<4x16xf32>
  %2 = brt.add(%0, %1) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %3 = brt.reshape(%2) : (tensor<4x16xf32>) -> tensor<2x2x16xf32>
  %4 = brt.constant() {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
  %5 = brt.broadcast_in_dim(%4) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x2x16xf32>
  %6 = brt.multiply(%3, %5) : (tensor<2x2x16xf32>, tensor<2x2x16xf32>) -> tensor<2x2x16xf32>
  %7 = brt.constant() {value = dense<0.707106769> : tensor<f32>} : () -> tensor<f32>
  %8 = brt.broadcast_in_dim(%7) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x2x16xf32>
  %9 = brt.multiply(%3, %8) : (tensor<2x2x16xf32>, tensor<2x2x16xf32>) -> tensor<2x2x16xf32>
  %10 = brt.erf(%9) : (tensor<2x2x16xf32>) -> tensor<2x2x16xf32>
  %11 = brt.constant() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %12 = brt.broadcast_in_dim(%11) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x2x16xf32>
  %13 = brt.add(%10, %12) : (tensor<2x2x16xf32>, tensor<2x2x16xf32>) -> tensor<2x2x16xf32>
  %14 = brt.multiply(%13, %6) : (tensor<2x2x16xf32>, tensor<2x2x16xf32>) -> tensor<2x2x16xf32>
  return %14 : tensor<2x2x16xf32>
}

// The same with a scale that is not 1/sqrt(2) is no GELU: the bias still
// fuses, the rest stays.
// CHECK-LABEL: func.func @not_gelu
// CHECK: brt.matmul(%arg0, %arg1, %arg2) {lhs_contracting_dimensions
// CHECK: brt.erf(
func.func @not_gelu(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %0 = brt.dot_general(%x, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<16xf32>) -> tensor<4x16xf32>
  %2 = brt.add(%0, %1) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %4 = brt.constant() {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
  %5 = brt.broadcast_in_dim(%4) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x16xf32>
  %6 = brt.multiply(%2, %5) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %7 = brt.constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %8 = brt.broadcast_in_dim(%7) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x16xf32>
  %9 = brt.multiply(%2, %8) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %10 = brt.erf(%9) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %11 = brt.constant() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %12 = brt.broadcast_in_dim(%11) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x16xf32>
  %13 = brt.add(%10, %12) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %14 = brt.multiply(%13, %6) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %14 : tensor<4x16xf32>
}

// NCHW convolution + bias (broadcast onto the feature dim 1) + relu.
// CHECK-LABEL: func.func @conv_nchw_bias_relu
// CHECK-NEXT: %[[C:.*]] = brt.conv(%arg0, %arg1, %arg2) {activation = "relu"
// CHECK-NEXT: return %[[C]]
func.func @conv_nchw_bias_relu(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x3x3x3xf32> {
  %0 = brt.convolution(%x, %w) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2, 3>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2, 3>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2, 3>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<1x3x3x3xf32>
  %2 = brt.add(%0, %1) : (tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %3 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %4 = brt.broadcast_in_dim(%3) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x3x3x3xf32>
  %5 = brt.maximum(%2, %4) : (tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  return %5 : tensor<1x3x3x3xf32>
}

// A bias along a spatial dim is not a per-feature bias: no fusion.
// CHECK-LABEL: func.func @conv_bias_wrong_dim
// CHECK-NOT: brt.conv(
func.func @conv_bias_wrong_dim(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x3x3x3xf32> {
  %0 = brt.convolution(%x, %w) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2, 3>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2, 3>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2, 3>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 3>} : (tensor<3xf32>) -> tensor<1x3x3x3xf32>
  %2 = brt.add(%0, %1) : (tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  return %2 : tensor<1x3x3x3xf32>
}

// PyTorch's relu as brt.compile_torch writes it, select(x < 0, +0, x) (-0
// and NaN pass through): fused as relu_select.
// CHECK-LABEL: func.func @dense_relu_select
// CHECK-NEXT: %[[M:.*]] = brt.matmul(%arg0, %arg1, %arg2) {activation = "relu_select"
// CHECK-NEXT: return %[[M]]
func.func @dense_relu_select(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = brt.dot_general(%x, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<4x3xf32>
  %2 = brt.add(%0, %1) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %3 = brt.constant() {value = dense<0.000000e+00> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
  %4 = brt.compare(%2, %3) {comparison_direction = "LT"} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
  %5 = brt.select(%4, %3, %2) : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %5 : tensor<4x3xf32>
}

// The same select with a -0 where x < 0 is not a relu: nothing fuses.
// CHECK-LABEL: func.func @select_negative_zero
// CHECK-NOT: brt.matmul
func.func @select_negative_zero(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %0 = brt.dot_general(%x, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %1 = brt.constant() {value = dense<0.000000e+00> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
  %2 = brt.constant() {value = dense<-0.000000e+00> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
  %3 = brt.compare(%0, %1) {comparison_direction = "LT"} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
  %4 = brt.select(%3, %2, %0) : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %4 : tensor<4x3xf32>
}

// maximum(x, -0) is -0 for negative x, not relu: nothing fuses.
// CHECK-LABEL: func.func @maximum_negative_zero
// CHECK-NOT: brt.matmul
func.func @maximum_negative_zero(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %0 = brt.dot_general(%x, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %1 = brt.constant() {value = dense<-0.000000e+00> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
  %2 = brt.maximum(%0, %1) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %2 : tensor<4x3xf32>
}

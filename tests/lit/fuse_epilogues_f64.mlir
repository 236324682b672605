// RUN: brt-opt %s --brt-fuse-epilogues=target=cpu | FileCheck %s --check-prefix=CPU
// RUN: brt-opt %s --brt-fuse-epilogues=target=cuda | FileCheck %s --check-prefix=CUDA

// An f64 matmul + tanh: the CPU's brt.matmul takes f32, f16 and bf16 only,
// so for the CPU the ops stay (an executable with it fused did not load);
// CUDA's takes f64.
// CPU-LABEL: func.func @matmul_tanh_f64
// CPU-NOT: brt.matmul
// CPU: brt.tanh
// CUDA-LABEL: func.func @matmul_tanh_f64
// CUDA: brt.matmul(%arg0, %arg1) {activation = "tanh"
func.func @matmul_tanh_f64(%x: tensor<4x8xf64>, %w: tensor<8x3xf64>) -> tensor<4x3xf64> {
  %0 = brt.dot_general(%x, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x8xf64>, tensor<8x3xf64>) -> tensor<4x3xf64>
  %1 = brt.tanh(%0) : (tensor<4x3xf64>) -> tensor<4x3xf64>
  return %1 : tensor<4x3xf64>
}

// An f16 matmul + relu fuses for both: the CPU's brt.matmul takes f16.
// CPU-LABEL: func.func @matmul_relu_f16
// CPU: brt.matmul(%arg0, %arg1) {activation = "relu"
// CUDA-LABEL: func.func @matmul_relu_f16
// CUDA: brt.matmul(%arg0, %arg1) {activation = "relu"
func.func @matmul_relu_f16(%x: tensor<4x8xf16>, %w: tensor<8x3xf16>) -> tensor<4x3xf16> {
  %0 = brt.dot_general(%x, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x8xf16>, tensor<8x3xf16>) -> tensor<4x3xf16>
  %1 = brt.constant() {value = dense<0.000000e+00> : tensor<f16>} : () -> tensor<f16>
  %2 = brt.broadcast_in_dim(%1) {broadcast_dimensions = array<i64>} : (tensor<f16>) -> tensor<4x3xf16>
  %3 = brt.maximum(%0, %2) : (tensor<4x3xf16>, tensor<4x3xf16>) -> tensor<4x3xf16>
  return %3 : tensor<4x3xf16>
}

// An f64 convolution + bias: fused for neither (no f64 brt.conv on either).
// CPU-LABEL: func.func @conv_bias_f64
// CPU-NOT: brt.conv(
// CUDA-LABEL: func.func @conv_bias_f64
// CUDA-NOT: brt.conv(
func.func @conv_bias_f64(%x: tensor<1x2x5x5xf64>, %w: tensor<3x2x3x3xf64>, %b: tensor<3xf64>) -> tensor<1x3x3x3xf64> {
  %0 = brt.convolution(%x, %w) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2, 3>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2, 3>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2, 3>} : (tensor<1x2x5x5xf64>, tensor<3x2x3x3xf64>) -> tensor<1x3x3x3xf64>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf64>) -> tensor<1x3x3x3xf64>
  %2 = brt.add(%0, %1) : (tensor<1x3x3x3xf64>, tensor<1x3x3x3xf64>) -> tensor<1x3x3x3xf64>
  return %2 : tensor<1x3x3x3xf64>
}

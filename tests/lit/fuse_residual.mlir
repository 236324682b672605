// RUN: brt-opt %s --brt-fuse-epilogues --canonicalize | FileCheck %s
// RUN: brt-opt %s --brt-fuse-epilogues=target=cuda --canonicalize | FileCheck %s --check-prefix=CUDA

// A ResNet block's end as brt.compile_torch writes it: convolution + bias,
// the residual added, PyTorch's relu. For the CPU the residual becomes
// brt.conv's fourth operand, with the relu; CUDA keeps the add.
// CHECK-LABEL: func.func @residual_relu_select
// CHECK-NEXT: %[[C:.*]] = brt.conv(%arg0, %arg1, %arg2, %arg3) {activation = "relu_select"
// CHECK-NEXT: return %[[C]]
// CUDA-LABEL: func.func @residual_relu_select
// CUDA: brt.conv(%arg0, %arg1, %arg2) {
// CUDA: brt.add
func.func @residual_relu_select(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>, %r: tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32> {
  %0 = brt.convolution(%x, %w) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2, 3>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2, 3>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<1x3x5x5xf32>
  %2 = brt.add(%0, %1) : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  %3 = brt.add(%2, %r) : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  %4 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %5 = brt.broadcast_in_dim(%4) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x3x5x5xf32>
  %6 = brt.compare(%3, %5) {comparison_direction = "LT"} : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xi1>
  %7 = brt.select(%6, %5, %3) : (tensor<1x3x5x5xi1>, tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  return %7 : tensor<1x3x5x5xf32>
}

// A downsampling block: both sides of the add are convolutions with a bias.
// One takes the other's result as its residual; the other keeps its bias.
// CHECK-LABEL: func.func @two_convolutions_relu
// CHECK-NEXT: %[[D:.*]] = brt.conv(%arg0, %arg3, %arg4) {
// CHECK-NEXT: %[[C:.*]] = brt.conv(%arg0, %arg1, %arg2, %[[D]]) {activation = "relu"
// CHECK-NEXT: return %[[C]]
func.func @two_convolutions_relu(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>, %wd: tensor<3x2x3x3xf32>, %bd: tensor<3xf32>) -> tensor<1x3x5x5xf32> {
  %0 = brt.convolution(%x, %w) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2, 3>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2, 3>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<1x3x5x5xf32>
  %2 = brt.add(%0, %1) : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  %3 = brt.convolution(%x, %wd) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2, 3>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2, 3>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32>
  %4 = brt.broadcast_in_dim(%bd) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<1x3x5x5xf32>
  %5 = brt.add(%3, %4) : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  %6 = brt.add(%2, %5) : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  %7 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %8 = brt.broadcast_in_dim(%7) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x3x5x5xf32>
  %9 = brt.maximum(%6, %8) : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  return %9 : tensor<1x3x5x5xf32>
}

// No activation after the residual add: the add alone folds in.
// CHECK-LABEL: func.func @residual_only
// CHECK-NEXT: %[[C:.*]] = brt.conv(%arg0, %arg1, %arg2, %arg3) {
// CHECK-NOT: activation = "relu
// CHECK: return %[[C]]
func.func @residual_only(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>, %r: tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32> {
  %0 = brt.convolution(%x, %w) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2, 3>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2, 3>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<1x3x5x5xf32>
  %2 = brt.add(%0, %1) : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  %3 = brt.add(%r, %2) : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  return %3 : tensor<1x3x5x5xf32>
}

// The sum with the bias is also returned: the residual add stays.
// CHECK-LABEL: func.func @shared_sum
// CHECK: brt.conv(%arg0, %arg1, %arg2) {
// CHECK: brt.add
func.func @shared_sum(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>, %r: tensor<1x3x5x5xf32>) -> (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) {
  %0 = brt.convolution(%x, %w) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2, 3>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2, 3>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<1x3x5x5xf32>
  %2 = brt.add(%0, %1) : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  %3 = brt.add(%2, %r) : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  return %2, %3 : tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>
}

// An add after the activation is no residual of the convolution: relu(conv
// + b) + r stays so (relu(conv + b + r) differs).
// CHECK-LABEL: func.func @add_after_relu
// CHECK: brt.conv(%arg0, %arg1, %arg2) {activation = "relu"
// CHECK: brt.add
func.func @add_after_relu(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>, %r: tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32> {
  %0 = brt.convolution(%x, %w) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2, 3>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2, 3>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<1x3x5x5xf32>
  %2 = brt.add(%0, %1) : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  %3 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %4 = brt.broadcast_in_dim(%3) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x3x5x5xf32>
  %5 = brt.maximum(%2, %4) : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  %6 = brt.add(%5, %r) : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  return %6 : tensor<1x3x5x5xf32>
}

// A residual broadcast along the batch (an embedding added per image) stays
// an add: folded in, it would be written out at the result's size.
// CHECK-LABEL: func.func @broadcast_residual
// CHECK: brt.conv(%arg0, %arg1, %arg2) {
// CHECK: brt.add
func.func @broadcast_residual(%x: tensor<2x2x5x5xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>, %r: tensor<1x3x5x5xf32>) -> tensor<2x3x5x5xf32> {
  %0 = brt.convolution(%x, %w) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2, 3>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2, 3>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<2x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<2x3x5x5xf32>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3x5x5xf32>
  %2 = brt.add(%0, %1) : (tensor<2x3x5x5xf32>, tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
  %3 = brt.broadcast_in_dim(%r) {broadcast_dimensions = array<i64: 0, 1, 2, 3>} : (tensor<1x3x5x5xf32>) -> tensor<2x3x5x5xf32>
  %4 = brt.add(%2, %3) : (tensor<2x3x5x5xf32>, tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
  return %4 : tensor<2x3x5x5xf32>
}

// A convolution without a bias: brt.conv takes a residual only after one.
// CHECK-LABEL: func.func @no_bias
// CHECK: brt.convolution(%arg0, %arg1)
// CHECK: brt.add
func.func @no_bias(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>, %r: tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32> {
  %0 = brt.convolution(%x, %w) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2, 3>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2, 3>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32>
  %1 = brt.add(%0, %r) : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  return %1 : tensor<1x3x5x5xf32>
}

// tanh after the residual add folds too.
// CHECK-LABEL: func.func @residual_tanh
// CHECK-NEXT: %[[C:.*]] = brt.conv(%arg0, %arg1, %arg2, %arg3) {activation = "tanh"
// CHECK-NEXT: return %[[C]]
func.func @residual_tanh(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>, %r: tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32> {
  %0 = brt.convolution(%x, %w) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2, 3>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2, 3>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32>
  %1 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<1x3x5x5xf32>
  %2 = brt.add(%0, %1) : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  %3 = brt.add(%2, %r) : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  %4 = brt.tanh(%3) : (tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  return %4 : tensor<1x3x5x5xf32>
}

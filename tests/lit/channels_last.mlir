// RUN: brt-opt %s --brt-channels-last --canonicalize | FileCheck %s
// RUN: brt-opt %s --brt-channels-last=target=cuda | FileCheck %s --check-prefix=CUDA


// A PyTorch network's stem and residual block in NCHW: conv on RGB, bias,
// relu, max pool, conv, the residual add, global average pool. Every
// convolution reads and writes channels-last; the input is transposed once.
// The bias and the pool follow the features to dim 3, the residual add
// reads both operands channels-last, the reduction sums dims 1 and 2: no
// other transpose is left.
// CHECK-LABEL: func.func @stem_and_block
// CHECK: %[[IN:.*]] = brt.transpose(%arg0) {permutation = array<i64: 0, 2, 3, 1>} : (tensor<2x3x8x8xf32>) -> tensor<2x8x8x3xf32>
// CHECK-NOT: transpose
// CHECK: %[[C1:.*]] = brt.convolution(%[[IN]], %{{.*}}) {input_feature_dimension = 3 : i64, input_spatial_dimensions = array<i64: 1, 2>, {{.*}}output_feature_dimension = 3 : i64, output_spatial_dimensions = array<i64: 1, 2>, {{.*}} -> tensor<2x8x8x16xf32>
// CHECK: %[[BIAS:.*]] = brt.broadcast_in_dim(%{{.*}}) {broadcast_dimensions = array<i64: 3>} : (tensor<16xf32>) -> tensor<2x8x8x16xf32>
// CHECK: %[[SUM:.*]] = brt.add(%[[C1]], %[[BIAS]]) : (tensor<2x8x8x16xf32>, tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
// CHECK: %[[RELU:.*]] = brt.maximum(%[[SUM]], %{{.*}}) : (tensor<2x8x8x16xf32>, tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
// CHECK: %[[POOL:.*]] = brt.reduce_window(%[[RELU]], %{{.*}}) {padding = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>, reducer = "max", window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>} : (tensor<2x8x8x16xf32>, tensor<f32>) -> tensor<2x4x4x16xf32>
// CHECK: %[[C2:.*]] = brt.convolution(%[[POOL]], %{{.*}}) {input_feature_dimension = 3 : i64, input_spatial_dimensions = array<i64: 1, 2>, {{.*}}output_feature_dimension = 3 : i64, output_spatial_dimensions = array<i64: 1, 2>, {{.*}} -> tensor<2x4x4x16xf32>
// CHECK: %[[RES:.*]] = brt.add(%[[C2]], %[[POOL]]) : (tensor<2x4x4x16xf32>, tensor<2x4x4x16xf32>) -> tensor<2x4x4x16xf32>
// CHECK: %[[MEAN:.*]] = brt.reduce(%[[RES]], %{{.*}}) {dimensions = array<i64: 1, 2>, reducer = "add"} : (tensor<2x4x4x16xf32>, tensor<f32>) -> tensor<2x16xf32>
// CHECK: return %[[MEAN]]
// CUDA-LABEL: func.func @stem_and_block
// CUDA-NOT: transpose
// CUDA-NOT: output_feature_dimension = 3
func.func @stem_and_block(%x: tensor<2x3x8x8xf32>) -> tensor<2x16xf32> {
  %w1 = brt.constant() {value = dense<0.5> : tensor<16x3x3x3xf32>} : () -> tensor<16x3x3x3xf32>
  %w2 = brt.constant() {value = dense<0.25> : tensor<16x16x3x3xf32>} : () -> tensor<16x16x3x3xf32>
  %b = brt.constant() {value = dense<0.125> : tensor<16xf32>} : () -> tensor<16xf32>
  %zero = brt.constant() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %ninf = brt.constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %c1 = brt.convolution(%x, %w1) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2, 3>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2, 3>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<2x16x8x8xf32>
  %bb = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<16xf32>) -> tensor<2x16x8x8xf32>
  %s = brt.add(%c1, %bb) : (tensor<2x16x8x8xf32>, tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  %zb = brt.broadcast_in_dim(%zero) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x16x8x8xf32>
  %r = brt.maximum(%s, %zb) : (tensor<2x16x8x8xf32>, tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  %p = brt.reduce_window(%r, %ninf) {padding = array<i64: 0, 0, 0, 0, 1, 1, 1, 1>, reducer = "max", window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>} : (tensor<2x16x8x8xf32>, tensor<f32>) -> tensor<2x16x4x4xf32>
  %c2 = brt.convolution(%p, %w2) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2, 3>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2, 3>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<2x16x4x4xf32>, tensor<16x16x3x3xf32>) -> tensor<2x16x4x4xf32>
  %res = brt.add(%c2, %p) : (tensor<2x16x4x4xf32>, tensor<2x16x4x4xf32>) -> tensor<2x16x4x4xf32>
  %m = brt.reduce(%res, %zero) {dimensions = array<i64: 2, 3>, reducer = "add"} : (tensor<2x16x4x4xf32>, tensor<f32>) -> tensor<2x16xf32>
  return %m : tensor<2x16xf32>
}

// A feature map returned in NCHW, and one added to an argument in NCHW:
// transposes at those edges only. The input (8 features) is transposed.
// CHECK-LABEL: func.func @edges
// CHECK: %[[IN:.*]] = brt.transpose(%arg0) {permutation = array<i64: 0, 2, 3, 1>} : (tensor<1x8x5x5xf32>) -> tensor<1x5x5x8xf32>
// CHECK: %[[C:.*]] = brt.convolution(%[[IN]], %{{.*}}) -> tensor<1x5x5x8xf32>
// CHECK-NEXT: %[[BACK:.*]] = brt.transpose(%[[C]]) {permutation = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT: %[[N:.*]] = brt.negate(%[[C]]) : (tensor<1x5x5x8xf32>) -> tensor<1x5x5x8xf32>
// CHECK-NEXT: %[[OUT:.*]] = brt.transpose(%[[N]]) {permutation = array<i64: 0, 3, 1, 2>} : (tensor<1x5x5x8xf32>) -> tensor<1x8x5x5xf32>
// CHECK-NEXT: %[[ADD:.*]] = brt.add(%[[BACK]], %arg1)
// CHECK: return %[[OUT]], %[[ADD]]
func.func @edges(%x: tensor<1x8x5x5xf32>, %y: tensor<1x8x5x5xf32>) -> (tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>) {
  %w = brt.constant() {value = dense<0.5> : tensor<8x8x3x3xf32>} : () -> tensor<8x8x3x3xf32>
  %c = brt.convolution(%x, %w) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2, 3>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2, 3>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x5x5xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x5x5xf32>
  %n = brt.negate(%c) : (tensor<1x8x5x5xf32>) -> tensor<1x8x5x5xf32>
  %a = brt.add(%c, %y) : (tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>) -> tensor<1x8x5x5xf32>
  return %n, %a : tensor<1x8x5x5xf32>, tensor<1x8x5x5xf32>
}

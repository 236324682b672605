// RUN: brt-opt %s --brt-fold-batch-norm | FileCheck %s
// RUN: brt-opt %s --brt-fold-batch-norm --brt-fold-constants --canonicalize | FileCheck %s --check-prefix=FOLDED

// PyTorch's batch norm after a convolution, as brt-simplify leaves it:
// (conv - mean) * rsqrt(var + eps) * gamma + beta, then relu. The scale
// multiplies the weights per output feature (dim 0 of OIHW); the shift is one
// add over the result's features (dim 1 of NCHW), which the relu follows.
// CHECK-LABEL: func.func @torch_batch_norm
// CHECK-DAG: %[[RS:.*]] = brt.rsqrt
// CHECK-DAG: %[[S1:.*]] = brt.multiply(%[[RS]], %[[GAMMA:[^)]*]])
// CHECK-DAG: %[[NEG:.*]] = brt.negate(%[[MEAN:[^)]*]])
// CHECK-DAG: %[[T1:.*]] = brt.multiply(%[[NEG]], %[[RS]])
// CHECK-DAG: %[[T2:.*]] = brt.multiply(%[[T1]], %[[GAMMA]])
// CHECK-DAG: %[[T3:.*]] = brt.add(%[[T2]], %[[BETA:[^)]*]])
// CHECK: %[[SB:.*]] = brt.broadcast_in_dim(%[[S1]]) {broadcast_dimensions = array<i64: 0>} : (tensor<16xf32>) -> tensor<16x8x3x3xf32>
// CHECK-NEXT: %[[W:.*]] = brt.multiply(%{{.*}}, %[[SB]])
// CHECK-NEXT: %[[C:.*]] = brt.convolution(%arg0, %[[W]])
// CHECK-NEXT: %[[TB:.*]] = brt.broadcast_in_dim(%[[T3]]) {broadcast_dimensions = array<i64: 1>} : (tensor<16xf32>) -> tensor<2x16x6x6xf32>
// CHECK-NEXT: %[[Y:.*]] = brt.add(%[[C]], %[[TB]])
// CHECK: %[[R:.*]] = brt.maximum(%[[Y]],
// CHECK-NEXT: return %[[R]]
// With brt-fold-constants after it, what is left is the convolution of
// constant weights, 0.5 * 3 / sqrt(4 + 1e-5), the add of a constant shift,
// -0.25 * 3 / sqrt(4 + 1e-5) - 1, and the relu.
// FOLDED-LABEL: func.func @torch_batch_norm
// FOLDED-NOT: subtract
// FOLDED-NOT: multiply
// FOLDED-DAG: brt.constant() {value = dense<-1.374999{{[0-9]*}}> : tensor<f32>}
// FOLDED-DAG: %[[W:.*]] = brt.constant() {value = dense<0.749999{{[0-9]*}}> : tensor<16x8x3x3xf32>}
// FOLDED: brt.convolution(%arg0, %[[W]])
// FOLDED-NEXT: brt.broadcast_in_dim
// FOLDED-NEXT: brt.add
// FOLDED: brt.maximum
func.func @torch_batch_norm(%x: tensor<2x8x8x8xf32>) -> tensor<2x16x6x6xf32> {
  %w = brt.constant() {value = dense<0.5> : tensor<16x8x3x3xf32>} : () -> tensor<16x8x3x3xf32>
  %mean = brt.constant() {value = dense<0.25> : tensor<16xf32>} : () -> tensor<16xf32>
  %var = brt.constant() {value = dense<4.0> : tensor<16xf32>} : () -> tensor<16xf32>
  %gamma = brt.constant() {value = dense<3.0> : tensor<16xf32>} : () -> tensor<16xf32>
  %beta = brt.constant() {value = dense<-1.0> : tensor<16xf32>} : () -> tensor<16xf32>
  %eps = brt.constant() {value = dense<1.0e-5> : tensor<f32>} : () -> tensor<f32>
  %zero = brt.constant() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %c = brt.convolution(%x, %w) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2, 3>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2, 3>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2, 3>} : (tensor<2x8x8x8xf32>, tensor<16x8x3x3xf32>) -> tensor<2x16x6x6xf32>
  %epsb = brt.broadcast_in_dim(%eps) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<16xf32>
  %ve = brt.add(%epsb, %var) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %rs = brt.rsqrt(%ve) : (tensor<16xf32>) -> tensor<16xf32>
  %meanb = brt.broadcast_in_dim(%mean) {broadcast_dimensions = array<i64: 1>} : (tensor<16xf32>) -> tensor<2x16x6x6xf32>
  %d = brt.subtract(%c, %meanb) : (tensor<2x16x6x6xf32>, tensor<2x16x6x6xf32>) -> tensor<2x16x6x6xf32>
  %rsb = brt.broadcast_in_dim(%rs) {broadcast_dimensions = array<i64: 1>} : (tensor<16xf32>) -> tensor<2x16x6x6xf32>
  %n = brt.multiply(%d, %rsb) : (tensor<2x16x6x6xf32>, tensor<2x16x6x6xf32>) -> tensor<2x16x6x6xf32>
  %gammab = brt.broadcast_in_dim(%gamma) {broadcast_dimensions = array<i64: 1>} : (tensor<16xf32>) -> tensor<2x16x6x6xf32>
  %g = brt.multiply(%n, %gammab) : (tensor<2x16x6x6xf32>, tensor<2x16x6x6xf32>) -> tensor<2x16x6x6xf32>
  %betab = brt.broadcast_in_dim(%beta) {broadcast_dimensions = array<i64: 1>} : (tensor<16xf32>) -> tensor<2x16x6x6xf32>
  %y = brt.add(%g, %betab) : (tensor<2x16x6x6xf32>, tensor<2x16x6x6xf32>) -> tensor<2x16x6x6xf32>
  %zb = brt.broadcast_in_dim(%zero) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x16x6x6xf32>
  %r = brt.maximum(%y, %zb) : (tensor<2x16x6x6xf32>, tensor<2x16x6x6xf32>) -> tensor<2x16x6x6xf32>
  return %r : tensor<2x16x6x6xf32>
}

// JAX's form in NHWC / HWIO, dividing by a [1, 1, 1, C] vector (what
// fold-constants leaves of a reshape): 1 / d scales the weights' output
// features (dim 3 of HWIO); no shift, so no add.
// CHECK-LABEL: func.func @jax_divide
// CHECK: %[[ONE:.*]] = brt.constant() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK-NEXT: %[[ONES:.*]] = brt.broadcast_in_dim(%[[ONE]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT: %[[S:.*]] = brt.divide(%[[ONES]], %[[D:.*]]) : (tensor<4xf32>, tensor<4xf32>)
// CHECK: brt.broadcast_in_dim(%[[S]]) {broadcast_dimensions = array<i64: 3>} : (tensor<4xf32>) -> tensor<3x3x2x4xf32>
// CHECK-NEXT: brt.multiply
// CHECK-NEXT: %[[C:.*]] = brt.convolution
// CHECK-NEXT: return %[[C]]
func.func @jax_divide(%x: tensor<1x5x5x2xf32>) -> tensor<1x3x3x4xf32> {
  %w = brt.constant() {value = dense<0.5> : tensor<3x3x2x4xf32>} : () -> tensor<3x3x2x4xf32>
  %d = brt.constant() {value = dense<[[[[1.0, 2.0, 4.0, 8.0]]]]> : tensor<1x1x1x4xf32>} : () -> tensor<1x1x1x4xf32>
  %c = brt.convolution(%x, %w) {input_batch_dimension = 0 : i64, input_feature_dimension = 3 : i64, input_spatial_dimensions = array<i64: 1, 2>, kernel_input_feature_dimension = 2 : i64, kernel_output_feature_dimension = 3 : i64, kernel_spatial_dimensions = array<i64: 0, 1>, output_batch_dimension = 0 : i64, output_feature_dimension = 3 : i64, output_spatial_dimensions = array<i64: 1, 2>} : (tensor<1x5x5x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x3x3x4xf32>
  %db = brt.broadcast_in_dim(%d) {broadcast_dimensions = array<i64: 0, 1, 2, 3>} : (tensor<1x1x1x4xf32>) -> tensor<1x3x3x4xf32>
  %y = brt.divide(%c, %db) : (tensor<1x3x3x4xf32>, tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  return %y : tensor<1x3x3x4xf32>
}

// Weights that are an argument stay as they are (scaling them would be a
// multiply of the weights every run), and so does a vector that is not
// constant, and a shift alone (fuse-epilogues takes that as a bias).
// CHECK-LABEL: func.func @not_folded
// CHECK: %[[C1:.*]] = brt.convolution(%arg0, %arg1)
// CHECK-NEXT: brt.multiply(%[[C1]],
// CHECK-NEXT: %[[C2:.*]] = brt.convolution(%arg0, %0)
// CHECK-NEXT: brt.multiply(%[[C2]],
// CHECK-NEXT: %[[C3:.*]] = brt.convolution(%arg0, %0)
// CHECK-NEXT: brt.add(%[[C3]],
func.func @not_folded(%x: tensor<1x2x4xf32>, %w: tensor<3x2x1xf32>, %v: tensor<3xf32>) -> (tensor<1x3x4xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>) {
  %k = brt.constant() {value = dense<0.5> : tensor<3x2x1xf32>} : () -> tensor<3x2x1xf32>
  %s = brt.constant() {value = dense<2.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %sb = brt.broadcast_in_dim(%s) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<1x3x4xf32>
  %vb = brt.broadcast_in_dim(%v) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<1x3x4xf32>
  %c1 = brt.convolution(%x, %w) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2>} : (tensor<1x2x4xf32>, tensor<3x2x1xf32>) -> tensor<1x3x4xf32>
  %y1 = brt.multiply(%c1, %sb) : (tensor<1x3x4xf32>, tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
  %c2 = brt.convolution(%x, %k) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2>} : (tensor<1x2x4xf32>, tensor<3x2x1xf32>) -> tensor<1x3x4xf32>
  %y2 = brt.multiply(%c2, %vb) : (tensor<1x3x4xf32>, tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
  %c3 = brt.convolution(%x, %k) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2>} : (tensor<1x2x4xf32>, tensor<3x2x1xf32>) -> tensor<1x3x4xf32>
  %y3 = brt.add(%c3, %sb) : (tensor<1x3x4xf32>, tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
  return %y1, %y2, %y3 : tensor<1x3x4xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>
}

// A shift alone whose per-feature vector is a scalar broadcast to [C], read
// elsewhere too: nothing folds, and that vector stays as it was.
// CHECK-LABEL: func.func @shift_of_a_scalar_vector
// CHECK: %[[V:.*]] = brt.broadcast_in_dim(%{{.*}}) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<3xf32>
// CHECK: %[[C:.*]] = brt.convolution
// CHECK-NEXT: %[[Y:.*]] = brt.add(%[[C]],
// CHECK-NEXT: return %[[Y]], %[[V]]
func.func @shift_of_a_scalar_vector(%x: tensor<1x2x4xf32>) -> (tensor<1x3x4xf32>, tensor<3xf32>) {
  %k = brt.constant() {value = dense<0.5> : tensor<3x2x1xf32>} : () -> tensor<3x2x1xf32>
  %s = brt.constant() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %v = brt.broadcast_in_dim(%s) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<3xf32>
  %vb = brt.broadcast_in_dim(%v) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<1x3x4xf32>
  %c = brt.convolution(%x, %k) {input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2>, kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2>, output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2>} : (tensor<1x2x4xf32>, tensor<3x2x1xf32>) -> tensor<1x3x4xf32>
  %y = brt.add(%c, %vb) : (tensor<1x3x4xf32>, tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
  return %y, %v : tensor<1x3x4xf32>, tensor<3xf32>
}

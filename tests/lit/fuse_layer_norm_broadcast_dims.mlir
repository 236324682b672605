// RUN: brt-opt %s --brt-fuse-layer-norm --canonicalize | FileCheck %s

// A layer norm's mean and variance are reduced over the last dim and must be
// broadcast back along the others, its scale and shift along the last. On a
// square input a broadcast along the wrong dim has the same type but mixes
// rows with columns: that is no layer norm, and nothing fuses.

// The right broadcasts on a square input: a layer norm.
// CHECK-LABEL: func.func @square
// CHECK-NEXT: %[[N:.*]] = brt.layer_norm(%arg0, %arg1, %arg2)
// CHECK-NEXT: return %[[N]]
func.func @square(%x: tensor<4x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4x4xf32> {
  %zero = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %n = brt.constant() {value = dense<4.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %eps = brt.constant() {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %0 = brt.reduce(%x, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = brt.broadcast_in_dim(%0) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %2 = brt.broadcast_in_dim(%n) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %3 = brt.divide(%1, %2) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %4 = brt.broadcast_in_dim(%3) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x4xf32>
  %5 = brt.subtract(%x, %4) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %6 = brt.multiply(%5, %5) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %7 = brt.reduce(%6, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %8 = brt.broadcast_in_dim(%7) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %9 = brt.broadcast_in_dim(%n) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %10 = brt.divide(%8, %9) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %11 = brt.broadcast_in_dim(%eps) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %12 = brt.add(%10, %11) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %13 = brt.rsqrt(%12) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %14 = brt.broadcast_in_dim(%13) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x4xf32>
  %15 = brt.multiply(%5, %14) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %16 = brt.broadcast_in_dim(%g) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %17 = brt.multiply(%15, %16) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %18 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %19 = brt.add(%17, %18) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %19 : tensor<4x4xf32>
}

// The mean broadcast back along dim 1 (x - jnp.mean(x, axis=1)[None, :]).
// CHECK-LABEL: func.func @mean_transposed
// CHECK-NOT: brt.layer_norm
// CHECK: return
func.func @mean_transposed(%x: tensor<4x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4x4xf32> {
  %zero = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %n = brt.constant() {value = dense<4.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %eps = brt.constant() {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %0 = brt.reduce(%x, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = brt.broadcast_in_dim(%0) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<1x4xf32>
  %2 = brt.broadcast_in_dim(%n) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x4xf32>
  %3 = brt.divide(%1, %2) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %4 = brt.broadcast_in_dim(%3) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<1x4xf32>) -> tensor<4x4xf32>
  %5 = brt.subtract(%x, %4) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %6 = brt.multiply(%5, %5) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %7 = brt.reduce(%6, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %8 = brt.broadcast_in_dim(%7) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %9 = brt.broadcast_in_dim(%n) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %10 = brt.divide(%8, %9) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %11 = brt.broadcast_in_dim(%eps) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %12 = brt.add(%10, %11) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %13 = brt.rsqrt(%12) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %14 = brt.broadcast_in_dim(%13) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x4xf32>
  %15 = brt.multiply(%5, %14) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %16 = brt.broadcast_in_dim(%g) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %17 = brt.multiply(%15, %16) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %18 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %19 = brt.add(%17, %18) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %19 : tensor<4x4xf32>
}

// The variance broadcast back along dim 1: rsqrt's broadcast is right for
// its [1, 4], the reduce's into it is not.
// CHECK-LABEL: func.func @variance_transposed
// CHECK-NOT: brt.layer_norm
// CHECK: return
func.func @variance_transposed(%x: tensor<4x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4x4xf32> {
  %zero = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %n = brt.constant() {value = dense<4.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %eps = brt.constant() {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %0 = brt.reduce(%x, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = brt.broadcast_in_dim(%0) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %2 = brt.broadcast_in_dim(%n) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %3 = brt.divide(%1, %2) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %4 = brt.broadcast_in_dim(%3) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x4xf32>
  %5 = brt.subtract(%x, %4) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %6 = brt.multiply(%5, %5) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %7 = brt.reduce(%6, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %8 = brt.broadcast_in_dim(%7) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<1x4xf32>
  %9 = brt.broadcast_in_dim(%n) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x4xf32>
  %10 = brt.divide(%8, %9) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %11 = brt.broadcast_in_dim(%eps) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x4xf32>
  %12 = brt.add(%10, %11) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %13 = brt.rsqrt(%12) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %14 = brt.broadcast_in_dim(%13) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<1x4xf32>) -> tensor<4x4xf32>
  %15 = brt.multiply(%5, %14) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %16 = brt.broadcast_in_dim(%g) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %17 = brt.multiply(%15, %16) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %18 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %19 = brt.add(%17, %18) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %19 : tensor<4x4xf32>
}

// rsqrt(var + eps) broadcast back transposed ([4, 1] read as [1, 4]).
// CHECK-LABEL: func.func @rsqrt_transposed
// CHECK-NOT: brt.layer_norm
// CHECK: return
func.func @rsqrt_transposed(%x: tensor<4x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4x4xf32> {
  %zero = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %n = brt.constant() {value = dense<4.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %eps = brt.constant() {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %0 = brt.reduce(%x, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = brt.broadcast_in_dim(%0) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %2 = brt.broadcast_in_dim(%n) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %3 = brt.divide(%1, %2) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %4 = brt.broadcast_in_dim(%3) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x4xf32>
  %5 = brt.subtract(%x, %4) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %6 = brt.multiply(%5, %5) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %7 = brt.reduce(%6, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %8 = brt.broadcast_in_dim(%7) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %9 = brt.broadcast_in_dim(%n) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %10 = brt.divide(%8, %9) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %11 = brt.broadcast_in_dim(%eps) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %12 = brt.add(%10, %11) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %13 = brt.rsqrt(%12) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %14 = brt.broadcast_in_dim(%13) {broadcast_dimensions = array<i64: 1, 0>} : (tensor<4x1xf32>) -> tensor<4x4xf32>
  %15 = brt.multiply(%5, %14) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %16 = brt.broadcast_in_dim(%g) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %17 = brt.multiply(%15, %16) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %18 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %19 = brt.add(%17, %18) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %19 : tensor<4x4xf32>
}

// The scale broadcast along dim 0: a scale per row, not per feature.
// CHECK-LABEL: func.func @scale_by_row
// CHECK-NOT: brt.layer_norm
// CHECK: return
func.func @scale_by_row(%x: tensor<4x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4x4xf32> {
  %zero = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %n = brt.constant() {value = dense<4.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %eps = brt.constant() {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %0 = brt.reduce(%x, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = brt.broadcast_in_dim(%0) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %2 = brt.broadcast_in_dim(%n) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %3 = brt.divide(%1, %2) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %4 = brt.broadcast_in_dim(%3) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x4xf32>
  %5 = brt.subtract(%x, %4) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %6 = brt.multiply(%5, %5) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %7 = brt.reduce(%6, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %8 = brt.broadcast_in_dim(%7) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %9 = brt.broadcast_in_dim(%n) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %10 = brt.divide(%8, %9) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %11 = brt.broadcast_in_dim(%eps) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %12 = brt.add(%10, %11) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %13 = brt.rsqrt(%12) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %14 = brt.broadcast_in_dim(%13) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x4xf32>
  %15 = brt.multiply(%5, %14) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %16 = brt.broadcast_in_dim(%g) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %17 = brt.multiply(%15, %16) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %18 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %19 = brt.add(%17, %18) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %19 : tensor<4x4xf32>
}

// The shift broadcast along dim 0: a shift per row, not per feature.
// CHECK-LABEL: func.func @shift_by_row
// CHECK-NOT: brt.layer_norm
// CHECK: return
func.func @shift_by_row(%x: tensor<4x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4x4xf32> {
  %zero = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %n = brt.constant() {value = dense<4.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %eps = brt.constant() {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %0 = brt.reduce(%x, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = brt.broadcast_in_dim(%0) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %2 = brt.broadcast_in_dim(%n) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %3 = brt.divide(%1, %2) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %4 = brt.broadcast_in_dim(%3) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x4xf32>
  %5 = brt.subtract(%x, %4) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %6 = brt.multiply(%5, %5) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %7 = brt.reduce(%6, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %8 = brt.broadcast_in_dim(%7) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %9 = brt.broadcast_in_dim(%n) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %10 = brt.divide(%8, %9) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %11 = brt.broadcast_in_dim(%eps) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %12 = brt.add(%10, %11) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %13 = brt.rsqrt(%12) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %14 = brt.broadcast_in_dim(%13) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x4xf32>
  %15 = brt.multiply(%5, %14) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %16 = brt.broadcast_in_dim(%g) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %17 = brt.multiply(%15, %16) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %18 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %19 = brt.add(%17, %18) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %19 : tensor<4x4xf32>
}

// torch.nn.LayerNorm as torch-mlir decomposes it, on a square input: the
// variance in f64 around its own mean, through keepdim reshapes.
// CHECK-LABEL: func.func @torch_square
// CHECK-NEXT: %[[N:.*]] = brt.layer_norm(%arg0, %arg1, %arg2)
// CHECK-NEXT: return %[[N]]
func.func @torch_square(%x: tensor<4x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4x4xf32> {
  %z32 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %z64 = brt.constant() {value = dense<0.000000e+00> : tensor<f64>} : () -> tensor<f64>
  %n32 = brt.constant() {value = dense<4.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %n64 = brt.constant() {value = dense<4.000000e+00> : tensor<f64>} : () -> tensor<f64>
  %c = brt.convert(%x) : (tensor<4x4xf32>) -> tensor<4x4xf64>
  %0 = brt.reduce(%c, %z64) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf64>, tensor<f64>) -> tensor<4xf64>
  %1 = brt.reshape(%0) : (tensor<4xf64>) -> tensor<4x1xf64>
  %2 = brt.broadcast_in_dim(%n64) {broadcast_dimensions = array<i64>} : (tensor<f64>) -> tensor<4x1xf64>
  %3 = brt.divide(%1, %2) : (tensor<4x1xf64>, tensor<4x1xf64>) -> tensor<4x1xf64>
  %4 = brt.broadcast_in_dim(%3) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf64>) -> tensor<4x4xf64>
  %5 = brt.subtract(%c, %4) : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %6 = brt.multiply(%5, %5) : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %7 = brt.reduce(%6, %z64) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf64>, tensor<f64>) -> tensor<4xf64>
  %8 = brt.reshape(%7) : (tensor<4xf64>) -> tensor<4x1xf64>
  %9 = brt.divide(%8, %2) : (tensor<4x1xf64>, tensor<4x1xf64>) -> tensor<4x1xf64>
  %var = brt.convert(%9) : (tensor<4x1xf64>) -> tensor<4x1xf32>
  %10 = brt.reduce(%x, %z32) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %11 = brt.reshape(%10) : (tensor<4xf32>) -> tensor<4x1xf32>
  %12 = brt.broadcast_in_dim(%n32) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %mean = brt.divide(%11, %12) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %eps = brt.constant() {value = dense<9.99999996E-13> : tensor<f32>} : () -> tensor<f32>
  %13 = brt.broadcast_in_dim(%eps) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %14 = brt.add(%var, %13) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %15 = brt.rsqrt(%14) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %16 = brt.broadcast_in_dim(%mean) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x4xf32>
  %17 = brt.subtract(%x, %16) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %18 = brt.broadcast_in_dim(%15) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x4xf32>
  %19 = brt.multiply(%17, %18) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %20 = brt.broadcast_in_dim(%g) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %21 = brt.multiply(%19, %20) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %22 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %23 = brt.add(%21, %22) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %23 : tensor<4x4xf32>
}

// The f64 mean the variance is taken around broadcast transposed.
// CHECK-LABEL: func.func @torch_mean64_transposed
// CHECK-NOT: brt.layer_norm
// CHECK: return
func.func @torch_mean64_transposed(%x: tensor<4x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4x4xf32> {
  %z32 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %z64 = brt.constant() {value = dense<0.000000e+00> : tensor<f64>} : () -> tensor<f64>
  %n32 = brt.constant() {value = dense<4.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %n64 = brt.constant() {value = dense<4.000000e+00> : tensor<f64>} : () -> tensor<f64>
  %c = brt.convert(%x) : (tensor<4x4xf32>) -> tensor<4x4xf64>
  %0 = brt.reduce(%c, %z64) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf64>, tensor<f64>) -> tensor<4xf64>
  %1 = brt.reshape(%0) : (tensor<4xf64>) -> tensor<4x1xf64>
  %2 = brt.broadcast_in_dim(%n64) {broadcast_dimensions = array<i64>} : (tensor<f64>) -> tensor<4x1xf64>
  %3 = brt.divide(%1, %2) : (tensor<4x1xf64>, tensor<4x1xf64>) -> tensor<4x1xf64>
  %4 = brt.broadcast_in_dim(%3) {broadcast_dimensions = array<i64: 1, 0>} : (tensor<4x1xf64>) -> tensor<4x4xf64>
  %5 = brt.subtract(%c, %4) : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %6 = brt.multiply(%5, %5) : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %7 = brt.reduce(%6, %z64) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf64>, tensor<f64>) -> tensor<4xf64>
  %8 = brt.reshape(%7) : (tensor<4xf64>) -> tensor<4x1xf64>
  %9 = brt.divide(%8, %2) : (tensor<4x1xf64>, tensor<4x1xf64>) -> tensor<4x1xf64>
  %var = brt.convert(%9) : (tensor<4x1xf64>) -> tensor<4x1xf32>
  %10 = brt.reduce(%x, %z32) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %11 = brt.reshape(%10) : (tensor<4xf32>) -> tensor<4x1xf32>
  %12 = brt.broadcast_in_dim(%n32) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %mean = brt.divide(%11, %12) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %eps = brt.constant() {value = dense<9.99999996E-13> : tensor<f32>} : () -> tensor<f32>
  %13 = brt.broadcast_in_dim(%eps) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %14 = brt.add(%var, %13) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %15 = brt.rsqrt(%14) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %16 = brt.broadcast_in_dim(%mean) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x4xf32>
  %17 = brt.subtract(%x, %16) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %18 = brt.broadcast_in_dim(%15) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x4xf32>
  %19 = brt.multiply(%17, %18) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %20 = brt.broadcast_in_dim(%g) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %21 = brt.multiply(%19, %20) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %22 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %23 = brt.add(%21, %22) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %23 : tensor<4x4xf32>
}

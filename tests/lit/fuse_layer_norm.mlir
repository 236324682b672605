// RUN: brt-opt %s --brt-fuse-layer-norm --canonicalize | FileCheck %s

// (x - mean) * rsqrt(var + eps) * g + b over the last dim, as JAX lowers it.
// CHECK-LABEL: func.func @layer_norm
// CHECK-NEXT: %[[N:.*]] = brt.layer_norm(%arg0, %arg1, %arg2) {epsilon = 9.99999974{{[0-9]*}}E-6 : f64}
// CHECK-NEXT: return %[[N]]
func.func @layer_norm(%arg0: tensor<4x8xf32>, %arg1: tensor<8xf32>, %arg2: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %1 = brt.reduce(%arg0, %0) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = brt.broadcast_in_dim(%1) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %3 = brt.constant() {value = dense<8.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %4 = brt.broadcast_in_dim(%3) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %5 = brt.divide(%2, %4) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %6 = brt.broadcast_in_dim(%5) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %7 = brt.subtract(%arg0, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = brt.multiply(%7, %7) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = brt.reduce(%8, %0) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %10 = brt.broadcast_in_dim(%9) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %11 = brt.divide(%10, %4) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %12 = brt.constant() {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %13 = brt.broadcast_in_dim(%12) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %14 = brt.add(%11, %13) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %15 = brt.rsqrt(%14) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %16 = brt.broadcast_in_dim(%15) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %17 = brt.multiply(%7, %16) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %18 = brt.broadcast_in_dim(%arg1) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<1x8xf32>
  %19 = brt.broadcast_in_dim(%18) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<1x8xf32>) -> tensor<4x8xf32>
  %20 = brt.multiply(%17, %19) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %21 = brt.broadcast_in_dim(%arg2) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<1x8xf32>
  %22 = brt.broadcast_in_dim(%21) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<1x8xf32>) -> tensor<4x8xf32>
  %23 = brt.add(%20, %22) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %23 : tensor<4x8xf32>
}

// Normalizing over a leading dimension is not a layer norm over the last.
// CHECK-LABEL: func.func @wrong_axis
// CHECK-NOT: brt.layer_norm
func.func @wrong_axis(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %1 = brt.reduce(%x, %0) {dimensions = array<i64: 0>, reducer = "add"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
  %2 = brt.broadcast_in_dim(%1) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<1x8xf32>
  %3 = brt.constant() {value = dense<4.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %4 = brt.broadcast_in_dim(%3) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x8xf32>
  %5 = brt.divide(%2, %4) : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %6 = brt.broadcast_in_dim(%5) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<1x8xf32>) -> tensor<4x8xf32>
  %7 = brt.subtract(%x, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = brt.multiply(%7, %7) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = brt.reduce(%8, %0) {dimensions = array<i64: 0>, reducer = "add"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
  %10 = brt.broadcast_in_dim(%9) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<1x8xf32>
  %11 = brt.divide(%10, %4) : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %12 = brt.constant() {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %13 = brt.broadcast_in_dim(%12) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x8xf32>
  %14 = brt.add(%11, %13) : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %15 = brt.rsqrt(%14) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %16 = brt.broadcast_in_dim(%15) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<1x8xf32>) -> tensor<4x8xf32>
  %17 = brt.multiply(%7, %16) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %18 = brt.broadcast_in_dim(%g) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<4x8xf32>
  %20 = brt.multiply(%17, %18) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %21 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<4x8xf32>
  %23 = brt.add(%20, %21) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %23 : tensor<4x8xf32>
}

// torch.nn.LayerNorm as torch-mlir decomposes it: the mean in f32, the
// variance in f64 around its own f64 mean, keepdim reshapes.
// CHECK-LABEL: func.func @torch_layer_norm
// CHECK-NEXT: %[[N:.*]] = brt.layer_norm(%arg0, %arg1, %arg2) {epsilon = 9.9999999{{[0-9]*}}E-13 : f64}
// CHECK-NEXT: return %[[N]]
func.func @torch_layer_norm(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %z32 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %z64 = brt.constant() {value = dense<0.000000e+00> : tensor<f64>} : () -> tensor<f64>
  %n32 = brt.constant() {value = dense<8.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %n64 = brt.constant() {value = dense<8.000000e+00> : tensor<f64>} : () -> tensor<f64>
  %c = brt.convert(%x) : (tensor<4x8xf32>) -> tensor<4x8xf64>
  %0 = brt.reduce(%c, %z64) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x8xf64>, tensor<f64>) -> tensor<4xf64>
  %1 = brt.reshape(%0) : (tensor<4xf64>) -> tensor<4x1xf64>
  %2 = brt.broadcast_in_dim(%n64) {broadcast_dimensions = array<i64>} : (tensor<f64>) -> tensor<4x1xf64>
  %3 = brt.divide(%1, %2) : (tensor<4x1xf64>, tensor<4x1xf64>) -> tensor<4x1xf64>
  %4 = brt.broadcast_in_dim(%3) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf64>) -> tensor<4x8xf64>
  %5 = brt.subtract(%c, %4) : (tensor<4x8xf64>, tensor<4x8xf64>) -> tensor<4x8xf64>
  %6 = brt.multiply(%5, %5) : (tensor<4x8xf64>, tensor<4x8xf64>) -> tensor<4x8xf64>
  %7 = brt.reduce(%6, %z64) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x8xf64>, tensor<f64>) -> tensor<4xf64>
  %8 = brt.reshape(%7) : (tensor<4xf64>) -> tensor<4x1xf64>
  %9 = brt.divide(%8, %2) : (tensor<4x1xf64>, tensor<4x1xf64>) -> tensor<4x1xf64>
  %var = brt.convert(%9) : (tensor<4x1xf64>) -> tensor<4x1xf32>
  %10 = brt.reduce(%x, %z32) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %11 = brt.reshape(%10) : (tensor<4xf32>) -> tensor<4x1xf32>
  %12 = brt.broadcast_in_dim(%n32) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %mean = brt.divide(%11, %12) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %eps = brt.constant() {value = dense<9.99999996E-13> : tensor<f32>} : () -> tensor<f32>
  %13 = brt.broadcast_in_dim(%eps) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x1xf32>
  %14 = brt.add(%var, %13) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %15 = brt.rsqrt(%14) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %16 = brt.broadcast_in_dim(%mean) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %17 = brt.subtract(%x, %16) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %18 = brt.broadcast_in_dim(%15) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %19 = brt.multiply(%17, %18) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %20 = brt.broadcast_in_dim(%g) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<4x8xf32>
  %21 = brt.multiply(%19, %20) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %22 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<4x8xf32>
  %23 = brt.add(%21, %22) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %23 : tensor<4x8xf32>
}

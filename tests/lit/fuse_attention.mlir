// RUN: brt-opt %s --brt-fuse-attention --canonicalize | FileCheck %s
// RUN: brt-opt %s --brt-fuse-attention=target=cuda | FileCheck %s --check-prefix=CUDA

// MiniLM's attention as the compiler has it after fuse-softmax: q and k of
// [b, s, h, d] each scaled by d^-1/4, the padding mask broadcast over the
// heads, PyTorch's safe softmax, and the result transposed back to
// [b, s, h, d]: one brt.attention reading the mask at its source.
// CHECK-LABEL: func.func @torch_bert
// CHECK-NEXT: %[[A:.*]] = brt.attention(%arg0, %arg1, %arg2, %arg3) {k_dims = array<i64: 0, 2, 1, 3>, permutation = array<i64: 0, 2, 1, 3>, q_dims = array<i64: 0, 2, 1, 3>, scale = 0.176776{{[0-9]*}} : f64, v_dims = array<i64: 0, 2, 1, 3>, zero_masked_rows = 1 : i64} : (tensor<2x16x4x32xf32>, tensor<2x16x4x32xf32>, tensor<2x16x4x32xf32>, tensor<2x1x16x16xf32>) -> tensor<2x16x4x32xf32>
// CHECK-NEXT: return %[[A]]
// CUDA-LABEL: func.func @torch_bert
// CUDA-NOT: brt.attention
func.func @torch_bert(%q: tensor<2x16x4x32xf32>, %k: tensor<2x16x4x32xf32>, %v: tensor<2x16x4x32xf32>, %mask: tensor<2x1x16x16xf32>) -> tensor<2x16x4x32xf32> {
  %c = brt.constant() {value = dense<0.420448214> : tensor<f32>} : () -> tensor<f32>
  %cb = brt.broadcast_in_dim(%c) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x16x4x32xf32>
  %qs = brt.multiply(%q, %cb) : (tensor<2x16x4x32xf32>, tensor<2x16x4x32xf32>) -> tensor<2x16x4x32xf32>
  %ks = brt.multiply(%k, %cb) : (tensor<2x16x4x32xf32>, tensor<2x16x4x32xf32>) -> tensor<2x16x4x32xf32>
  %s = brt.dot_general(%qs, %ks) {lhs_batching_dimensions = array<i64: 0, 2>, lhs_contracting_dimensions = array<i64: 3>, rhs_batching_dimensions = array<i64: 0, 2>, rhs_contracting_dimensions = array<i64: 3>} : (tensor<2x16x4x32xf32>, tensor<2x16x4x32xf32>) -> tensor<2x4x16x16xf32>
  %m = brt.broadcast_in_dim(%mask) {broadcast_dimensions = array<i64: 0, 1, 2, 3>} : (tensor<2x1x16x16xf32>) -> tensor<2x4x16x16xf32>
  %sm = brt.add(%s, %m) : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %p = brt.softmax(%sm) {axis = 3 : i64, zero_masked_rows = 1 : i64} : (tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %o = brt.dot_general(%p, %v) {lhs_batching_dimensions = array<i64: 0, 1>, lhs_contracting_dimensions = array<i64: 3>, rhs_batching_dimensions = array<i64: 0, 2>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<2x4x16x16xf32>, tensor<2x16x4x32xf32>) -> tensor<2x4x16x32xf32>
  %t = brt.transpose(%o) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x4x16x32xf32>) -> tensor<2x16x4x32xf32>
  return %t : tensor<2x16x4x32xf32>
}

// JAX's form: [b, h, s, d], the scores divided by sqrt(d), a key mask [b, s]
// broadcast in order onto dims 0 and 3 (read through a reshape to
// [b, 1, 1, s]), no transpose after.
// CHECK-LABEL: func.func @jax_divided_scores
// CHECK-NEXT: %[[M:.*]] = brt.reshape(%arg3) : (tensor<2x8xf32>) -> tensor<2x1x1x8xf32>
// CHECK-NEXT: %[[A:.*]] = brt.attention(%arg0, %arg1, %arg2, %[[M]]) {k_dims = array<i64: 0, 1, 2, 3>, q_dims = array<i64: 0, 1, 2, 3>, scale = 2.500000e-01 : f64, v_dims = array<i64: 0, 1, 2, 3>}
// CHECK-NEXT: return %[[A]]
func.func @jax_divided_scores(%q: tensor<2x3x8x16xf32>, %k: tensor<2x3x8x16xf32>, %v: tensor<2x3x8x5xf32>, %mask: tensor<2x8xf32>) -> tensor<2x3x8x5xf32> {
  %s = brt.dot_general(%q, %k) {lhs_batching_dimensions = array<i64: 0, 1>, lhs_contracting_dimensions = array<i64: 3>, rhs_batching_dimensions = array<i64: 0, 1>, rhs_contracting_dimensions = array<i64: 3>} : (tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>) -> tensor<2x3x8x8xf32>
  %c = brt.constant() {value = dense<4.0> : tensor<f32>} : () -> tensor<f32>
  %cb = brt.broadcast_in_dim(%c) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x3x8x8xf32>
  %sd = brt.divide(%s, %cb) : (tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  %m = brt.broadcast_in_dim(%mask) {broadcast_dimensions = array<i64: 0, 3>} : (tensor<2x8xf32>) -> tensor<2x3x8x8xf32>
  %sm = brt.add(%m, %sd) : (tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  %p = brt.softmax(%sm) {axis = 3 : i64} : (tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  %o = brt.dot_general(%p, %v) {lhs_batching_dimensions = array<i64: 0, 1>, lhs_contracting_dimensions = array<i64: 3>, rhs_batching_dimensions = array<i64: 0, 1>, rhs_contracting_dimensions = array<i64: 2>} : (tensor<2x3x8x8xf32>, tensor<2x3x8x5xf32>) -> tensor<2x3x8x5xf32>
  return %o : tensor<2x3x8x5xf32>
}

// The probabilities are also returned (attention weights): they must be
// materialized, so nothing fuses.
// CHECK-LABEL: func.func @weights_escape
// CHECK-NOT: brt.attention
// CHECK: return
func.func @weights_escape(%q: tensor<3x8x16xf32>, %k: tensor<3x8x16xf32>, %v: tensor<3x8x5xf32>) -> (tensor<3x8x5xf32>, tensor<3x8x8xf32>) {
  %s = brt.dot_general(%q, %k) {lhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_batching_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 2>} : (tensor<3x8x16xf32>, tensor<3x8x16xf32>) -> tensor<3x8x8xf32>
  %p = brt.softmax(%s) {axis = 2 : i64} : (tensor<3x8x8xf32>) -> tensor<3x8x8xf32>
  %o = brt.dot_general(%p, %v) {lhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_batching_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<3x8x8xf32>, tensor<3x8x5xf32>) -> tensor<3x8x5xf32>
  return %o, %p : tensor<3x8x5xf32>, tensor<3x8x8xf32>
}

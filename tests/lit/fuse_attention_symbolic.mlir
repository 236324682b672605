// RUN: brt-opt %s --brt-fuse-attention --canonicalize | FileCheck %s

// fuse_attention.mlir's JAX form with symbolic batch b and sequence s
// (SymbolicDims.h): q, k of [b, 3, s, 16], the scores divided by 4, a key
// mask [b, s] broadcast in order onto dims 0 and 3: one brt.attention reading
// the mask through a reshape to [b, 1, 1, s] that keeps the expressions. The
// pass compares no sizes; the attention takes the values' type.
// CHECK-LABEL: func.func @symbolic_jax_attention
// CHECK-NEXT: %[[M:.*]] = brt.reshape(%arg3) : (tensor<?x?xf32, ["b", "s"]>) -> tensor<?x1x1x?xf32, ["b", "", "", "s"]>
// CHECK-NEXT: %[[A:.*]] = brt.attention(%arg0, %arg1, %arg2, %[[M]]) {k_dims = array<i64: 0, 1, 2, 3>, q_dims = array<i64: 0, 1, 2, 3>, scale = 2.500000e-01 : f64, v_dims = array<i64: 0, 1, 2, 3>}
// CHECK-SAME: -> tensor<?x3x?x5xf32, ["b", "", "s", ""]>
// CHECK-NEXT: return %[[A]]
func.func @symbolic_jax_attention(%q: tensor<?x3x?x16xf32, ["b", "", "s", ""]>, %k: tensor<?x3x?x16xf32, ["b", "", "s", ""]>, %v: tensor<?x3x?x5xf32, ["b", "", "s", ""]>, %mask: tensor<?x?xf32, ["b", "s"]>) -> tensor<?x3x?x5xf32, ["b", "", "s", ""]> {
  %s = brt.dot_general(%q, %k) {lhs_batching_dimensions = array<i64: 0, 1>, lhs_contracting_dimensions = array<i64: 3>, rhs_batching_dimensions = array<i64: 0, 1>, rhs_contracting_dimensions = array<i64: 3>} : (tensor<?x3x?x16xf32, ["b", "", "s", ""]>, tensor<?x3x?x16xf32, ["b", "", "s", ""]>) -> tensor<?x3x?x?xf32, ["b", "", "s", "s"]>
  %c = brt.constant() {value = dense<4.0> : tensor<f32>} : () -> tensor<f32>
  %cb = brt.broadcast_in_dim(%c) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<?x3x?x?xf32, ["b", "", "s", "s"]>
  %sd = brt.divide(%s, %cb) : (tensor<?x3x?x?xf32, ["b", "", "s", "s"]>, tensor<?x3x?x?xf32, ["b", "", "s", "s"]>) -> tensor<?x3x?x?xf32, ["b", "", "s", "s"]>
  %m = brt.broadcast_in_dim(%mask) {broadcast_dimensions = array<i64: 0, 3>} : (tensor<?x?xf32, ["b", "s"]>) -> tensor<?x3x?x?xf32, ["b", "", "s", "s"]>
  %sm = brt.add(%m, %sd) : (tensor<?x3x?x?xf32, ["b", "", "s", "s"]>, tensor<?x3x?x?xf32, ["b", "", "s", "s"]>) -> tensor<?x3x?x?xf32, ["b", "", "s", "s"]>
  %p = brt.softmax(%sm) {axis = 3 : i64} : (tensor<?x3x?x?xf32, ["b", "", "s", "s"]>) -> tensor<?x3x?x?xf32, ["b", "", "s", "s"]>
  %o = brt.dot_general(%p, %v) {lhs_batching_dimensions = array<i64: 0, 1>, lhs_contracting_dimensions = array<i64: 3>, rhs_batching_dimensions = array<i64: 0, 1>, rhs_contracting_dimensions = array<i64: 2>} : (tensor<?x3x?x?xf32, ["b", "", "s", "s"]>, tensor<?x3x?x5xf32, ["b", "", "s", ""]>) -> tensor<?x3x?x5xf32, ["b", "", "s", ""]>
  return %o : tensor<?x3x?x5xf32, ["b", "", "s", ""]>
}

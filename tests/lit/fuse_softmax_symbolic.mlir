// RUN: brt-opt %s --cse --brt-fuse-softmax --canonicalize | FileCheck %s

// jax.nn.softmax over the keys of [b, 4, s, s] scores (symbolic b and s,
// SymbolicDims.h), keepdim reshapes before the broadcasts: one brt.softmax of
// the scores' type.
// CHECK-LABEL: func.func @symbolic_softmax
// CHECK-NEXT: %[[S:.*]] = brt.softmax(%arg0) {axis = 3 : i64} : (tensor<?x4x?x?xf32, ["b", "", "s", "s"]>) -> tensor<?x4x?x?xf32, ["b", "", "s", "s"]>
// CHECK-NEXT: return %[[S]]
func.func @symbolic_softmax(%x: tensor<?x4x?x?xf32, ["b", "", "s", "s"]>) -> tensor<?x4x?x?xf32, ["b", "", "s", "s"]> {
  %ninf = brt.constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %zero = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %0 = brt.reduce(%x, %ninf) {dimensions = array<i64: 3>, reducer = "max"} : (tensor<?x4x?x?xf32, ["b", "", "s", "s"]>, tensor<f32>) -> tensor<?x4x?xf32, ["b", "", "s"]>
  %1 = brt.reshape(%0) : (tensor<?x4x?xf32, ["b", "", "s"]>) -> tensor<?x4x?x1xf32, ["b", "", "s", ""]>
  %2 = brt.broadcast_in_dim(%1) {broadcast_dimensions = array<i64: 0, 1, 2, 3>} : (tensor<?x4x?x1xf32, ["b", "", "s", ""]>) -> tensor<?x4x?x?xf32, ["b", "", "s", "s"]>
  %3 = brt.subtract(%x, %2) : (tensor<?x4x?x?xf32, ["b", "", "s", "s"]>, tensor<?x4x?x?xf32, ["b", "", "s", "s"]>) -> tensor<?x4x?x?xf32, ["b", "", "s", "s"]>
  %4 = brt.exponential(%3) : (tensor<?x4x?x?xf32, ["b", "", "s", "s"]>) -> tensor<?x4x?x?xf32, ["b", "", "s", "s"]>
  %5 = brt.reduce(%4, %zero) {dimensions = array<i64: 3>, reducer = "add"} : (tensor<?x4x?x?xf32, ["b", "", "s", "s"]>, tensor<f32>) -> tensor<?x4x?xf32, ["b", "", "s"]>
  %6 = brt.reshape(%5) : (tensor<?x4x?xf32, ["b", "", "s"]>) -> tensor<?x4x?x1xf32, ["b", "", "s", ""]>
  %7 = brt.broadcast_in_dim(%6) {broadcast_dimensions = array<i64: 0, 1, 2, 3>} : (tensor<?x4x?x1xf32, ["b", "", "s", ""]>) -> tensor<?x4x?x?xf32, ["b", "", "s", "s"]>
  %8 = brt.divide(%4, %7) : (tensor<?x4x?x?xf32, ["b", "", "s", "s"]>, tensor<?x4x?x?xf32, ["b", "", "s", "s"]>) -> tensor<?x4x?x?xf32, ["b", "", "s", "s"]>
  return %8 : tensor<?x4x?x?xf32, ["b", "", "s", "s"]>
}

// The sums of [b, 2*b] are regrouped as [2*b, b] (a reshape that moves
// values between rows, though both sides read ?x?) and broadcast back with
// their dims swapped: the divisor is no row sum, so no softmax (the same
// program at b = 3, [3, 6] -> [6, 3, 1], is not fused either).
// CHECK-LABEL: func.func @symbolic_regrouped_sum
// CHECK-NOT: brt.softmax
// CHECK: brt.divide
func.func @symbolic_regrouped_sum(%x: tensor<?x?x?xf32, ["b", "2*b", "s"]>) -> tensor<?x?x?xf32, ["b", "2*b", "s"]> {
  %ninf = brt.constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %zero = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %0 = brt.reduce(%x, %ninf) {dimensions = array<i64: 2>, reducer = "max"} : (tensor<?x?x?xf32, ["b", "2*b", "s"]>, tensor<f32>) -> tensor<?x?xf32, ["b", "2*b"]>
  %1 = brt.broadcast_in_dim(%0) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x?xf32, ["b", "2*b"]>) -> tensor<?x?x?xf32, ["b", "2*b", "s"]>
  %2 = brt.subtract(%x, %1) : (tensor<?x?x?xf32, ["b", "2*b", "s"]>, tensor<?x?x?xf32, ["b", "2*b", "s"]>) -> tensor<?x?x?xf32, ["b", "2*b", "s"]>
  %3 = brt.exponential(%2) : (tensor<?x?x?xf32, ["b", "2*b", "s"]>) -> tensor<?x?x?xf32, ["b", "2*b", "s"]>
  %4 = brt.reduce(%3, %zero) {dimensions = array<i64: 2>, reducer = "add"} : (tensor<?x?x?xf32, ["b", "2*b", "s"]>, tensor<f32>) -> tensor<?x?xf32, ["b", "2*b"]>
  %5 = brt.reshape(%4) : (tensor<?x?xf32, ["b", "2*b"]>) -> tensor<?x?x1xf32, ["2*b", "b", ""]>
  %6 = brt.broadcast_in_dim(%5) {broadcast_dimensions = array<i64: 1, 0, 2>} : (tensor<?x?x1xf32, ["2*b", "b", ""]>) -> tensor<?x?x?xf32, ["b", "2*b", "s"]>
  %7 = brt.divide(%3, %6) : (tensor<?x?x?xf32, ["b", "2*b", "s"]>, tensor<?x?x?xf32, ["b", "2*b", "s"]>) -> tensor<?x?x?xf32, ["b", "2*b", "s"]>
  return %7 : tensor<?x?x?xf32, ["b", "2*b", "s"]>
}

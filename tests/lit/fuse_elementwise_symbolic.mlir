// RUN: brt-opt %s --brt-fuse-elementwise --canonicalize | FileCheck %s

// Symbolic sizes (`?` with the expression in the encoding, SymbolicDims.h):
// a chain over [b, 8] reading a NumPy-style bias fuses as a static one does,
// its result keeping "b".
// CHECK-LABEL: func.func @symbolic_chain
// CHECK-NOT: brt.broadcast_in_dim(
// CHECK: %[[F:.*]] = brt.fused_elementwise(%arg0, %arg1) {constants = array<f64: 5.000000e-01>, ops = "add,tanh,multiply", program = array<i64: 0, 1, -1, 3, -1, -1, 4, 2, -1>}
// CHECK-SAME: (tensor<?x8xf32, ["b", ""]>, tensor<8xf32>) -> tensor<?x8xf32, ["b", ""]>
// CHECK-NEXT: return %[[F]]
func.func @symbolic_chain(%x: tensor<?x8xf32, ["b", ""]>, %b: tensor<8xf32>) -> tensor<?x8xf32, ["b", ""]> {
  %bb = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<?x8xf32, ["b", ""]>
  %h = brt.constant() {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
  %hb = brt.broadcast_in_dim(%h) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<?x8xf32, ["b", ""]>
  %0 = brt.add(%x, %bb) : (tensor<?x8xf32, ["b", ""]>, tensor<?x8xf32, ["b", ""]>) -> tensor<?x8xf32, ["b", ""]>
  %1 = brt.tanh(%0) : (tensor<?x8xf32, ["b", ""]>) -> tensor<?x8xf32, ["b", ""]>
  %2 = brt.multiply(%1, %hb) : (tensor<?x8xf32, ["b", ""]>, tensor<?x8xf32, ["b", ""]>) -> tensor<?x8xf32, ["b", ""]>
  return %2 : tensor<?x8xf32, ["b", ""]>
}

// A per-row [b] broadcast in order over [b, s] is read through a reshape to
// [b, 1] whose type keeps the expression.
// CHECK-LABEL: func.func @symbolic_in_order_broadcast
// CHECK: %[[R:.*]] = brt.reshape(%arg1) : (tensor<?xf32, ["b"]>) -> tensor<?x1xf32, ["b", ""]>
// CHECK-NEXT: %[[F:.*]] = brt.fused_elementwise(%arg0, %[[R]]) {ops = "subtract,exponential"
// CHECK-SAME: -> tensor<?x?xf32, ["b", "s"]>
func.func @symbolic_in_order_broadcast(%x: tensor<?x?xf32, ["b", "s"]>, %m: tensor<?xf32, ["b"]>) -> tensor<?x?xf32, ["b", "s"]> {
  %mb = brt.broadcast_in_dim(%m) {broadcast_dimensions = array<i64: 0>} : (tensor<?xf32, ["b"]>) -> tensor<?x?xf32, ["b", "s"]>
  %0 = brt.subtract(%x, %mb) : (tensor<?x?xf32, ["b", "s"]>, tensor<?x?xf32, ["b", "s"]>) -> tensor<?x?xf32, ["b", "s"]>
  %1 = brt.exponential(%0) : (tensor<?x?xf32, ["b", "s"]>) -> tensor<?x?xf32, ["b", "s"]>
  return %1 : tensor<?x?xf32, ["b", "s"]>
}

// A producer of [b, 8] does not join a consumer of [2*b, 8], though both
// shapes read ?x8: the sizes are compared by their expressions.
// CHECK-LABEL: func.func @symbolic_sizes_differ
// CHECK: %[[E:.*]] = brt.exponential(%arg0)
// CHECK-NEXT: brt.fused_elementwise(%[[E]], %arg1) {ops = "add,negate"
func.func @symbolic_sizes_differ(%x: tensor<?x8xf32, ["b", ""]>, %y: tensor<?x8xf32, ["2*b", ""]>) -> tensor<?x8xf32, ["2*b", ""]> {
  %e = brt.exponential(%x) : (tensor<?x8xf32, ["b", ""]>) -> tensor<?x8xf32, ["b", ""]>
  %0 = brt.add(%e, %y) : (tensor<?x8xf32, ["b", ""]>, tensor<?x8xf32, ["2*b", ""]>) -> tensor<?x8xf32, ["2*b", ""]>
  %1 = brt.negate(%0) : (tensor<?x8xf32, ["2*b", ""]>) -> tensor<?x8xf32, ["2*b", ""]>
  return %1 : tensor<?x8xf32, ["2*b", ""]>
}

// The same for a producer used twice in one group: it stays out when its
// size differs from the group's.
// CHECK-LABEL: func.func @symbolic_shared_value_differs
// CHECK: %[[E:.*]] = brt.exponential(%arg0)
// CHECK-NEXT: brt.fused_elementwise(%[[E]], %arg1) {ops = "add,multiply"
func.func @symbolic_shared_value_differs(%x: tensor<?xf32, ["s"]>, %y: tensor<?xf32, ["s + 1"]>) -> tensor<?xf32, ["s + 1"]> {
  %e = brt.exponential(%x) : (tensor<?xf32, ["s"]>) -> tensor<?xf32, ["s"]>
  %0 = brt.add(%e, %y) : (tensor<?xf32, ["s"]>, tensor<?xf32, ["s + 1"]>) -> tensor<?xf32, ["s + 1"]>
  %1 = brt.multiply(%0, %e) : (tensor<?xf32, ["s + 1"]>, tensor<?xf32, ["s"]>) -> tensor<?xf32, ["s + 1"]>
  return %1 : tensor<?xf32, ["s + 1"]>
}

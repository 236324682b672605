// RUN: brt-opt %s --brt-simplify | FileCheck %s

// q @ k^T with the heads merged into the batch ([b, 4, s, 16] ->
// [4*b, s, 16]), b and s symbolic (SymbolicDims.h): 4*b is the product of the
// merged sizes, so the dot runs over the two batch dims and its result is
// reshaped back, each type keeping its expressions.
// CHECK-LABEL: func.func @symbolic_merged_heads
// CHECK-NEXT: %[[D:.*]] = brt.dot_general(%arg0, %arg1) {lhs_batching_dimensions = array<i64: 0, 1>, lhs_contracting_dimensions = array<i64: 3>, rhs_batching_dimensions = array<i64: 0, 1>, rhs_contracting_dimensions = array<i64: 3>}
// CHECK-SAME: -> tensor<?x4x?x?xf32, ["b", "", "s", "s"]>
// CHECK-NEXT: %[[R:.*]] = brt.reshape(%[[D]]) : (tensor<?x4x?x?xf32, ["b", "", "s", "s"]>) -> tensor<?x?x?xf32, ["4*b", "s", "s"]>
// CHECK-NEXT: return %[[R]]
func.func @symbolic_merged_heads(%q: tensor<?x4x?x16xf32, ["b", "", "s", ""]>, %k: tensor<?x4x?x16xf32, ["b", "", "s", ""]>) -> tensor<?x?x?xf32, ["4*b", "s", "s"]> {
  %0 = brt.reshape(%q) : (tensor<?x4x?x16xf32, ["b", "", "s", ""]>) -> tensor<?x?x16xf32, ["4*b", "s", ""]>
  %1 = brt.reshape(%k) : (tensor<?x4x?x16xf32, ["b", "", "s", ""]>) -> tensor<?x?x16xf32, ["4*b", "s", ""]>
  %2 = brt.dot_general(%0, %1) {lhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_batching_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 2>} : (tensor<?x?x16xf32, ["4*b", "s", ""]>, tensor<?x?x16xf32, ["4*b", "s", ""]>) -> tensor<?x?x?xf32, ["4*b", "s", "s"]>
  return %2 : tensor<?x?x?xf32, ["4*b", "s", "s"]>
}

// The same reshapes to [2*b, 2*s, 16]: not a merge of leading dims (the
// sizes differ by expression), so the dot stays.
// CHECK-LABEL: func.func @symbolic_not_merged
// CHECK: brt.reshape
// CHECK: brt.reshape
// CHECK: brt.dot_general({{.*}}) {lhs_batching_dimensions = array<i64: 0>,
func.func @symbolic_not_merged(%q: tensor<?x4x?x16xf32, ["b", "", "s", ""]>, %k: tensor<?x4x?x16xf32, ["b", "", "s", ""]>) -> tensor<?x?x?xf32, ["2*b", "2*s", "2*s"]> {
  %0 = brt.reshape(%q) : (tensor<?x4x?x16xf32, ["b", "", "s", ""]>) -> tensor<?x?x16xf32, ["2*b", "2*s", ""]>
  %1 = brt.reshape(%k) : (tensor<?x4x?x16xf32, ["b", "", "s", ""]>) -> tensor<?x?x16xf32, ["2*b", "2*s", ""]>
  %2 = brt.dot_general(%0, %1) {lhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_batching_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 2>} : (tensor<?x?x16xf32, ["2*b", "2*s", ""]>, tensor<?x?x16xf32, ["2*b", "2*s", ""]>) -> tensor<?x?x?xf32, ["2*b", "2*s", "2*s"]>
  return %2 : tensor<?x?x?xf32, ["2*b", "2*s", "2*s"]>
}

// A keepdim reshape [b, s] -> [b, s, 1] before a broadcast: the broadcast
// reads [b, s] directly.
// CHECK-LABEL: func.func @symbolic_keepdim_broadcast
// CHECK-NEXT: %[[B:.*]] = brt.broadcast_in_dim(%arg0) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x?xf32, ["b", "s"]>) -> tensor<?x?x8xf32, ["b", "s", ""]>
// CHECK-NEXT: return %[[B]]
func.func @symbolic_keepdim_broadcast(%x: tensor<?x?xf32, ["b", "s"]>) -> tensor<?x?x8xf32, ["b", "s", ""]> {
  %0 = brt.reshape(%x) : (tensor<?x?xf32, ["b", "s"]>) -> tensor<?x?x1xf32, ["b", "s", ""]>
  %1 = brt.broadcast_in_dim(%0) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<?x?x1xf32, ["b", "s", ""]>) -> tensor<?x?x8xf32, ["b", "s", ""]>
  return %1 : tensor<?x?x8xf32, ["b", "s", ""]>
}

// [b, s] regrouped as [s, b, 1] (values move between rows, though both read
// ?x?) then broadcast: the broadcast must keep reading the reshape (at b = 2,
// s = 3, [2, 3] -> [3, 2, 1], it does too).
// CHECK-LABEL: func.func @symbolic_regrouped_broadcast
// CHECK-NEXT: %[[R:.*]] = brt.reshape(%arg0)
// CHECK-NEXT: brt.broadcast_in_dim(%[[R]])
func.func @symbolic_regrouped_broadcast(%x: tensor<?x?xf32, ["b", "s"]>) -> tensor<?x?x8xf32, ["s", "b", ""]> {
  %0 = brt.reshape(%x) : (tensor<?x?xf32, ["b", "s"]>) -> tensor<?x?x1xf32, ["s", "b", ""]>
  %1 = brt.broadcast_in_dim(%0) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<?x?x1xf32, ["s", "b", ""]>) -> tensor<?x?x8xf32, ["s", "b", ""]>
  return %1 : tensor<?x?x8xf32, ["s", "b", ""]>
}

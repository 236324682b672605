// RUN: brt-opt %s --brt-simplify | FileCheck %s

// torch-mlir's addmm: the product and the bias each multiplied by 1.0.
// CHECK-LABEL: func.func @times_one
// CHECK-NEXT: %[[D:.*]] = brt.dot_general(%arg0, %arg1)
// CHECK-NEXT: %[[B:.*]] = brt.broadcast_in_dim(%arg2)
// CHECK-NEXT: %[[A:.*]] = brt.add(%[[D]], %[[B]])
// CHECK-NEXT: return %[[A]]
func.func @times_one(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %one = brt.constant() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %ones = brt.broadcast_in_dim(%one) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x3xf32>
  %0 = brt.dot_general(%x, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %1 = brt.multiply(%0, %ones) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %2 = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<4x3xf32>
  %3 = brt.multiply(%ones, %2) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %4 = brt.add(%1, %3) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %4 : tensor<4x3xf32>
}

// Multiplying by 2 stays; so does dividing 1 by x.
// CHECK-LABEL: func.func @not_one
// CHECK: brt.multiply(
// CHECK: brt.divide(
func.func @not_one(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = brt.constant() {value = dense<2.000000e+00> : tensor<4xf32>} : () -> tensor<4xf32>
  %one = brt.constant() {value = dense<1.000000e+00> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = brt.multiply(%x, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = brt.divide(%one, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// Reshapes to the same shape, chains of reshapes, same-type converts and
// identity broadcasts go; transposes that undo each other go, others merge.
// CHECK-LABEL: func.func @chains
// CHECK-NEXT: %[[R:.*]] = brt.reshape(%arg0) : (tensor<2x3x4xf32>) -> tensor<24xf32>
// CHECK-NEXT: %[[T:.*]] = brt.transpose(%arg0) {permutation = array<i64: 2, 1, 0>}
// CHECK-NEXT: return %[[R]], %arg0, %[[T]]
func.func @chains(%x: tensor<2x3x4xf32>) -> (tensor<24xf32>, tensor<2x3x4xf32>, tensor<4x3x2xf32>) {
  %0 = brt.reshape(%x) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = brt.reshape(%0) : (tensor<6x4xf32>) -> tensor<24xf32>
  %2 = brt.convert(%x) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %3 = brt.transpose(%2) {permutation = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %4 = brt.transpose(%3) {permutation = array<i64: 1, 2, 0>} : (tensor<4x2x3xf32>) -> tensor<2x3x4xf32>
  %5 = brt.broadcast_in_dim(%4) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %6 = brt.transpose(%x) {permutation = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %7 = brt.transpose(%6) {permutation = array<i64: 2, 0, 1>} : (tensor<3x2x4xf32>) -> tensor<4x3x2xf32>
  return %1, %5, %7 : tensor<24xf32>, tensor<2x3x4xf32>, tensor<4x3x2xf32>
}

// A keepdim reshape before a broadcast: the broadcast reads the reduction.
// CHECK-LABEL: func.func @keepdim
// CHECK: %[[R:.*]] = brt.reduce
// CHECK-NEXT: brt.broadcast_in_dim(%[[R]]) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3x4xf32>
func.func @keepdim(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %z = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %0 = brt.reduce(%x, %z) {dimensions = array<i64: 2>, reducer = "add"} : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3xf32>
  %1 = brt.reshape(%0) : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
  %2 = brt.broadcast_in_dim(%1) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x3x1xf32>) -> tensor<2x3x4xf32>
  %3 = brt.subtract(%x, %2) : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %3 : tensor<2x3x4xf32>
}

// torch's bmm by a weight expanded to the batch: one matmul of the weight.
// CHECK-LABEL: func.func @bmm_of_broadcast_weight
// CHECK-NEXT: %[[D:.*]] = brt.dot_general(%arg0, %arg1) {lhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 2>, rhs_batching_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x5x8xf32>, tensor<8x3xf32>) -> tensor<2x5x3xf32>
// CHECK-NEXT: return %[[D]]
func.func @bmm_of_broadcast_weight(%x: tensor<2x5x8xf32>, %w: tensor<8x3xf32>) -> tensor<2x5x3xf32> {
  %0 = brt.broadcast_in_dim(%w) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<8x3xf32>) -> tensor<2x8x3xf32>
  %1 = brt.dot_general(%x, %0) {lhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_batching_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<2x5x8xf32>, tensor<2x8x3xf32>) -> tensor<2x5x3xf32>
  return %1 : tensor<2x5x3xf32>
}

// A weight that differs along the batch stays a batched matmul; so does one
// whose lhs batch dim is not its first (the result would change layout).
// CHECK-LABEL: func.func @bmm_stays
// CHECK: lhs_batching_dimensions = array<i64: 0>
// CHECK: lhs_batching_dimensions = array<i64: 1>
func.func @bmm_stays(%x: tensor<2x5x8xf32>, %w: tensor<2x8x3xf32>, %y: tensor<5x2x8xf32>, %v: tensor<8x3xf32>) -> (tensor<2x5x3xf32>, tensor<2x5x3xf32>) {
  %0 = brt.broadcast_in_dim(%w) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x8x3xf32>) -> tensor<2x8x3xf32>
  %1 = brt.dot_general(%x, %0) {lhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_batching_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<2x5x8xf32>, tensor<2x8x3xf32>) -> tensor<2x5x3xf32>
  %2 = brt.broadcast_in_dim(%v) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<8x3xf32>) -> tensor<2x8x3xf32>
  %3 = brt.dot_general(%y, %2) {lhs_batching_dimensions = array<i64: 1>, lhs_contracting_dimensions = array<i64: 2>, rhs_batching_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<5x2x8xf32>, tensor<2x8x3xf32>) -> tensor<2x5x3xf32>
  return %1, %3 : tensor<2x5x3xf32>, tensor<2x5x3xf32>
}

// PyTorch's attention: q scaled after the heads are split out, heads merged
// into the batch for the dot. The scale moves before the transpose and the
// dot takes the two batch dims, so the transpose can fold into it; the
// reshapes back cancel.
// CHECK-LABEL: func.func @attention_heads
// CHECK-NEXT: %[[C:.*]] = brt.constant() {value = dense<5.000000e-01> : tensor<f32>}
// CHECK-NEXT: %[[B:.*]] = brt.broadcast_in_dim(%[[C]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x5x3x4xf32>
// CHECK-NEXT: %[[S:.*]] = brt.multiply(%arg0, %[[B]])
// CHECK-NEXT: %[[T:.*]] = brt.transpose(%[[S]]) {permutation = array<i64: 0, 2, 1, 3>}
// CHECK-NEXT: %[[D:.*]] = brt.dot_general(%[[T]], %arg1) {lhs_batching_dimensions = array<i64: 0, 1>, lhs_contracting_dimensions = array<i64: 3>, rhs_batching_dimensions = array<i64: 0, 1>, rhs_contracting_dimensions = array<i64: 2>} : (tensor<2x3x5x4xf32>, tensor<2x3x4x5xf32>) -> tensor<2x3x5x5xf32>
// CHECK-NEXT: return %[[D]]
func.func @attention_heads(%q: tensor<2x5x3x4xf32>, %kt: tensor<2x3x4x5xf32>) -> tensor<2x3x5x5xf32> {
  %c = brt.constant() {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
  %cb = brt.broadcast_in_dim(%c) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x3x5x4xf32>
  %0 = brt.transpose(%q) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %1 = brt.multiply(%0, %cb) : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32>
  %2 = brt.reshape(%1) : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %3 = brt.reshape(%kt) : (tensor<2x3x4x5xf32>) -> tensor<6x4x5xf32>
  %4 = brt.dot_general(%2, %3) {lhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_batching_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<6x5x4xf32>, tensor<6x4x5xf32>) -> tensor<6x5x5xf32>
  %5 = brt.reshape(%4) : (tensor<6x5x5xf32>) -> tensor<2x3x5x5xf32>
  return %5 : tensor<2x3x5x5xf32>
}

// Reshapes that merge different leading dims, or a different number of them
// on each side, stay.
// CHECK-LABEL: func.func @batch_merges_stay
// CHECK-COUNT-2: lhs_batching_dimensions = array<i64: 0>,
func.func @batch_merges_stay(%a: tensor<2x3x5x4xf32>, %b: tensor<3x2x4x5xf32>, %c: tensor<6x5x4xf32>) -> (tensor<6x5x5xf32>, tensor<30xf32>) {
  %0 = brt.reshape(%a) : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %1 = brt.reshape(%b) : (tensor<3x2x4x5xf32>) -> tensor<6x4x5xf32>
  %2 = brt.dot_general(%0, %1) {lhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_batching_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<6x5x4xf32>, tensor<6x4x5xf32>) -> tensor<6x5x5xf32>
  %3 = brt.reshape(%a) : (tensor<2x3x5x4xf32>) -> tensor<30x4xf32>
  %4 = brt.reshape(%c) : (tensor<6x5x4xf32>) -> tensor<30x4xf32>
  %5 = brt.dot_general(%3, %4) {lhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 1>, rhs_batching_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<30x4xf32>, tensor<30x4xf32>) -> tensor<30xf32>
  return %2, %5 : tensor<6x5x5xf32>, tensor<30xf32>
}

// A select on a constant predicate, splat or scalar, is the operand it
// picks; one on a predicate from the arguments stays.
// CHECK-LABEL: func.func @select_on_constant
// CHECK-NEXT: %[[S:.*]] = brt.select(%arg2, %arg0, %arg1)
// CHECK-NEXT: return %arg0, %arg1, %[[S]]
func.func @select_on_constant(%a: tensor<4xf32>, %b: tensor<4xf32>, %p: tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %t = brt.constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %f = brt.constant() {value = dense<false> : tensor<4xi1>} : () -> tensor<4xi1>
  %0 = brt.select(%t, %a, %b) : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = brt.select(%f, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = brt.select(%p, %a, %b) : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// A weight gradient as JAX writes it, x^T dy turned around, is dy^T x; a
// batched one too. A transpose that does not swap the free dims stays, and
// so does one of a matmul by a constant (the runtime packs constant weights).
// CHECK-LABEL: func.func @transposed_dot
// CHECK-NEXT: %[[G:.*]] = brt.dot_general(%arg1, %arg0) {lhs_contracting_dimensions = array<i64: 0, 1>, rhs_contracting_dimensions = array<i64: 0, 1>} : (tensor<2x5x3xf32>, tensor<2x5x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: %[[B:.*]] = brt.dot_general(%arg3, %arg2) {lhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 1>, rhs_batching_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 2>} : (tensor<6x4x3xf32>, tensor<6x7x4xf32>) -> tensor<6x3x7xf32>
// CHECK-NEXT: %[[P:.*]] = brt.dot_general(%arg2, %arg3)
// CHECK-NEXT: %[[T:.*]] = brt.transpose(%[[P]]) {permutation = array<i64: 1, 0, 2>}
// CHECK-NEXT: %[[W:.*]] = brt.constant
// CHECK-NEXT: %[[C:.*]] = brt.dot_general(%arg4, %[[W]])
// CHECK-NEXT: %[[U:.*]] = brt.transpose(%[[C]])
// CHECK-NEXT: return %[[G]], %[[B]], %[[T]], %[[U]]
func.func @transposed_dot(%x: tensor<2x5x4xf32>, %dy: tensor<2x5x3xf32>, %a: tensor<6x7x4xf32>, %b: tensor<6x4x3xf32>, %v: tensor<5x4xf32>) -> (tensor<3x4xf32>, tensor<6x3x7xf32>, tensor<7x6x3xf32>, tensor<2x5xf32>) {
  %0 = brt.dot_general(%x, %dy) {lhs_contracting_dimensions = array<i64: 0, 1>, rhs_contracting_dimensions = array<i64: 0, 1>} : (tensor<2x5x4xf32>, tensor<2x5x3xf32>) -> tensor<4x3xf32>
  %1 = brt.transpose(%0) {permutation = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %2 = brt.dot_general(%a, %b) {lhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_batching_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<6x7x4xf32>, tensor<6x4x3xf32>) -> tensor<6x7x3xf32>
  %3 = brt.transpose(%2) {permutation = array<i64: 0, 2, 1>} : (tensor<6x7x3xf32>) -> tensor<6x3x7xf32>
  %4 = brt.dot_general(%a, %b) {lhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_batching_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<6x7x4xf32>, tensor<6x4x3xf32>) -> tensor<6x7x3xf32>
  %5 = brt.transpose(%4) {permutation = array<i64: 1, 0, 2>} : (tensor<6x7x3xf32>) -> tensor<7x6x3xf32>
  %w = brt.constant() {value = dense<1.500000e+00> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %6 = brt.dot_general(%v, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<5x4xf32>, tensor<4x2xf32>) -> tensor<5x2xf32>
  %7 = brt.transpose(%6) {permutation = array<i64: 1, 0>} : (tensor<5x2xf32>) -> tensor<2x5xf32>
  return %1, %3, %5, %7 : tensor<3x4xf32>, tensor<6x3x7xf32>, tensor<7x6x3xf32>, tensor<2x5xf32>
}

// JAX's q @ k^T at batch 1: only k^T's side merges [1, h] into the batch,
// of a transpose; q is split the same way, the dot takes the two batch dims
// and the transpose can fold into it.
// CHECK-LABEL: func.func @one_sided_batch_merge
// CHECK-NEXT: %[[T:.*]] = brt.transpose(%arg1) {permutation = array<i64: 0, 1, 3, 2>}
// CHECK-NEXT: %[[Q:.*]] = brt.reshape(%arg0) : (tensor<1x8xf32>) -> tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[D:.*]] = brt.dot_general(%[[Q]], %[[T]]) {lhs_batching_dimensions = array<i64: 0, 1>, lhs_contracting_dimensions = array<i64: 3>, rhs_batching_dimensions = array<i64: 0, 1>, rhs_contracting_dimensions = array<i64: 2>} : (tensor<1x2x1x4xf32>, tensor<1x2x4x6xf32>) -> tensor<1x2x1x6xf32>
// CHECK-NEXT: %[[R:.*]] = brt.reshape(%[[D]]) : (tensor<1x2x1x6xf32>) -> tensor<2x1x6xf32>
// CHECK-NEXT: return %[[R]]
func.func @one_sided_batch_merge(%q: tensor<1x8xf32>, %k: tensor<1x2x6x4xf32>) -> tensor<2x1x6xf32> {
  %0 = brt.reshape(%q) : (tensor<1x8xf32>) -> tensor<2x1x4xf32>
  %1 = brt.transpose(%k) {permutation = array<i64: 0, 1, 3, 2>} : (tensor<1x2x6x4xf32>) -> tensor<1x2x4x6xf32>
  %2 = brt.reshape(%1) : (tensor<1x2x4x6xf32>) -> tensor<2x4x6xf32>
  %3 = brt.dot_general(%0, %2) {lhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_batching_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<2x1x4xf32>, tensor<2x4x6xf32>) -> tensor<2x1x6xf32>
  return %3 : tensor<2x1x6xf32>
}

// RUN: brt-opt %s --brt-bucket-all-reduce=bucket-bytes=64 | FileCheck %s
// RUN: brt-opt %s --brt-bucket-all-reduce=bucket-bytes=0 | FileCheck %s --check-prefix=ALONE

// A backward pass as JAX writes it under shard_map: three gradients made one
// after another, their pmean (all_reduce, then a divide) after all of them,
// and a psum of a psum'ed gradient. g0 and g1 (32 + 48 bytes) fill one
// 64-byte bucket right after g1 is made; g2 gets its own right after it is
// made; what reads the results moves down to just before what needs them
// (the update, the return); the psum of a psum stays where it is.
// CHECK-LABEL: func.func @backward
// CHECK-NEXT: %[[G0:.*]] = brt.tanh(%arg0)
// CHECK-NEXT: %[[G1:.*]] = brt.exponential(%arg1)
// CHECK-NEXT: %[[F0:.*]] = brt.reshape(%[[G0]]) : (tensor<2x4xf32>) -> tensor<8xf32>
// CHECK-NEXT: %[[F1:.*]] = brt.reshape(%[[G1]]) : (tensor<12xf32>) -> tensor<12xf32>
// CHECK-NEXT: %[[P:.*]] = brt.concatenate(%[[F0]], %[[F1]]) {dimension = 0 : i64} : (tensor<8xf32>, tensor<12xf32>) -> tensor<20xf32>
// CHECK-NEXT: %[[R:.*]] = brt.all_reduce(%[[P]]) {group_size = 2 : i64, reducer = "add"} : (tensor<20xf32>) -> tensor<20xf32>
// CHECK-NEXT: %[[G2:.*]] = brt.log(%arg2)
// CHECK-NEXT: %[[R2:.*]] = brt.all_reduce(%[[G2]])
// CHECK-NEXT: %[[W:.*]] = brt.sine(%arg3)
// CHECK-NEXT: %[[S1:.*]] = brt.slice(%[[R]]) {limit_indices = array<i64: 20>, start_indices = array<i64: 8>, strides = array<i64: 1>}
// CHECK-NEXT: %[[M1:.*]] = brt.reshape(%[[S1]]) : (tensor<12xf32>) -> tensor<12xf32>
// CHECK-NEXT: %[[T:.*]] = brt.all_reduce(%[[M1]])
// CHECK-NEXT: %[[S0:.*]] = brt.slice(%[[R]]) {limit_indices = array<i64: 8>, start_indices = array<i64: 0>, strides = array<i64: 1>}
// CHECK-NEXT: %[[M0:.*]] = brt.reshape(%[[S0]]) : (tensor<8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[D0:.*]] = brt.divide(%[[M0]], %arg4)
// CHECK-NEXT: %[[U0:.*]] = brt.subtract(%[[W]], %[[D0]])
// CHECK-NEXT: return %[[U0]], %[[T]], %[[R2]]

// Each alone: moved up to its gradient, none packed.
// ALONE-LABEL: func.func @backward
// ALONE-NEXT: brt.tanh
// ALONE-NEXT: brt.all_reduce
// ALONE-NEXT: brt.exponential
// ALONE-NEXT: brt.all_reduce
// ALONE-NEXT: brt.log
// ALONE-NEXT: brt.all_reduce
// ALONE-NOT: "concatenate"
func.func @backward(%x0: tensor<2x4xf32>, %x1: tensor<12xf32>, %x2: tensor<3xf32>, %w: tensor<2x4xf32>, %n: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<12xf32>, tensor<3xf32>) {
  %g0 = brt.tanh(%x0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %g1 = brt.exponential(%x1) : (tensor<12xf32>) -> tensor<12xf32>
  %g2 = brt.log(%x2) : (tensor<3xf32>) -> tensor<3xf32>
  %r0 = brt.all_reduce(%g0) {group_size = 2 : i64, reducer = "add"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %r1 = brt.all_reduce(%g1) {group_size = 2 : i64, reducer = "add"} : (tensor<12xf32>) -> tensor<12xf32>
  %r2 = brt.all_reduce(%g2) {group_size = 2 : i64, reducer = "add"} : (tensor<3xf32>) -> tensor<3xf32>
  %d0 = brt.divide(%r0, %n) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = brt.sine(%w) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %u0 = brt.subtract(%s, %d0) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %t = brt.all_reduce(%r1) {group_size = 2 : i64, reducer = "add"} : (tensor<12xf32>) -> tensor<12xf32>
  return %u0, %t, %r2 : tensor<2x4xf32>, tensor<12xf32>, tensor<3xf32>
}

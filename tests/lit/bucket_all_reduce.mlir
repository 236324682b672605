// RUN: brt-opt %s --brt-bucket-all-reduce=bucket-bytes=64 | FileCheck %s
// RUN: brt-opt %s --brt-bucket-all-reduce=bucket-bytes=0 | FileCheck %s --check-prefix=ALONE

// A backward pass as JAX writes it under shard_map: three gradients made one
// after another, their pmean (all_reduce, then a divide) after all of them,
// and a psum of a psum'ed gradient. g0 and g1 (32 + 48 bytes) fill one
// 64-byte bucket right after g1 is made; g2 gets its own right after it is
// made; what reads the results moves down to just before what needs them
// (the update, the return); the psum of a psum stays where it is.
// CHECK-LABEL: func.func @backward
// CHECK-NEXT: %[[G0:.*]] = brt.kernel "tanh"(%arg0)
// CHECK-NEXT: %[[G1:.*]] = brt.kernel "exponential"(%arg1)
// CHECK-NEXT: %[[F0:.*]] = brt.kernel "reshape"(%[[G0]]) {} : (tensor<2x4xf32>) -> tensor<8xf32>
// CHECK-NEXT: %[[F1:.*]] = brt.kernel "reshape"(%[[G1]]) {} : (tensor<12xf32>) -> tensor<12xf32>
// CHECK-NEXT: %[[P:.*]] = brt.kernel "concatenate"(%[[F0]], %[[F1]]) {dimension = 0 : i64} : (tensor<8xf32>, tensor<12xf32>) -> tensor<20xf32>
// CHECK-NEXT: %[[R:.*]] = brt.kernel "all_reduce"(%[[P]]) {group_size = 2 : i64, reducer = "add"} : (tensor<20xf32>) -> tensor<20xf32>
// CHECK-NEXT: %[[G2:.*]] = brt.kernel "log"(%arg2)
// CHECK-NEXT: %[[R2:.*]] = brt.kernel "all_reduce"(%[[G2]])
// CHECK-NEXT: %[[W:.*]] = brt.kernel "sine"(%arg3)
// CHECK-NEXT: %[[S1:.*]] = brt.kernel "slice"(%[[R]]) {limit_indices = array<i64: 20>, start_indices = array<i64: 8>, strides = array<i64: 1>}
// CHECK-NEXT: %[[M1:.*]] = brt.kernel "reshape"(%[[S1]]) {} : (tensor<12xf32>) -> tensor<12xf32>
// CHECK-NEXT: %[[T:.*]] = brt.kernel "all_reduce"(%[[M1]])
// CHECK-NEXT: %[[S0:.*]] = brt.kernel "slice"(%[[R]]) {limit_indices = array<i64: 8>, start_indices = array<i64: 0>, strides = array<i64: 1>}
// CHECK-NEXT: %[[M0:.*]] = brt.kernel "reshape"(%[[S0]]) {} : (tensor<8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[D0:.*]] = brt.kernel "divide"(%[[M0]], %arg4)
// CHECK-NEXT: %[[U0:.*]] = brt.kernel "subtract"(%[[W]], %[[D0]])
// CHECK-NEXT: return %[[U0]], %[[T]], %[[R2]]

// Each alone: moved up to its gradient, none packed.
// ALONE-LABEL: func.func @backward
// ALONE-NEXT: brt.kernel "tanh"
// ALONE-NEXT: brt.kernel "all_reduce"
// ALONE-NEXT: brt.kernel "exponential"
// ALONE-NEXT: brt.kernel "all_reduce"
// ALONE-NEXT: brt.kernel "log"
// ALONE-NEXT: brt.kernel "all_reduce"
// ALONE-NOT: "concatenate"
func.func @backward(%x0: tensor<2x4xf32>, %x1: tensor<12xf32>, %x2: tensor<3xf32>, %w: tensor<2x4xf32>, %n: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<12xf32>, tensor<3xf32>) {
  %g0 = brt.kernel "tanh"(%x0) {} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %g1 = brt.kernel "exponential"(%x1) {} : (tensor<12xf32>) -> tensor<12xf32>
  %g2 = brt.kernel "log"(%x2) {} : (tensor<3xf32>) -> tensor<3xf32>
  %r0 = brt.kernel "all_reduce"(%g0) {reducer = "add", group_size = 2 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %r1 = brt.kernel "all_reduce"(%g1) {reducer = "add", group_size = 2 : i64} : (tensor<12xf32>) -> tensor<12xf32>
  %r2 = brt.kernel "all_reduce"(%g2) {reducer = "add", group_size = 2 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  %d0 = brt.kernel "divide"(%r0, %n) {} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = brt.kernel "sine"(%w) {} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %u0 = brt.kernel "subtract"(%s, %d0) {} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %t = brt.kernel "all_reduce"(%r1) {reducer = "add", group_size = 2 : i64} : (tensor<12xf32>) -> tensor<12xf32>
  return %u0, %t, %r2 : tensor<2x4xf32>, tensor<12xf32>, tensor<3xf32>
}

// RUN: brt-opt %s --brt-fuse-elementwise --canonicalize | FileCheck %s

// A chain with a NumPy-style broadcast and a scalar constant becomes one
// fused op reading the unbroadcast bias; the broadcast and constant go away.
// CHECK-LABEL: func.func @bias_gelu_like
// CHECK-NOT: brt.broadcast_in_dim(
// CHECK: %[[F:.*]] = brt.fused_elementwise(%arg0, %arg1) {constants = array<f64: 5.000000e-01>, ops = "add,tanh,multiply", program = array<i64: 0, 1, -1, 3, -1, -1, 4, 2, -1>}
// CHECK-SAME: (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[F]]
func.func @bias_gelu_like(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %bb = brt.broadcast_in_dim(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<4x8xf32>
  %h = brt.constant() {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
  %hb = brt.broadcast_in_dim(%h) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %0 = brt.add(%x, %bb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = brt.tanh(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = brt.multiply(%1, %hb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// A value used twice, both times inside one group, joins it (x + b feeding
// each term of a GELU); one also used outside the group stays out.
// CHECK-LABEL: func.func @shared_value
// CHECK: %[[F:.*]] = brt.fused_elementwise(%arg0) {ops = "exponential,negate,multiply", program = array<i64: 0, -1, -1, 1, -1, -1, 2, 1, -1>}
// CHECK-NEXT: return %[[F]]
func.func @shared_value(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = brt.exponential(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %n = brt.negate(%e) : (tensor<16xf32>) -> tensor<16xf32>
  %m = brt.multiply(%n, %e) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %m : tensor<16xf32>
}

// CHECK-LABEL: func.func @shared_with_outside
// CHECK: %[[E:.*]] = brt.exponential(%arg0)
// CHECK: %[[F:.*]] = brt.fused_elementwise(%[[E]]) {ops = "negate,multiply"
// CHECK-NEXT: return %[[F]], %[[E]]
func.func @shared_with_outside(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %e = brt.exponential(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %n = brt.negate(%e) : (tensor<16xf32>) -> tensor<16xf32>
  %m = brt.multiply(%n, %e) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %m, %e : tensor<16xf32>, tensor<16xf32>
}

// No fusion across a reduction, nor of integer arithmetic.
// CHECK-LABEL: func.func @barriers
// CHECK-NOT: brt.fused_elementwise
func.func @barriers(%x: tensor<4x8xf32>, %i: tensor<8xi32>) -> (tensor<4xf32>, tensor<8xi32>) {
  %e = brt.exponential(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %r = brt.reduce(%e, %z) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %l = brt.log(%r) : (tensor<4xf32>) -> tensor<4xf32>
  %a = brt.add(%i, %i) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %m = brt.multiply(%a, %i) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  return %l, %m : tensor<4xf32>, tensor<8xi32>
}

// One op alone fuses when it reads a broadcast (the attention mask added to
// the scores of every head, a scale): the fused op reads the mask unbroadcast
// and the scale as an immediate. One that reads no broadcast stays.
// CHECK-LABEL: func.func @single_ops
// CHECK-NEXT: %[[A:.*]] = brt.fused_elementwise(%arg0, %arg1) {ops = "add"
// CHECK-NEXT: %[[M:.*]] = brt.fused_elementwise(%arg0) {constants = array<f64: 1.250000e-01>, ops = "multiply"
// CHECK-NEXT: %[[S:.*]] = brt.subtract(%arg0, %arg0)
// CHECK-NEXT: return %[[A]], %[[M]], %[[S]]
func.func @single_ops(%scores: tensor<2x3x4x4xf32>, %mask: tensor<2x1x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) {
  %b = brt.broadcast_in_dim(%mask) {broadcast_dimensions = array<i64: 0, 1, 2, 3>} : (tensor<2x1x4x4xf32>) -> tensor<2x3x4x4xf32>
  %a = brt.add(%scores, %b) : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %c = brt.constant() {value = dense<1.250000e-01> : tensor<f32>} : () -> tensor<f32>
  %cb = brt.broadcast_in_dim(%c) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x3x4x4xf32>
  %m = brt.multiply(%scores, %cb) : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %s = brt.subtract(%scores, %scores) : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  return %a, %m, %s : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
}

// Batch norm over NCHW: per-channel vectors broadcast onto dim 1 are read
// through a reshape to [C, 1, 1], which broadcasts NumPy-style, instead of
// materializing each broadcast.
// CHECK-LABEL: func.func @per_channel
// CHECK-DAG: %[[M:.*]] = brt.reshape(%arg1) : (tensor<3xf32>) -> tensor<3x1x1xf32>
// CHECK-DAG: %[[S:.*]] = brt.reshape(%arg2) : (tensor<3xf32>) -> tensor<3x1x1xf32>
// CHECK: brt.fused_elementwise(%arg0, %[[M]], %[[S]]) {ops = "subtract,multiply"
// CHECK-NOT: broadcast_in_dim
func.func @per_channel(%x: tensor<2x3x4x5xf32>, %mean: tensor<3xf32>, %scale: tensor<3xf32>) -> tensor<2x3x4x5xf32> {
  %m = brt.broadcast_in_dim(%mean) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3x4x5xf32>
  %s = brt.broadcast_in_dim(%scale) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3x4x5xf32>
  %0 = brt.subtract(%x, %m) : (tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  %1 = brt.multiply(%0, %s) : (tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  return %1 : tensor<2x3x4x5xf32>
}

// A chain reading ten inputs is cut where a fused op would read more than
// eight (the CUDA interpreter holds eight): the first seven adds become one
// fused op of eight inputs, the last two another of three.
// CHECK-LABEL: func.func @many_inputs
// CHECK: %[[A:.*]] = brt.fused_elementwise(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7) {ops = "add,add,add,add,add,add,add"
// CHECK-NEXT: %[[B:.*]] = brt.fused_elementwise(%[[A]], %arg8, %arg9) {ops = "add,add"
// CHECK-NEXT: return %[[B]]
func.func @many_inputs(%a0: tensor<16xf32>, %a1: tensor<16xf32>, %a2: tensor<16xf32>, %a3: tensor<16xf32>, %a4: tensor<16xf32>, %a5: tensor<16xf32>, %a6: tensor<16xf32>, %a7: tensor<16xf32>, %a8: tensor<16xf32>, %a9: tensor<16xf32>) -> tensor<16xf32> {
  %s1 = brt.add(%a0, %a1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %s2 = brt.add(%s1, %a2) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %s3 = brt.add(%s2, %a3) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %s4 = brt.add(%s3, %a4) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %s5 = brt.add(%s4, %a5) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %s6 = brt.add(%s5, %a6) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %s7 = brt.add(%s6, %a7) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %s8 = brt.add(%s7, %a8) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %s9 = brt.add(%s8, %a9) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %s9 : tensor<16xf32>
}

// RUN: brt-opt %s --cse --brt-fuse-softmax --canonicalize | FileCheck %s

// jax.nn.softmax(x, axis=-1) as the importer writes it.
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT: %[[S:.*]] = brt.softmax(%arg0) {axis = 1 : i64}
// CHECK-NEXT: return %[[S]]
func.func @softmax(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = brt.constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %1 = brt.reduce(%arg0, %0) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = brt.constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %3 = brt.broadcast_in_dim(%2) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %4 = brt.maximum(%3, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = brt.broadcast_in_dim(%4) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %6 = brt.broadcast_in_dim(%5) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %7 = brt.subtract(%arg0, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = brt.exponential(%7) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %10 = brt.reduce(%8, %9) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %11 = brt.broadcast_in_dim(%10) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %12 = brt.broadcast_in_dim(%11) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %13 = brt.divide(%8, %12) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %13 : tensor<4x8xf32>
}

// The lowest finite float as the max's guard and start (as an exporter may
// write -inf): the same softmax.
// CHECK-LABEL: func.func @lowest_float_guard
// CHECK-NEXT: brt.softmax(%arg0) {axis = 1 : i64}
func.func @lowest_float_guard(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = brt.constant() {value = dense<0xFF7FFFFF> : tensor<f32>} : () -> tensor<f32>
  %1 = brt.reduce(%arg0, %0) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = brt.constant() {value = dense<0xFF7FFFFF> : tensor<f32>} : () -> tensor<f32>
  %3 = brt.broadcast_in_dim(%2) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %4 = brt.maximum(%3, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = brt.broadcast_in_dim(%4) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %6 = brt.broadcast_in_dim(%5) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %7 = brt.subtract(%arg0, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = brt.exponential(%7) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %10 = brt.reduce(%8, %9) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %11 = brt.broadcast_in_dim(%10) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %12 = brt.broadcast_in_dim(%11) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %13 = brt.divide(%8, %12) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %13 : tensor<4x8xf32>
}

// max(0, reduce_max(x)) shifts the exponents by at least 0: a line far below
// 0 underflows to 0 / 0 there, which brt.softmax would not give. No fusion.
// CHECK-LABEL: func.func @zero_guard
// CHECK-NOT: brt.softmax
func.func @zero_guard(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = brt.constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %1 = brt.reduce(%arg0, %0) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %3 = brt.broadcast_in_dim(%2) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %4 = brt.maximum(%3, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = brt.broadcast_in_dim(%4) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %6 = brt.broadcast_in_dim(%5) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %7 = brt.subtract(%arg0, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = brt.exponential(%7) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %10 = brt.reduce(%8, %9) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %11 = brt.broadcast_in_dim(%10) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %12 = brt.broadcast_in_dim(%11) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %13 = brt.divide(%8, %12) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %13 : tensor<4x8xf32>
}

// A reduce_max starting from 0 is the same shift: no fusion.
// CHECK-LABEL: func.func @zero_start
// CHECK-NOT: brt.softmax
func.func @zero_start(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %1 = brt.reduce(%arg0, %0) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = brt.constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %3 = brt.broadcast_in_dim(%2) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %4 = brt.maximum(%3, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = brt.broadcast_in_dim(%4) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %6 = brt.broadcast_in_dim(%5) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %7 = brt.subtract(%arg0, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = brt.exponential(%7) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %10 = brt.reduce(%8, %9) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %11 = brt.broadcast_in_dim(%10) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %12 = brt.broadcast_in_dim(%11) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %13 = brt.divide(%8, %12) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %13 : tensor<4x8xf32>
}

// The exponentials are also returned: the pattern must not fire.
// CHECK-LABEL: func.func @exp_escapes
// CHECK-NOT: brt.softmax
func.func @exp_escapes(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = brt.constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %1 = brt.reduce(%x, %0) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %2 = brt.broadcast_in_dim(%1) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x3xf32>
  %3 = brt.subtract(%x, %2) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = brt.exponential(%3) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %6 = brt.reduce(%4, %5) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %7 = brt.broadcast_in_dim(%6) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x3xf32>
  %8 = brt.divide(%4, %7) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %8, %4 : tensor<2x3xf32>, tensor<2x3xf32>
}

// PyTorch's safe softmax (scaled_dot_product_attention, after torch-mlir and
// brt-simplify): keepdim reshapes before the broadcasts, and a select of zeros
// where a row of x is all -inf.
// CHECK-LABEL: func.func @safe_softmax
// CHECK-NEXT: %[[S:.*]] = brt.softmax(%arg0) {axis = 1 : i64, zero_masked_rows = 1 : i64}
// CHECK-NEXT: return %[[S]]
func.func @safe_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %ninf = brt.constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %zero = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %true = brt.constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %0 = brt.reduce(%x, %ninf) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = brt.reshape(%0) : (tensor<4xf32>) -> tensor<4x1xf32>
  %2 = brt.broadcast_in_dim(%1) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %3 = brt.subtract(%x, %2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = brt.exponential(%3) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = brt.reduce(%4, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %6 = brt.reshape(%5) : (tensor<4xf32>) -> tensor<4x1xf32>
  %7 = brt.broadcast_in_dim(%6) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %8 = brt.divide(%4, %7) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = brt.broadcast_in_dim(%ninf) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %10 = brt.compare(%x, %9) {comparison_direction = "EQ"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %11 = brt.reduce(%10, %true) {dimensions = array<i64: 1>, reducer = "and"} : (tensor<4x8xi1>, tensor<i1>) -> tensor<4xi1>
  %12 = brt.reshape(%11) : (tensor<4xi1>) -> tensor<4x1xi1>
  %13 = brt.broadcast_in_dim(%12) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xi1>) -> tensor<4x8xi1>
  %14 = brt.broadcast_in_dim(%zero) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %15 = brt.select(%13, %14, %8) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %15 : tensor<4x8xf32>
}

// The select keeps something other than zeros for masked rows: a plain
// softmax, and the select stays.
// CHECK-LABEL: func.func @select_of_ones
// CHECK: brt.softmax(%arg0) {axis = 1 : i64}
// CHECK: brt.select
func.func @select_of_ones(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %ninf = brt.constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %zero = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %one = brt.constant() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %true = brt.constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %0 = brt.reduce(%x, %ninf) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = brt.broadcast_in_dim(%0) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x8xf32>
  %3 = brt.subtract(%x, %2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = brt.exponential(%3) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = brt.reduce(%4, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %7 = brt.broadcast_in_dim(%5) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x8xf32>
  %8 = brt.divide(%4, %7) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = brt.broadcast_in_dim(%ninf) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %10 = brt.compare(%x, %9) {comparison_direction = "EQ"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %11 = brt.reduce(%10, %true) {dimensions = array<i64: 1>, reducer = "and"} : (tensor<4x8xi1>, tensor<i1>) -> tensor<4xi1>
  %13 = brt.broadcast_in_dim(%11) {broadcast_dimensions = array<i64: 0>} : (tensor<4xi1>) -> tensor<4x8xi1>
  %14 = brt.broadcast_in_dim(%one) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %15 = brt.select(%13, %14, %8) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %15 : tensor<4x8xf32>
}

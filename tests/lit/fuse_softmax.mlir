// RUN: brt-opt %s --cse --brt-fuse-softmax --canonicalize | FileCheck %s

// jax.nn.softmax(x, axis=-1) as the importer writes it.
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT: %[[S:.*]] = brt.kernel "brt.softmax"(%arg0) {axis = 1 : i64}
// CHECK-NEXT: return %[[S]]
func.func @softmax(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = brt.kernel "constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %1 = brt.kernel "reduce"(%arg0, %0) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = brt.kernel "constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %3 = brt.kernel "broadcast_in_dim"(%2) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %4 = brt.kernel "maximum"(%3, %1) {} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = brt.kernel "broadcast_in_dim"(%4) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %6 = brt.kernel "broadcast_in_dim"(%5) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %7 = brt.kernel "subtract"(%arg0, %6) {} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = brt.kernel "exponential"(%7) {} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = brt.kernel "constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %10 = brt.kernel "reduce"(%8, %9) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %11 = brt.kernel "broadcast_in_dim"(%10) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %12 = brt.kernel "broadcast_in_dim"(%11) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %13 = brt.kernel "divide"(%8, %12) {} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %13 : tensor<4x8xf32>
}

// The exponentials are also returned: the pattern must not fire.
// CHECK-LABEL: func.func @exp_escapes
// CHECK-NOT: brt.softmax
func.func @exp_escapes(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = brt.kernel "constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %1 = brt.kernel "reduce"(%x, %0) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %2 = brt.kernel "broadcast_in_dim"(%1) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x3xf32>
  %3 = brt.kernel "subtract"(%x, %2) {} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = brt.kernel "exponential"(%3) {} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = brt.kernel "constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %6 = brt.kernel "reduce"(%4, %5) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %7 = brt.kernel "broadcast_in_dim"(%6) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x3xf32>
  %8 = brt.kernel "divide"(%4, %7) {} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %8, %4 : tensor<2x3xf32>, tensor<2x3xf32>
}

// PyTorch's safe softmax (scaled_dot_product_attention, after torch-mlir and
// brt-simplify): keepdim reshapes before the broadcasts, and a select of zeros
// where a row of x is all -inf.
// CHECK-LABEL: func.func @safe_softmax
// CHECK-NEXT: %[[S:.*]] = brt.kernel "brt.softmax"(%arg0) {axis = 1 : i64, zero_masked_rows = 1 : i64}
// CHECK-NEXT: return %[[S]]
func.func @safe_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %ninf = brt.kernel "constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %zero = brt.kernel "constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %true = brt.kernel "constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %0 = brt.kernel "reduce"(%x, %ninf) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = brt.kernel "reshape"(%0) {} : (tensor<4xf32>) -> tensor<4x1xf32>
  %2 = brt.kernel "broadcast_in_dim"(%1) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %3 = brt.kernel "subtract"(%x, %2) {} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = brt.kernel "exponential"(%3) {} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = brt.kernel "reduce"(%4, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %6 = brt.kernel "reshape"(%5) {} : (tensor<4xf32>) -> tensor<4x1xf32>
  %7 = brt.kernel "broadcast_in_dim"(%6) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %8 = brt.kernel "divide"(%4, %7) {} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = brt.kernel "broadcast_in_dim"(%ninf) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %10 = brt.kernel "compare"(%x, %9) {comparison_direction = "EQ"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %11 = brt.kernel "reduce"(%10, %true) {dimensions = array<i64: 1>, reducer = "and"} : (tensor<4x8xi1>, tensor<i1>) -> tensor<4xi1>
  %12 = brt.kernel "reshape"(%11) {} : (tensor<4xi1>) -> tensor<4x1xi1>
  %13 = brt.kernel "broadcast_in_dim"(%12) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xi1>) -> tensor<4x8xi1>
  %14 = brt.kernel "broadcast_in_dim"(%zero) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %15 = brt.kernel "select"(%13, %14, %8) {} : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %15 : tensor<4x8xf32>
}

// The select keeps something other than zeros for masked rows: a plain
// softmax, and the select stays.
// CHECK-LABEL: func.func @select_of_ones
// CHECK: brt.kernel "brt.softmax"(%arg0) {axis = 1 : i64}
// CHECK: brt.kernel "select"
func.func @select_of_ones(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %ninf = brt.kernel "constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %zero = brt.kernel "constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %one = brt.kernel "constant"() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %true = brt.kernel "constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %0 = brt.kernel "reduce"(%x, %ninf) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = brt.kernel "broadcast_in_dim"(%0) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x8xf32>
  %3 = brt.kernel "subtract"(%x, %2) {} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = brt.kernel "exponential"(%3) {} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = brt.kernel "reduce"(%4, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %7 = brt.kernel "broadcast_in_dim"(%5) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x8xf32>
  %8 = brt.kernel "divide"(%4, %7) {} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = brt.kernel "broadcast_in_dim"(%ninf) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %10 = brt.kernel "compare"(%x, %9) {comparison_direction = "EQ"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %11 = brt.kernel "reduce"(%10, %true) {dimensions = array<i64: 1>, reducer = "and"} : (tensor<4x8xi1>, tensor<i1>) -> tensor<4xi1>
  %13 = brt.kernel "broadcast_in_dim"(%11) {broadcast_dimensions = array<i64: 0>} : (tensor<4xi1>) -> tensor<4x8xi1>
  %14 = brt.kernel "broadcast_in_dim"(%one) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %15 = brt.kernel "select"(%13, %14, %8) {} : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %15 : tensor<4x8xf32>
}

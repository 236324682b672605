// RUN: brt-opt %s --cse --brt-fuse-softmax --canonicalize | FileCheck %s

// A softmax's max, sum and mask are reduced over one axis and must be
// broadcast back along the others, each to where it was reduced from. On a
// square input a broadcast along the wrong dim has the same type but mixes
// lines (x[i, j] - max_k x[j, k]): that is no softmax, and nothing fuses.

// The max broadcast back along dim 1 (x - jnp.max(x, axis=1)[None, :]).
// CHECK-LABEL: func.func @max_transposed
// CHECK-NOT: brt.softmax
// CHECK: return
func.func @max_transposed(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %ninf = brt.constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %zero = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %0 = brt.reduce(%x, %ninf) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = brt.broadcast_in_dim(%0) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<1x4xf32>
  %2 = brt.broadcast_in_dim(%1) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<1x4xf32>) -> tensor<4x4xf32>
  %3 = brt.subtract(%x, %2) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %4 = brt.exponential(%3) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %5 = brt.reduce(%4, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %6 = brt.broadcast_in_dim(%5) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %7 = brt.divide(%4, %6) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %7 : tensor<4x4xf32>
}

// The sum broadcast back along dim 1 by one broadcast_in_dim.
// CHECK-LABEL: func.func @sum_transposed
// CHECK-NOT: brt.softmax
// CHECK: return
func.func @sum_transposed(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %ninf = brt.constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %zero = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %0 = brt.reduce(%x, %ninf) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = brt.broadcast_in_dim(%0) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %2 = brt.subtract(%x, %1) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = brt.exponential(%2) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %4 = brt.reduce(%3, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %5 = brt.broadcast_in_dim(%4) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %6 = brt.divide(%3, %5) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %6 : tensor<4x4xf32>
}

// A keepdim reshape, then a broadcast that transposes it ([4, 1] read as
// [1, 4]): PyTorch's reshape as it is, the broadcast swapping the dims.
// CHECK-LABEL: func.func @keepdim_transposed
// CHECK-NOT: brt.softmax
// CHECK: return
func.func @keepdim_transposed(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %ninf = brt.constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %zero = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %0 = brt.reduce(%x, %ninf) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = brt.reshape(%0) : (tensor<4xf32>) -> tensor<4x1xf32>
  %2 = brt.broadcast_in_dim(%1) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x4xf32>
  %3 = brt.subtract(%x, %2) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %4 = brt.exponential(%3) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %5 = brt.reduce(%4, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %6 = brt.reshape(%5) : (tensor<4xf32>) -> tensor<4x1xf32>
  %7 = brt.broadcast_in_dim(%6) {broadcast_dimensions = array<i64: 1, 0>} : (tensor<4x1xf32>) -> tensor<4x4xf32>
  %8 = brt.divide(%4, %7) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %8 : tensor<4x4xf32>
}

// Over axis 0 the reduced values go back along dim 1: a softmax over axis 0.
// CHECK-LABEL: func.func @square_axis0
// CHECK-NEXT: %[[S:.*]] = brt.softmax(%arg0) {axis = 0 : i64}
// CHECK-NEXT: return %[[S]]
func.func @square_axis0(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %ninf = brt.constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %zero = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %0 = brt.reduce(%x, %ninf) {dimensions = array<i64: 0>, reducer = "max"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = brt.broadcast_in_dim(%0) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<1x4xf32>
  %2 = brt.broadcast_in_dim(%1) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<1x4xf32>) -> tensor<4x4xf32>
  %3 = brt.subtract(%x, %2) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %4 = brt.exponential(%3) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %5 = brt.reduce(%4, %zero) {dimensions = array<i64: 0>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %6 = brt.broadcast_in_dim(%5) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %7 = brt.divide(%4, %6) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %7 : tensor<4x4xf32>
}

// The same over axis 1, broadcast back along dim 0 (through a keepdim
// reshape for the max): a softmax over axis 1.
// CHECK-LABEL: func.func @square_axis1
// CHECK-NEXT: %[[S:.*]] = brt.softmax(%arg0) {axis = 1 : i64}
// CHECK-NEXT: return %[[S]]
func.func @square_axis1(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %ninf = brt.constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %zero = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %0 = brt.reduce(%x, %ninf) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = brt.reshape(%0) : (tensor<4xf32>) -> tensor<4x1xf32>
  %2 = brt.broadcast_in_dim(%1) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x4xf32>
  %3 = brt.subtract(%x, %2) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %4 = brt.exponential(%3) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %5 = brt.reduce(%4, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %6 = brt.broadcast_in_dim(%5) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %7 = brt.divide(%4, %6) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %7 : tensor<4x4xf32>
}

// The safe softmax's all -inf mask broadcast back along dim 1 selects zeros
// by column, not by row: the softmax fuses without zero_masked_rows and the
// select stays.
// CHECK-LABEL: func.func @mask_transposed
// CHECK: brt.softmax(%arg0) {axis = 1 : i64}
// CHECK-NOT: zero_masked_rows
// CHECK: brt.select
func.func @mask_transposed(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %ninf = brt.constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %zero = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %true = brt.constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %0 = brt.reduce(%x, %ninf) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = brt.broadcast_in_dim(%0) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %2 = brt.subtract(%x, %1) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = brt.exponential(%2) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %4 = brt.reduce(%3, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %5 = brt.broadcast_in_dim(%4) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x4xf32>
  %6 = brt.divide(%3, %5) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %7 = brt.broadcast_in_dim(%ninf) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x4xf32>
  %8 = brt.compare(%x, %7) {comparison_direction = "EQ"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xi1>
  %9 = brt.reduce(%8, %true) {dimensions = array<i64: 1>, reducer = "and"} : (tensor<4x4xi1>, tensor<i1>) -> tensor<4xi1>
  %10 = brt.broadcast_in_dim(%9) {broadcast_dimensions = array<i64: 1>} : (tensor<4xi1>) -> tensor<4x4xi1>
  %11 = brt.broadcast_in_dim(%zero) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x4xf32>
  %12 = brt.select(%10, %11, %6) : (tensor<4x4xi1>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %12 : tensor<4x4xf32>
}

// Over the middle axis of a cube: the [4, 4] maxima and sums go back along
// dims 0 and 2, a softmax over axis 1.
// CHECK-LABEL: func.func @cube_axis1
// CHECK-NEXT: %[[S:.*]] = brt.softmax(%arg0) {axis = 1 : i64}
// CHECK-NEXT: return %[[S]]
func.func @cube_axis1(%x: tensor<4x4x4xf32>) -> tensor<4x4x4xf32> {
  %ninf = brt.constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %zero = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %0 = brt.reduce(%x, %ninf) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<4x4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %1 = brt.broadcast_in_dim(%0) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x4xf32>) -> tensor<4x4x4xf32>
  %2 = brt.subtract(%x, %1) : (tensor<4x4x4xf32>, tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %3 = brt.exponential(%2) : (tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %4 = brt.reduce(%3, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %5 = brt.reshape(%4) : (tensor<4x4xf32>) -> tensor<4x1x4xf32>
  %6 = brt.broadcast_in_dim(%5) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<4x1x4xf32>) -> tensor<4x4x4xf32>
  %7 = brt.divide(%3, %6) : (tensor<4x4x4xf32>, tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  return %7 : tensor<4x4x4xf32>
}

// The same with the sums' kept dims swapped ([4, 4] read as its transpose).
// CHECK-LABEL: func.func @cube_kept_dims_swapped
// CHECK-NOT: brt.softmax
// CHECK: return
func.func @cube_kept_dims_swapped(%x: tensor<4x4x4xf32>) -> tensor<4x4x4xf32> {
  %ninf = brt.constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %zero = brt.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %0 = brt.reduce(%x, %ninf) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<4x4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %1 = brt.broadcast_in_dim(%0) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x4xf32>) -> tensor<4x4x4xf32>
  %2 = brt.subtract(%x, %1) : (tensor<4x4x4xf32>, tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %3 = brt.exponential(%2) : (tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %4 = brt.reduce(%3, %zero) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %5 = brt.broadcast_in_dim(%4) {broadcast_dimensions = array<i64: 2, 0>} : (tensor<4x4xf32>) -> tensor<4x4x4xf32>
  %6 = brt.divide(%3, %5) : (tensor<4x4x4xf32>, tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  return %6 : tensor<4x4x4xf32>
}

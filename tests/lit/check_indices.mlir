// RUN: brt-opt %s --brt-check-indices | FileCheck %s

// A gather's indices are checked against the operand's extent less the
// window's, per component of the index vector (its last dim); the message
// names the op and the Python line in its location.
// CHECK-LABEL: func.func @gather_rows_and_columns
// CHECK: %[[C:.*]] = brt.check_indices(%arg1) {bounds = array<i64: 5, 3>, what = "gather at model.py:12"}
// CHECK: brt.gather(%arg0, %[[C]])
func.func @gather_rows_and_columns(%x: tensor<5x4xf32>, %i: tensor<3x2xi64>) -> tensor<3x2xf32> {
  %g = brt.gather(%x, %i) {collapsed_slice_dims = array<i64: 0>, index_vector_dim = 1 : i64, offset_dims = array<i64: 1>, slice_sizes = array<i64: 1, 2>, start_index_map = array<i64: 0, 1>} : (tensor<5x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32> loc("model.py":12:0)
  return %g : tensor<3x2xf32>
}

// A scatter's window comes from its updates: rows of 3 into a [6, 3]
// operand leave 6 start rows.
// CHECK-LABEL: func.func @scatter_rows
// CHECK: %[[C:.*]] = brt.check_indices(%arg1) {bounds = array<i64: 6>, what = "scatter at
// CHECK: brt.scatter(%arg0, %[[C]], %arg2)
func.func @scatter_rows(%x: tensor<6x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x3xf32>) -> tensor<6x3xf32> {
  %s = brt.scatter(%x, %i, %u) {index_vector_dim = 1 : i64, inserted_window_dims = array<i64: 0>, mode = "add", scatter_dims_to_operand_dims = array<i64: 0>, update_window_dims = array<i64: 1>} : (tensor<6x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<6x3xf32>
  return %s : tensor<6x3xf32>
}

// Index vectors along another dim than the last are left unchecked.
// CHECK-LABEL: func.func @index_vector_first
// CHECK-NOT: brt.check_indices
func.func @index_vector_first(%x: tensor<5x6xf32>, %i: tensor<2x3xi64>) -> tensor<3x2x3xf32> {
  %g = brt.gather(%x, %i) {collapsed_slice_dims = array<i64>, index_vector_dim = 0 : i64, offset_dims = array<i64: 1, 2>, slice_sizes = array<i64: 2, 3>, start_index_map = array<i64: 0, 1>} : (tensor<5x6xf32>, tensor<2x3xi64>) -> tensor<3x2x3xf32>
  return %g : tensor<3x2x3xf32>
}

// Unsigned indices are checked as well (brt.check_indices takes every
// integer type).
// CHECK-LABEL: func.func @unsigned_indices
// CHECK: %[[C:.*]] = brt.check_indices(%arg1) {bounds = array<i64: 5>, what = "gather at
// CHECK: brt.gather(%arg0, %[[C]])
func.func @unsigned_indices(%x: tensor<5x4xf32>, %i: tensor<3x1xui32>) -> tensor<3x4xf32> {
  %g = brt.gather(%x, %i) {collapsed_slice_dims = array<i64: 0>, index_vector_dim = 1 : i64, offset_dims = array<i64: 1>, slice_sizes = array<i64: 1, 4>, start_index_map = array<i64: 0>} : (tensor<5x4xf32>, tensor<3x1xui32>) -> tensor<3x4xf32>
  return %g : tensor<3x4xf32>
}

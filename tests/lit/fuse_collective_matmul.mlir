// RUN: brt-opt %s --brt-fuse-collective-matmul | FileCheck %s
// RUN: brt-opt %s --brt-fuse-collective-matmul="min-rows-per-rank=4" | FileCheck %s
// RUN: brt-opt %s --brt-fuse-collective-matmul="min-rows-per-rank=5" | FileCheck %s --check-prefix=SERIAL

// Below min-rows-per-rank rows of the rank's own block (4 here), the
// collective and the GEMM stay apart.
// SERIAL-LABEL: func.func @all_gather_matmul
// SERIAL-NEXT: brt.all_gather(
// SERIAL-NEXT: brt.dot_general(
// SERIAL-LABEL: func.func @matmul_reduce_scatter
// SERIAL-NEXT: brt.dot_general(
// SERIAL-NEXT: brt.reduce_scatter(

// Column-parallel input: all_gather along rows feeding the matmul's lhs.
// CHECK-LABEL: func.func @all_gather_matmul
// CHECK-NEXT: %[[F:.*]] = brt.all_gather_matmul(%arg0, %arg1) {all_gather_dim = 0 : i64, group_size = 4 : i64, lhs_contracting_dimensions = array<i64: 1>, replica_groups = array<i64: 0, 1, 2, 3>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<16x6xf32>
// CHECK-NEXT: return %[[F]]
func.func @all_gather_matmul(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>) -> tensor<16x6xf32> {
  %0 = brt.all_gather(%x) {all_gather_dim = 0 : i64, group_size = 4 : i64, replica_groups = array<i64: 0, 1, 2, 3>} : (tensor<4x8xf32>) -> tensor<16x8xf32>
  %1 = brt.dot_general(%0, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<16x8xf32>, tensor<8x6xf32>) -> tensor<16x6xf32>
  return %1 : tensor<16x6xf32>
}

// Row-parallel output: the matmul's partial sums reduce-scattered by rows.
// CHECK-LABEL: func.func @matmul_reduce_scatter
// CHECK-NEXT: %[[F:.*]] = brt.matmul_reduce_scatter(%arg0, %arg1) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 1>, scatter_dimension = 0 : i64} : (tensor<16x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: return %[[F]]
func.func @matmul_reduce_scatter(%x: tensor<16x8xf32>, %w: tensor<6x8xf32>) -> tensor<4x6xf32> {
  %0 = brt.dot_general(%x, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<16x8xf32>, tensor<6x8xf32>) -> tensor<16x6xf32>
  %1 = brt.reduce_scatter(%0) {reducer = "add", scatter_dimension = 0 : i64} : (tensor<16x6xf32>) -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// Not fused: a gather along columns, a max reduce_scatter, a gathered value
// used twice.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: brt.all_gather_matmul
// CHECK-NOT: brt.matmul_reduce_scatter
func.func @left_alone(%x: tensor<8x2xf32>, %w: tensor<8x6xf32>, %y: tensor<4x8xf32>) -> (tensor<8x8xf32>, tensor<4x6xf32>, tensor<16x8xf32>, tensor<16x6xf32>) {
  %0 = brt.all_gather(%x) {all_gather_dim = 1 : i64} : (tensor<8x2xf32>) -> tensor<8x8xf32>
  %1 = brt.dot_general(%0, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<8x8xf32>, tensor<8x6xf32>) -> tensor<8x6xf32>
  %2 = brt.reduce_scatter(%1) {reducer = "max", scatter_dimension = 0 : i64} : (tensor<8x6xf32>) -> tensor<4x6xf32>
  %3 = brt.all_gather(%y) {all_gather_dim = 0 : i64} : (tensor<4x8xf32>) -> tensor<16x8xf32>
  %4 = brt.dot_general(%3, %w) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<16x8xf32>, tensor<8x6xf32>) -> tensor<16x6xf32>
  return %0, %2, %3, %4 : tensor<8x8xf32>, tensor<4x6xf32>, tensor<16x8xf32>, tensor<16x6xf32>
}

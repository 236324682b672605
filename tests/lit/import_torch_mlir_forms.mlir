// RUN: rm -rf %t && brt-compile %s -o %t.brtx --dump-after-each %t
// RUN: FileCheck %s < %t/00-import.mlir

// The forms torch-mlir's StableHLO output has that JAX's does not (made by
// brt.export_torch_stablehlo from a causal scaled_dot_product_attention and
// a view): arith.constant for the constants it folds, and dynamic_iota,
// dynamic_broadcast_in_dim and dynamic_reshape whose shape operand it
// computed from constants, so their result shapes are static; and splat
// constants at full size, which become a scalar and a broadcast.

// CHECK: %[[C:.*]] = brt.constant() {value = dense<1> : tensor<1xi64>}
// CHECK: brt.convert(%[[C]])
// CHECK: brt.iota() {iota_dimension = 0 : i64} : () -> tensor<8xi64>
// CHECK: brt.broadcast_in_dim(%arg0) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: brt.reshape(%{{.*}}) : (tensor<4x8xf32>) -> tensor<32xf32>
// CHECK: %[[H:.*]] = brt.constant() {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT: brt.broadcast_in_dim(%[[H]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
// CHECK-NOT: dynamic

"builtin.module"() ({
  "func.func"() <{function_type = (tensor<8xf32>) -> (tensor<1xf32>, tensor<8xi64>, tensor<32xf32>, tensor<4x8xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<8xf32>):
    %0 = "arith.constant"() <{value = dense<1> : tensor<1xi64>}> : () -> tensor<1xi64>
    %1 = "stablehlo.convert"(%0) : (tensor<1xi64>) -> tensor<1xf32>
    %2 = "arith.constant"() <{value = dense<8> : tensor<1xi64>}> : () -> tensor<1xi64>
    %3 = "stablehlo.dynamic_iota"(%2) <{iota_dimension = 0 : i64}> : (tensor<1xi64>) -> tensor<8xi64>
    %4 = "arith.constant"() <{value = dense<[4, 8]> : tensor<2xi64>}> : () -> tensor<2xi64>
    %5 = "stablehlo.dynamic_broadcast_in_dim"(%arg0, %4) <{broadcast_dimensions = array<i64: 1>, known_expanding_dimensions = array<i64>, known_nonexpanding_dimensions = array<i64: 0>}> : (tensor<8xf32>, tensor<2xi64>) -> tensor<4x8xf32>
    %6 = "arith.constant"() <{value = dense<32> : tensor<1xi64>}> : () -> tensor<1xi64>
    %7 = "stablehlo.dynamic_reshape"(%5, %6) : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<32xf32>
    %8 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<4x8xf32>}> : () -> tensor<4x8xf32>
    %9 = "stablehlo.multiply"(%5, %8) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    "func.return"(%1, %3, %7, %9) : (tensor<1xf32>, tensor<8xi64>, tensor<32xf32>, tensor<4x8xf32>) -> ()
  }) : () -> ()
}) : () -> ()

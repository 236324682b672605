// RUN: rm -rf %t && brt-compile %s -o %t.brtx --dump-after-each %t
// RUN: FileCheck %s < %t/00-import.mlir

// Ops on types their kernels do not take, imported on types they do: clamp
// on i1 is (x | min) & max; dot_general on i1 counts the true products in
// i32 and compares with 0; i8 x i8 -> i32 converts both operands to i32.

// CHECK: %[[OR:.*]] = brt.or(%arg1, %arg0) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
// CHECK: brt.and(%[[OR]], %arg2) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
// CHECK-DAG: %[[L:.*]] = brt.convert(%arg3) : (tensor<2x3xi1>) -> tensor<2x3xi32>
// CHECK-DAG: %[[R:.*]] = brt.convert(%arg4) : (tensor<3x2xi1>) -> tensor<3x2xi32>
// CHECK: %[[COUNT:.*]] = brt.dot_general(%[[L]], %[[R]]) {{.*}} -> tensor<2x2xi32>
// CHECK: brt.compare(%[[COUNT]], %{{.*}}) {comparison_direction = "NE"} : (tensor<2x2xi32>, tensor<i32>) -> tensor<2x2xi1>
// CHECK-DAG: %[[L8:.*]] = brt.convert(%arg5) : (tensor<2x3xi8>) -> tensor<2x3xi32>
// CHECK-DAG: %[[R8:.*]] = brt.convert(%arg6) : (tensor<3x2xi8>) -> tensor<3x2xi32>
// CHECK: brt.dot_general(%[[L8]], %[[R8]]) {{.*}} : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x2xi32>

"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<2x3xi1>, tensor<3x2xi1>, tensor<2x3xi8>, tensor<3x2xi8>) -> (tensor<4xi1>, tensor<2x2xi1>, tensor<2x2xi32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4xi1>, %arg1: tensor<4xi1>, %arg2: tensor<4xi1>, %arg3: tensor<2x3xi1>, %arg4: tensor<3x2xi1>, %arg5: tensor<2x3xi8>, %arg6: tensor<3x2xi8>):
    %0 = "stablehlo.clamp"(%arg0, %arg1, %arg2) : (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    %1 = "stablehlo.dot_general"(%arg3, %arg4) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<2x3xi1>, tensor<3x2xi1>) -> tensor<2x2xi1>
    %2 = "stablehlo.dot_general"(%arg5, %arg6) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<2x3xi8>, tensor<3x2xi8>) -> tensor<2x2xi32>
    "func.return"(%0, %1, %2) : (tensor<4xi1>, tensor<2x2xi1>, tensor<2x2xi32>) -> ()
  }) : () -> ()
}) : () -> ()

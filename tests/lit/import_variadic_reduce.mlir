// RUN: rm -rf %t && brt-compile %s -o %t.brtx --dump-after-each %t
// RUN: FileCheck %s < %t/00-import.mlir
// RUN: sed -e 's/"stablehlo.minimum"(%arg3, %arg5)/"stablehlo.minimum"(%arg3, %arg3)/' %s > %t.mixed.mlir
// RUN: not brt-compile %t.mixed.mlir -o %t.mixed.brtx 2>&1 | FileCheck %s --check-prefix=MIXED

// lax.reduce over (f32, i32) operands whose body reduces each operand on its
// own (max of the first, min of the second) becomes one reduce per operand
// with its init; a body whose result is not its own accumulator combined with
// its own value is refused.

// CHECK-DAG: brt.reduce(%arg0, %{{.*}}) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK-DAG: brt.reduce(%arg1, %{{.*}}) {dimensions = array<i64: 1>, reducer = "min"} : (tensor<3x4xi32>, tensor<i32>) -> tensor<3xi32>
// MIXED: reduce with several operands is supported where each result reduces its own operand

"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<3x4xf32>, tensor<3x4xi32>) -> (tensor<3xf32>, tensor<3xi32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3x4xf32>, %arg1: tensor<3x4xi32>):
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %2:2 = "stablehlo.reduce"(%arg0, %arg1, %0, %1) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<i32>, %arg4: tensor<f32>, %arg5: tensor<i32>):
      %3 = "stablehlo.maximum"(%arg2, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %4 = "stablehlo.minimum"(%arg3, %arg5) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%3, %4) : (tensor<f32>, tensor<i32>) -> ()
    }) : (tensor<3x4xf32>, tensor<3x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<3xf32>, tensor<3xi32>)
    "func.return"(%2#0, %2#1) : (tensor<3xf32>, tensor<3xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

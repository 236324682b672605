// RUN: rm -rf %t && brt-compile %s -o %t.brtx --dump-after-each %t
// RUN: FileCheck %s < %t/00-import.mlir
// RUN: sed -e 's/comparison_direction LT>}> : (tensor<i32>/comparison_direction GT>}> : (tensor<i32>/' %s > %t.desc.mlir
// RUN: brt-compile %t.desc.mlir -o %t.desc.brtx --dump-after-each %t.desc
// RUN: FileCheck %s --check-prefix=DESC < %t.desc/00-import.mlir
// RUN: sed -e 's/"stablehlo.and"(%17, %15)/"stablehlo.or"(%17, %15)/' %s > %t.or.mlir
// RUN: not brt-compile %t.or.mlir -o %t.or.brtx 2>&1 | FileCheck %s --check-prefix=OR

// lax.sort of three operands with num_keys=2, as JAX writes it: the f32 key
// (NaNs and -0 made canonical, then compared by totalOrder), then the i32
// key where the first ties. It becomes brt's sort by key 0 with operand 1 as
// its tie key; the second key descending (GT) is a descending tie key; a
// comparator that is not lexicographic (or where and should be) is refused.

// CHECK: brt.sort(%arg0, %arg1, %arg2) {dimension = 1 : i64, key = 0 : i64, order = "ascending", tie_keys = array<i64: 1, 0, 0>}
// DESC: brt.sort(%arg0, %arg1, %arg2) {dimension = 1 : i64, key = 0 : i64, order = "ascending", tie_keys = array<i64: 1, 1, 0>}
// OR: stablehlo.sort is supported with a lexicographic comparator

"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<2x6xf32>, tensor<2x6xi32>, tensor<2x6xf32>) -> (tensor<2x6xf32>, tensor<2x6xi32>, tensor<2x6xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2x6xf32>, %arg1: tensor<2x6xi32>, %arg2: tensor<2x6xf32>):
    %0:3 = "stablehlo.sort"(%arg0, %arg1, %arg2) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>, %arg5: tensor<i32>, %arg6: tensor<i32>, %arg7: tensor<f32>, %arg8: tensor<f32>):
      %1 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %2 = "stablehlo.compare"(%arg3, %1) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %4 = "stablehlo.select"(%2, %3, %arg3) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %5 = "stablehlo.compare"(%arg3, %arg3) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %7 = "stablehlo.select"(%5, %6, %4) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %8 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %9 = "stablehlo.compare"(%arg4, %8) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %10 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %11 = "stablehlo.select"(%9, %10, %arg4) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %12 = "stablehlo.compare"(%arg4, %arg4) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %13 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %14 = "stablehlo.select"(%12, %13, %11) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %15 = "stablehlo.compare"(%arg5, %arg6) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %16 = "stablehlo.compare"(%7, %14) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %17 = "stablehlo.compare"(%7, %14) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %18 = "stablehlo.and"(%17, %15) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %19 = "stablehlo.or"(%16, %18) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%19) : (tensor<i1>) -> ()
    }) : (tensor<2x6xf32>, tensor<2x6xi32>, tensor<2x6xf32>) -> (tensor<2x6xf32>, tensor<2x6xi32>, tensor<2x6xf32>)
    "func.return"(%0#0, %0#1, %0#2) : (tensor<2x6xf32>, tensor<2x6xi32>, tensor<2x6xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

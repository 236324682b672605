// RUN: rm -rf %t && brt-compile %s -o %t.brtx --dump-after-each %t
// RUN: FileCheck %s < %t/00-import.mlir

// stablehlo.popcnt (lax.population_count) is brt.popcnt on every integer
// type; chlo.tan (what JAX wrote before StableHLO had tan) is brt.tan, as
// stablehlo.tan is.

// CHECK: brt.popcnt(%arg0) : (tensor<4xi8>) -> tensor<4xi8>
// CHECK: brt.popcnt(%arg1) : (tensor<4xui64>) -> tensor<4xui64>
// CHECK: brt.tan(%arg2) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: brt.tan(%arg3) : (tensor<4xbf16>) -> tensor<4xbf16>

"builtin.module"() ({
"func.func"() <{function_type = (tensor<4xi8>, tensor<4xui64>, tensor<4xf32>, tensor<4xbf16>) -> (tensor<4xi8>, tensor<4xui64>, tensor<4xf32>, tensor<4xbf16>), sym_name = "main"}> ({
^bb0(%a: tensor<4xi8>, %b: tensor<4xui64>, %c: tensor<4xf32>, %d: tensor<4xbf16>):
  %0 = "stablehlo.popcnt"(%a) : (tensor<4xi8>) -> tensor<4xi8>
  %1 = "stablehlo.popcnt"(%b) : (tensor<4xui64>) -> tensor<4xui64>
  %2 = "chlo.tan"(%c) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "chlo.tan"(%d) : (tensor<4xbf16>) -> tensor<4xbf16>
  "func.return"(%0, %1, %2, %3) : (tensor<4xi8>, tensor<4xui64>, tensor<4xf32>, tensor<4xbf16>) -> ()
}) : () -> ()
}) : () -> ()

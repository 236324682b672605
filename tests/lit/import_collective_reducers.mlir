// RUN: sed -e 's/stablehlo.xor/stablehlo.add/' %s > %t.add.mlir
// RUN: brt-compile %t.add.mlir -o %t.add.brtx
// RUN: not brt-compile %s -o %t.brtx 2>&1 | FileCheck %s
// RUN: sed -e 's/stablehlo.xor/stablehlo.and/' %s > %t.and.mlir
// RUN: not brt-compile %t.and.mlir -o %t.and.brtx 2>&1 | FileCheck %s --check-prefix=AND

// all_reduce runs add, multiply, maximum and minimum (ops/op_plans_collectives.cc):
// a body of another reducer reduce takes (xor, and) is refused at import,
// not compiled into a program that would fail at load.

// CHECK: all_reduce reduces by add, multiply, maximum or minimum, not xor
// AND: all_reduce reduces by add, multiply, maximum or minimum, not and

"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xi32>) -> tensor<4xi32>, sym_name = "main"}> ({
  ^bb0(%a: tensor<4xi32>):
    %0 = "stablehlo.all_reduce"(%a) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
    ^bb0(%x: tensor<i32>, %y: tensor<i32>):
      %s = "stablehlo.xor"(%x, %y) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%s) : (tensor<i32>) -> ()
    }) : (tensor<4xi32>) -> tensor<4xi32>
    "func.return"(%0) : (tensor<4xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

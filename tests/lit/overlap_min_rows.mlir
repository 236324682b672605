// brt-compile's --overlap-min-rows: by default --target=cuda keeps AG+GEMM
// serial below 512 rows per rank and the CPU fuses at any size; the flag
// sets the threshold for either.
// RUN: rm -rf %t && mkdir %t
// RUN: brt-compile %s -o %t/cpu.brtx --dump-after-each %t/cpu
// RUN: FileCheck %s --check-prefix=FUSED < %t/cpu/09-fuse-collective-matmul.mlir
// RUN: brt-compile %s -o %t/cpu5.brtx --overlap-min-rows=5 --dump-after-each %t/cpu5
// RUN: FileCheck %s --check-prefix=SERIAL < %t/cpu5/09-fuse-collective-matmul.mlir
// RUN: not brt-compile %s -o %t/bad.brtx --overlap-min-rows=x 2>&1 | FileCheck %s --check-prefix=BAD

// FUSED: brt.all_gather_matmul
// SERIAL-NOT: brt.all_gather_matmul
// SERIAL: brt.all_gather
// SERIAL: brt.dot_general
// BAD: --overlap-min-rows needs a row count >= 0, got 'x'
"builtin.module"() <{sym_name = "jit_step"}> ({
  "func.func"() <{function_type = (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<16x6xf32>, sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>):
    %0 = "stablehlo.all_gather"(%x) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}> : (tensor<4x8xf32>) -> tensor<16x8xf32>
    %1 = "stablehlo.dot_general"(%0, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<16x8xf32>, tensor<8x6xf32>) -> tensor<16x6xf32>
    "func.return"(%1) : (tensor<16x6xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 4 : i32} : () -> ()

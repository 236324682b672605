// RUN: rm -rf %t && brt-compile %s -o %t.brtx --dump-after-each %t
// RUN: FileCheck %s < %t/00-import.mlir

// A convolution with lhs_dilation and no padding attribute: StableHLO's
// padding left out is zero on every side, so the lhs is dilated by an
// explicit pad with zero edges (it was refused as "padding does not match").
// CHECK: brt.pad(%arg0, %{{.*}}) {edge_padding_high = array<i64: 0, 0, 0, 0>, edge_padding_low = array<i64: 0, 0, 0, 0>, interior_padding = array<i64: 0, 0, 1, 1>} : (tensor<1x1x3x3xf32>, tensor<f32>) -> tensor<1x1x5x5xf32>
// CHECK-NEXT: brt.convolution(
// CHECK-SAME: -> tensor<1x1x4x4xf32>

"builtin.module"() ({
  "func.func"() <{function_type = (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<1x1x3x3xf32>, %arg1: tensor<1x1x2x2xf32>):
    %0 = "stablehlo.convolution"(%arg0, %arg1) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 2, 2>}> : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
    "func.return"(%0) : (tensor<1x1x4x4xf32>) -> ()
  }) : () -> ()
}) : () -> ()

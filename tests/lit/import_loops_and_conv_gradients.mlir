// RUN: rm -rf %t && brt-compile %s -o %t.brtx --dump-after-each %t
// RUN: FileCheck %s < %t/00-import.mlir

// Made by brt.export_stablehlo from
//   loop = lax.fori_loop(0, 3, lambda i, h: jnp.tanh(h), x)
//   dilated = lax.conv_general_dilated(y, w, (1, 1), ((0, -1), (1, 1)), lhs_dilation=(2, 2), ...)
//   grouped = lax.conv_general_dilated(z, wz, (1, 1), "VALID", batch_group_count=2, ...)
// (NHWC/HWIO): the shapes of a strided convolution's input gradient and a
// grouped convolution's filter gradient.

// The loop is unrolled: its body three times (the counter's adds are left to
// fold-constants), no while left.
// CHECK-NOT: while
// CHECK: %[[T1:.*]] = brt.tanh(%arg0)
// CHECK: %[[T2:.*]] = brt.tanh(%[[T1]])
// CHECK: %[[T3:.*]] = brt.tanh(%[[T2]])
// CHECK-NOT: brt.tanh(

// lhs_dilation and the negative padding become one explicit pad of the lhs
// (interior 1 dilates it); the convolution is left plain.
// CHECK: brt.pad(%arg1, %{{.*}}) {edge_padding_high = array<i64: 0, -1, 1, 0>, edge_padding_low = array<i64: 0, 0, 1, 0>, interior_padding = array<i64: 0, 1, 1, 0>} : (tensor<1x3x3x2xf32>, tensor<f32>) -> tensor<1x4x7x2xf32>
// CHECK-NEXT: brt.convolution({{.*}}lhs_dilation = array<i64: 1, 1>{{.*}}padding = array<i64: 0, 0, 0, 0>{{.*}} -> tensor<1x3x6x3xf32>

// batch_group_count 2: a convolution per group of the lhs batch and the
// kernel's output features, concatenated along the output features.
// CHECK: brt.slice(%arg3) {limit_indices = array<i64: 2, 3, 3, 2>, start_indices = array<i64: 0, 0, 0, 0>
// CHECK-NEXT: brt.slice(%arg4) {limit_indices = array<i64: 2, 2, 2, 3>, start_indices = array<i64: 0, 0, 0, 0>
// CHECK-NEXT: brt.convolution(
// CHECK-NOT: batch_group_count
// CHECK-SAME: -> tensor<2x2x2x3xf32>
// CHECK-NEXT: brt.slice(%arg3) {limit_indices = array<i64: 4, 3, 3, 2>, start_indices = array<i64: 2, 0, 0, 0>
// CHECK-NEXT: brt.slice(%arg4) {limit_indices = array<i64: 2, 2, 2, 6>, start_indices = array<i64: 0, 0, 0, 3>
// CHECK-NEXT: brt.convolution(
// CHECK-NOT: batch_group_count
// CHECK-SAME: -> tensor<2x2x2x3xf32>
// CHECK-NEXT: brt.concatenate({{.*}}) {dimension = 3 : i64} : (tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>) -> tensor<2x2x2x6xf32>
// CHECK: return %[[T3]]

"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{brt.name = "x"}, {brt.name = "y"}, {brt.name = "w"}, {brt.name = "z"}, {brt.name = "wz"}], function_type = (tensor<4xf32>, tensor<1x3x3x2xf32>, tensor<2x2x2x3xf32>, tensor<4x3x3x2xf32>, tensor<2x2x2x6xf32>) -> (tensor<4xf32>, tensor<1x3x6x3xf32>, tensor<2x2x2x6xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<4xf32>, %arg2: tensor<1x3x3x2xf32>, %arg3: tensor<2x2x2x3xf32>, %arg4: tensor<4x3x3x2xf32>, %arg5: tensor<2x2x2x6xf32>):
    %1 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %2:2 = "stablehlo.while"(%1, %arg1) ({
    ^bb0(%arg8: tensor<i32>, %arg9: tensor<4xf32>):
      %8 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
      %9 = "stablehlo.compare"(%arg8, %8) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%9) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg6: tensor<i32>, %arg7: tensor<4xf32>):
      %5 = "func.call"(%arg7) <{callee = @closed_call}> : (tensor<4xf32>) -> tensor<4xf32>
      %6 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %7 = "stablehlo.add"(%arg6, %6) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%7, %5) : (tensor<i32>, tensor<4xf32>) -> ()
    }) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)
    %3 = "stablehlo.convolution"(%arg2, %arg3) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 2, 2>, padding = dense<[[0, -1], [1, 1]]> : tensor<2x2xi64>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], rhs_dilation = array<i64: 1, 1>, window_reversal = array<i1: false, false>, window_strides = array<i64: 1, 1>}> : (tensor<1x3x3x2xf32>, tensor<2x2x2x3xf32>) -> tensor<1x3x6x3xf32>
    %4 = "stablehlo.convolution"(%arg4, %arg5) <{batch_group_count = 2 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<0> : tensor<2x2xi64>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], rhs_dilation = array<i64: 1, 1>, window_reversal = array<i1: false, false>, window_strides = array<i64: 1, 1>}> : (tensor<4x3x3x2xf32>, tensor<2x2x2x6xf32>) -> tensor<2x2x2x6xf32>
    "func.return"(%2#1, %3, %4) : (tensor<4xf32>, tensor<1x3x6x3xf32>, tensor<2x2x2x6xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, res_attrs = [{}], sym_name = "closed_call", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    %0 = "stablehlo.tanh"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%0) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
